// A QUIC connection's I/O as QuicStream asks it of the library: its UDP
// path and the counts of what crosses it, waits, streams, FINs, what the
// peer has yet to acknowledge, an event loop's timers, the close.

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <new>
#include <vector>

#include "error.hpp"
#include "stacks/quic/quic_internal.hpp"

namespace tlscmp::stacks {

#if TLSCMP_HAVE_QUIC

namespace detail {

timeval to_timeval(std::chrono::microseconds limit) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(limit).count();
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(us / 1'000'000);
  tv.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
  return tv;
}

// Polls `own` for up to `limit`, watching the listener
// too where `watch` wants it (ListenerWatch); own's revents are set. 1 if
// any of own is ready, 0 if none came within `limit`, -1 if the poll failed
// (the call that follows says why).
int poll_watching(std::span<SSL_POLL_ITEM> own, std::chrono::microseconds limit,
                  detail::ListenerWatch* watch) {
  const auto until = std::chrono::steady_clock::now() + limit;
  thread_local std::vector<SSL_POLL_ITEM> items;
  for (;;) {
    items.assign(own.begin(), own.end());
    items.emplace_back();
    std::size_t count = own.size();
    const bool watching = watch != nullptr && watch->wanted();
    if (watching) {
      items[count].desc = SSL_as_poll_descriptor(watch->listener());
      items[count].events = SSL_POLL_EVENT_IC;
      ++count;
    }
    const auto left = std::max(
        std::chrono::duration_cast<std::chrono::microseconds>(until - std::chrono::steady_clock::now()),
        std::chrono::microseconds::zero());
    const timeval tv = to_timeval(left);
    std::size_t ready = 0;
    const int polled = SSL_poll(items.data(), count, sizeof items[0], &tv, 0, &ready);
    const bool incoming = watching && (items[count - 1].revents & SSL_POLL_EVENT_IC) != 0;
    if (incoming) watch->saw_incoming();
    bool any = false;
    for (std::size_t i = 0; i < own.size(); ++i) {
      own[i].revents = items[i].revents;
      any = any || items[i].revents != 0;
    }
    if (polled != 1) {
      ERR_clear_error();
      return -1;
    }
    if (any) return 1;
    if (!incoming || left.count() == 0) return 0;
  }
}

}  // namespace detail

namespace {

// A filter under a client connection's QUIC stack, over its datagram BIO:
// counts what the library hands the kernel and takes from it. The library
// moves datagrams only in BIO_sendmmsg and BIO_recvmmsg; everything else
// (addresses, MTU, poll descriptors) is the datagram BIO's to answer.
// The counts of a port's listeners (shards) are one, held by each filter.
struct Counts {
  std::atomic<std::uint64_t> sent{0}, received{0}, bytes_sent{0}, bytes_received{0}, send_calls{0};
  std::atomic<std::uint32_t> largest_sent{0};
  std::atomic<int> holders{1};
};

int count_sends(BIO* bio, BIO_MSG* msg, std::size_t stride, std::size_t num_msg, std::uint64_t flags,
                std::size_t* processed) {
  const int ok = BIO_sendmmsg(BIO_next(bio), msg, stride, num_msg, flags, processed);
  auto* counts = static_cast<Counts*>(BIO_get_data(bio));
  counts->send_calls.fetch_add(1, std::memory_order_relaxed);
  if (ok != 1) return ok;
  for (std::size_t i = 0; i < *processed; ++i) {
    const auto* m = reinterpret_cast<const BIO_MSG*>(reinterpret_cast<const char*>(msg) + i * stride);
    counts->sent.fetch_add(1, std::memory_order_relaxed);
    counts->bytes_sent.fetch_add(m->data_len, std::memory_order_relaxed);
    const auto size = static_cast<std::uint32_t>(m->data_len);
    if (size > counts->largest_sent.load(std::memory_order_relaxed))
      counts->largest_sent.store(size, std::memory_order_relaxed);
  }
  return ok;
}

int count_receives(BIO* bio, BIO_MSG* msg, std::size_t stride, std::size_t num_msg, std::uint64_t flags,
                   std::size_t* processed) {
  const int ok = BIO_recvmmsg(BIO_next(bio), msg, stride, num_msg, flags, processed);
  if (ok != 1) return ok;
  auto* counts = static_cast<Counts*>(BIO_get_data(bio));
  for (std::size_t i = 0; i < *processed; ++i) {
    const auto* m = reinterpret_cast<const BIO_MSG*>(reinterpret_cast<const char*>(msg) + i * stride);
    counts->received.fetch_add(1, std::memory_order_relaxed);
    counts->bytes_received.fetch_add(m->data_len, std::memory_order_relaxed);
  }
  return ok;
}

long pass_ctrl(BIO* bio, int cmd, long larg, void* parg) {
  BIO* next = BIO_next(bio);
  return next == nullptr ? 0 : BIO_ctrl(next, cmd, larg, parg);
}

int make_counts(BIO* bio) {
  BIO_set_data(bio, new (std::nothrow) Counts);
  BIO_set_init(bio, BIO_get_data(bio) != nullptr ? 1 : 0);
  return BIO_get_data(bio) != nullptr ? 1 : 0;
}

int free_counts(BIO* bio) {
  auto* counts = static_cast<Counts*>(BIO_get_data(bio));
  if (counts != nullptr && counts->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) delete counts;
  BIO_set_data(bio, nullptr);
  return 1;
}

int counting_type() {
  static const int type = BIO_get_new_index() | BIO_TYPE_FILTER;
  return type;
}

const BIO_METHOD* counting_method() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(counting_type(), "tlscmp datagram counts");
    if (m == nullptr) return static_cast<BIO_METHOD*>(nullptr);
    BIO_meth_set_sendmmsg(m, count_sends);
    BIO_meth_set_recvmmsg(m, count_receives);
    BIO_meth_set_ctrl(m, pass_ctrl);
    BIO_meth_set_create(m, make_counts);
    BIO_meth_set_destroy(m, free_counts);
    return m;
  }();
  return method;
}

// The counts of `ssl`'s network BIO, if it is the counting filter.
const Counts* counts_of(SSL* ssl) {
  BIO* bio = SSL_get_rbio(ssl);
  if (bio == nullptr || BIO_method_type(bio) != counting_type()) return nullptr;
  return static_cast<const Counts*>(BIO_get_data(bio));
}

}  // namespace

namespace detail {

// A datagram BIO on `fd` under the counting filter (the filter left out
// where the library refuses the method); throws if there is none.
BIO* counted_datagrams(int fd, const char* whose, SSL* counted_with) {
  BIO* dgram = BIO_new_dgram(fd, BIO_NOCLOSE);
  if (dgram == nullptr) throw_tls_error(fmt::format("cannot make {} datagram BIO", whose));
  BIO* counting = counting_method() != nullptr ? BIO_new(counting_method()) : nullptr;
  if (counting == nullptr) {
    BIO_free(dgram);
    throw_tls_error("cannot make the datagram counting BIO");
  }
  if (const Counts* shared = counted_with != nullptr ? counts_of(counted_with) : nullptr) {
    free_counts(counting);
    const_cast<Counts*>(shared)->holders.fetch_add(1, std::memory_order_acq_rel);
    BIO_set_data(counting, const_cast<Counts*>(shared));
  }
  return BIO_push(counting, dgram);
}

std::uint64_t port_datagrams(SSL* listener) {
  const Counts* counts = counts_of(listener);
  return counts != nullptr ? counts->received.load(std::memory_order_relaxed) : 0;
}

void attach_udp(SSL* ssl, int fd) {
  BIO* bio = counted_datagrams(fd, "a");
  SSL_set_bio(ssl, bio, bio);
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0)
    throw Error("the QUIC connection's UDP socket is not connected");
  BIO_ADDR* address = BIO_ADDR_new();
  bool made = false;
  if (peer.ss_family == AF_INET) {
    const auto* in4 = reinterpret_cast<const sockaddr_in*>(&peer);
    made = BIO_ADDR_rawmake(address, AF_INET, &in4->sin_addr, sizeof in4->sin_addr, in4->sin_port) == 1;
  } else if (peer.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    made = BIO_ADDR_rawmake(address, AF_INET6, &in6->sin6_addr, sizeof in6->sin6_addr, in6->sin6_port) == 1;
  }
  const bool set = made && SSL_set1_initial_peer_addr(ssl, address) == 1;
  BIO_ADDR_free(address);
  if (!set) throw_tls_error("cannot give the QUIC connection its server's address");
  if (SSL_set_blocking_mode(ssl, 0) != 1) throw_tls_error("cannot make the QUIC connection non-blocking");
}

bool wait_quic(SSL* ssl, bool write, std::chrono::microseconds limit, ListenerWatch* watch) {
  SSL_POLL_ITEM item{};
  item.desc = SSL_as_poll_descriptor(ssl);
  item.events = write ? SSL_POLL_EVENT_W : SSL_POLL_EVENT_R;
  // A connection's default stream comes with its first bytes: until then
  // (the handshake included) a client waits to be able to open it, a
  // server for the client's.
  if (SSL_get_stream_id(ssl) == UINT64_MAX)
    item.events |= SSL_is_server(ssl) == 1 ? SSL_POLL_EVENT_ISB : SSL_POLL_EVENT_OSB;
  // A failed poll: the call that follows says what is wrong.
  return poll_watching({&item, 1}, limit, watch) != 0;
}

SSL* new_stream(SSL* connection) {
  SSL* stream = SSL_new_stream(connection, 0);
  if (stream == nullptr) throw_tls_error("cannot open a QUIC stream");
  SSL_set_blocking_mode(stream, 0);
  return stream;
}

SSL* accept_stream(SSL* connection, std::chrono::milliseconds wait, bool& ended, ListenerWatch* watch,
                   SSL* also) {
  ended = false;
  SSL* stream = SSL_accept_stream(connection, SSL_ACCEPT_STREAM_NO_BLOCK);
  if (stream == nullptr) {
    ERR_clear_error();
    SSL_POLL_ITEM items[2] = {};
    items[0].desc = SSL_as_poll_descriptor(connection);
    items[0].events = SSL_POLL_EVENT_ISB | SSL_POLL_EVENT_EC;  // a stream, or the connection's end
    if (also != nullptr) {
      items[1].desc = SSL_as_poll_descriptor(also);
      items[1].events = SSL_POLL_EVENT_R;
    }
    poll_watching({items, also != nullptr ? 2U : 1U}, wait, watch);
    if (items[1].revents != 0) return nullptr;  // `also` readable: the caller looks
    stream = SSL_accept_stream(connection, SSL_ACCEPT_STREAM_NO_BLOCK);
    ERR_clear_error();
  }
  if (stream == nullptr) {
    SSL_CONN_CLOSE_INFO closed{};
    ended = SSL_get_conn_close_info(connection, &closed, sizeof closed) == 1;
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_blocking_mode(stream, 0);
  return stream;
}

bool conclude_stream(SSL* ssl) {
  return SSL_stream_conclude(ssl, 0) == 1;
}

int write_concluding(SSL* ssl, const void* data, int length) {
  std::size_t written = 0;
  if (SSL_write_ex2(ssl, data, static_cast<std::size_t>(length), SSL_WRITE_FLAG_CONCLUDE, &written) != 1)
    return -1;  // SSL_get_error(ssl, -1) says why, as for SSL_write
  return static_cast<int>(written);
}

std::uint64_t unacknowledged_bytes(SSL* ssl) {
  // A connection the peer closed (it had all it wanted) acknowledges no more.
  SSL_CONN_CLOSE_INFO closed{};
  if (SSL_get_conn_close_info(SSL_get0_connection(ssl), &closed, sizeof closed) == 1) return 0;
  ERR_clear_error();
  std::uint64_t used = 0;
  if (SSL_get_generic_value_uint(ssl, SSL_VALUE_STREAM_WRITE_BUF_USED, &used) != 1) {
    ERR_clear_error();
    return 0;
  }
  return used;
}

void wait_quic_events(SSL* ssl, std::chrono::milliseconds limit, ListenerWatch* watch) {
  SSL_POLL_ITEM item{};
  item.desc = SSL_as_poll_descriptor(ssl);
  item.events = 0;  // the connection's end alone (non-maskable): wakes at `limit`
  poll_watching({&item, 1}, limit, watch);
}

std::optional<UdpPath> udp_path(SSL* ssl) {
  const Counts* counts = counts_of(ssl);
  if (counts == nullptr) return std::nullopt;
  UdpPath path;
  path.datagrams_sent = counts->sent.load(std::memory_order_relaxed);
  path.datagrams_received = counts->received.load(std::memory_order_relaxed);
  path.bytes_sent = counts->bytes_sent.load(std::memory_order_relaxed);
  path.bytes_received = counts->bytes_received.load(std::memory_order_relaxed);
  path.largest_sent = counts->largest_sent.load(std::memory_order_relaxed);
  path.send_calls = counts->send_calls.load(std::memory_order_relaxed);
  int fd = -1;
  if (BIO_get_fd(BIO_next(SSL_get_rbio(ssl)), &fd) > 0 && fd >= 0) {
    int segment = 0;
    socklen_t length = sizeof segment;
    if (::getsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, &length) == 0 && segment > 0)
      path.gso_segment = static_cast<std::uint32_t>(segment);
  }
  return path;
}

bool net_write_desired(SSL* ssl) {
  return SSL_net_write_desired(ssl) == 1;
}

std::optional<std::chrono::microseconds> event_timeout(SSL* ssl) {
  timeval tv{};
  int infinite = 0;
  if (SSL_get_event_timeout(ssl, &tv, &infinite) != 1) {
    ERR_clear_error();
    return std::nullopt;
  }
  if (infinite != 0) return std::nullopt;
  return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
}

void handle_events(SSL* ssl) {
  SSL_handle_events(ssl);
  ERR_clear_error();  // a failure shows in the next call on the connection
}

void close_quic(SSL* ssl) {
  SSL_SHUTDOWN_EX_ARGS args{};
  // Non-blocking, the call only starts the close: one round of events
  // sends the CONNECTION_CLOSE before the connection is freed, so that the
  // peer learns of the end at once rather than at its idle timeout.
  if (SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, &args, sizeof args) == 0) SSL_handle_events(ssl);
  ERR_clear_error();
}

}  // namespace detail

#else  // no QUIC in this build

namespace detail {
void attach_udp(SSL*, int) {
  refuse_quic();
}
std::optional<UdpPath> udp_path(SSL*) {
  return std::nullopt;
}
bool wait_quic(SSL*, bool, std::chrono::microseconds, ListenerWatch*) {
  refuse_quic();
}
SSL* new_stream(SSL*) {
  refuse_quic();
}
SSL* accept_stream(SSL*, std::chrono::milliseconds, bool&, ListenerWatch*, SSL*) {
  refuse_quic();
}
bool conclude_stream(SSL*) {
  refuse_quic();
}
int write_concluding(SSL*, const void*, int) {
  refuse_quic();
}
std::uint64_t unacknowledged_bytes(SSL*) {
  refuse_quic();
}
void wait_quic_events(SSL*, std::chrono::milliseconds, ListenerWatch*) {
  refuse_quic();
}
bool net_write_desired(SSL*) {
  refuse_quic();
}
std::optional<std::chrono::microseconds> event_timeout(SSL*) {
  refuse_quic();
}
void handle_events(SSL*) {
  refuse_quic();
}
void close_quic(SSL*) {}
}  // namespace detail

#endif

}  // namespace tlscmp::stacks
