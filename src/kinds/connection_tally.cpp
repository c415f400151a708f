#include "kinds/connection_tally.hpp"

#include <poll.h>

#include <fmt/format.h>

#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "session/control.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {

bool ConnectionTally::begin() {
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  ++in_flight_;
  ++totals_.events;
  return true;
}

void ConnectionTally::end(const Ended& ended) {
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
    ++totals_.events;
    if (ended.failure.empty()) {
      ++totals_.connections;
      if (ended.resumed) ++totals_.resumed;
    } else {
      ++totals_.failed;
      if (totals_.first_failure.empty()) totals_.first_failure = ended.failure;
    }
    totals_.requests += ended.requests;
    totals_.bytes_received += ended.received;
    totals_.bytes_sent += ended.sent;
    totals_.cpu_s += ended.cpu_s;
  }
  idle_.notify_all();
}

void ConnectionTally::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

ConnectionTally::Totals ConnectionTally::settle(Deadline deadline) {
  std::unique_lock lock(mutex_);
  idle_.wait_until(lock, deadline.at(), [&] { return in_flight_ == 0; });
  Totals totals = totals_;
  if (first_port_ && last_port_) totals.port = measure::udp_path_between(*first_port_, *last_port_);
  return totals;
}

std::uint64_t ConnectionTally::events() const {
  std::lock_guard lock(mutex_);
  return totals_.events;
}

void ConnectionTally::note_tls(const tls::SessionInfo& info) {
  std::lock_guard lock(mutex_);
  if (tls_.has_value() || info.ktls_send || info.ktls_receive) return;
  tls_ = info;
}

bool ConnectionTally::has_tls() const {
  std::lock_guard lock(mutex_);
  return tls_.has_value();
}

std::optional<tls::SessionInfo> ConnectionTally::tls() const {
  std::lock_guard lock(mutex_);
  return tls_;
}

void ConnectionTally::note_port(const std::optional<UdpPath>& now) {
  if (!now) return;
  const std::lock_guard lock(mutex_);
  if (!first_port_) first_port_ = now;
  // The latest counts: they only grow.
  if (!last_port_ || now->datagrams_sent + now->datagrams_received >=
                         last_port_->datagrams_sent + last_port_->datagrams_received)
    last_port_ = now;
}

SideResult server_count(const ConnectionTally::Totals& totals, double elapsed_us) {
  SideResult mine;
  mine.role = Role::receiver;
  mine.connections = totals.connections;
  mine.resumed = totals.resumed;
  mine.failed = totals.failed;
  mine.bytes = totals.bytes_received;
  mine.wire_bytes_sent = totals.bytes_sent;
  mine.cpu_user_s = totals.cpu_s;
  mine.elapsed_us = elapsed_us;
  mine.facts.udp_path = totals.port;
  return mine;
}

namespace {
// How often the control session looks at its connections while it waits.
constexpr std::chrono::milliseconds kCheckInterval{250};
}  // namespace

std::string await_client_count(Stream& control, ConnectionTally& tally, const protocol::TestRequest& request,
                               session::ServerSide& side, std::string_view what) {
  const session::Timeouts& t = side.config().timeouts;
  const std::int64_t start_ns = measure::now_ns();
  const auto max_duration =
      side.config().max_duration +
      (request.test.duration_ms > 0
           ? std::chrono::duration_cast<std::chrono::milliseconds>(session::kTimedDrainGrace)
           : std::chrono::milliseconds(0));
  std::string stopped;
  std::uint64_t seen = tally.events();
  std::int64_t last_progress_ns = start_ns;
  for (;;) {
    if (wait_fd(control.native_handle(), POLLIN, Deadline::after(kCheckInterval)) != TransportErrc::timeout)
      return stopped;  // the client's count, or an error that reading it will name
    if (side.stopping()) throw Error("the server is stopping");
    const std::int64_t now = measure::now_ns();
    if (const std::uint64_t events = tally.events(); events != seen) {
      seen = events;
      last_progress_ns = now;
    } else if (now - last_progress_ns > std::chrono::nanoseconds(t.idle).count()) {
      throw Error(fmt::format("{}: the client made no connection for {:g} s", what,
                              std::chrono::duration<double>(t.idle).count()));
    }
    if (stopped.empty() && now - start_ns > std::chrono::nanoseconds(max_duration).count()) {
      tally.close();
      stopped =
          fmt::format("the test ran past this server's --max-duration of {:g} s; it took no more connections",
                      std::chrono::duration<double>(side.config().max_duration).count());
    }
  }
}

}  // namespace tlscmp::kinds
