#include "session/pending_tests.hpp"

#include <sys/random.h>

#include "error.hpp"

namespace tlscmp::session {
namespace {

// Unguessable, so that no other client can take over a test's data connection.
protocol::Cookie random_cookie() {
  protocol::Cookie cookie{};
  std::size_t filled = 0;
  while (filled < cookie.size()) {
    const ssize_t n = ::getrandom(cookie.data() + filled, cookie.size() - filled, 0);
    if (n < 0) throw Error("cannot draw random bytes for a test cookie");
    filled += static_cast<std::size_t>(n);
  }
  return cookie;
}

}  // namespace

std::unique_ptr<PendingTests::Ticket> PendingTests::open(std::uint32_t streams, std::uint64_t handshakes,
                                                         bool keeps_connections) {
  std::lock_guard lock(mutex_);
  protocol::Cookie cookie;
  do {
    cookie = random_cookie();
  } while (slots_.contains(cookie));
  Slot slot;
  slot.handshakes = handshakes;
  slot.keeps_connections = keeps_connections;
  if (handshakes == 0) slot.streams.resize(streams);
  slots_.emplace(cookie, std::move(slot));
  return std::make_unique<Ticket>(*this, cookie);
}

std::unique_ptr<PendingTests::Ticket> PendingTests::open(std::shared_ptr<ConnectionSink> sink) {
  auto ticket = open(0, 0);
  std::lock_guard lock(mutex_);
  slots_.at(ticket->cookie()).sink = std::move(sink);
  return ticket;
}

std::shared_ptr<PendingTests::ConnectionSink> PendingTests::sink(const protocol::Cookie& cookie) const {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(cookie);
  if (cancelled_ || it == slots_.end()) return nullptr;
  return it->second.sink;
}

bool PendingTests::deliver(const protocol::Cookie& cookie, std::uint32_t index,
                           std::unique_ptr<Stream> stream) {
  {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(cookie);
    if (cancelled_ || it == slots_.end() || index >= it->second.streams.size() || it->second.streams[index]) {
      return false;
    }
    it->second.streams[index] = std::move(stream);
    ++it->second.arrived;
  }
  delivered_.notify_all();
  return true;
}

std::uint32_t PendingTests::missing(const protocol::Cookie& cookie) const {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(cookie);
  if (cancelled_ || it == slots_.end()) return 0;
  return static_cast<std::uint32_t>(it->second.streams.size()) - it->second.arrived;
}

bool PendingTests::keeps_connections(const protocol::Cookie& cookie) const {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(cookie);
  return it != slots_.end() && it->second.keeps_connections;
}

bool PendingTests::probe(const protocol::Cookie& cookie) {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(cookie);
  if (cancelled_ || it == slots_.end() || it->second.probes >= it->second.handshakes) return false;
  ++it->second.probes;
  return true;
}

std::uint64_t PendingTests::Ticket::probes() const {
  std::lock_guard lock(owner_.mutex_);
  auto it = owner_.slots_.find(cookie_);
  return it == owner_.slots_.end() ? 0 : it->second.probes;
}

void PendingTests::cancel_all() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  delivered_.notify_all();
}

PendingTests::Ticket::~Ticket() {
  std::vector<std::unique_ptr<Stream>> unclaimed;  // closed after the lock is released
  std::lock_guard lock(owner_.mutex_);
  auto it = owner_.slots_.find(cookie_);
  if (it == owner_.slots_.end()) return;
  unclaimed = std::move(it->second.streams);
  owner_.slots_.erase(it);
}

std::optional<std::vector<std::unique_ptr<Stream>>> PendingTests::Ticket::wait(Deadline deadline) {
  std::unique_lock lock(owner_.mutex_);
  auto it = owner_.slots_.find(cookie_);
  const auto all_came = [&] { return it->second.arrived == it->second.streams.size(); };
  owner_.delivered_.wait_until(lock, deadline.at(), [&] { return all_came() || owner_.cancelled_; });
  if (!all_came() || owner_.cancelled_) return std::nullopt;
  std::vector<std::unique_ptr<Stream>> streams = std::move(it->second.streams);
  it->second.streams.clear();
  it->second.arrived = 0;
  return streams;
}

std::uint32_t PendingTests::Ticket::arrived() const {
  std::lock_guard lock(owner_.mutex_);
  auto it = owner_.slots_.find(cookie_);
  return it == owner_.slots_.end() ? 0 : it->second.arrived;
}

}  // namespace tlscmp::session
