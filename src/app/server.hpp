#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "app/config.hpp"
#include "app/log.hpp"
#include "app/pending_tests.hpp"
#include "app/thread_set.hpp"
#include "tls/context.hpp"
#include "tls/dtls.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp::app {

// One process serving plain and TLS tests on one port, to many clients one
// after another and at once. Asio accepts; each connection then runs on a
// thread of its own with blocking, deadline-bound I/O, so that a slow or
// hostile peer holds up only its own thread.
//
// Every connection starts with either a TLS ClientHello (first byte 0x16) or
// the plain tlscmp preamble; the server peeks at the first byte to tell them
// apart, as Beast's flex server does. Control connections are plain TCP; data
// connections are plain or TLS, as their test says.
class Server {
 public:
  // Binds and listens; throws tlscmp::Error naming the address and the cause.
  // `issuer`, where there is one, signs the certificates of other key types
  // that crr tests ask for (--compare-key-types): the CA of a throwaway
  // certificate, or the one --issuer names.
  Server(const ServerConfig& config, const tls::Identity& identity, Logger& log,
         std::optional<tls::Identity> issuer = std::nullopt);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const;
  std::string listen_address() const;

  // From now on SIGINT and SIGTERM end run(). Call it before announcing the
  // server: a signal that comes between the announcement and run() would
  // otherwise kill the process (as a test that signals at once found).
  void stop_on_signals();
  // Serves until stop() or a signal (see stop_on_signals()); then shuts down
  // every running test and waits for their threads.
  void run();
  // Ends run() from any thread.
  void stop();

 private:
  class LiveFd;
  class Side;
  // An admitted connection (admit): on its end, no longer live nor counted.
  // Declared after the socket's owner, so that it ends before the socket closes.
  class Admitted {
   public:
    Admitted(Server& server, int fd) : server_(server), fd_(fd) {}
    ~Admitted();
    Admitted(const Admitted&) = delete;
    Admitted& operator=(const Admitted&) = delete;

   private:
    Server& server_;
    int fd_;
  };
  // Counts a test among those running at once, if --max-clients allows.
  class RunningTest {
   public:
    explicit RunningTest(Server& server);
    ~RunningTest();
    RunningTest(const RunningTest&) = delete;
    RunningTest& operator=(const RunningTest&) = delete;
    bool admitted() const { return admitted_; }

   private:
    Server& server_;
    bool admitted_ = false;
  };

  // A connection's place among those being set up, from accept until its
  // preamble is read (or it ends): counted in all and per source address.
  class SetUpSlot {
   public:
    SetUpSlot(Server& server, std::string source, bool budgeted)
        : server_(server), source_(std::move(source)), budgeted_(budgeted) {}
    ~SetUpSlot() { release(); }
    SetUpSlot(const SetUpSlot&) = delete;
    SetUpSlot& operator=(const SetUpSlot&) = delete;
    void release();

   private:
    Server& server_;
    std::string source_;
    bool budgeted_;  // counted in its source's crr budget, not in --max-pending
    bool held_ = true;
  };

  // An accepting thread: takes a connection and serves it itself (no
  // hand-off between threads: what a connection per transaction pays for),
  // having first made sure another thread accepts meanwhile.
  void accept_loop();
  // One more accepting thread; false (logged) if none can start.
  bool start_acceptor();
  // A connection just accepted: served on this thread, or turned away as busy.
  // `source` is its address (peer_host); `cpu_mark` as in handle_connection.
  void serve_accepted(int fd, const std::string& source, double& cpu_mark);
  // Why a new connection from `source` cannot be taken now ("server busy:
  // ..."), or "" after counting it in.
  // `budgeted`: counted in the source's crr budget rather than the shared caps.
  // A connection counted in is live (`fd` shut down by stop) until its Admitted ends.
  std::string admit(const std::string& source, int fd, bool& budgeted);
  // Tells a connection the server cannot take it, without a reset: the
  // server's preamble and a refusal, then FIN; then drops what the client
  // sends until it closes (or a second passes), on the accepting thread.
  void turn_away(boost::asio::ip::tcp::socket socket, const std::string& reason);
  void log_busy(const std::string& peer, const std::string& reason);
  // Serves an admitted connection on this thread. `cpu_mark`: the thread's
  // CPU clock when it last finished with a connection (measure::thread_cpu_s);
  // moved on to when this one ends.
  void handle_connection(int fd, const std::string& source, bool budgeted, double& cpu_mark);
  // The control session: the request, the caps, then the kind's server half.
  void serve_control(Stream& control, const std::string& peer, const std::string& source);
  // Its test, once the request is read: the caps (`refuse` throws), the kind's half, the log line.
  void serve_test(Stream& control, const protocol::TestRequest& request, Side& side,
                  const std::function<void(const std::string&)>& refuse, const std::string& peer);
  // --results: the test's JSON line; `outcome` "ok", "refused" or "failed", `text` the log line or why.
  void write_result(const std::string& peer, const std::string& source, const protocol::TestRequest& request,
                    const Side& side, const char* outcome, const std::string& text);
  void shut_down_connections();
  void finish_running_tests();
  bool stopping();
  protocol::TestAccept accept_message(const protocol::Cookie& cookie) const;
  // See kinds::ServerSide::prepare_key_type.
  void prepare_key_type(const std::string& key_type);

  ServerConfig config_;
  Logger& log_;
  tls::Context tls_;
  tls::Identity identity_;
  std::optional<tls::Identity> issuer_;
  std::mutex key_types_mutex_;            // one certificate made at a time
  std::set<std::string> key_types_;       // those made: their SNI names are known to tls_
  std::optional<tls::DtlsContext> dtls_;  // none where this build has no DTLS
  std::string no_dtls_;                   // then: why not
  PendingTests pending_;
  boost::asio::io_context io_;
  std::optional<boost::asio::signal_set> signals_;
  UniqueFd listener_;  // the listening socket
  boost::asio::ip::tcp::endpoint local_endpoint_;

  std::mutex mutex_;  // guards the members below
  std::condition_variable idle_;
  int active_connections_ = 0;
  int running_tests_ = 0;  // control sessions past the --max-clients check
  int setting_up_ = 0;     // connections being set up (SetUpSlot)
  std::map<std::string, int> setting_up_by_source_;
  // crr tests' connections being set up, per source: their own budget, the
  // connectors of the source's running crr tests (reserve_connections), so
  // that a crr test's stream of connections neither is turned away by
  // --max-pending-per-source nor takes the places other tests need.
  struct CrrBudget {
    std::uint32_t size = 0;
    std::uint32_t in_use = 0;
  };
  std::map<std::string, CrrBudget> crr_budget_;
  // The io thread's own: connections being turned away, and the busy
  // lines not logged (one a second at most, so that a flood cannot flood the log).
  int turning_away_ = 0;
  // Threads waiting in accept(), and whether they should stop (atomics: a
  // connection per transaction passes here twice, and the mutex is busy enough).
  std::atomic<int> idle_acceptors_ = 0;
  std::atomic<bool> accepting_stopped_ = false;
  std::chrono::steady_clock::time_point last_busy_log_{};
  int busy_unlogged_ = 0;
  // Last: joined first when the server goes, while everything they use still exists.
  ThreadSet threads_;
  std::multiset<int> live_fds_;  // sockets of running connections, shut down by stop
  // --results: the file a line per test goes to (null: none), one writer at a time.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> results_{nullptr, &std::fclose};
  std::mutex results_mutex_;
  bool stopping_ = false;
};

}  // namespace tlscmp::app
