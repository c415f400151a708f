#pragma once

// The event loop of a many-connection test: one thread, one epoll set, and
// the flows it holds, each a small state machine over a non-blocking Stream
// (plain TCP, TLS, or QUIC: see FlowPlan::quic): connect (client) or adopt
// (server), the clear data header, the TLS handshake, then the work: a
// bulk stream, transactions of the rr sizes, or (crr) one transaction and a
// close, over again, or (http) HTTP requests a flow at a time, through
// HTTP's framing (framing/http.hpp). Nothing on the data path allocates
// but a QUIC client's timers (a set node each) and HTTP's framing; the
// bytes go through one buffer per loop.
//
// The client's loop establishes its flows (a bounded number connecting at
// once), holds them idle until told to begin, then does the work on each
// until its share of the count or the time is up; crr's connectors start
// connecting when told to begin. The server's loop adopts the sockets the
// accepting threads hand it and answers each request as it comes (a bulk
// stream waits for its begin too). A flow that fails (a stall past the idle
// timeout, a peer that vanished) is counted with its reason, and the others
// go on.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "framing/http.hpp"
#include "kinds/flows/wire.hpp"
#include "measure/latency.hpp"
#include "measure/memory.hpp"
#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "spec/spec.hpp"
#include "stacks/stack.hpp"
#include "tls/context.hpp"
#include "transport/poller.hpp"
#include "transport/socket.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

// What every flow of a loop does, and how long it may take.
struct FlowPlan {
  bool client = true;  // connects and asks; the server adopts and answers
  spec::FlowWork work = spec::FlowWork::rr;
  // stream: whether this side sends; the bytes over all flows (flow i its
  // share), 0 for a timed test; the size of each write and read.
  bool sends = false;
  std::uint64_t bytes = 0;
  std::uint32_t chunk_bytes = 64 * 1024;
  bool reset_close = true;  // client, crr: SO_LINGER 0 (--close reset)
  int cpu = -1;             // -A: the CPU this side's loops run on; -1: any
  std::uint64_t request_bytes = 1;
  std::uint64_t response_bytes = 1;
  Mode mode = Mode::tcp;                     // the flows' stack
  const tls::Context* tls = nullptr;         // client: the variant's context; null: none
  const stacks::ServerPart* part = nullptr;  // server: the stack's part, which makes its streams
  // QUIC: the client's connections over UDP sockets of their own (`tls` made
  // with event_loop, the loop running their timers); the server's come
  // established, streams of its listener's connections (adopt with a stream).
  bool quic = false;
  std::string host;               // client, TLS: the name the certificate must have
  bool release_buffers = false;   // SSL_MODE_RELEASE_BUFFERS
  std::string library;            // server: the TLS library its flows shake hands with ("": the default)
  std::uint32_t record_size = 0;  // the largest record this side sends; 0: the library's
  std::uint32_t sndbuf_bytes = 0;
  std::uint32_t rcvbuf_bytes = 0;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds idle_timeout{30'000};
  // Client: where to connect, from where (flow i from sources[i mod k];
  // none: the kernel's choice), and the test's cookie for each flow's data
  // header.
  SocketAddress server;
  std::vector<SocketAddress> sources;
  protocol::Cookie cookie{};
  std::uint64_t quota = 0;  // client, counted: units of the work over all flows; 0: timed
  // Client, open loop (--rate): transactions a second over all `flows`;
  // flow i's k-th request is due (i + k flows) / rate after the start, and
  // its latency counts from then. 0: closed loop.
  double rate_tps = 0;
  std::uint32_t flows = 0;
  // http: each flow's HTTP (its version; the client's Host and path, each
  // request a GET of it or a POST of request_bytes), a request at a time.
  framing::HttpAsk http;
};

// What a loop counted, read once its thread has stopped.
struct LoopTally {
  std::uint32_t established = 0;
  std::uint32_t failed = 0;
  std::string first_failure;                // "flow 12: ..." of the earliest failure
  std::int64_t first_start_ns = INT64_MAX;  // the first connect (adopt)
  std::int64_t last_established_ns = 0;
  // The traffic's window: the first request's send (stream: the first byte
  // moved) to the last response (the last byte).
  std::int64_t first_request_ns = INT64_MAX;
  std::int64_t last_response_ns = 0;
  // Each flow's units of work (transactions, connections or bytes), by its
  // index; and, on a crr server, those of the connections closed already.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> per_flow;
  std::uint64_t retired = 0;
  measure::LatencyHistogram latency;    // rr: a transaction; crr: a connection, connect to response
  measure::LatencyHistogram connect;    // crr: connect
  measure::LatencyHistogram handshake;  // crr, TLS: the handshake
  measure::TlsParameters tls;           // what the first TLS flow negotiated
  // QUIC client: the datagrams of its connections, closed and open.
  std::optional<UdpPath> udp_path;
};

// The traffic's window over a side's loops, microseconds: the first
// request's send (a stream's first byte) to the last response (last byte).
double traffic_window_us(const std::vector<LoopTally>& tallies);

// A side's three memory readings as its result carries them.
MemoryReadings memory_readings(const measure::MemoryReading& before, const measure::MemoryReading& idle,
                               const measure::MemoryReading& after);
// What they grew by per flow, idle and after the traffic.
FlowsMemory memory_per_flow(const MemoryReadings& m, std::uint64_t flows);

class FlowLoop {
 public:
  explicit FlowLoop(const FlowPlan& plan);
  ~FlowLoop();
  FlowLoop(const FlowLoop&) = delete;
  FlowLoop& operator=(const FlowLoop&) = delete;

  // Client, before start(): the flows this loop opens, by index, and each
  // one's share of a counted test.
  void assign(std::uint32_t index, std::uint64_t quota);
  // Server, from any thread: a socket whose header named flow `index`; or
  // (QUIC) the stream that carried it, its handshake done.
  void adopt(std::uint32_t index, UniqueFd socket);
  void adopt(std::uint32_t index, std::unique_ptr<Stream> stream);
  void start();
  // Every flow does its work from now until its quota is done, or until
  // `end_ns` (timed: no request starts after it; 0: until stopped); an open
  // loop's schedule counts from `go_ns`, the same on every loop. The server
  // calls it for a bulk stream alone.
  void begin(std::int64_t go_ns, std::int64_t end_ns);
  // Flows established, and flows that failed, so far (any thread).
  std::uint32_t established() const { return established_.load(std::memory_order_acquire); }
  std::uint32_t failed() const { return failed_.load(std::memory_order_acquire); }
  // Client: flows that are through with their transactions (or failed).
  std::uint32_t finished() const { return finished_.load(std::memory_order_acquire); }
  std::uint32_t flows() const { return flow_count_.load(std::memory_order_acquire); }
  // Server: connections handed to this loop and not yet closed (any thread).
  std::uint32_t held() const { return held_.load(std::memory_order_acquire); }
  // stream: bytes moved so far (any thread).
  std::uint64_t bytes() const { return bytes_.load(std::memory_order_acquire); }
  // The loop thread's CPU seconds so far.
  double cpu_s() const;
  // Stops the thread; the flows stay open until the loop goes.
  void stop();
  // After stop(): what it counted.
  LoopTally tally() const;

 private:
  struct Flow;
  void run();
  void take_adopted();
  Flow& new_flow(std::uint32_t index, std::int64_t now);
  void start_connects(std::int64_t now);
  void connect(Flow& flow, std::int64_t now);
  void start_quic(Flow& flow, std::int64_t now);
  bool send_quic_header(Flow& flow);
  void step(Flow& flow, std::int64_t now);
  void step_connect(Flow& flow, std::int64_t now);
  void start_handshake(Flow& flow, std::int64_t now);
  void step_handshake(Flow& flow, std::int64_t now);
  void on_established(Flow& flow, std::int64_t now);
  void drive(Flow& flow, std::int64_t now);
  bool step_io(Flow& flow, std::int64_t now);
  bool step_http(Flow& flow, std::int64_t now);
  bool write_http(Flow& flow, std::int64_t now);
  bool take_http(Flow& flow, std::span<const std::byte> bytes, std::int64_t now);
  bool step_stream(Flow& flow, std::size_t n, std::int64_t now);
  bool on_response(Flow& flow, std::int64_t now);
  void retire(Flow& flow);
  void start_stream(Flow& flow, std::int64_t now);
  bool next_transaction(Flow& flow, std::int64_t now);
  bool schedule_next(Flow& flow, std::int64_t now);
  bool start_request(Flow& flow, std::int64_t since_ns, std::int64_t now);
  void finish(Flow& flow);
  void release_due(std::int64_t now);
  std::chrono::nanoseconds until_next_due(std::int64_t now) const;
  void watch_idle(Flow& flow);
  void wait_events(std::int64_t now);
  void want_quic(Flow& flow, std::uint32_t events);
  void watch_delivery(Flow& flow, std::int64_t now);
  void run_quic_timers(std::int64_t now);
  void kick_traffic(std::int64_t now);
  void check_deadlines(std::int64_t now);
  void fail(Flow& flow, const std::string& why);
  void want(Flow& flow, std::uint32_t events);
  void unwatch(Flow& flow);
  void close_flow(Flow& flow);

  FlowPlan plan_;
  Poller poller_;
  Wakeup wakeup_;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<std::uint32_t> free_slots_;     // crr server: slots of closed connections
  std::vector<std::uint32_t> slot_of_index_;  // crr server: each connector's last connection's slot
  std::vector<std::byte> buffer_;
  std::vector<framing::HttpAnswer> http_answers_;  // http client: what one read completed
  std::size_t next_connect_ = 0;                   // client: flows_[next_connect_..] have not started
  std::uint32_t connecting_ = 0;
  bool traffic_ = false;
  std::int64_t end_ns_ = 0;
  std::int64_t period_ns_ = 0;  // open loop: between one flow's requests
  // Open loop: flows waiting for their next request's due time, soonest first.
  std::priority_queue<std::pair<std::int64_t, std::uint32_t>,
                      std::vector<std::pair<std::int64_t, std::uint32_t>>, std::greater<>>
      due_;
  // QUIC client: each connection's next timer (due, slot), soonest first.
  std::set<std::pair<std::int64_t, std::uint32_t>> quic_timers_;
  std::unique_ptr<stacks::StreamPollSet> quic_poll_;  // QUIC server: what the loop waits on (its part's)
  LoopTally tally_;

  struct Adopted {
    std::uint32_t index;
    UniqueFd socket;
    std::unique_ptr<Stream> stream;  // QUIC
  };
  std::mutex mutex_;  // guards adopted_
  std::vector<Adopted> adopted_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> begin_{false};
  std::atomic<std::int64_t> begin_end_ns_{0};
  std::atomic<std::int64_t> begin_go_ns_{0};
  std::atomic<std::uint32_t> established_{0};
  std::atomic<std::uint32_t> failed_{0};
  std::atomic<std::uint32_t> finished_{0};
  std::atomic<std::uint32_t> flow_count_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint32_t> held_{0};
  std::thread thread_;
};

// One side's loops, and what they count together.
using FlowLoops = std::vector<std::unique_ptr<FlowLoop>>;
template <typename Count>
std::uint64_t sum(const FlowLoops& loops, Count count) {
  std::uint64_t total = 0;
  for (const auto& loop : loops)
    total += count(*loop);
  return total;
}
// Their threads' CPU seconds so far.
double loops_cpu_s(const FlowLoops& loops);

}  // namespace tlscmp::kinds
