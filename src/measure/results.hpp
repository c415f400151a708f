#pragma once

// What a comparison measured: one record per run, and the statistics over them.
// Plain values; src/report/ renders them, src/app/ fills them.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/intervals.hpp"
#include "measure/speed.hpp"
#include "measure/stats.hpp"
#include "measure/stopping.hpp"
#include "mode.hpp"
#include "run_facts.hpp"
#include "spec/spec.hpp"
#include "spec/tls_policy.hpp"

namespace tlscmp::measure {

// One side's cost and socket settings during one run's transfer window.
struct SideCost {
  double window_us = 0;         // this side's window: transfer_us on the receiver, sender_us on the sender
  double cpu_user_s = 0;        // user CPU seconds of the thread that moved the data, in the window
  double cpu_system_s = 0;      // system CPU seconds of that thread, in the window
  int sndbuf_bytes = 0;         // SO_SNDBUF the kernel applied on the data socket
  int rcvbuf_bytes = 0;         // SO_RCVBUF the kernel applied on the data socket
  int mss_bytes = 0;            // TCP_MAXSEG of the data socket
  std::string congestion;       // TCP_CONGESTION of the data socket, "cubic"
  bool ktls_send = false;       // TLS: the kernel encrypted what this side sent
  bool ktls_receive = false;    // TLS: the kernel decrypted what this side received
  std::uint64_t tls_bytes = 0;  // TLS: record bytes written (sender) or read (receiver) in the transfer
  RunFacts facts;               // TCP_INFO, the host's CPU split, where the data threads ran
  // Read and write system calls of the data threads in the window
  // (/proc/thread-self/io); none where the kernel does not count them.
  std::optional<std::uint64_t> read_calls, write_calls;
  // TLS: this side's host calibrated for the run's suite, chunk and record
  // (measure/speed.hpp); none for TCP, kTLS, or where it could not.
  std::optional<TlsCalibration> calibration;
  // TLS rr and crr: this side's host calibrated for the run's suite, sizes
  // and (crr) handshake; none for TCP, or where it could not.
  std::optional<TransactionCalibration> transaction_calibration;

  double cpu_s() const { return cpu_user_s + cpu_system_s; }
  // CPU seconds per GiB (2^30 bytes) moved.
  double cpu_s_per_gib(std::uint64_t bytes) const {
    return bytes > 0 ? cpu_s() / (static_cast<double>(bytes) / (1ull << 30)) : 0;
  }
  // Busy share of one core over the window: 1.0 is one core fully busy.
  double core_share() const { return window_us > 0 ? cpu_s() / (window_us / 1e6) : 0; }
};

// The TLS parameters one run negotiated; empty strings for plain TCP.
struct TlsParameters {
  std::string version;                      // "TLSv1.3"
  std::string cipher;                       // "TLS_AES_256_GCM_SHA384"
  std::string group;                        // key exchange group, "X25519"
  std::string certificate_key_type;         // server certificate key, "ECDSA P-256"
  std::string client_certificate_key_type;  // mutual TLS: the client certificate's key, else ""
  std::uint32_t record_size = 0;            // the sender's largest record plaintext; 0: 16384
};

// What every kind's run has, whatever it measured: its place in the
// rounds, its mode and what TLS negotiated, and both sides' cost. Each
// kind's run (StreamRun, DatagramRun, RrRun, CrrRun) is one of these and
// its own figures.
struct RunHeader {
  std::string variant;   // the variant's label: "tcp", "tls", a suite, "tls-resumed" ...; empty: the mode's
  int round = 0;         // 1-based; one round runs each variant once; warm-up rounds count from 1 too
  bool warmup = false;   // a warm-up run: reported, left out of the statistics
  bool partial = false;  // interrupted (Ctrl-C): what this side measured until then
  Mode mode = Mode::tcp;
  TlsParameters tls;  // what the run's (last full) handshake negotiated; empty for tcp and udp
  SideCost client;    // the client's data threads, added up (datagrams: the senders)
  SideCost server;    // the server's (datagrams: the receiver)

  std::string label() const { return variant.empty() ? to_string(mode) : variant; }
};

// One data connection of a run with -P (or --bidir).
struct StreamResult {
  std::uint32_t index = 0;
  Direction direction = Direction::client_to_server;
  std::uint64_t bytes = 0;  // the receiver's count
  double transfer_us = 0;   // the receiver's window
  double sender_us = 0;     // the sender's window
  std::uint64_t messages = 0;
  std::vector<Interval> intervals;  // the receiver's, with -i

  double mbytes_per_s() const { return transfer_us > 0 ? static_cast<double>(bytes) / transfer_us : 0; }
};

// A bulk stream run (tcp, tls): -P connections, one way or both.
struct StreamRun : RunHeader {
  std::uint64_t bytes = 0;            // payload bytes the receiver counted
  double transfer_us = 0;             // receiver: from sending "go" to holding the last byte
  double sender_us = 0;               // sender: from receiving "go" to its last write returning
  double handshake_us = 0;            // client: TCP connect plus TLS handshake of the data connection
  std::vector<Interval> intervals;    // the receiver's, with -i; with -P those of the streams that go
                                      // the test's way, added up (measure::sum_intervals)
  std::uint64_t messages = 0;         // with --msg-size: messages the receiver got whole
  std::uint64_t payload_bytes = 0;    // with --msg-size: their bytes, length headers not counted
  std::vector<StreamResult> streams;  // with -P > 1: each connection; the fields above are the totals
  // TLS against the same round's TCP run, one way: each side's split
  // (measure/cost_split.hpp), set with the statistics.
  std::optional<RunSplit> client_split, server_split;

  double messages_per_s() const {
    return transfer_us > 0 ? static_cast<double>(messages) / (transfer_us / 1e6) : 0;
  }

  // Decimal megabytes (10^6 bytes) per second of transfer_us.
  double mbytes_per_s() const { return transfer_us > 0 ? static_cast<double>(bytes) / transfer_us : 0; }
};

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

// One connection of a request/response run with -P > 1.
struct RrConnection {
  std::uint32_t index = 0;
  std::uint64_t transactions = 0;
  double elapsed_us = 0;  // the client's window on this connection: first request to last response
  LatencySummary latency;

  double transactions_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
  }
};

// One interval of a request/response run (-i): the transactions whose
// responses came in it, on the client's clock from the first request.
struct RrInterval {
  double start_s = 0;
  double end_s = 0;
  std::uint64_t transactions = 0;
  double p99_us = 0;  // 0 when none came

  double transactions_per_s() const {
    return end_s > start_s ? static_cast<double>(transactions) / (end_s - start_s) : 0;
  }
};

// One run of a request/response test (rr): tcp or tls, -P connections.
struct RrRun : RunHeader {
  std::uint64_t transactions = 0;  // responses the client took in whole, over every connection
  double elapsed_us = 0;           // the client's window: the first request to the last response
  double handshake_us = 0;         // client: TCP connect plus TLS handshake, mean per connection
  // Closed loop: each request's send to its response's last byte. Open loop
  // (--rate): from the time the schedule said to send it.
  LatencySummary latency;
  std::vector<RrConnection> connections;  // with -P > 1
  std::vector<RrInterval> intervals;      // with -i, over every connection

  double transactions_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
  }
  // CPU microseconds one side spent per transaction.
  double cpu_us_per_transaction(const SideCost& side) const {
    return transactions > 0 ? side.cpu_s() * 1e6 / static_cast<double>(transactions) : 0;
  }
};

// A variant's figure over the same round's baseline figure (the first of the
// modes asked for, tcp in `--mode both`): the median of those ratios and its
// 95% bootstrap interval.
struct PairedRatio {
  Summary ratio;
  std::optional<Interval95> ci;
};

// Medians over a request/response variant's runs.
struct RrStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary transactions_per_s;
  Summary p50_us;
  Summary p99_us;
  Summary client_cpu_us_per_transaction;
  Summary server_cpu_us_per_transaction;
  // Variants of another mode than the baseline, paired by round with its run:
  // > 1 is more transactions/s, or a longer latency.
  std::optional<PairedRatio> transactions_per_s_over_baseline;
  std::optional<PairedRatio> p50_over_baseline;
  std::optional<PairedRatio> p99_over_baseline;
  // quic: transactions/s over the round's tls run, where the rounds have one.
  std::optional<PairedRatio> transactions_per_s_over_tls;
  // A TLS variant against TCP: where each side's extra CPU per transaction
  // goes (measure/cost_split.hpp); none where a side did not calibrate.
  std::optional<UnitSplit> client_split;
  std::optional<UnitSplit> server_split;
};

// One run of a connection-per-transaction test (crr): -P connectors, each
// opening a connection, making one transaction of the rr sizes, closing it.
// Its client and server costs are the connector threads' and the server's
// connection threads', added up: each thread's exact clock
// (measure::thread_cpu_s), so the total is in cpu_user_s and cpu_system_s
// is 0 (not split).
struct CrrRun : RunHeader {
  bool resumption = false;        // each connection offered the session of its connector's previous one
  std::string key_type;           // --compare-key-types: the key type asked of the server, "rsa-2048"
  std::uint32_t connectors = 1;   // -P
  std::uint64_t connections = 0;  // completed: connect, handshake, response and close
  std::uint64_t failed = 0;       // attempts that did not complete
  std::map<std::string, std::uint64_t> failures;  // failed attempts by cause, "connect: Connection refused"
  std::uint64_t resumed = 0;                      // TLS: connections the server resumed
  std::uint64_t refused = 0;                      // TLS, resumption: offered a session, had a full handshake
  std::string resumed_by;  // TLS 1.2 resumption: "ticket" or "session id"; TLS 1.3: "ticket"
  double elapsed_us = 0;   // the client's window: the first connect to the last close
  // Each completed connection's phases on the client: connect() to
  // established; the TLS handshake; the request's first byte sent to the
  // response's last byte in; and the whole, connect to response.
  LatencySummary connect;
  LatencySummary handshake;
  LatencySummary response;
  LatencySummary total;
  double bytes_sent = 0;      // TCP payload bytes per connection, client to server (TLS records and all)
  double bytes_received = 0;  // and server to client, as the client read them
  std::optional<std::uint64_t> server_connections;  // the server's count; none when interrupted
  std::optional<std::uint64_t> server_resumed;
  // TIME_WAIT sockets on the client's host (its network namespace) before the
  // run and after it; none where /proc/net/tcp cannot be read.
  std::optional<std::uint64_t> time_wait_before;
  std::optional<std::uint64_t> time_wait_after;

  double connections_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(connections) / (elapsed_us / 1e6) : 0;
  }
  double cpu_us_per_connection(const SideCost& side) const {
    return connections > 0 ? side.cpu_s() * 1e6 / static_cast<double>(connections) : 0;
  }
};

// Medians over a crr variant's runs.
struct CrrStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary connections_per_s;
  Summary connect_p50_us;
  Summary handshake_p50_us;
  Summary response_p50_us;
  Summary total_p50_us;
  Summary total_p99_us;
  Summary client_cpu_us_per_connection;
  Summary server_cpu_us_per_connection;
  std::uint64_t connections = 0;  // over the runs
  std::uint64_t resumed = 0;
  std::uint64_t refused = 0;
  std::uint64_t failed = 0;
  // Variants of another mode than the baseline, paired by round with its run:
  // connections/s (< 1: fewer than the baseline) and the whole connection's
  // p50 (> 1: longer).
  std::optional<PairedRatio> connections_per_s_over_baseline;
  std::optional<PairedRatio> total_p50_over_baseline;
  // A TLS variant against TCP: where each side's extra CPU per connection
  // goes (measure/cost_split.hpp); none where a side did not calibrate.
  std::optional<UnitSplit> client_split;
  std::optional<UnitSplit> server_split;
};

// Medians over a datagram mode's runs.
struct DatagramStats {
  Mode mode = Mode::udp;
  Summary received_per_s;
  Summary sent_per_s;
  Summary loss_percent;
};

struct StreamStats {
  Mode mode = Mode::tcp;
  Summary transfer_us;
  Summary sender_us;
  Summary handshake_us;
  Summary mbytes_per_s;
  Summary bytes;           // varies only in duration mode
  Summary messages_per_s;  // with --msg-size
  // CPU per side; which side sends depends on the direction.
  Summary client_cpu_s_per_gib;
  Summary server_cpu_s_per_gib;
  Summary client_core_share;
  Summary server_core_share;
  std::string variant;  // the runs' label: "tcp", "tls", or a suite with --compare-ciphers
  // Variants of another mode than the baseline: time per byte over the same
  // round's baseline run (> 1: slower), with the 95% interval of its median.
  std::optional<PairedRatio> over_baseline;
  // quic: the same over the round's tls run, where the rounds have one.
  std::optional<PairedRatio> over_tls;
  // TLS variants against a TCP baseline, one way: where each side's extra
  // CPU goes (measure/cost_split.hpp).
  std::optional<CostSplit> client_split;
  std::optional<CostSplit> server_split;
};

// Where the two ends ran. The server's half arrives in its test_accept message.
struct Environment {
  std::string client_version;
  std::string client_tls_library;
  std::string client_cpu_model;
  std::string client_cpu_features;
  std::string client_kernel;
  std::string server_version;
  std::string server_tls_library;
  std::string server_cpu_model;
  std::string server_cpu_features;
  std::string server_kernel;
  std::string client_tls_ulps;  // tcp_available_ulp: kTLS needs "tls" in it
  std::string server_tls_ulps;
};

// What a client is told to run: the test it sends (spec::Test) and how it
// runs it. The client's settings (session::ClientConfig) are these and how
// this side connects; a result's TestParameters are these as they were and
// what came of them. Neither copies them field by field.
struct Settings {
  spec::Test test;           // the kind and the fields it reads
  std::string command_line;  // as typed, shell-quoted: the report shows how to run it again
  std::vector<Mode> modes{Mode::tcp,
                          Mode::tls};  // one round runs each, in this order; the first is the baseline
  int rounds = 5;
  int warmup_rounds = 0;  // run first, reported, left out of the statistics
  // --repeat auto: rounds until the ratios' intervals are narrow enough
  // (`rounds` is then the most, auto_repeat->max_rounds).
  std::optional<AutoRepeat> auto_repeat;
  // --start-at: the first run starts at this wall-clock time (ns since the
  // epoch), if this host's clock is within max_skew_s of the server's.
  std::optional<std::int64_t> start_at_ns;
  double max_skew_s = 0.1;
  spec::TlsPolicy tls_policy;  // what the client offers (version, suites, groups, kTLS)
  // --streams: QUIC streams per connection; test.streams (-P times this) is
  // then every mode's streams, tcp and tls each on a connection of its own.
  std::uint32_t quic_streams = 1;

  // The mode every other mode's runs are compared with: the first of two or
  // more (tcp in `--mode both`, udp in `both-udp`); none with one mode.
  std::optional<Mode> baseline() const {
    return modes.size() > 1 ? std::optional<Mode>(modes.front()) : std::nullopt;
  }
  // Whether a mode it runs is encrypted (tls, dtls): what the TLS flags need.
  bool encrypts() const {
    return std::any_of(modes.begin(), modes.end(), [](Mode m) { return is_encrypted(m); });
  }
};

// What was asked for, as it was, and what the run found of its target.
struct TestParameters : Settings {
  std::string host;  // as given, or 127.0.0.1 for the embedded server
  std::uint16_t port = 0;
  bool embedded_server = false;       // no host given: a server in this process on loopback
  std::vector<std::string> variants;  // the order of a round, by label; empty: the modes
  bool client_certificate = false;    // --cert given: mutual TLS
};

// The statistics of one sort of handshake (full, or resumed) in a handshake test (--handshakes N).
struct HandshakeStats {
  Summary handshake_us;  // TCP connect plus TLS handshake, as handshake_us of a run
  Summary tls_us;        // the TLS handshake alone
  Summary
      bytes_received;  // TLS bytes the client read during the handshake (a full one carries the certificate)
  Summary bytes_sent;  // TLS bytes the client wrote during the handshake
  std::size_t resumed = 0;     // how many the server really resumed
  Summary client_hello_bytes;  // bytes of the ClientHello message(s) the client sent
  Summary server_hello_bytes;  // bytes of the ServerHello message(s) it received
  // Handshakes per second one client makes, one after another: 1e6 / mean handshake_us.
  double per_second() const { return handshake_us.mean > 0 ? 1e6 / handshake_us.mean : 0; }
};

// The values behind a HandshakeStats, one per handshake, gathered over one or
// more handshake tests (--compare-groups runs one per group per round).
struct HandshakeSamples {
  std::vector<double> handshake_us;
  std::vector<double> tls_us;
  std::vector<double> bytes_received;
  std::vector<double> bytes_sent;
  std::vector<double> client_hello_bytes;
  std::vector<double> server_hello_bytes;
  std::size_t resumed = 0;

  void add(const HandshakeSamples& more);
  HandshakeStats summarize() const;
};

struct HandshakeResults {
  int requested = 0;  // N
  HandshakeStats full;
  HandshakeStats resumed;
  TlsParameters tls;  // of the last full handshake
};

// --compare-groups: handshake tests with one key exchange group each.
struct GroupHandshakes {
  std::string group;                        // as --groups takes it: "X25519MLKEM768"
  std::optional<HandshakeResults> results;  // none when its handshakes failed
  std::string error;                        // why, e.g. the server does not have the group
};

// A group's figures over X25519's: > 1 means more (faster, slower, bigger).
struct GroupRatios {
  double full_per_second = 0;
  double resumed_per_second = 0;
  double full_tls_us_median = 0;  // the TLS handshake alone, medians
  double resumed_tls_us_median = 0;
  double client_hello_bytes = 0;  // medians
  double server_hello_bytes = 0;
};

// The X25519 row's results, the baseline of the ratios; nullptr if it has none.
const HandshakeResults* group_baseline(const std::vector<GroupHandshakes>& groups);
GroupRatios group_ratios(const HandshakeResults& group, const HandshakeResults& x25519);

// Bulk stream runs (tcp, tls) and their statistics.
struct StreamResults {
  std::vector<StreamRun> runs;
  std::vector<StreamStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;            // the variant whose ratio leads the report (headline_variant), or ""
};

// --compare-groups: one row per key exchange group.
struct GroupResults {
  std::vector<GroupHandshakes> groups;
};

// Datagram runs (udp, dtls) and their statistics.
struct DatagramResults {
  std::vector<DatagramRun> runs;
  std::vector<DatagramStats> stats;  // one per datagram mode that has runs
};

// One side's memory per connection in a many-connection run: what its
// process's resident set and the kernel's TCP memory grew by from before the
// first flow, over the flows: with every flow established and idle, and
// after the traffic (flows still held). Bytes per connection; none where a
// reading was missing. The kernel's share is the host's (the network
// namespace's), both ends together where they share one.
struct FlowsMemory {
  std::optional<double> idle_rss;
  std::optional<double> after_rss;
  std::optional<double> idle_tcp;
  std::optional<double> after_tcp;
  // The allocator's bytes in use, the same way: what live objects hold,
  // which RSS overstates for a process's first run and understates for the
  // runs after it (they reuse what it freed).
  std::optional<double> idle_heap;
  std::optional<double> after_heap;
};

// One run of a many-connection test (--flows N): N connections on event
// loops at each end, every one established first (timed on its own, the
// handshakes in it), then the work on each: a bulk stream, closed-loop
// transactions of the rr sizes, or (crr) N connectors that each connect,
// make one transaction and close, over again (nothing established first).
// Each side's cost is its event loops' CPU in the traffic window, user and
// system together in cpu_user_s (cpu_system_s 0), as crr's.
struct FlowsRun : RunHeader {
  spec::FlowWork work = spec::FlowWork::rr;
  bool release_buffers = false;  // tls-release: SSL_MODE_RELEASE_BUFFERS at both ends
  std::uint32_t flows = 0;       // asked for
  std::uint32_t client_threads = 0;
  std::uint32_t server_threads = 0;
  double establish_us = 0;  // client: the first connect to the last flow established
  // Units of the work over every flow: responses the client took in whole
  // (rr), connections that made their transaction (crr), or the bytes the
  // receiving side took (stream).
  std::uint64_t transactions = 0;
  double elapsed_us =
      0;  // the first request to the last response; stream: the receiver's first byte to its last
  LatencySummary latency;    // rr: each request's send to its response's last byte; crr: connect to response
  LatencySummary connect;    // crr: each connect
  LatencySummary handshake;  // crr, TLS: each handshake
  // Each flow's units of work: the least, the median and the most; and Jain's
  // fairness index over flows, (sum x)^2 / (n sum x^2): 1 when all are equal.
  double flow_min = 0;
  double flow_p50 = 0;
  double flow_max = 0;
  double fairness = 0;
  FlowsMemory client_memory;
  FlowsMemory server_memory;
  std::uint64_t failed_flows = 0;  // flows that failed during the traffic (a stall, a close)
  std::string first_failure;       // the first of them: "flow 12: ..."

  double transactions_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
  }
  double flows_per_s() const { return establish_us > 0 ? flows / (establish_us / 1e6) : 0; }
  double cpu_us_per_transaction(const SideCost& side) const {
    return transactions > 0 ? side.cpu_s() * 1e6 / static_cast<double>(transactions) : 0;
  }
};

// Medians over a many-connection variant's runs.
struct FlowsStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary transactions_per_s;
  Summary p50_us;
  Summary p99_us;
  Summary flows_per_s;
  Summary client_cpu_us_per_transaction;
  Summary server_cpu_us_per_transaction;
  // Memory per connection, idle, bytes: the process's and the kernel's TCP
  // share on each side; none where no run had the reading.
  std::optional<Summary> client_idle_rss;
  std::optional<Summary> server_idle_rss;
  std::optional<Summary> server_idle_tcp;
  std::optional<Summary> client_idle_heap;
  std::optional<Summary> server_idle_heap;
  std::optional<PairedRatio> transactions_per_s_over_baseline;
  std::optional<PairedRatio> p50_over_baseline;
};

// Many-connection runs (--flows) and their statistics.
struct FlowsResults {
  std::vector<FlowsRun> runs;
  std::vector<FlowsStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;           // the variant whose ratios lead the report (headline_variant), or ""
};

// Request/response runs (--rr) and their statistics.
struct RrResults {
  std::vector<RrRun> runs;
  std::vector<RrStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;        // the variant whose ratios lead the report (headline_variant), or ""
};

// Connection-per-transaction runs (--crr) and their statistics.
struct CrrResults {
  std::vector<CrrRun> runs;
  std::vector<CrrStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;         // the variant whose ratios lead the report (headline_variant), or ""
};

struct Comparison;

// What one test kind measured: a comparison holds one kind's results (or
// none yet), of a type its kind defines. A type may have, found by
// argument-dependent lookup beside it:
//   void fill_statistics(T& results, const Comparison& comparison);
//     its statistics (one per variant, with ratios to the baseline) and its
//     headline, from the runs that count: complete, not warm-up;
//   std::vector<HeadlineRatio> ratios_to_wait_on(const T& results);
//     the ratios to the baseline --repeat auto waits on (measure/stopping.hpp).
// Copies copy the results.
class KindResults {
 public:
  KindResults() = default;
  KindResults(const KindResults& other) : held_(other.held_ ? other.held_->clone() : nullptr) {}
  KindResults& operator=(const KindResults& other) {
    if (this != &other) held_ = other.held_ ? other.held_->clone() : nullptr;
    return *this;
  }
  KindResults(KindResults&&) noexcept = default;
  KindResults& operator=(KindResults&&) noexcept = default;
  ~KindResults() = default;

  // The results as T, or null where there are none or they are another type.
  template <typename T>
  const T* get() const {
    const auto* held = dynamic_cast<const Held<T>*>(held_.get());
    return held != nullptr ? &held->value : nullptr;
  }
  // The results as T, for filling: made T (empty) where they were not.
  template <typename T>
  T& as() {
    auto* held = dynamic_cast<Held<T>*>(held_.get());
    if (held == nullptr) {
      auto made = std::make_unique<Held<T>>();
      held = made.get();
      held_ = std::move(made);
    }
    return held->value;
  }
  // The type's fill_statistics and ratios_to_wait_on, where it has them.
  void compute_statistics(const Comparison& comparison) {
    if (held_) held_->fill(comparison);
  }
  std::vector<HeadlineRatio> headline_ratios() const {
    return held_ ? held_->ratios() : std::vector<HeadlineRatio>{};
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::unique_ptr<Base> clone() const = 0;
    virtual void fill(const Comparison& comparison) = 0;
    virtual std::vector<HeadlineRatio> ratios() const = 0;
  };
  template <typename T>
  struct Held final : Base {
    T value{};
    std::unique_ptr<Base> clone() const override { return std::make_unique<Held>(*this); }
    void fill(const Comparison& comparison) override {
      if constexpr (requires { fill_statistics(value, comparison); }) fill_statistics(value, comparison);
    }
    std::vector<HeadlineRatio> ratios() const override {
      if constexpr (requires { ratios_to_wait_on(value); }) {
        return ratios_to_wait_on(value);
      } else {
        return {};
      }
    }
  };
  std::unique_ptr<Base> held_;
};

struct Comparison {
  TestParameters parameters;
  Environment environment;
  KindResults results;             // the kind's results (none until a run)
  std::vector<std::string> notes;  // remarks for the reader, e.g. a suite this library cannot run
  bool interrupted = false;        // Ctrl-C: the runs so far, the last one partial
  std::string error;               // empty, or why the comparison stopped early
  std::optional<AutoRepeatOutcome> auto_repeat;  // --repeat auto: how many rounds, and why no more
  std::optional<double> clock_offset_s;          // --start-at: the server's clock ahead of this host's

  // The results as kind T, or null where they are of another kind.
  template <typename T>
  const T* get() const {
    return results.get<T>();
  }
  // The results as kind T, or an empty T where they are of another kind: for
  // reports that list what a kind has, whatever the comparison ran.
  template <typename T>
  const T& or_empty() const {
    static const T kEmpty{};
    const T* found = get<T>();
    return found != nullptr ? *found : kEmpty;
  }
  // The results as kind T, for filling: made T (empty) where they were another kind.
  template <typename T>
  T& as() {
    return results.as<T>();
  }
};

// Each kind's statistics and the ratios --repeat auto waits on (KindResults).
void fill_statistics(StreamResults& results, const Comparison& comparison);
void fill_statistics(DatagramResults& results, const Comparison& comparison);
void fill_statistics(RrResults& results, const Comparison& comparison);
void fill_statistics(CrrResults& results, const Comparison& comparison);
void fill_statistics(FlowsResults& results, const Comparison& comparison);
std::vector<HeadlineRatio> ratios_to_wait_on(const StreamResults& results);
std::vector<HeadlineRatio> ratios_to_wait_on(const RrResults& results);
std::vector<HeadlineRatio> ratios_to_wait_on(const FlowsResults& results);
std::vector<HeadlineRatio> ratios_to_wait_on(const CrrResults& results);

// Fills each kind's `stats` (one per variant, with ratios to the baseline)
// and its headline from the runs that count: complete, not warm-up.
void compute_statistics(Comparison& comparison);

// The variant whose ratio to the baseline is the headline ("TLS/TCP transfer
// time"): of two modes, the one variant that has a ratio, or where several
// have one, the other mode's plain variant (crr's "tls" beside
// "tls-resumed"); "" where there is none (several suites or groups, one mode).
// `compared` lists the variants with a ratio.
std::string headline_variant(const TestParameters& parameters, const std::vector<std::string>& compared);

}  // namespace tlscmp::measure
