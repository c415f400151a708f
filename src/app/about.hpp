#pragma once

#include <string>

namespace tlscmp::app {

// What `tlscmp --version` prints: the version, the TLS library (run time and
// build headers), the transports this build has (DTLS or not), the key
// exchange groups the library offers, and whether the running kernel offers
// the tls ULP that --ktls needs. Several lines, the first "tlscmp VERSION";
// no newline after the last.
std::string build_description();

}  // namespace tlscmp::app
