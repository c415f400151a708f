// The traffic of a flows event loop's established flows: bulk streams,
// transactions closed and open loop, their end (loop.cpp sets the flows up
// and waits on their events).

#include <fmt/format.h>

#include "kinds/flows/loop_parts.hpp"
#include "measure/clock.hpp"
#include "tls/tls_stream.hpp"
#include "transport/errors.hpp"

namespace tlscmp::kinds {

using namespace loop_parts;

// stream: `n` more bytes moved; false once the flow is through (its share
// of -n, or the time).
bool FlowLoop::step_stream(Flow& flow, std::size_t n, std::int64_t now) {
  flow.done += n;
  flow.left -= n;
  bytes_.fetch_add(n, std::memory_order_release);
  if (!plan_.sends) tally_.first_request_ns = std::min(tally_.first_request_ns, now);
  tally_.last_response_ns = std::max(tally_.last_response_ns, now);
  if (flow.left > 0 && (end_ns_ == 0 || now < end_ns_)) return true;
  finish(flow);
  return false;
}

// Client: a response in whole; crr closes its connection.
bool FlowLoop::on_response(Flow& flow, std::int64_t now) {
  tally_.latency.add(measure::ns_to_us(now - flow.since_ns));
  tally_.last_response_ns = std::max(tally_.last_response_ns, now);
  ++flow.done;
  if (plan_.work == spec::FlowWork::crr) {
    close_flow(flow);  // --close reset: SO_LINGER 0, a reset, and no TIME_WAIT here
    flow.state = Flow::State::waiting;
  }
  return next_transaction(flow, now);
}

// crr server: a connection the client closed after its response; its slot
// takes the next one.
void FlowLoop::retire(Flow& flow) {
  tally_.retired += flow.done;
  flow.done = 0;
  close_flow(flow);
  flow.state = Flow::State::finished;
  free_slots_.push_back(flow.slot);
}

void FlowLoop::start_stream(Flow& flow, std::int64_t now) {
  flow.state = plan_.sends ? Flow::State::sending : Flow::State::receiving;
  flow.left = flow.quota > 0 ? flow.quota : UINT64_MAX;
  flow.since_ns = flow.progress_ns = now;
  if (plan_.sends) tally_.first_request_ns = std::min(tally_.first_request_ns, now);
  want(flow, plan_.sends ? EPOLLOUT : EPOLLIN);
}

bool FlowLoop::next_transaction(Flow& flow, std::int64_t now) {
  if (plan_.rate_tps > 0) return schedule_next(flow, now);
  const bool counted = plan_.quota > 0;
  if ((counted && flow.quota == 0) || (!counted && now >= end_ns_)) {
    finish(flow);
    return false;
  }
  if (counted) --flow.quota;
  if (plan_.work != spec::FlowWork::crr) return start_request(flow, now, now);
  connect(flow, now);
  return false;
}

// Open loop: the next request is due a period after the last one was; one
// already due goes at once (the backlog counts in its latency), a later one
// waits in due_.
bool FlowLoop::schedule_next(Flow& flow, std::int64_t now) {
  flow.due_ns += period_ns_;
  if (flow.due_ns >= end_ns_) {
    finish(flow);
    return false;
  }
  if (flow.due_ns <= now) return start_request(flow, flow.due_ns, now);
  flow.state = Flow::State::idle;
  due_.emplace(flow.due_ns, flow.slot);
  want(flow, EPOLLIN);
  return false;
}

bool FlowLoop::start_request(Flow& flow, std::int64_t since_ns, std::int64_t now) {
  if (flow.http_client) flow.http_client->ask(since_ns);
  flow.state = Flow::State::sending;
  flow.left = plan_.request_bytes;
  flow.since_ns = since_ns;
  flow.progress_ns = now;
  tally_.first_request_ns = std::min(tally_.first_request_ns, since_ns);
  return true;
}

void FlowLoop::finish(Flow& flow) {
  flow.state = Flow::State::finished;
  // A QUIC client's connection goes on running from its loop, as TCP's
  // kernel would: a sender's last bytes still go out, and it is through
  // once the server acknowledged them all; a receiver acknowledges the last
  // it took.
  const bool quic_client = plan_.quic && plan_.client && flow.stream;
  if (quic_client && plan_.sends) {
    flow.unacknowledged = UINT64_MAX;
    watch_delivery(flow, measure::now_ns());
  } else {
    finished_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (plan_.work == spec::FlowWork::rr || plan_.work == spec::FlowWork::http || quic_client)
    return want(flow, EPOLLIN);
  // A bulk stream's peer may go on sending until the test ends; a crr
  // connector holds no connection.
  unwatch(flow);
}

// QUIC client sender, finished: through once nothing it sent awaits
// acknowledgement; progress while the count falls.
void FlowLoop::watch_delivery(Flow& flow, std::int64_t now) {
  if (flow.unacknowledged == 0) return;
  const std::uint64_t left = flow.stream->unacknowledged_bytes();
  if (left < flow.unacknowledged) flow.progress_ns = now;
  flow.unacknowledged = left;
  if (left == 0) finished_.fetch_add(1, std::memory_order_acq_rel);
}

void FlowLoop::release_due(std::int64_t now) {
  while (!due_.empty() && due_.top().first <= now) {
    Flow& flow = *flows_[due_.top().second];
    due_.pop();
    if (flow.state != Flow::State::idle) continue;  // failed meanwhile
    if (start_request(flow, flow.due_ns, now)) {
      drive(flow, now);
    }
  }
}

std::chrono::nanoseconds FlowLoop::until_next_due(std::int64_t now) const {
  std::int64_t wait = ns(kTick);
  if (!due_.empty()) wait = std::min(wait, due_.top().first - now);
  if (!quic_timers_.empty()) wait = std::min(wait, quic_timers_.begin()->first - now);
  return std::chrono::nanoseconds(std::max<std::int64_t>(0, wait));
}

// A flow's I/O while it can go on: a request or response whole; a bulk
// stream a few writes (reads) at a time, so that every flow of the loop
// gets its turn (epoll reports it again while it can go on).
void FlowLoop::drive(Flow& flow, std::int64_t now) {
  const int most = plan_.work == spec::FlowWork::stream ? kStreamBurst : INT32_MAX;
  for (int i = 0; i < most && step_io(flow, now); ++i) {
  }
}

// A flow with nothing under way: bytes here are the peer's TLS session
// tickets, or its close.
void FlowLoop::watch_idle(Flow& flow) {
  // A bulk stream's receiver: the sender may begin before this side's own
  // begin comes (its go reached the other end first, or this loop was off
  // the CPU). Its bytes wait in the socket, unwatched, until the traffic
  // begins here: kick_traffic starts every idle flow and reads them then.
  if (plan_.work == spec::FlowWork::stream && !plan_.sends && !traffic_ && !plan_.quic) {
    std::byte first{};
    // Watched for the peer's close alone (0 would read as "not in the set").
    if (::recv(flow.fd(), &first, 1, MSG_PEEK | MSG_DONTWAIT) > 0) return want(flow, EPOLLRDHUP);
  }
  std::error_code ec;
  const std::size_t n = flow.stream->read_some({buffer_.data(), buffer_.size()}, ec);
  if (ec == TransportErrc::would_block) return want(flow, epoll_events(flow.stream->wanted_events()));
  if (ec) return fail(flow, fmt::format("while idle: {}", describe(ec, flow.stream->error_detail())));
  // HTTP/2's SETTINGS and window updates come unasked: its framing takes them.
  if (flow.http_client) {
    take_http(flow, {buffer_.data(), n}, measure::now_ns());
    return;
  }
  if (n > 0) fail(flow, fmt::format("{} bytes came while nothing was asked", n));
}

// http: what the flow's framing has to send, then what came; true while it
// can go on at once.
bool FlowLoop::step_http(Flow& flow, std::int64_t now) {
  if (!write_http(flow, now)) return false;
  std::error_code ec;
  const std::size_t n = flow.stream->read_some({buffer_.data(), buffer_.size()}, ec);
  if (ec == TransportErrc::would_block) {
    want(flow, epoll_events(flow.stream->wanted_events()));
    return false;
  }
  if (ec) {
    fail(flow, ec == TransportErrc::eof && !plan_.client
                   ? std::string("the client closed it")
                   : fmt::format("read: {}", describe(ec, flow.stream->error_detail())));
    return false;
  }
  flow.progress_ns = now;
  return take_http(flow, {buffer_.data(), n}, now);
}

// What the flow's framing has to send, written; false where the socket
// takes no more now (the flow waits for it) or the flow failed. A server's
// answers count once out.
bool FlowLoop::write_http(Flow& flow, std::int64_t now) {
  for (;;) {
    const std::span<const std::byte> out =
        flow.http_client ? flow.http_client->output() : flow.http_server->output();
    if (out.empty()) break;
    std::error_code ec;
    const std::size_t n = flow.stream->write_some(out, ec);
    if (ec == TransportErrc::would_block) {
      want(flow, epoll_events(flow.stream->wanted_events()));
      return false;
    }
    if (ec) {
      fail(flow, fmt::format("write: {}", describe(ec, flow.stream->error_detail())));
      return false;
    }
    flow.progress_ns = now;
    flow.http_client ? flow.http_client->sent(n) : flow.http_server->sent(n);
  }
  if (flow.http_server && flow.http_server->answered() != flow.done) {
    tally_.first_request_ns = std::min(tally_.first_request_ns, now);
    tally_.last_response_ns = std::max(tally_.last_response_ns, now);
    flow.done = flow.http_server->answered();
  }
  return true;
}

// The peer's bytes into the flow's framing: a server's answers go with the
// next write; each response a client takes is a transaction, and the next
// request is asked. False once the flow is through, waits, or failed.
bool FlowLoop::take_http(Flow& flow, std::span<const std::byte> bytes, std::int64_t now) {
  if (flow.http_server) {
    if (std::string failed = flow.http_server->input(bytes); !failed.empty()) {
      write_http(flow, now);  // its refusal, where the socket takes it
      fail(flow, failed);
      return false;
    }
    return true;
  }
  http_answers_.clear();
  if (std::string failed = flow.http_client->input(bytes, now, http_answers_); !failed.empty()) {
    fail(flow, failed);
    return false;
  }
  bool more = flow.state == Flow::State::sending || flow.state == Flow::State::receiving;
  for (const framing::HttpAnswer& answer : http_answers_) {
    if (!more) {
      fail(flow, "a response came while nothing was asked");
      return false;
    }
    flow.since_ns = answer.asked_ns;
    more = on_response(flow, answer.done_ns);
  }
  return more;
}

void FlowLoop::kick_traffic(std::int64_t now) {
  traffic_ = true;
  end_ns_ = begin_end_ns_.load(std::memory_order_relaxed);
  const bool open = plan_.rate_tps > 0;
  if (open) period_ns_ = static_cast<std::int64_t>(1e9 * plan_.flows / plan_.rate_tps);
  for (const auto& flow : flows_) {
    now = measure::now_ns();  // each flow's first request (connect) goes out now, after the others'
    if (plan_.work == spec::FlowWork::crr) {
      if (flow->state == Flow::State::waiting) next_transaction(*flow, now);
      continue;
    }
    if (flow->state != Flow::State::idle) continue;
    if (plan_.work == spec::FlowWork::stream) {
      start_stream(*flow, now);
      drive(*flow, now);
      continue;
    }
    // Open loop: flow i's first request is due i / rate from now, so that
    // every flow's requests together come evenly spaced.
    if (open) {
      flow->due_ns = begin_go_ns_.load(std::memory_order_relaxed) +
                     static_cast<std::int64_t>(1e9 * flow->index / plan_.rate_tps) - period_ns_;
    }
    if (next_transaction(*flow, now)) {
      drive(*flow, now);
    }
  }
}

}  // namespace tlscmp::kinds
