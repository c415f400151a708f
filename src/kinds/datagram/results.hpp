#pragma once

// Datagram runs (udp, dtls): each sender as both ends counted it, and the
// statistics over a mode's runs.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// One sender of a datagram run (udp, dtls), as both ends counted it.
struct DatagramSender {
  std::uint32_t index = 0;
  std::uint64_t sent = 0;        // datagrams the sender sent
  std::uint64_t received = 0;    // distinct sequence numbers the receiver took in
  std::uint64_t reordered = 0;   // came after a higher sequence number
  std::uint64_t duplicates = 0;  // a sequence number seen before (not counted in `received`)
  std::uint64_t bytes_sent = 0;  // datagram bytes, header included
  std::uint64_t bytes_received = 0;
  double sender_us = 0;    // the sender's first send to its last
  double receiver_us = 0;  // the receiver's first datagram of this sender to its last

  std::uint64_t lost() const { return sent > received ? sent - received : 0; }
  double loss_percent() const {
    return sent > 0 ? 100.0 * static_cast<double>(lost()) / static_cast<double>(sent) : 0;
  }
};

// One interval of a datagram receiver's count (-i), on its clock from the
// moment it was ready. Loss within an interval is an estimate from sequence
// numbers: how far the senders' highest numbers moved on, less what came.
// A datagram that comes an interval late counts there, so an interval can
// show less loss than it had and the next one none; the run's loss is exact.
struct DatagramInterval {
  double start_s = 0;
  double end_s = 0;
  std::uint64_t received = 0;  // distinct datagrams taken in
  std::uint64_t expected = 0;  // how far the highest sequence numbers seen moved on
  std::uint64_t bytes = 0;     // received times the datagram size

  std::uint64_t lost() const { return expected > received ? expected - received : 0; }
  double loss_percent() const {
    return expected > 0 ? 100.0 * static_cast<double>(lost()) / static_cast<double>(expected) : 0;
  }
  double received_per_s() const {
    return end_s > start_s ? static_cast<double>(received) / (end_s - start_s) : 0;
  }
};

// One run of a datagram test: senders on the client, one receiver on the server.
struct DatagramRun : RunHeader {
  DatagramRun() { mode = Mode::udp; }
  std::vector<DatagramSender> senders;
  DatagramSender total;     // the senders added up; its times are the run's windows
  double handshake_us = 0;  // dtls: mean per sender, first ClientHello to the end of the handshake
  double cookie_us = 0;     // dtls: mean per sender, first ClientHello to the HelloVerifyRequest
  bool cookie_exchanged = false;
  std::uint64_t foreign = 0;       // datagrams the receiver set apart as not of this test
  std::uint64_t kernel_drops = 0;  // SO_RXQ_OVFL of the receiver's sockets
  std::optional<std::uint64_t>
      rcvbuf_errors;                        // /proc/net/snmp RcvbufErrors over the run, on the server's host
  std::vector<DatagramInterval> intervals;  // the receiver's, with -i

  // Datagrams per second the receiver took in, over its window.
  double received_per_s() const {
    return total.receiver_us > 0 ? static_cast<double>(total.received) / (total.receiver_us / 1e6) : 0;
  }
  // Datagrams per second the senders sent, over their window.
  double sent_per_s() const {
    return total.sender_us > 0 ? static_cast<double>(total.sent) / (total.sender_us / 1e6) : 0;
  }
};

// Medians over a datagram variant's runs.
struct DatagramStats {
  Mode mode = Mode::udp;
  std::string variant;  // "dtls", "dtls gnutls" (--tls-lib)
  Summary received_per_s;
  Summary sent_per_s;
  Summary loss_percent;
  // Another --tls-lib library's dtls: datagrams received per second over
  // the first library's in the same round.
  std::optional<PairedRatio> received_per_s_over_first_library;
};

// Datagram runs (udp, dtls) and their statistics.
struct DatagramResults {
  std::vector<DatagramRun> runs;
  std::vector<DatagramStats> stats;  // one per variant that has runs
};

// Its statistics, per variant with the ratios to the baseline, and its
// headline (measure::KindResults calls it after each round).
void fill_statistics(DatagramResults& results, const measure::Comparison& comparison);

}  // namespace tlscmp::kinds
