// A full server must not look like a broken one, nor let one host lock the
// others out: connections still being set up are capped in all and per
// source address, idle ones are closed after --preamble-timeout, and a client
// turned away is told so in one line, never with a reset. Loopback has many
// addresses (127.0.0.2 floods, 127.0.0.1 is the other host); netns_test does
// the same between namespaces.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// `count` connections from 127.0.0.2 to the server that send nothing, kept
// open (those the server closes or turns away are opened again) until the
// flood is destroyed.
class Flood {
 public:
  Flood(std::uint16_t port, int count) : port_(port), count_(count), thread_([this] { run(); }) {
    // Until the server has seen the first wave.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ~Flood() {
    stop_ = true;
    thread_.join();
  }
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;

 private:
  int open_one() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port_);
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  void run() {
    std::vector<int> open;
    while (!stop_) {
      // Drop what the server ended (a refusal, or a close), then top up.
      std::vector<int> kept;
      for (const int fd : open) {
        char b = 0;
        if (::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) < 0 && errno == EAGAIN) {
          kept.push_back(fd);
        } else {
          ::close(fd);
        }
      }
      open = std::move(kept);
      while (static_cast<int>(open.size()) < count_) {
        const int fd = open_one();
        if (fd < 0) break;
        open.push_back(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const int fd : open)
      ::close(fd);
  }

  std::uint16_t port_;
  int count_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

TEST_CASE("300 idle connections from one address: another address is served, that address is told busy") {
  ServerProcess server;
  const Flood flood(server.port(), 300);
  // Another host: a whole comparison, every byte verified.
  const json served = client_json({"127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.1", "--insecure",
                                   "-n", "4M", "--repeat", "1", "--verify"});
  CHECK(served["runs"].size() == 2);
  CHECK(served["runs"][1]["bytes"] == 4 << 20);
  // The flooding host: one line, at once (not after a timeout), and no reset.
  const Clock::time_point start = Clock::now();
  const ProcessResult busy = run_tlscmp(
      {"client", "127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.2", "--insecure", "-n", "1M"});
  const double took = seconds_since(start);
  CHECK(busy.exit_code == 1);
  // Told at its control connection; or, where the server had just closed a
  // flood connection past its preamble timeout and the flood had not yet
  // reopened it, at a later connection of its run (a round's data
  // connection: "tcp round 1: ", "tls round 1: "), with the same line.
  const std::string line =
      "server busy: 16 connections from 127.0.0.2 being set up; try again, or raise "
      "--max-pending-per-source on the server\n";
  INFO(busy.err);
  CHECK(busy.err.starts_with("tlscmp: error: "));
  CHECK(busy.err.ends_with(line));
  CHECK(std::count(busy.err.begin(), busy.err.end(), '\n') == 1);
  CHECK(took < 2);  // within --preamble-timeout
  CHECK(server.log().find("127.0.0.2") != std::string::npos);
  // The idle ones go after --preamble-timeout, said once a second at most:
  // the 16 the server holds of the flood close together, and more follow.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const std::string log = server.log();
  CHECK(log.find("sent nothing within 2 s (--preamble-timeout); closed") != std::string::npos);
  std::size_t silent_lines = 0;
  for (std::size_t at = log.find("sent nothing within"); at != std::string::npos;
       at = log.find("sent nothing within", at + 1))
    ++silent_lines;
  MESSAGE(silent_lines << " lines for the silent connections closed");
  CHECK(silent_lines < 16);
}

TEST_CASE(
    "the cap on all connections being set up: the host that holds them is turned away, another served") {
  ServerProcess server({"--max-pending", "20", "--max-pending-per-source", "1000"});
  const Flood flood(server.port(), 100);
  // The flooding host holds every place: its next connection is turned away, naming --max-pending.
  const ProcessResult busy = run_tlscmp(
      {"client", "127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.2", "--insecure", "-n", "1M"});
  CHECK(busy.exit_code == 1);
  CHECK(busy.err.starts_with("tlscmp: error: server busy: 20 connections being set up, "));
  CHECK(busy.err.ends_with(
      " of them from 127.0.0.2, its even share; try again, or raise --max-pending on the server\n"));
  // Another host takes the place of the flood's oldest connection (shared max-min).
  const json served = client_json(
      {"127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.1", "--insecure", "-n", "1M", "--repeat", "1"});
  CHECK(served["runs"].size() == 2);
}

TEST_CASE("once the flood stops, its address is served again") {
  ServerProcess server({"--preamble-timeout", "0.5"});
  {
    // The flood lasts until the server has closed idle ones at 0.5 s: a flood
    // that ended sooner would close them itself, and the line would not come.
    const Flood flood(server.port(), 50);
    CHECK(server.process().wait_for_log("sent nothing within 0.5 s (--preamble-timeout); closed"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // any left are closed by then
  const json served = client_json(
      {"127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.2", "--insecure", "-n", "1M", "--repeat", "1"});
  CHECK(served["runs"].size() == 2);
}
