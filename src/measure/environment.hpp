#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tlscmp::measure {

// "AMD EPYC", from /proc/cpuinfo's first "model name"; "unknown" if none.
std::string cpu_model();

// The CPU flags that decide what crypto costs, from /proc/cpuinfo, space
// separated: on x86 aes, pclmulqdq, vaes, vpclmulqdq, avx2, avx512f, sha_ni;
// on Arm aes, pmull, sha1, sha2, sha3, sha512. "" if none or unknown.
std::string cpu_crypto_features();

// "Linux 6.1.0-18-amd64 x86_64", from uname(2).
std::string kernel_description();
// Sockets in TIME_WAIT in this network namespace, IPv4 and IPv6, from
// /proc/net/tcp and /proc/net/tcp6; none where neither can be read.
std::optional<std::uint64_t> time_wait_sockets();

}  // namespace tlscmp::measure
