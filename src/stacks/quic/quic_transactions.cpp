#include "stacks/quic/quic_transactions.hpp"

#include <algorithm>

#include "error.hpp"
#include "transport/errors.hpp"

namespace tlscmp::stacks {

QuicTransactions::QuicTransactions(QuicStream& base, Shape shape)
    : Stream(UniqueFd()),
      base_(base),
      shape_(shape),
      out_bytes_(shape.client ? shape.request_bytes : shape.response_bytes),
      in_bytes_(shape.client ? shape.response_bytes : shape.request_bytes) {
  library_waits();  // its streams wait, each its own way; this, for the next stream
}

bool QuicTransactions::done() const {
  return current_ && sent_ == out_bytes_ && received_ >= in_bytes_;
}

void QuicTransactions::retire(std::error_code& ec) {
  // The peer's FIN came with its message's last byte, or comes right after.
  std::byte extra{};
  current_->read_some({&extra, 1}, ec);
  if (!ec) {
    error_detail_ = shape_.client ? "the server sent more than a response on a transaction's stream"
                                  : "the client sent more than a request on a transaction's stream";
    ec = TransportErrc::tls_failure;
    return;
  }
  if (ec != TransportErrc::eof) {
    error_detail_ = current_->error_detail();
    return;
  }
  ec.clear();
  current_.reset();
}

void QuicTransactions::begin_current(std::error_code& ec) {
  if ((ec = current_->enter_transfer_phase(shape_.idle, shape_.min_rate))) return;
  sent_ = received_ = 0;
  ++streams_;
}

void QuicTransactions::open_next(std::error_code& ec) {
  if (current_) retire(ec);
  if (ec) return;
  try {
    current_ = base_.open_sibling();
  } catch (const Error& e) {
    error_detail_ = e.what();
    ec = TransportErrc::tls_failure;
    return;
  }
  begin_current(ec);
}

void QuicTransactions::take_next(std::error_code& ec) {
  if (current_) retire(ec);
  if (ec) return;
  for (;;) {
    bool ended = false;
    current_ = base_.accept_sibling(wait_limit(), ended);
    if (current_) break;
    if (ended) {
      ec = TransportErrc::truncated;  // the connection closed without the client's end
      return;
    }
    // The first stream readable: the client's end (a FIN), or bytes it has no business sending.
    if (base_.readable_within(std::chrono::nanoseconds::zero(), ec)) {
      std::byte extra{};
      base_.read_some({&extra, 1}, ec);
      if (!ec) {
        error_detail_ = "the client sent bytes on the connection's first stream during the transactions";
        ec = TransportErrc::tls_failure;
      }
      if (ec == TransportErrc::eof) ended_ = true;
      return;
    }
    if ((ec = nothing_came())) return;
  }
  begin_current(ec);
}

std::size_t QuicTransactions::read_some(std::span<std::byte> buf, std::error_code& ec) {
  if (ended_) return base_.read_some(buf, ec);
  if (!shape_.client && (!current_ || done())) take_next(ec);
  if (ec) return 0;
  if (!current_) {
    ec = TransportErrc::not_connected;  // a client reading before its request
    return 0;
  }
  const std::size_t n = current_->read_some(buf, ec);
  if (ec) error_detail_ = current_->error_detail();
  received_ += n;
  return n;
}

std::size_t QuicTransactions::write_some(std::span<const std::byte> buf, std::error_code& ec) {
  if (shape_.client && (!current_ || done())) open_next(ec);
  if (ec) return 0;
  if (!current_ || sent_ >= out_bytes_) {
    error_detail_ = "a message longer than the test's on a transaction's stream";
    ec = TransportErrc::tls_failure;
    return 0;
  }
  // The write that can end the message ends the stream too: its FIN goes
  // in the packet of the message's last bytes (a FIN of its own would wait
  // for the library's next turn, up to milliseconds).
  const std::uint64_t left = out_bytes_ - sent_;
  const auto room = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), left));
  const std::size_t n =
      room == left ? current_->write_last(buf.first(room), ec) : current_->write_some(buf.first(room), ec);
  if (ec) {
    error_detail_ = current_->error_detail();
    return 0;
  }
  sent_ += n;
  return n;
}

void QuicTransactions::shutdown_send(std::error_code& ec) {
  if (current_ && shape_.client) retire(ec);
  if (ec) return;
  current_.reset();
  ended_ = true;
  base_.shutdown_send(ec);
  if (ec) error_detail_ = base_.error_detail();
}

bool QuicTransactions::has_buffered() const {
  return ended_ || !current_ ? base_.has_buffered() : current_->has_buffered();
}

bool QuicTransactions::readable_within(std::chrono::nanoseconds wait, std::error_code& ec) {
  if (ended_ || !current_) return base_.readable_within(wait, ec);
  return current_->readable_within(wait, ec);
}

}  // namespace tlscmp::stacks
