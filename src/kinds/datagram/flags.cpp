// The datagram kind's client flags (-b, --gso), and what a datagram test
// makes of the flags every kind shares: -n counts datagrams per sender, -l
// is a datagram, -P counts senders. --mode udp, dtls or both-udp asks for it.

#include <fmt/format.h>

#include "kinds/datagram/datagram.hpp"
#include "kinds/flags.hpp"
#include "protocol/datagram.hpp"

namespace tlscmp::kinds {

std::vector<CLI::Option*> add_datagram_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Datagram& d = flags.test.datagram;
  return {
      cmd.add_option_function<std::string>(
             "-b,--bitrate",
             [&d](const std::string& text) {
               d.rate_bps = spec::parse_rate(text, "-b", 0, spec::kMaxRateBps);
             },
             "Datagram modes: bits per second per sender, K, M, G suffixes powers of 1000 (default 0: as "
             "fast as it can)")
          ->type_name("RATE"),
      cmd.add_flag("--gso", d.gso,
                   "Datagram modes: hand the kernel up to 64 datagrams per send as one buffer, cut into "
                   "datagrams by UDP segmentation offload (UDP_SEGMENT)"),
  };
}

bool asked_for_datagrams(const session::ClientConfig& c) {
  return is_datagram(c.modes.front());
}

namespace {

// -l: a datagram, its header included, within what one datagram of the mode carries.
std::uint32_t datagram_length(const SharedFlags& flags, bool dtls) {
  const std::uint32_t largest = dtls ? protocol::kMaxDtlsDatagramBytes : protocol::kMaxUdpDatagramBytes;
  const auto length = spec::parse_size(flags.length.empty() ? "15" : flags.length, "-l", 1, 1u << 30);
  if (length < protocol::kDatagramHeaderBytes) {
    throw UsageError(fmt::format("-l {}: each datagram carries a {}-byte header; use -l {} or more", length,
                                 protocol::kDatagramHeaderBytes, protocol::kDatagramHeaderBytes));
  }
  if (length > largest) {
    throw UsageError(
        dtls ? fmt::format(
                   "-l {}: above the largest DTLS record ({} bytes); DTLS sends one record per datagram",
                   length, largest)
             : fmt::format("-l {}: above the largest UDP datagram over IPv4 ({} bytes)", length, largest));
  }
  return static_cast<std::uint32_t>(length);
}

}  // namespace

void configure_datagram(const SharedFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(fmt::format(
        "{} is for tcp and tls; datagram modes take -n, -t, -l, -b, -P, -i, --rcvbuf, --sndbuf", flag));
  };
  if (c.test.stream.direction == Direction::server_to_client)
    throw UsageError("-R: datagram tests go from the client's senders to the server's receiver");
  if (c.test.verify) refuse("--verify");
  if (c.compare_ciphers) refuse("--compare-ciphers");
  if (c.test.compare_groups) refuse("--compare-groups");
  if (c.test.record_size != 0) refuse("--record-size");
  if (c.tls_policy.ktls) refuse("--ktls");
  if (!c.bind_address.empty()) refuse("-B");
  if (c.test.streams > protocol::kMaxSenders) {
    throw UsageError(fmt::format("-P {}: at most {} senders", c.test.streams, protocol::kMaxSenders));
  }
  if (flags.time_s == 0) {
    c.test.datagram.packets =
        spec::parse_count(flags.bytes.empty() ? "1000000" : flags.bytes, "-n", 1, spec::kMaxPackets);
  }
  c.test.chunk_bytes = datagram_length(flags, c.encrypts());
  c.rounds = flags.repeat > 0 ? flags.repeat : 1;
}

}  // namespace tlscmp::kinds
