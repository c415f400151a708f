#include "kinds/flows/loop_parts.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "error.hpp"
#include "kinds/data_connections.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/host.hpp"
#include "tls/tls_stream.hpp"
#include "transport/datagram.hpp"
#include "transport/errors.hpp"

namespace tlscmp::kinds {

using namespace loop_parts;

FlowLoop::FlowLoop(const FlowPlan& plan)
    : plan_(plan), buffer_(plan.work == spec::FlowWork::stream ? plan.chunk_bytes : kBufferBytes) {
  poller_.add(wakeup_.fd(), EPOLLIN, kWakeTag);
  if (plan.quic && !plan.client && plan.part != nullptr) quic_poll_ = plan.part->poll_set();
}

FlowLoop::~FlowLoop() {
  stop();
}

void FlowLoop::assign(std::uint32_t index, std::uint64_t quota) {
  auto flow = std::make_unique<Flow>();
  flow->index = index;
  flow->quota = quota;
  flow->slot = static_cast<std::uint32_t>(flows_.size());
  flows_.push_back(std::move(flow));
  flow_count_.store(static_cast<std::uint32_t>(flows_.size()), std::memory_order_release);
}

void FlowLoop::adopt(std::uint32_t index, UniqueFd socket) {
  held_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(mutex_);
    adopted_.push_back({index, std::move(socket), nullptr});
  }
  wakeup_.signal();
}

void FlowLoop::adopt(std::uint32_t index, std::unique_ptr<Stream> stream) {
  held_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(mutex_);
    adopted_.push_back({index, UniqueFd(), std::move(stream)});
  }
  wakeup_.signal();
}

void FlowLoop::start() {
  thread_ = std::thread([this] { run(); });
}

void FlowLoop::begin(std::int64_t go_ns, std::int64_t end_ns) {
  begin_go_ns_.store(go_ns, std::memory_order_relaxed);
  begin_end_ns_.store(end_ns, std::memory_order_relaxed);
  begin_.store(true, std::memory_order_release);
  wakeup_.signal();
}

double FlowLoop::cpu_s() const {
  return thread_.joinable() ? measure::thread_cpu_s(static_cast<unsigned long>(
                                  const_cast<std::thread&>(thread_).native_handle()))
                            : 0;
}

void FlowLoop::stop() {
  stop_.store(true, std::memory_order_release);
  wakeup_.signal();
  if (thread_.joinable()) thread_.join();
}

LoopTally FlowLoop::tally() const {
  LoopTally out = tally_;
  out.established = established();
  out.failed = failed();
  for (const auto& flow : flows_) {
    out.per_flow.emplace_back(flow->index, flow->done);
    if (const std::optional<UdpPath> path = flow->stream ? flow->stream->udp_path() : std::nullopt)
      measure::add_udp_path(out.udp_path, *path);
  }
  return out;
}

void FlowLoop::run() {
  const measure::ThreadPin pin(plan_.cpu);  // -A, checked where it was given
  std::int64_t last_check = measure::now_ns();
  while (!stop_.load(std::memory_order_acquire)) {
    std::int64_t now = measure::now_ns();
    if (plan_.client && plan_.work != spec::FlowWork::crr) start_connects(now);
    if (!traffic_ && begin_.load(std::memory_order_acquire)) kick_traffic(now);
    wait_events(now);
    now = measure::now_ns();
    if (plan_.quic && plan_.client) run_quic_timers(now);
    release_due(now);
    if (now - last_check >= ns(kTick)) {
      check_deadlines(now);
      last_check = now;
    }
  }
}

// Waits for events until the next due time, and steps the flows they name.
// A QUIC server's streams wait in the library, which cannot watch the
// wakeup: it is looked at between those waits, a few milliseconds apart.
void FlowLoop::wait_events(std::int64_t now) {
  const auto on_wakeup = [this] {
    wakeup_.drain();
    if (!plan_.client) take_adopted();
  };
  if (quic_poll_) {
    if (!poller_.wait(0).empty()) on_wakeup();
    const auto limit = std::min<std::chrono::nanoseconds>(until_next_due(now), kQuicServerWait);
    for (const std::uint32_t slot : quic_poll_->wait(std::chrono::ceil<std::chrono::microseconds>(limit)))
      step(*flows_[slot], measure::now_ns());
    return;
  }
  for (const epoll_event& event : poller_.wait(until_next_due(now))) {
    if (event.data.u64 == kWakeTag) {
      on_wakeup();
      continue;
    }
    step(*flows_[event.data.u64], measure::now_ns());
  }
}

// QUIC client: the connections whose timers are due run their events
// (retransmissions, acknowledgements, the idle timeout), then go on.
void FlowLoop::run_quic_timers(std::int64_t now) {
  while (!quic_timers_.empty() && quic_timers_.begin()->first <= now) {
    Flow& flow = *flows_[quic_timers_.begin()->second];
    quic_timers_.erase(quic_timers_.begin());
    flow.timer_ns = 0;
    if (!flow.stream) continue;
    flow.stream->handle_loop_events();
    step(flow, measure::now_ns());
    // A flow that had nothing to try keeps its timers all the same.
    if (flow.stream && flow.timer_ns == 0 && flow.events != 0) want_quic(flow, flow.events);
  }
}

void FlowLoop::take_adopted() {
  std::vector<Adopted> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(adopted_);
  }
  const std::int64_t now = measure::now_ns();
  for (auto& [index, socket, stream] : taken) {
    Flow& f = new_flow(index, now);
    if (plan_.bytes > 0) f.quota = share(plan_.bytes, plan_.flows, index);
    if (stream) {  // QUIC: its handshake and header are behind it
      f.stream = std::move(stream);
      f.stream->enter_event_loop_phase();
      on_established(f, now);
      continue;
    }
    set_socket_buffers(socket.get(), plan_.sndbuf_bytes, plan_.rcvbuf_bytes);
    f.stream = plan_.part != nullptr ? plan_.part->wrap(socket, plan_.library) : nullptr;
    if (!f.stream) f.stream = std::make_unique<TcpStream>(std::move(socket));
    start_handshake(f, now);
  }
}

// Server: a flow for an adopted socket, in the slot of a closed one where
// there is one (crr). A crr connector's new connection first retires its
// last one, which the client closed before it connected again.
FlowLoop::Flow& FlowLoop::new_flow(std::uint32_t index, std::int64_t now) {
  if (plan_.work == spec::FlowWork::crr) {
    if (slot_of_index_.size() <= index) slot_of_index_.resize(index + 1, UINT32_MAX);
    const std::uint32_t last = slot_of_index_[index];
    if (last != UINT32_MAX && flows_[last]->index == index && flows_[last]->state != Flow::State::finished &&
        flows_[last]->state != Flow::State::failed)
      retire(*flows_[last]);
  }
  auto flow = std::make_unique<Flow>();
  flow->index = index;
  flow->since_ns = flow->progress_ns = flow->start_ns = now;
  tally_.first_start_ns = std::min(tally_.first_start_ns, now);
  std::uint32_t slot = static_cast<std::uint32_t>(flows_.size());
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    flows_.emplace_back();
    flow_count_.store(static_cast<std::uint32_t>(flows_.size()), std::memory_order_release);
  }
  flow->slot = slot;
  flows_[slot] = std::move(flow);
  if (plan_.work == spec::FlowWork::crr) slot_of_index_[index] = slot;
  return *flows_[slot];
}

void FlowLoop::start_connects(std::int64_t now) {
  const std::uint32_t most = plan_.quic ? kQuicConnectingPerLoop : kConnectingPerLoop;
  while (connecting_ < most && next_connect_ < flows_.size())
    connect(*flows_[next_connect_++], now);
}

// A non-blocking connect; one that fails at once fails the flow.
void FlowLoop::connect(Flow& flow, std::int64_t now) {
  std::error_code ec;
  const char* where = "connect";
  const SocketAddress* from =
      plan_.sources.empty() ? nullptr : &plan_.sources[flow.index % plan_.sources.size()];
  const bool reset = plan_.work == spec::FlowWork::crr && plan_.reset_close;
  flow.socket =
      plan_.quic ? connect_udp(plan_.server, from, ec) : start_connect(plan_.server, from, reset, ec, where);
  flow.since_ns = flow.progress_ns = flow.start_ns = now;
  tally_.first_start_ns = std::min(tally_.first_start_ns, now);
  if (!flow.socket.valid()) return fail(flow, fmt::format("{}: {}", where, ec.message()));
  if (plan_.quic) return start_quic(flow, now);
  set_socket_buffers(flow.socket.get(), plan_.sndbuf_bytes, plan_.rcvbuf_bytes);
  flow.state = Flow::State::connecting;
  ++connecting_;
  want(flow, EPOLLOUT);
}

void FlowLoop::step(Flow& flow, std::int64_t now) {
  // The wakeup that begins the traffic may come after a flow's first bytes
  // in the same batch of events. Its requests went out after `now`.
  if (!traffic_ && begin_.load(std::memory_order_acquire)) {
    kick_traffic(now);
    now = measure::now_ns();
  }
  switch (flow.state) {
    case Flow::State::connecting:
      return step_connect(flow, now);
    case Flow::State::handshaking:
      return step_handshake(flow, now);
    case Flow::State::finished:
      // A QUIC client's stream that is through runs its connection's events
      // (what it sent still goes out and is acknowledged).
      if (plan_.quic && plan_.client && plan_.work == spec::FlowWork::stream && flow.stream) {
        flow.stream->handle_loop_events();
        watch_delivery(flow, now);
        return want_quic(flow, EPOLLIN);
      }
      // A stream may finish on its time while its readiness waits later in
      // the same batch, its peer streaming on until the test ends.
      if (plan_.work == spec::FlowWork::stream || !flow.stream) return;
      return watch_idle(flow);
    case Flow::State::idle:
      return watch_idle(flow);
    case Flow::State::sending:
    case Flow::State::receiving:
      drive(flow, now);
      return;
    case Flow::State::waiting:
    case Flow::State::failed:
      break;
  }
}

// QUIC client: a connection over the flow's own UDP socket (crr's connect
// time is the socket's: UDP has no connect to wait for), its handshake
// under way, which counts among the connections under way.
void FlowLoop::start_quic(Flow& flow, std::int64_t now) {
  ++connecting_;
  flow.since_ns = measure::now_ns();
  if (plan_.work == spec::FlowWork::crr) tally_.connect.add(measure::ns_to_us(flow.since_ns - now));
  flow.state = Flow::State::handshaking;
  try {
    flow.stream =
        stacks::client_stream(plan_.mode, std::move(flow.socket), plan_.tls, {plan_.host, {}, {}, {}});
  } catch (const Error& e) {
    return fail(flow, e.what());
  }
  flow.stream->enter_event_loop_phase();
  step_handshake(flow, now);
}

// QUIC client, its handshake done: the header, first on its stream (whole:
// the stream's buffer is empty).
bool FlowLoop::send_quic_header(Flow& flow) {
  const auto header = flow_header(plan_.cookie, flow.index);
  std::error_code ec;
  const std::size_t n = flow.stream->write_some(header, ec);
  if (!ec && n == header.size()) return true;
  fail(flow, fmt::format("sending the flow's header: {}",
                         ec ? describe(ec, flow.stream->error_detail()) : "the stream took part of it"));
  return false;
}

void FlowLoop::step_connect(Flow& flow, std::int64_t now) {
  --connecting_;
  if (const std::error_code ec = connect_result(flow.socket.get())) {
    return fail(flow, fmt::format("connect: {}", ec.message()));
  }
  if (plan_.work == spec::FlowWork::crr) tally_.connect.add(measure::ns_to_us(now - flow.since_ns));
  // The header goes in the clear, before TLS: the server hands the socket
  // to a loop of its own on reading it.
  const auto header = flow_header(plan_.cookie, flow.index);
  // A new socket's buffer is empty: the header goes whole or not at all.
  if (::send(flow.socket.get(), header.data(), header.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(header.size())) {
    return fail(flow, fmt::format("sending the flow's header: {}", std::strerror(errno)));
  }
  flow.since_ns = flow.progress_ns = now;
  flow.stream =
      stacks::client_stream(plan_.mode, std::move(flow.socket), plan_.tls, {plan_.host, {}, {}, {}});
  start_handshake(flow, now);
}

// A flow's stream over TCP, made: its stack's handshake on the loop (TLS
// keeps its records in the library's buffers, released where asked from
// the handshake on), or established at once where its stack has none.
void FlowLoop::start_handshake(Flow& flow, std::int64_t now) {
  if (tls::TlsStream* tls = flow.stream->tls()) {
    tls->use_library_buffers();
    if (plan_.release_buffers) tls->release_buffers();  // the handshake's buffers too
  }
  flow.stream->enter_event_loop_phase();
  if (*facts(plan_.mode).handshake == '\0') return on_established(flow, now);
  flow.state = Flow::State::handshaking;
  step_handshake(flow, now);
}

void FlowLoop::step_handshake(Flow& flow, std::int64_t now) {
  const std::error_code ec = flow.stream->handshake();
  if (ec == TransportErrc::would_block) return want(flow, epoll_events(flow.stream->wanted_events()));
  if (ec) {
    return fail(flow, fmt::format("{} handshake: {}", facts(plan_.mode).handshake,
                                  describe(ec, flow.stream->error_detail())));
  }
  if (tls::TlsStream* tls = flow.stream->tls(); tls != nullptr && plan_.record_size != 0)
    tls->set_max_record_size(plan_.record_size);
  if (plan_.quic && !send_quic_header(flow)) return;
  on_established(flow, now);
}

void FlowLoop::on_established(Flow& flow, std::int64_t now) {
  if (plan_.quic && plan_.client) --connecting_;
  tally_.last_established_ns = std::max(tally_.last_established_ns, now);
  if (flow.stream->is_tls() && tally_.tls.version.empty())
    tally_.tls = tls_parameters(*flow.stream, plan_.record_size);
  established_.fetch_add(1, std::memory_order_acq_rel);
  flow.progress_ns = now;
  if (plan_.work == spec::FlowWork::crr && plan_.client) {
    // The handshake may end in the call that began it (this thread was
    // away while the server answered): its end is the clock's now.
    if (flow.stream->is_tls()) tally_.handshake.add(measure::ns_to_us(measure::now_ns() - flow.since_ns));
    start_request(flow, flow.start_ns, now);  // its latency counts from the connect
    drive(flow, now);
    return;
  }
  if (plan_.work == spec::FlowWork::http) {
    if (plan_.client) {
      flow.http_client = framing::http_client(plan_.http);
    } else {
      flow.http_server = framing::http_server(plan_.http.version, spec::kMaxRrBytes, spec::kMaxHttpStreams);
      flow.state = Flow::State::receiving;
      return drive(flow, now);  // HTTP/2: the server's SETTINGS go first
    }
  }
  if (plan_.client || plan_.work == spec::FlowWork::stream) {
    flow.state = Flow::State::idle;
    if (traffic_ && plan_.work == spec::FlowWork::stream) return start_stream(flow, now);
    if (traffic_) {
      next_transaction(flow, now);
      return;
    }
    return want(flow, EPOLLIN);  // a peer that closes an idle flow is noticed
  }
  flow.state = Flow::State::receiving;
  flow.left = plan_.request_bytes;
  want(flow, EPOLLIN);
}

bool FlowLoop::step_io(Flow& flow, std::int64_t now) {
  if (plan_.work == spec::FlowWork::http) return step_http(flow, now);
  const bool sending = flow.state == Flow::State::sending;
  const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(flow.left, buffer_.size()));
  std::error_code ec;
  const std::size_t n = sending ? flow.stream->write_some({buffer_.data(), chunk}, ec)
                                : flow.stream->read_some({buffer_.data(), chunk}, ec);
  if (ec == TransportErrc::would_block) {
    want(flow, epoll_events(flow.stream->wanted_events()));
    return false;
  }
  if (ec) {
    const bool between = !sending && flow.left == (plan_.client ? plan_.response_bytes : plan_.request_bytes);
    if (between && !plan_.client && plan_.work == spec::FlowWork::crr) {
      retire(flow);  // the client is through with this connection
      return false;
    }
    fail(flow,
         ec == TransportErrc::eof && between && !plan_.client
             ? std::string("the client closed it")
             : fmt::format("{}: {}", sending ? "write" : "read", describe(ec, flow.stream->error_detail())));
    return false;
  }
  flow.progress_ns = now;
  if (plan_.work == spec::FlowWork::stream) return step_stream(flow, n, now);
  flow.left -= n;
  if (flow.left > 0) return true;
  if (sending) {
    // The request (client) or the response (server) is out: wait for the other.
    if (!plan_.client) ++flow.done;
    flow.state = Flow::State::receiving;
    flow.left = plan_.client ? plan_.response_bytes : plan_.request_bytes;
    want(flow, EPOLLIN);
    return false;
  }
  if (!plan_.client) {
    flow.state = Flow::State::sending;
    flow.left = plan_.response_bytes;
    return true;
  }
  return on_response(flow, now);
}

void FlowLoop::check_deadlines(std::int64_t now) {
  const auto seconds = [](std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); };
  for (const auto& f : flows_) {
    Flow& flow = *f;
    switch (flow.state) {
      case Flow::State::connecting:
        if (now - flow.since_ns > ns(plan_.connect_timeout))
          fail(flow, fmt::format("connect: no answer within {:g} s (--connect-timeout)",
                                 seconds(plan_.connect_timeout)));
        break;
      case Flow::State::finished:
        if (flow.unacknowledged != 0 && now - flow.progress_ns > ns(plan_.idle_timeout))
          fail(flow, fmt::format("nothing of its last bytes acknowledged for {:g} s (--idle-timeout)",
                                 seconds(plan_.idle_timeout)));
        break;
      case Flow::State::handshaking:
        if (now - flow.since_ns > ns(plan_.handshake_timeout))
          fail(flow, fmt::format("TLS handshake: not done within {:g} s (--handshake-timeout)",
                                 seconds(plan_.handshake_timeout)));
        break;
      case Flow::State::sending:
      case Flow::State::receiving:
        if (plan_.work == spec::FlowWork::stream) {
          // A bulk stream ends on time here too, for a flow that waits on its peer.
          if (end_ns_ > 0 && now >= end_ns_) {
            finish(flow);
            break;
          }
          if (!plan_.client) break;  // the client's side judges a stall: the server streams until the end
        }
        // A server's flow between requests waits on the client, which is no stall.
        if (!plan_.client && flow.state == Flow::State::receiving &&
            (flow.http_server ? !flow.http_server->mid_request() : flow.left == plan_.request_bytes))
          break;
        if (now - flow.progress_ns > ns(plan_.idle_timeout))
          fail(flow,
               fmt::format("nothing moved for {:g} s (--idle-timeout), {} a {}", seconds(plan_.idle_timeout),
                           flow.state == Flow::State::sending ? "sending" : "awaiting",
                           (flow.state == Flow::State::sending) == plan_.client ? "request" : "response"));
        break;
      default:
        break;
    }
  }
}

void FlowLoop::fail(Flow& flow, const std::string& why) {
  if (flow.state == Flow::State::failed) return;
  if (flow.state == Flow::State::connecting ||
      (plan_.quic && plan_.client && flow.state == Flow::State::handshaking))
    --connecting_;
  const bool through = flow.state == Flow::State::finished && flow.unacknowledged == 0;
  flow.state = Flow::State::failed;
  if (tally_.first_failure.empty()) tally_.first_failure = fmt::format("flow {}: {}", flow.index, why);
  failed_.fetch_add(1, std::memory_order_acq_rel);
  if (!through) finished_.fetch_add(1, std::memory_order_acq_rel);
  close_flow(flow);
}

void FlowLoop::want(Flow& flow, std::uint32_t events) {
  if (plan_.quic) return want_quic(flow, events);
  if (flow.events == events) return;
  if (flow.events == 0) {
    poller_.add(flow.fd(), events, flow.slot);
  } else {
    poller_.modify(flow.fd(), events, flow.slot);
  }
  flow.events = events;
}

// QUIC: a server's stream waits in the poll set for what it asked; a
// client's socket is watched for datagrams always (acknowledgements free a
// writer's buffer as responses feed a reader), and for room while the
// library has datagrams waiting, and its connection's next timer is kept.
void FlowLoop::want_quic(Flow& flow, std::uint32_t events) {
  Stream& stream = *flow.stream;
  if (!plan_.client) {
    if (flow.events != events)
      quic_poll_->set(flow.slot, stream, (events & EPOLLOUT) != 0 ? POLLOUT : POLLIN);
    flow.events = events;
    return;
  }
  const std::uint32_t wanted = EPOLLIN | (stream.loop_wants_write() ? EPOLLOUT : 0U);
  if (flow.events == 0) {
    poller_.add(flow.fd(), wanted, flow.slot);
  } else if (flow.events != wanted) {
    poller_.modify(flow.fd(), wanted, flow.slot);
  }
  flow.events = wanted;
  const std::optional<std::chrono::microseconds> timeout = stream.loop_timeout();
  const std::int64_t due = timeout ? measure::now_ns() + timeout->count() * 1000 : 0;
  if (due == flow.timer_ns) return;
  if (flow.timer_ns != 0) quic_timers_.erase({flow.timer_ns, flow.slot});
  if (due != 0) quic_timers_.emplace(due, flow.slot);
  flow.timer_ns = due;
}

void FlowLoop::unwatch(Flow& flow) {
  if (flow.timer_ns != 0) quic_timers_.erase({flow.timer_ns, flow.slot});
  flow.timer_ns = 0;
  if (quic_poll_ && flow.events != 0 && flow.stream) quic_poll_->set(flow.slot, *flow.stream, 0);
  if (!quic_poll_ && flow.events != 0 && flow.fd() >= 0) poller_.remove(flow.fd());
  flow.events = 0;
}

// Its connection closes; a server's is no longer held.
void FlowLoop::close_flow(Flow& flow) {
  unwatch(flow);
  if (const std::optional<UdpPath> path = flow.stream ? flow.stream->udp_path() : std::nullopt)
    measure::add_udp_path(tally_.udp_path, *path);
  if (!plan_.client && (flow.stream || flow.socket.valid())) held_.fetch_sub(1, std::memory_order_acq_rel);
  flow.stream.reset();
  flow.socket.reset();
  flow.http_client.reset();
  flow.http_server.reset();
}

}  // namespace tlscmp::kinds
