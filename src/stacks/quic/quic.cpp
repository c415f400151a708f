#include "stacks/quic/quic.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <cstring>
#include <thread>
#include <vector>

#include "error.hpp"
#include "stacks/quic/quic_internal.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_context.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {

bool has_quic(std::string* why) {
  if (TLSCMP_HAVE_QUIC) return true;
  if (why != nullptr) {
    *why = fmt::format("needs OpenSSL 3.5 or newer; this build has {}",
                       compat::kBoringSsl ? tls::ssl::ssl_backend().library_version()
                                          : tls::ssl::ssl_backend().header_version());
  }
  return false;
}

bool quic_names_peers() {
#if TLSCMP_HAVE_QUIC && OPENSSL_VERSION_NUMBER >= 0x40000000L
  return true;
#else
  return false;
#endif
}

namespace detail {

void ListenerWatch::saw_incoming() {
  {
    std::lock_guard lock(mutex_);
    incoming_.store(true, std::memory_order_release);
  }
  changed_.notify_all();
}

void ListenerWatch::connection_gone() {
  {
    std::lock_guard lock(mutex_);
    live_.fetch_sub(1, std::memory_order_acq_rel);
    port_live_->fetch_sub(1, std::memory_order_acq_rel);
  }
  changed_.notify_all();
}

void refuse_quic() {
  std::string why;
  has_quic(&why);
  throw Error("quic: no (" + why + ")");
}

}  // namespace detail

#if TLSCMP_HAVE_QUIC

using detail::counted_datagrams;
using detail::poll_watching;
using detail::to_timeval;

namespace {

// The server's ALPN choice: tlscmp, or no connection (QUIC has no default).
int select_alpn(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* in,
                unsigned int in_len, void*) {
  static constexpr unsigned char kList[] = {6, 't', 'l', 's', 'c', 'm', 'p'};
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_len, kList, sizeof kList, in, in_len) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

const SSL_METHOD* quic_method(bool server) {
  return server ? OSSL_QUIC_server_method() : OSSL_QUIC_client_method();
}

void set_up_quic_context(SSL_CTX* ctx, bool server, bool event_loop) {
  if (server) SSL_CTX_set_alpn_select_cb(ctx, select_alpn, nullptr);
  // An event loop of many connections runs their timers itself: an assist
  // thread a connection would be thousands of threads.
  if (event_loop) {
    if (SSL_CTX_set_domain_flags(ctx, SSL_DOMAIN_FLAG_MULTI_THREAD) != 1)
      throw_tls_error("cannot set the QUIC domain's threading");
    return;
  }
  // QUIC lives in user space: what TCP's kernel does while the program
  // waits elsewhere (sending what a write left buffered, retransmitting,
  // acknowledging) needs a thread. The library's assist thread handles the
  // timers of every connection, whichever thread waits on it; blocking
  // waits in SSL_poll, from many threads at once on a server.
  if (SSL_CTX_set_domain_flags(ctx, SSL_DOMAIN_FLAG_THREAD_ASSISTED | SSL_DOMAIN_FLAG_BLOCKING) != 1)
    throw_tls_error("cannot set the QUIC domain's threading");
}

}  // namespace

const tls::ContextShape& quic_shape() {
  static const tls::ContextShape shape{quic_method, set_up_quic_context, kQuicAlpn};
  return shape;
}

std::unique_ptr<QuicStream> quic_client_stream(const tls::Context& context, UniqueFd udp, const Dial& dial) {
  SSL* ssl = tls::ssl::ssl_context(context).new_client_ssl(dial.host, dial.resume, dial.server_name);
  auto stream = std::make_unique<QuicStream>(std::move(udp), ssl);
  detail::attach_udp(ssl, stream->native_handle());
  // Streams the server opens (HTTP/3's control and QPACK streams) wait to
  // be taken (Stream::stream_group), however soon they come.
  if (SSL_set_incoming_stream_policy(ssl, SSL_INCOMING_STREAM_POLICY_ACCEPT, 0) != 1)
    throw_tls_error("cannot let the QUIC connection take the server's streams");
  stream->set_trust_description(context.trust_description());
  return stream;
}

QuicListener::QuicListener(const tls::Context& context, UniqueFd udp,
                           std::shared_ptr<std::atomic<int>> port_live, const QuicListener* counted_with)
    : udp_(std::move(udp)) {
  listener_ = SSL_new_listener(tls::ssl::ssl_context(context).native(), 0);
  if (listener_ == nullptr) throw_tls_error("cannot make a QUIC listener");
  // Counted as a client's are: the port's datagrams, every connection's.
  BIO* bio = counted_datagrams(udp_.get(), "the QUIC listener's",
                               counted_with != nullptr ? counted_with->listener_ : nullptr);
  SSL_set_bio(listener_, bio, bio);
  if (SSL_set_blocking_mode(listener_, 0) != 1 || SSL_listen(listener_) != 1)
    throw_tls_error("cannot listen for QUIC connections");
  watch_ = std::make_shared<detail::ListenerWatch>(listener_, std::move(port_live));
}

QuicPort::QuicPort(const tls::Context& context, std::vector<UniqueFd> sockets) {
  auto live = std::make_shared<std::atomic<int>>(0);
  for (UniqueFd& udp : sockets) {
    shards_.push_back(std::make_unique<QuicListener>(context, std::move(udp), live,
                                                     shards_.empty() ? nullptr : shards_.front().get()));
  }
}

std::unique_ptr<Stream> QuicPort::accept(std::size_t shard, std::chrono::milliseconds wait,
                                         sockaddr_storage& peer) {
  return shards_.at(shard)->accept(wait, peer);
}

namespace detail {

std::optional<UdpPath> ListenerWatch::port_path() const {
  std::optional<UdpPath> path = udp_path(listener_);  // the listener's counts: its port's
  if (path) path->port_connections = static_cast<std::uint32_t>(std::max(port_live(), 0));
  return path;
}

}  // namespace detail

QuicListener::~QuicListener() {
  SSL_free(listener_);
}

SSL* QuicListener::next_connection(std::chrono::milliseconds wait) {
  SSL* ssl = nullptr;
  if (watch_->live() == 0) {
    // Nothing else waits on the domain: this thread does, for the listener.
    ssl = SSL_accept_connection(listener_, SSL_ACCEPT_CONNECTION_NO_BLOCK);
    if (ssl == nullptr) {
      SSL_POLL_ITEM item{};
      item.desc = SSL_as_poll_descriptor(listener_);
      item.events = SSL_POLL_EVENT_IC;
      const timeval tv = to_timeval(wait);
      std::size_t ready = 0;
      SSL_poll(&item, 1, sizeof item, &tv, 0, &ready);
      ERR_clear_error();
      if (ready > 0) ssl = SSL_accept_connection(listener_, SSL_ACCEPT_CONNECTION_NO_BLOCK);
    }
  } else {
    // The connections' waits watch the listener. Where none of them waits
    // (each busy, or none waiting in the library), SSL_accept_connection
    // runs the listener's events itself, every kWatchedCheck at the most.
    constexpr std::chrono::milliseconds kWatchedCheck{20};
    watch_->wait_incoming(std::min(wait, kWatchedCheck));
    ssl = SSL_accept_connection(listener_, SSL_ACCEPT_CONNECTION_NO_BLOCK);
    watch_->taken();
  }
  ERR_clear_error();
  return ssl;
}

std::unique_ptr<Stream> QuicListener::accept(std::chrono::milliseconds wait, sockaddr_storage& peer) {
  SSL* ssl = next_connection(wait);
  if (ssl == nullptr) return nullptr;
  std::memset(&peer, 0, sizeof peer);
#if OPENSSL_VERSION_NUMBER >= 0x40000000L
  // OpenSSL 4.0 names a QUIC connection's peer; 3.5 and 3.6 do not, and
  // `peer` stays empty (AF_UNSPEC).
  if (BIO_ADDR* address = BIO_ADDR_new()) {
    if (SSL_get_peer_addr(ssl, address) == 1) {
      const auto family = BIO_ADDR_family(address);
      std::size_t length = 0;
      if (family == AF_INET || family == AF_INET6) {
        peer.ss_family = static_cast<sa_family_t>(family);
        auto* in4 = reinterpret_cast<sockaddr_in*>(&peer);
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&peer);
        void* raw =
            family == AF_INET ? static_cast<void*>(&in4->sin_addr) : static_cast<void*>(&in6->sin6_addr);
        BIO_ADDR_rawaddress(address, raw, &length);
        const unsigned short port = BIO_ADDR_rawport(address);
        (family == AF_INET ? in4->sin_port : in6->sin6_port) = port;
      }
    }
    BIO_ADDR_free(address);
  }
#endif
  SSL_set_blocking_mode(ssl, 0);
  // The client's streams come one by one (TlsStream::accept_stream): none
  // is the connection's default, each is taken as it comes.
  if (SSL_set_default_stream_mode(ssl, SSL_DEFAULT_STREAM_MODE_NONE) != 1 ||
      SSL_set_incoming_stream_policy(ssl, SSL_INCOMING_STREAM_POLICY_ACCEPT, 0) != 1) {
    ERR_clear_error();
    SSL_free(ssl);
    return nullptr;
  }
  auto connection = std::make_unique<QuicStream>(UniqueFd(), ssl);
  watch_->connection_born();
  connection->watch_ = watch_;
  return connection;
}

struct QuicPollSet::Shard {
  std::shared_ptr<detail::ListenerWatch> watch;
  int udp = -1;  // the listener's socket
  std::vector<SSL_POLL_ITEM> items;
  std::vector<std::uint32_t> tags;  // each item's
  // A round is owed: streams were taken or told of, or some were ready
  // (the loop then wrote on them), since its last round.
  bool due = true;
  std::chrono::steady_clock::time_point last_round;
};

QuicPollSet::QuicPollSet() = default;
QuicPollSet::~QuicPollSet() = default;

std::uint32_t QuicPollSet::shard_of(const std::shared_ptr<detail::ListenerWatch>& watch) {
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    if (shards_[i]->watch == watch) return static_cast<std::uint32_t>(i);
  }
  auto shard = std::make_unique<Shard>();
  shard->watch = watch;
  BIO_POLL_DESCRIPTOR socket{};
  if (SSL_get_rpoll_descriptor(watch->listener(), &socket) == 1 &&
      socket.type == BIO_POLL_DESCRIPTOR_TYPE_SOCK_FD)
    shard->udp = socket.value.fd;
  ERR_clear_error();
  shards_.push_back(std::move(shard));
  return static_cast<std::uint32_t>(shards_.size() - 1);
}

void QuicPollSet::set(std::uint32_t tag, Stream& base, short events) {
  auto& stream = static_cast<QuicStream&>(base);
  if (position_.size() <= tag) position_.resize(tag + 1, {UINT32_MAX, UINT32_MAX});
  auto& [in, at] = position_[tag];
  if (events == 0) {
    if (at == UINT32_MAX) return;
    Shard& shard = *shards_[in];
    shard.items[at] = shard.items.back();  // the last item takes its place
    shard.tags[at] = shard.tags.back();
    position_[shard.tags[at]].second = at;
    shard.items.pop_back();
    shard.tags.pop_back();
    in = at = UINT32_MAX;
    return;
  }
  if (at == UINT32_MAX) {
    in = shard_of(stream.watch_);
    Shard& shard = *shards_[in];
    at = static_cast<std::uint32_t>(shard.items.size());
    shard.items.emplace_back();
    shard.tags.push_back(tag);
    // Its reads and writes leave the events to the set's rounds: in the
    // library's default, each would run a round of its whole domain.
    SSL_set_event_handling_mode(SSL_get0_connection(stream.ssl()), SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT);
    SSL_set_event_handling_mode(stream.ssl(), SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT);
    ERR_clear_error();
  }
  Shard& shard = *shards_[in];
  shard.due = true;
  SSL_POLL_ITEM& item = shard.items[at];
  item.desc = SSL_as_poll_descriptor(stream.ssl());
  item.events = 0;
  if ((events & POLLIN) != 0) item.events |= SSL_POLL_EVENT_R | SSL_POLL_EVENT_ER;
  if ((events & POLLOUT) != 0) item.events |= SSL_POLL_EVENT_W | SSL_POLL_EVENT_EW;
  item.revents = 0;
}

// A look at the shard's streams that runs no events (SSL_poll's own look
// runs a round for each item: a wait's cost in the square of the streams);
// the ready ones' tags into ready_.
void QuicPollSet::look(Shard& shard) {
  if (shard.items.empty()) return;
  const timeval now{};
  std::size_t count = 0;
  SSL_poll(shard.items.data(), shard.items.size(), sizeof shard.items[0], &now,
           SSL_POLL_FLAG_NO_HANDLE_EVENTS, &count);
  ERR_clear_error();
  if (count == 0) return;
  shard.due = true;  // the loop writes on them: the next round sends it
  for (std::size_t i = 0; i < shard.items.size(); ++i) {
    if (shard.items[i].revents != 0) ready_.push_back(shard.tags[i]);
  }
}

// A round of events on each shard with work (a round owed, or datagrams
// on its socket: fds_), or none for `idle` (a safety net: what the loop
// wrote on a stream it was not told of), then a look at its streams.
void QuicPollSet::rounds(std::chrono::steady_clock::time_point now, std::chrono::milliseconds idle) {
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    Shard& shard = *shards_[i];
    if (!shard.due && (fds_[i].revents & POLLIN) == 0 && now - shard.last_round < idle) continue;
    SSL* listener = shard.watch->listener();
    SSL_handle_events(listener);  // what came in, and every connection's datagrams out
    ERR_clear_error();
    shard.due = false;
    shard.last_round = now;
    if (shard.watch->wanted() && SSL_get_accept_connection_queue_len(listener) > 0)
      shard.watch->saw_incoming();
    look(shard);
  }
}

const std::vector<std::uint32_t>& QuicPollSet::wait(std::chrono::microseconds limit) {
  ready_.clear();
  if (shards_.empty()) {
    std::this_thread::sleep_for(limit);
    return ready_;
  }
  fds_.resize(shards_.size());
  for (std::size_t i = 0; i < shards_.size(); ++i)
    fds_[i] = {shards_[i]->udp, POLLIN, 0};
  // Another thread on a domain (a handshake's, the library's assist
  // thread) may take datagrams off a socket first: the slice bounds what
  // that delays, by a look at the streams whenever the port's count of
  // datagrams moved without this set.
  constexpr auto kSlice = std::chrono::milliseconds(1);
  constexpr auto kIdleRound = std::chrono::milliseconds(20);
  const auto until = std::chrono::steady_clock::now() + limit;
  bool polled = false;
  for (;;) {
    if (!polled) ::poll(fds_.data(), fds_.size(), 0);
    rounds(std::chrono::steady_clock::now(), kIdleRound);
    const std::uint64_t seen = detail::port_datagrams(shards_.front()->watch->listener());
    const auto left = until - std::chrono::steady_clock::now();
    if (!ready_.empty() || left.count() <= 0) return ready_;
    const auto wait =
        std::chrono::ceil<std::chrono::nanoseconds>(std::min<std::chrono::nanoseconds>(left, kSlice));
    const timespec ts{static_cast<time_t>(wait.count() / 1'000'000'000),
                      static_cast<long>(wait.count() % 1'000'000'000)};
    polled = ::ppoll(fds_.data(), fds_.size(), &ts, nullptr) > 0;
    if (!polled && detail::port_datagrams(shards_.front()->watch->listener()) != seen) {
      for (const auto& shard : shards_)
        look(*shard);
      if (!ready_.empty()) return ready_;
    }
  }
}

namespace detail {

bool ListenerWatch::wait_incoming(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  const auto queued = [this] { return SSL_get_accept_connection_queue_len(listener_) > 0; };
  changed_.wait_for(lock, limit, [&] { return incoming_.load() || live_.load() == 0 || queued(); });
  return queued();
}

}  // namespace detail

#else  // no QUIC in this build

QuicListener::QuicListener(const tls::Context&, UniqueFd udp, std::shared_ptr<std::atomic<int>>,
                           const QuicListener*)
    : udp_(std::move(udp)) {
  detail::refuse_quic();
}
QuicPort::QuicPort(const tls::Context&, std::vector<UniqueFd>) {
  detail::refuse_quic();
}
std::unique_ptr<Stream> QuicPort::accept(std::size_t, std::chrono::milliseconds, sockaddr_storage&) {
  detail::refuse_quic();
}
namespace detail {
std::optional<UdpPath> ListenerWatch::port_path() const {
  return std::nullopt;
}
}  // namespace detail
QuicListener::~QuicListener() = default;
std::unique_ptr<Stream> QuicListener::accept(std::chrono::milliseconds, sockaddr_storage&) {
  detail::refuse_quic();
}
ssl_st* QuicListener::next_connection(std::chrono::milliseconds) {
  detail::refuse_quic();
}

struct QuicPollSet::Shard {};
QuicPollSet::QuicPollSet() = default;
QuicPollSet::~QuicPollSet() = default;
void QuicPollSet::set(std::uint32_t, Stream&, short) {
  detail::refuse_quic();
}
const std::vector<std::uint32_t>& QuicPollSet::wait(std::chrono::microseconds) {
  detail::refuse_quic();
}

namespace detail {
bool ListenerWatch::wait_incoming(std::chrono::milliseconds) {
  refuse_quic();
}
}  // namespace detail

const tls::ContextShape& quic_shape() {
  detail::refuse_quic();
}

std::unique_ptr<QuicStream> quic_client_stream(const tls::Context&, UniqueFd, const Dial&) {
  detail::refuse_quic();
}

#endif

namespace {

// The table the library-free files of the stack reach QUIC by.
class SslQuic final : public QuicLibrary {
 public:
  bool available(std::string* why) const override { return has_quic(why); }
  bool names_peers() const override { return quic_names_peers(); }
  const tls::ContextShape& shape() const override { return quic_shape(); }
  std::unique_ptr<Stream> client_stream(const tls::Context& context, UniqueFd udp,
                                        const Dial& dial) const override {
    return quic_client_stream(context, std::move(udp), dial);
  }
  std::unique_ptr<QuicEndpoint> listen(const tls::Context& context,
                                       std::vector<UniqueFd> sockets) const override {
    return std::make_unique<QuicPort>(context, std::move(sockets));
  }
  std::unique_ptr<StreamPollSet> poll_set() const override { return std::make_unique<QuicPollSet>(); }
};

}  // namespace

}  // namespace tlscmp::stacks

const void* tlscmp::tls::ssl::quic_library_entry() {
  static const stacks::SslQuic quic;
  return static_cast<const stacks::QuicLibrary*>(&quic);
}
