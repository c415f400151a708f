// What the server holds past each of its limits, against peers that try to
// hold it all: memory a peer announces and never sends, one address at every
// stage of a connection's life, a trickle that keeps the idle timeout from
// passing, a flood from many addresses, the peer's address in the log under
// descriptor reuse, and --results on a full disk. Loopback has many
// addresses: 127.0.0.1 is the host that must be served, the others flood.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <thread>

#include "e2e/e2e.hpp"
#include "kinds/side_result.hpp"
#include "protocol/messages.hpp"
#include "session/control.hpp"
#include "support/skip.hpp"
#include "transport/socket.hpp"

using namespace tlscmp;
using namespace tlscmp::test;
using nlohmann::json;

namespace {

constexpr auto kWait = std::chrono::milliseconds(5000);  // our own waits, longer than the server's
const std::string kControlPreamble = preamble_text(protocol::ConnectionKind::control);

protocol::TestRequest stream_request(std::uint32_t streams, std::uint64_t bytes = 1 << 20) {
  protocol::TestRequest r;
  r.mode = Mode::tcp;
  r.test.stream.direction = Direction::client_to_server;
  r.test.stream.bytes = bytes;
  r.test.chunk_bytes = 64 * 1024;
  r.test.streams = streams;
  r.client_version = "limits test";
  return r;
}

// A test started by hand from `source`: the request sent, the answer read.
// Its data connections are opened on demand; until then the test holds its
// place on the server.
class HeldTest {
 public:
  HeldTest(std::uint16_t port, const std::string& source, const protocol::TestRequest& request)
      : port_(port),
        source_(source),
        control_(connect_tcp("127.0.0.1", port, Deadline::after(kWait), source)) {
    control_.set_deadline(Deadline::after(kWait));
    session::send_preamble(control_, protocol::ConnectionKind::control);
    session::send_message(control_, request, "the request");
    session::receive_preamble(control_);
    const protocol::Message answer = session::receive_message(control_, "the answer");
    if (const auto* accept = std::get_if<protocol::TestAccept>(&answer)) {
      cookie_ = accept->cookie;
      accepted_ = true;
    } else if (const auto* refusal = std::get_if<protocol::Refusal>(&answer)) {
      refusal_ = refusal->reason;
    }
  }
  bool accepted() const { return accepted_; }
  const std::string& refusal() const { return refusal_; }

  // Data connection `index`: preamble and header sent, the ready byte read.
  TcpStream& open_data(std::uint32_t index) {
    data_.push_back(
        std::make_unique<TcpStream>(connect_tcp("127.0.0.1", port_, Deadline::after(kWait), source_)));
    TcpStream& data = *data_.back();
    data.set_deadline(Deadline::after(kWait));
    std::error_code ec;
    session::send_preamble(data, protocol::ConnectionKind::data);
    data.write_all(protocol::encode_data_header(cookie_, index), ec);
    REQUIRE_FALSE(ec);
    return data;
  }
  static void await(Stream& data, const char* what) {
    std::byte b{};
    std::error_code ec;
    data.read_exact({&b, 1}, ec);
    INFO(what);
    REQUIRE_FALSE(ec);
  }
  kinds::SideResult server_result() {
    control_.set_deadline(Deadline::after(std::chrono::seconds(20)));
    return session::receive<kinds::SideResult>(control_, "the server's result");
  }

 private:
  std::uint16_t port_;
  std::string source_;
  TcpStream control_;
  protocol::Cookie cookie_{};
  bool accepted_ = false;
  std::string refusal_;
  std::vector<std::unique_ptr<TcpStream>> data_;
};

// `per_source` connections from each of `sources` that send `first` (maybe
// nothing) and then nothing more, kept open (those the server ends are
// opened again) until the flood is destroyed. Counts how the server ended
// the others: with its busy line, or with a reset.
class Flood {
 public:
  Flood(std::uint16_t port, std::vector<std::string> sources, int per_source, std::string first = {})
      : port_(port), sources_(std::move(sources)), per_source_(per_source), first_(std::move(first)) {
    thread_ = std::thread([this] { run(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(800));  // the first wave is in
  }
  ~Flood() {
    stop_ = true;
    thread_.join();
  }
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;
  int busy_lines() const { return busy_; }
  int resets() const { return resets_; }

 private:
  struct Held {
    int fd;
    std::string got;
  };

  int open_one(const std::string& source) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port_);
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      ::close(fd);
      return -1;
    }
    if (!first_.empty()) (void)::send(fd, first_.data(), first_.size(), MSG_NOSIGNAL);
    return fd;
  }

  // Reads what came; true while the connection is still open.
  bool still_open(Held& held) {
    char buf[512];
    for (;;) {
      const ssize_t n = ::recv(held.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        held.got.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == ECONNRESET && held.got.find("server busy") == std::string::npos) ++resets_;
      if (held.got.find("server busy") != std::string::npos) ++busy_;
      return false;
    }
  }

  void run() {
    std::vector<std::vector<Held>> open(sources_.size());
    while (!stop_) {
      for (std::size_t s = 0; s < sources_.size(); ++s) {
        std::vector<Held> kept;
        for (Held& held : open[s]) {
          if (still_open(held)) {
            kept.push_back(std::move(held));
          } else {
            ::close(held.fd);
          }
        }
        open[s] = std::move(kept);
        while (static_cast<int>(open[s].size()) < per_source_) {
          const int fd = open_one(sources_[s]);
          if (fd < 0) break;
          open[s].push_back({fd, {}});
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (auto& list : open) {
      for (Held& held : list)
        ::close(held.fd);
    }
  }

  std::uint16_t port_;
  std::vector<std::string> sources_;
  int per_source_;
  std::string first_;
  std::atomic<bool> stop_{false};
  std::atomic<int> busy_{0};
  std::atomic<int> resets_{0};
  std::thread thread_;
};

// A whole comparison from 127.0.0.1, every byte verified.
void other_host_is_served(const ServerProcess& server) {
  const json served = client_json({"127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.1", "--insecure",
                                   "-n", "2M", "--repeat", "1", "--verify"});
  REQUIRE(served["runs"].size() == 2);
  CHECK(served["runs"][1]["bytes"] == 2 << 20);
}

std::vector<std::string> addresses(int first, int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    out.push_back("127.0.0." + std::to_string(first + i));
  return out;
}

}  // namespace

TEST_CASE("a peer that announces large messages and sends little costs the server what it sent") {
  ServerProcess server({"--max-test-memory", "1G"});
  protocol::TestRequest request = stream_request(2, std::uint64_t{4} << 30);
  request.test.stream.framing = framing::Framing::len4;
  request.test.stream.msg_size = 256 << 20;
  request.test.stream.max_msg = 256 << 20;
  const std::uint64_t before = server.rss_bytes();
  HeldTest test(server.port(), "127.0.0.1", request);
  REQUIRE(test.accepted());
  std::vector<Stream*> data{&test.open_data(0), &test.open_data(1)};
  // Each: 256 MiB announced, 16 bytes sent.
  const std::string header{char(0x10), char(0), char(0), char(0)};
  const std::string some = header + std::string(16, 'a');
  for (Stream* d : data) {
    HeldTest::await(*d, "ready");
    HeldTest::await(*d, "go");
    std::error_code ec;
    d->write_all({reinterpret_cast<const std::byte*>(some.data()), some.size()}, ec);
    REQUIRE_FALSE(ec);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::uint64_t after = server.rss_bytes();
  INFO("RSS before " << before << " after " << after);
  CHECK(after < before + (32 << 20));  // not 512 MiB of zeros
}

TEST_CASE(
    "a test whose buffers exceed --max-test-memory is refused in one line, and --max-memory holds all") {
  ServerProcess server({"--max-msg", "64M", "--max-memory", "100M"});
  const std::vector<std::string> base{"client", "127.0.0.1", "-p", server.port_text(), "--mode",
                                      "tcp",    "--repeat",  "1",  "--framing",        "len4"};
  std::vector<std::string> too_much = base;
  too_much.insert(too_much.end(), {"-P", "40", "--msg-size", "64M", "-n", "64M"});
  expect_failure(run_tlscmp(too_much), 1, "allows 256 MiB a test (--max-test-memory)");

  // One test holds 64 MiB of the 100: the next one that needs as much is told the server is busy.
  protocol::TestRequest big = stream_request(1, 64 << 20);
  big.test.stream.framing = framing::Framing::len4;
  big.test.stream.msg_size = 64 << 20;
  big.test.stream.max_msg = 64 << 20;
  HeldTest holder(server.port(), "127.0.0.1", big);
  REQUIRE(holder.accepted());
  std::vector<std::string> second = base;
  second.insert(second.end(), {"--msg-size", "48M", "-n", "48M"});
  expect_failure(run_tlscmp(second), 1, "(--max-memory); try again when one ends");
  CHECK(run_tlscmp(
            {"client", "127.0.0.1", "-p", server.port_text(), "--mode", "tcp", "--repeat", "1", "-n", "1M"})
            .exit_code == 0);  // small tests still run
}

TEST_CASE("one address at every stage of a connection's life cannot lock another address out") {
  ServerProcess server;
  SUBCASE("connections that send the preamble and stall") {
    const Flood flood(server.port(), {"127.0.0.2"}, 300, kControlPreamble);
    other_host_is_served(server);
    expect_failure(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.2",
                               "--insecure", "-n", "1M"}),
                   1, "16 connections from 127.0.0.2 being set up");
    CHECK(flood.resets() == 0);
  }
  SUBCASE("tests that run and never open their data connections") {
    std::vector<std::unique_ptr<HeldTest>> held;
    int accepted = 0;
    std::string refusal;
    for (int i = 0; i < 32; ++i) {
      held.push_back(std::make_unique<HeldTest>(server.port(), "127.0.0.2", stream_request(1)));
      accepted += held.back()->accepted() ? 1 : 0;
      if (!held.back()->accepted()) refusal = held.back()->refusal();
    }
    CHECK(accepted == 8);  // a quarter of --max-clients 32
    CHECK(
        refusal.find("8 tests from 127.0.0.2 running, its share of the server (--max-clients-per-source)") !=
        std::string::npos);
    other_host_is_served(server);
  }
  SUBCASE("tests that ask for the most data connections") {
    std::vector<std::unique_ptr<HeldTest>> held;
    for (int i = 0; i < 2; ++i) {
      held.push_back(std::make_unique<HeldTest>(server.port(), "127.0.0.2", stream_request(128)));
      CHECK(held.back()->accepted());
    }
    const HeldTest third(server.port(), "127.0.0.2", stream_request(128));
    CHECK_FALSE(third.accepted());
    CHECK(third.refusal().find("its share of the server, 258 (half of --max-connections)") !=
          std::string::npos);
    const json served = client_json({"127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.1", "--insecure",
                                     "-n", "1M", "-P", "128", "--repeat", "1"});
    CHECK(served["runs"][1]["bytes"] == 128 << 20);
  }
}

TEST_CASE("a running test that trickles is ended at --min-rate, and the server serves on") {
  ServerProcess server({"--idle-timeout", "1", "--min-rate", "10K"});
  HeldTest test(server.port(), "127.0.0.1", stream_request(1, 1 << 20));
  REQUIRE(test.accepted());
  Stream& data = test.open_data(0);
  HeldTest::await(data, "ready");
  HeldTest::await(data, "go");
  // 100 bytes every 100 ms: the idle timeout never passes, the rate is 1 kB/s.
  const std::string trickle(100, 't');
  std::error_code ec;
  for (int i = 0; i < 40 && !ec; ++i) {
    data.write_all({reinterpret_cast<const std::byte*>(trickle.data()), trickle.size()}, ec);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const kinds::SideResult result = test.server_result();
  CHECK(result.error.find("the peer moved less than 10 KiB a second over 1 s (this server's --min-rate)") !=
        std::string::npos);
  CHECK(server.process().wait_for_log("--min-rate"));
  other_host_is_served(server);
}

// The server's threads once it has started them all (its listeners' start
// after its first log line): two readings 200 ms apart that agree.
int settled_threads(const ServerProcess& server) {
  int last = server.threads();
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const int now = server.threads();
    if (now == last) break;
    last = now;
  }
  return last;
}

TEST_CASE("a flood from many addresses: busy lines, no resets, a bounded number of threads given back") {
  ServerProcess server;
  const int baseline = settled_threads(server);
  SUBCASE("silent connections hold no thread") {
    const Flood flood(server.port(), addresses(10, 20), 50);
    int most = 0;
    for (int i = 0; i < 10; ++i) {
      most = std::max(most, server.threads());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    MESSAGE("1,000 silent connections from 20 addresses: at most " << most << " threads, " << baseline
                                                                   << " idle");
    // Not one each (1,000; before the io thread held them, 432). A loaded
    // host starts a few spare accepting threads while others hand off: 34
    // once, beside a build, against 5 on a quiet one.
    CHECK(most <= baseline + 64);
    // A client that can be told is told, not reset.
    const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.1",
                                        "--insecure", "-n", "1M", "--repeat", "1"});
    CHECK((r.exit_code == 0 || r.err.find("server busy") != std::string::npos));
    CHECK(r.err.find("reset") == std::string::npos);
  }
  SUBCASE("connections that send the preamble: each one past the caps hears the busy line") {
    {
      const Flood flood(server.port(), addresses(10, 20), 100, kControlPreamble);
      int most = 0;
      for (int i = 0; i < 20; ++i) {
        most = std::max(most, server.threads());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      // --max-pending, two accepting, and threads that finished waiting 2 s for
      // more work: 292 once, beside the many-connection tests, against 290;
      // 341 once in a fresh Debian 13 chroot beside the whole suite, against
      // 263 to 277 there alone. Bounded, not one a connection (2,000).
      MESSAGE("2,000 connections from 20 addresses sending the preamble: at most "
              << most << " threads, " << baseline << " idle; " << flood.busy_lines() << " busy lines, "
              << flood.resets() << " resets");
      CHECK(most <= baseline + 256 + 128);
      CHECK(flood.busy_lines() > 0);
      CHECK(flood.resets() == 0);
    }
    // Idle threads are given back.
    bool back = false;
    for (int i = 0; i < 100 && !back; ++i) {
      back = server.threads() <= baseline + 4;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(back);
    other_host_is_served(server);
  }
}

TEST_CASE("twenty addresses keeping the set-up stage full cannot lock a 21st out: the places are shared") {
  // Long waits for a first byte and a request: the flood's connections end
  // by the caps alone, never by a timeout within the test.
  ServerProcess server({"--preamble-timeout", "60", "--handshake-timeout", "60", "--control-timeout", "60"});
  const int baseline = settled_threads(server);
  const std::uint64_t rss_before = server.rss_bytes();
  int served = 0;
  int most_threads = 0;
  std::uint64_t most_rss = 0;
  std::string last_error;
  {
    // 20 addresses, 20 connections each (16 of them within a source's share
    // of --max-pending): 320 asked of the 256 places. Half send nothing (the
    // io thread holds them), half the control preamble (a thread each).
    const Flood silent(server.port(), addresses(2, 10), 20);
    const Flood stalled(server.port(), addresses(12, 10), 20, kControlPreamble);
    for (int i = 0; i < 10; ++i) {
      const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.1",
                                          "-n", "256K", "--repeat", "1", "--mode", "tcp"});
      served += r.exit_code == 0 ? 1 : 0;
      if (r.exit_code != 0) last_error = r.err;
      most_threads = std::max(most_threads, server.threads());
      most_rss = std::max(most_rss, server.rss_bytes());
    }
    MESSAGE("10 tests from 127.0.0.1 beside 20 flooding addresses: "
            << served << " served; the flood heard " << silent.busy_lines() << " and " << stalled.busy_lines()
            << " busy lines, " << silent.resets() + stalled.resets() << " resets; at most " << most_threads
            << " threads (" << baseline << " idle), " << most_rss / 1024 << " KiB (" << rss_before / 1024
            << " before)");
    CAPTURE(last_error);
    CHECK(served >= 9);
    // The places the client took were the flood's: those connections were
    // told, not reset, whether they waited on the io thread or on a thread.
    CHECK(silent.busy_lines() > 0);
    CHECK(stalled.busy_lines() > 0);
    CHECK(silent.resets() + stalled.resets() == 0);
    // Bounded as a one-address flood is: --max-pending's threads at most.
    CHECK(most_threads <= baseline + 256 + 128);
    // And memory: 21 MiB against 17 idle here; a sanitized build's
    // allocator keeps up to 256 MiB of freed memory in quarantine beside it.
    CHECK(most_rss < rss_before + (512u << 20));
  }
  other_host_is_served(server);
}

TEST_CASE("four addresses running every test they may cannot lock a fifth out: the tests are shared") {
  ServerProcess server;
  // Each of 127.0.0.2 to .5 asks for 8 tests (its --max-clients-per-source)
  // that never open their data connections: 32, all of --max-clients. Each
  // gets its even share of what the hosts already running tests leave.
  std::vector<std::unique_ptr<HeldTest>> held;
  int accepted = 0;
  std::string refusal;
  for (const std::string& source : addresses(2, 4)) {
    for (int i = 0; i < 8; ++i) {
      held.push_back(std::make_unique<HeldTest>(server.port(), source, stream_request(1)));
      accepted += held.back()->accepted() ? 1 : 0;
      if (!held.back()->accepted()) refusal = held.back()->refusal();
    }
  }
  CHECK(accepted == 8 + 8 + 8 + 6);  // the fourth host: 32 / 5 while three others run tests
  CHECK(refusal.find("server busy: 6 tests from 127.0.0.5 running, its even share beside 3 other hosts "
                     "running tests; try again when one ends") != std::string::npos);
  other_host_is_served(server);
}

TEST_CASE("connections too: while another address holds some, an address's share is the even one") {
  // 1,024 connections: a lone address may hold 512; beside one other, 1,024 / 3 = 341.
  ServerProcess server({"--max-connections", "1024"});
  const HeldTest other(server.port(), "127.0.0.3", stream_request(1));
  REQUIRE(other.accepted());
  // Each -P 128 test holds its control connection and 128 reserved: 129, 258, then 387 > 341.
  const HeldTest first(server.port(), "127.0.0.2", stream_request(128));
  const HeldTest second(server.port(), "127.0.0.2", stream_request(128));
  CHECK(first.accepted());
  CHECK(second.accepted());
  const HeldTest third(server.port(), "127.0.0.2", stream_request(128));
  CHECK_FALSE(third.accepted());
  CHECK(third.refusal().find("127.0.0.2 would hold more than its share of the server, 341 (its even share "
                             "beside 1 other host holding connections)") != std::string::npos);
}

TEST_CASE("the log names the peer it took at accept, even when its descriptor is reused at once") {
  ServerProcess server({"--handshake-timeout", "0.5"});
  std::atomic<bool> stop{false};
  // 127.0.0.3 opens and closes connections all along, reusing descriptors.
  std::thread churn([&] {
    while (!stop) {
      try {
        TcpStream c(connect_tcp("127.0.0.1", server.port(), Deadline::after(kWait), "127.0.0.3"));
      } catch (const Error&) {
      }
    }
  });
  for (int i = 0; i < 30; ++i) {
    // A TLS record header, then garbage: the handshake fails at once.
    TcpStream bad(connect_tcp("127.0.0.1", server.port(), Deadline::after(kWait), "127.0.0.5"));
    bad.set_deadline(Deadline::after(kWait));
    const std::string junk = std::string{char(0x16), char(3), char(1), char(0), char(5)} + "xxxxx";
    std::error_code ec;
    bad.write_all({reinterpret_cast<const std::byte*>(junk.data()), junk.size()}, ec);
    // A data connection with a made-up cookie.
    TcpStream unknown(connect_tcp("127.0.0.1", server.port(), Deadline::after(kWait), "127.0.0.6"));
    unknown.set_deadline(Deadline::after(kWait));
    session::send_preamble(unknown, protocol::ConnectionKind::data);
    unknown.write_all(protocol::encode_data_header(protocol::Cookie{}, 0), ec);
  }
  // Each line comes when the server is done with its connection, which on a
  // loaded host may be a while after the client's close: wait for all 60.
  int tls_lines = 0;
  int cookie_lines = 0;
  std::string log_text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log_text = server.log();
    tls_lines = cookie_lines = 0;
    std::istringstream log(log_text);
    for (std::string line; std::getline(log, line);) {
      if (line.find("TLS handshake failed") != std::string::npos) {
        ++tls_lines;
        CHECK_MESSAGE(line.find(" 127.0.0.5:") != std::string::npos, line);
      }
      if (line.find("unknown or finished test") != std::string::npos) {
        ++cookie_lines;
        CHECK_MESSAGE(line.find(" 127.0.0.6:") != std::string::npos, line);
      }
    }
  } while ((tls_lines < 30 || cookie_lines < 30) && std::chrono::steady_clock::now() < deadline);
  stop = true;
  churn.join();
  INFO("the server's log: " << log_text);
  CHECK(tls_lines == 30);
  CHECK(cookie_lines == 30);
}

namespace {

// A small tmpfs at a fresh directory, unmounted at the end (root only).
class SmallDisk {
 public:
  explicit SmallDisk(const char* size) {
    mounted_ = ::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  TempDir dir_;
  bool mounted_ = false;
};

std::vector<json> result_lines(const std::string& path, bool& all_whole) {
  std::vector<json> lines;
  all_whole = true;
  const std::string text = read_file(path);
  all_whole = text.empty() || text.back() == '\n';
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    try {
      lines.push_back(json::parse(line));
    } catch (const json::exception&) {
      all_whole = false;
    }
  }
  return lines;
}

}  // namespace

TEST_CASE("--results: a failed transfer's line says failed") {
  TempDir dir;
  ServerProcess server({"--results", dir.file("results.jsonl")});
  HeldTest test(server.port(), "127.0.0.1", stream_request(1, 8 << 20));
  REQUIRE(test.accepted());
  {
    Stream& data = test.open_data(0);
    HeldTest::await(data, "ready");
    HeldTest::await(data, "go");
    const std::string some(1 << 20, 'x');
    std::error_code ec;
    data.write_all({reinterpret_cast<const std::byte*>(some.data()), some.size()}, ec);
    const linger reset{1, 0};
    ::setsockopt(data.native_handle(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(::dup(data.native_handle()));
    ::shutdown(data.native_handle(), SHUT_RDWR);
  }
  CHECK(!test.server_result().error.empty());
  REQUIRE(server.process().wait_for_log("tcp client_to_server failed"));
  bool whole = false;
  std::vector<json> lines;
  for (int i = 0; i < 50 && lines.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    lines = result_lines(dir.file("results.jsonl"), whole);
  }
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["outcome"] == "failed");
}

TEST_CASE("--results on a full disk: whole lines only, the failure logged once an outage, and its recovery") {
  if (::geteuid() != 0) {
    skip("mounting a small tmpfs needs root");
    return;
  }
  const SmallDisk disk("48k");
  if (!disk.mounted()) {
    skip("cannot mount a tmpfs here");
    return;
  }
  {
    std::ofstream filler(disk.file("filler"));
    filler << std::string(40 * 1024, 'f');
  }
  ServerProcess server({"--results", disk.file("results.jsonl")});
  const std::vector<std::string> run{"client", "127.0.0.1", "-p", server.port_text(), "--mode",
                                     "tcp",    "-n",        "1K", "--repeat",         "2"};
  for (int i = 0; i < 4; ++i)
    CHECK(run_tlscmp(run).exit_code == 0);
  CHECK(server.process().wait_for_log("cannot write: No space left on device"));
  // Once per outage, not a line per test: a shorter line may still fit in
  // what the longer one could not (their sizes differ by a few bytes), and
  // the server says it writes again before it says it cannot once more. So
  // the two alternate, a failure first, whichever came last.
  const std::string log = server.log();
  std::string events;  // 'C': cannot write, 'W': writing again, in the log's order
  for (std::size_t at = 0; (at = log.find_first_of("cw", at)) != std::string::npos; ++at) {
    if (log.compare(at, 12, "cannot write") == 0) events += 'C';
    if (log.compare(at, 14, "writing again;") == 0) events += 'W';
  }
  CAPTURE(events);
  REQUIRE(!events.empty());
  CHECK(events.front() == 'C');
  CHECK(events.find("CC") == std::string::npos);
  CHECK(events.find("WW") == std::string::npos);
  bool whole = false;
  const std::size_t kept = result_lines(disk.file("results.jsonl"), whole).size();
  CHECK(whole);
  CHECK(kept < 8);  // of 4 clients x 2 runs
  std::filesystem::remove(disk.file("filler"));
  CHECK(run_tlscmp(run).exit_code == 0);
  CHECK(server.process().wait_for_log("writing again;"));
  CHECK(result_lines(disk.file("results.jsonl"), whole).size() == kept + 2);
  CHECK(whole);
}

TEST_CASE("a handshake test must keep making handshakes: one now and then cannot hold it open") {
  ServerProcess server(
      {"--connect-timeout", "0.5", "--handshake-timeout", "0.5", "--control-timeout", "0.5"});
  protocol::TestRequest request = stream_request(1, 0);
  request.test.kind = TestKind::handshake;
  request.mode = Mode::tls;
  request.test.handshake.handshakes = 500;  // full and resumed: 1000 connections
  HeldTest test(server.port(), "127.0.0.1", request);
  REQUIRE(test.accepted());
  // Before, the server would wait 1000 handshakes' timeouts (1000 s) for the count.
  CHECK(server.process().wait_for_log("tls handshake test: no handshake for 1.5 s after 0 of 1000",
                                      std::chrono::seconds(5)));
}

TEST_CASE("-P 128 over TLS: every data connection is kept however long their handshakes take") {
  // On two cores 128 handshakes take longer than one of the server's waits
  // for data connections, which once dropped those that came in an earlier one.
  const json j = client_json({"--mode", "tls", "-n", "1M", "-P", "128", "--repeat", "1"});
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["bytes"] == std::uint64_t{128} << 20);
}
