#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "protocol/messages.hpp"
#include "transport/deadline.hpp"
#include "transport/stream.hpp"

namespace tlscmp::app {

// Hands data connections to the control sessions waiting for them. A control
// session opens a ticket (a fresh random cookie); the thread that accepted a
// data connection delivers its stream by cookie; the session takes it.
class PendingTests {
 public:
  class Ticket {
   public:
    Ticket(PendingTests& owner, protocol::Cookie cookie) : owner_(owner), cookie_(cookie) {}
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();  // forgets the cookie; a stream delivered but never taken is closed

    const protocol::Cookie& cookie() const { return cookie_; }
    // The delivered stream, or nullptr if none came before the deadline.
    std::unique_ptr<Stream> wait(Deadline deadline);

   private:
    PendingTests& owner_;
    protocol::Cookie cookie_;
  };

  std::unique_ptr<Ticket> open();
  // False if no session waits for this cookie, or one already has its stream.
  bool deliver(const protocol::Cookie& cookie, std::unique_ptr<Stream> stream);
  // Wakes every waiting session empty-handed, now and from now on (server shutdown).
  void cancel_all();

 private:
  struct Slot {
    std::unique_ptr<Stream> stream;
    bool delivered = false;
  };
  std::mutex mutex_;
  std::condition_variable delivered_;
  std::map<protocol::Cookie, Slot> slots_;
  bool cancelled_ = false;
};

}  // namespace tlscmp::app
