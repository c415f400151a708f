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
#include <vector>

#include "app/log.hpp"
#include "app/results_log.hpp"
#include "app/thread_set.hpp"
#include "session/config.hpp"
#include "session/pending_tests.hpp"
#include "stacks/stack.hpp"
#include "tls/context.hpp"
#include "tls/server_contexts.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp::app {

// One process serving plain and TLS tests on one port, to many clients one
// after another and at once. A few threads accept; each connection that has
// sent its first bytes then runs on a thread of its own with blocking,
// deadline-bound I/O, so that a slow or hostile peer holds up only its own
// thread. A connection that has sent nothing yet waits on the io thread
// (Asio) instead, holding no thread, and so does one being turned away.
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
  Server(const session::ServerConfig& config, const tls::Identity& identity, Logger& log,
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
  // Who a connection came from, taken at accept and carried with it: the
  // log names the peer even after the socket is closed (and its number
  // reused by another connection).
  struct Peer {
    std::string source;   // the address, as the per-source caps count it
    std::string address;  // address:port, as the log names it
  };
  // A connection counted in (admit) and given a thread: on its end, no
  // longer live nor counted. Declared after the socket's owner, so that it
  // ends before the socket closes.
  class Admitted {
   public:
    Admitted(Server& server, int fd, std::string source, bool budgeted)
        : server_(server), fd_(fd), source_(std::move(source)), budgeted_(budgeted) {}
    ~Admitted();
    Admitted(const Admitted&) = delete;
    Admitted& operator=(const Admitted&) = delete;

   private:
    Server& server_;
    int fd_;
    std::string source_;
    bool budgeted_;
  };
  // Counts a test among those running at once, if --max-clients and the
  // source's share (--max-clients-per-source) allow.
  class RunningTest {
   public:
    RunningTest(Server& server, std::string source);
    ~RunningTest();
    RunningTest(const RunningTest&) = delete;
    RunningTest& operator=(const RunningTest&) = delete;
    // "" once admitted, else why not ("server busy: ...").
    const std::string& busy() const { return busy_; }

   private:
    Server& server_;
    std::string source_;
    std::string busy_;
  };

  // A connection's place among those being set up, from accept until it
  // has become something the caps count otherwise: a running test (its
  // control connection), a data connection delivered, or its end. Counted in
  // all and per source address (--max-pending, --max-pending-per-source).
  // Shared max-min over sources: when the stage is full, a source holding
  // fewer places than the busiest takes that source's oldest (admit), whose
  // reading side is shut so that its wait ends; its holder learns it here.
  class SetUpSlot {
   public:
    // `fd`: the connection's socket (-1: a listener's connection, whose place
    // cannot be taken).
    SetUpSlot(Server& server, std::string source, bool budgeted, int fd)
        : server_(server), source_(std::move(source)), budgeted_(budgeted), fd_(fd) {}
    ~SetUpSlot() { release(); }
    SetUpSlot(const SetUpSlot&) = delete;
    SetUpSlot& operator=(const SetUpSlot&) = delete;
    // Gives the place back; false if another source had taken it.
    bool release();
    // The busy line for a connection whose place another source took, or
    // "" (gives the place back if so).
    std::string taken();
    // True the first time: whoever tells the client that its place was
    // taken asks first, so that it is told once.
    bool answer_once() { return !std::exchange(answered_, true); }
    // The place stays counted, for another SetUpSlot of the same socket to end.
    void hand_over() { held_ = false; }

   private:
    Server& server_;
    std::string source_;
    bool budgeted_;  // counted in its source's budget, not in the shared caps
    int fd_;
    bool held_ = true;
    bool taken_ = false;     // another source took the place
    bool answered_ = false;  // the client was told (answer_once)
  };

  // An accepting thread: takes a connection and serves it itself (no
  // hand-off between threads: what a connection per transaction pays for),
  // having first made sure another thread accepts meanwhile.
  void accept_loop();
  // One more accepting thread; false (logged) if none can start.
  bool start_acceptor();
  // Every kBacklogLook on the io thread: a connection that waited in the
  // listen queue through two looks, none taking it, gets one more
  // accepting thread. A safety net: the count of threads waiting in
  // accept() is to keep one there, and a client once waited 10 s with none
  // (after a burst of garbage connections, on a loaded CI host). The one
  // cause found: a thread counted in before it starts was handed to a
  // waiting thread with a single signal, which glibc before 2.41 can lose
  // (app/thread_set.cpp); not reproduced since, and kept as the net.
  void watch_backlog(bool waited_before);
  // Every stack's part (stacks/stack.hpp), made once the port is bound: the
  // TCP connections each takes by their first byte, and the listeners of
  // the stacks that have their own (QUIC's, on the port over UDP).
  void start_stacks();
  // A thread of its own takes a stack's listener's connections until the
  // server stops, and hands each to a thread (the caps as for a TCP connection).
  void listener_loop(Mode mode, stacks::Listener& listener);
  void serve_listened(std::unique_ptr<Stream> stream, Mode mode, const Peer& peer, bool budgeted);
  // Serves each stream the client opens on a connection of a listener's
  // until its test has all its streams (or a kind served the stream itself,
  // or the connection ended); true if a kind took the stream, and with it
  // the connection (a --flows loop).
  bool take_streams(const std::shared_ptr<Stream>& connection, const Peer& peer, SetUpSlot& set_up,
                    double& cpu_mark, Deadline first);
  // What serve_stream did with a stream.
  struct Served {
    bool by_kind = false;                  // a kind's own connection, which moved `cpu_mark` on
    std::optional<protocol::Cookie> test;  // a data connection handed to this test
  };
  // A connection's stream, once made (TCP, TLS or QUIC): its preamble, then
  // a control session, a kind's own connection, or a data connection handed
  // to its test.
  Served serve_stream(std::unique_ptr<Stream>& stream, const Peer& peer, SetUpSlot& set_up, double& cpu_mark);
  // A connection just accepted: served on this thread if its first bytes are
  // there, watched by the io thread until they come if not (a silent
  // connection holds no thread), or turned away as busy.
  // `cpu_mark` as in handle_connection.
  void serve_accepted(UniqueFd fd, const Peer& peer, double& cpu_mark);
  // On the io thread: waits for a counted-in connection's first byte (within
  // --preamble-timeout), then serves it on a thread of its own.
  void await_first_byte(int fd, const Peer& peer, bool budgeted);
  // Why a new connection from `source` cannot be taken now ("server busy:
  // ..."), or "" after counting it in.
  // `budgeted`: counted in the source's budget rather than the shared caps.
  // A connection counted in is live (`fd` shut down by stop) until its Admitted ends.
  std::string admit(const std::string& source, int fd, bool& budgeted);
  // Tells a connection the server cannot take it, without a reset: the
  // server's preamble and a refusal, then FIN; then drops what the client
  // sends until it closes (or a second passes), on the io thread.
  void turn_away(boost::asio::ip::tcp::socket socket, const std::string& reason);
  void log_busy(const std::string& peer, const std::string& reason);
  // Serves an admitted connection on this thread. `cpu_mark`: the thread's
  // CPU clock when it last finished with a connection (measure::thread_cpu_s);
  // moved on to when this one ends.
  void handle_connection(int fd, const Peer& peer, bool budgeted, double& cpu_mark);
  // A connection's set-up ended by `why`: logged, or, where another host took
  // its place, the client told so with the busy line (if its stream is not
  // TLS: nothing on it but plain tlscmp yet) and the line logged as busy.
  void tell_taken(int fd, const Stream* stream, const Peer& peer, SetUpSlot& set_up, const std::string& why);
  // The control session: the request, the caps, then the kind's server half.
  void serve_control(Stream& control, const Peer& peer, SetUpSlot& set_up);
  // Its test, once the request is read: the caps (`refuse` throws), the kind's half, the log line.
  void serve_test(Stream& control, const protocol::TestRequest& request, Side& side,
                  const std::function<void(const std::string&)>& refuse, const Peer& peer, SetUpSlot& set_up);
  // --results: the test's JSON line; `outcome` "ok", "refused" or "failed", `text` the log line or why.
  void write_result(const Peer& peer, const protocol::TestRequest& request, const Side& side,
                    const char* outcome, const std::string& text);
  // Why a test's request is over one of the caps (--max-bytes ...), or "".
  std::string cap_problem(const protocol::TestRequest& request) const;
  void shut_down_connections();
  void run_io();
  void finish_running_tests();
  bool stopping();
  protocol::TestAccept accept_message(const protocol::Cookie& cookie, const std::string& library) const;
  // See session::ServerSide::prepare_key_type (key_types.cpp).
  void prepare_key_type(const std::string& key_type);
  // See session::ServerSide::reserve_connections and reserve_memory.
  std::shared_ptr<void> reserve_connections(const std::string& source, std::uint32_t count,
                                            std::string& busy);
  std::shared_ptr<void> reserve_memory(std::uint64_t bytes, std::string& busy);
  // See session::ServerSide::reserve_flows.
  std::shared_ptr<void> reserve_flows(const std::vector<std::string>& sources, std::uint32_t count,
                                      std::string& busy);
  // The flows all many-connection tests together may hold: the descriptors
  // left beside --max-connections and a reserve.
  int flow_room() const;

  session::ServerConfig config_;
  Logger& log_;
  tls::ServerContexts tls_;  // a context per library its tests ask for
  tls::Identity identity_;
  std::optional<tls::Identity> issuer_;
  std::mutex key_types_mutex_;                 // one certificate made at a time
  std::set<std::string> key_types_;            // those made: their SNI names are known to tls_
  std::optional<stacks::ServerParts> stacks_;  // every stack's part, once the port is bound
  session::PendingTests pending_;
  boost::asio::io_context io_;
  std::optional<boost::asio::signal_set> signals_;
  std::optional<boost::asio::steady_timer> backlog_timer_;  // watch_backlog's
  UniqueFd listener_;                                       // the listening socket
  boost::asio::ip::tcp::endpoint local_endpoint_;

  std::mutex mutex_;  // guards the members below
  std::condition_variable idle_;
  int active_connections_ = 0;  // connections with a thread (Admitted)
  int running_tests_ = 0;       // control sessions past the --max-clients check
  int setting_up_ = 0;          // connections being set up (SetUpSlot), budgeted ones aside
  std::set<int>
      set_up_taken_;  // sockets whose set-up place another source took, until their SetUpSlot learns it
  int shared_connections_ = 0;     // connections counted in the shared caps (not in a budget)
  int reserved_ = 0;               // every source's budgets together
  std::uint64_t memory_held_ = 0;  // the buffers running tests reserved (--max-memory)
  int held_flow_count_ = 0;        // the flows running many-connection tests reserved
  // What each source address holds, against its shares. A budget is room
  // that a source's running tests reserved for the connections they expect
  // (their data connections, a crr test's stream of connections): those
  // connections neither wait on the shared --max-pending caps nor take the
  // places other tests need, and they count in full against the caps on
  // all connections whether they have come or not.
  struct SourceUse {
    // Of its connections, those being set up (shared ones), oldest first:
    // their sockets (-1: a listener's connection).
    std::vector<int> set_up;
    int connections = 0;  // its connections in the shared caps
    int tests = 0;        // its running tests
    int budget = 0;       // what its running tests reserved
    int flow_budget = 0;  // what its many-connection tests reserved (not in --max-connections)
    int in_budget = 0;    // connections open within it now
    bool unused() const {
      return set_up.empty() && connections == 0 && tests == 0 && budget == 0 && flow_budget == 0 &&
             in_budget == 0;
    }
  };
  std::map<std::string, SourceUse> sources_;
  // What one source address (`use`) may hold of --max-connections: half,
  // and while k sources hold connections (its own counted) no more than
  // --max-connections / (k + 1), but never less than the largest test
  // needs; with how it is said (mutex_ held).
  struct Share {
    int connections;
    std::string why;  // "half of --max-connections", or the even share's reason
  };
  Share connection_share(const SourceUse& use) const;
  // Max-min over sources, when the set-up stage is full: the oldest
  // connection of the busiest source gives its place to `use`'s new one, if
  // that source holds at least two more than `use` does; false if none does
  // (mutex_ held).
  bool take_set_up_place(const SourceUse& use);
  // Sources with a test running (mutex_ held).
  int sources_running_tests() const;
  std::string set_up_taken_line() const;
  // Forgets a source that holds nothing any more (mutex_ held).
  void forget_if_unused(std::map<std::string, SourceUse>::iterator it);
  // The io thread's own: connections being turned away, and the lines a
  // flood could repeat (busy, silent connections closed), one of each kind
  // a second at most, with a count of the others, so that a flood cannot
  // flood the log.
  int turning_away_ = 0;
  struct LogLimit {
    std::chrono::steady_clock::time_point last{};
    int unlogged = 0;
  };
  LogLimit busy_log_;
  LogLimit silent_log_;
  void log_limited(LogLimit& limit, const std::string& text);
  // Threads waiting in accept(), and whether they should stop (atomics: a
  // connection per transaction passes here twice, and the mutex is busy enough).
  std::atomic<int> idle_acceptors_ = 0;
  std::atomic<bool> accepting_stopped_ = false;
  // Last: joined first when the server goes, while everything they use still exists.
  ThreadSet threads_;
  std::multiset<int> live_fds_;  // sockets of running connections, shut down by stop
  ResultsLog results_;           // --results
  bool stopping_ = false;
};

}  // namespace tlscmp::app
