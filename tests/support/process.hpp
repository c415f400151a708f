#pragma once

// Running the real tlscmp binary from tests: one-shot commands and a server
// in the background.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tlscmp::test {

// The tlscmp under test, and (for cross-library tests) a tlscmp built
// against the other TLS library, or "" when there is none.
std::string tlscmp_binary();
std::string peer_binary();
// This build's own tlscmp, whatever TLSCMP_TEST_BINARY says: what its build
// tree's unit file and install name.
std::string built_binary();

struct ProcessResult {
  int exit_code = -1;  // -1 if killed by a signal or the timeout
  std::string out;
  std::string err;
};

// Runs `args` (args[0] is the program) and waits at most `timeout`.
ProcessResult run_process(const std::vector<std::string>& args,
                          std::chrono::seconds timeout = std::chrono::seconds(60));

// The whole of a file ("" if it cannot be read).
std::string read_file(const std::filesystem::path& path);
// Waits until the file holds `text`; false after `timeout`.
bool wait_for_file_text(const std::filesystem::path& path, const std::string& text,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
// TCP sockets on this host in `state` (as /proc/net/tcp writes it: "01"
// established, "06" TIME_WAIT) with `port` at either end, IPv4 and IPv6.
std::size_t tcp_sockets_at(std::uint16_t port, const std::string& state);

// A fresh directory under the system's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A program in the background whose stderr goes to a file; killed when destroyed.
class BackgroundProcess {
 public:
  // stderr goes to `log_file`, stdout to `out_file` (default: nowhere).
  BackgroundProcess(const std::vector<std::string>& args, const std::filesystem::path& log_file,
                    const std::filesystem::path& out_file = "/dev/null");
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Waits until the log holds `text`; false after `timeout`.
  bool wait_for_log(const std::string& text,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  std::string log() const;
  bool running() const;
  pid_t pid() const { return pid_; }
  // Sends `signal` and waits for the exit; returns the exit code (-1 if killed by a signal).
  int stop(int signal);

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_file_;
  mutable int exit_code_ = -1;
  mutable bool exited_ = false;
};

// `tlscmp server -p 0` with the given extra arguments, started and listening.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& extra_args = {},
                         const std::string& bind = "127.0.0.1", const std::string& binary = tlscmp_binary());
  std::uint16_t port() const { return port_; }
  std::string port_text() const { return std::to_string(port_); }
  BackgroundProcess& process() { return *process_; }
  std::string log() const { return process_->log(); }
  // Number of open file descriptors of the server process.
  std::size_t open_fds() const;
  // Its resident memory (VmRSS) and its threads, from /proc/PID/status.
  std::uint64_t rss_bytes() const;
  int threads() const;

 private:
  TempDir dir_;
  std::unique_ptr<BackgroundProcess> process_;
  std::uint16_t port_ = 0;
};

// A raw TCP connection to 127.0.0.1:port, for playing a broken or hostile peer.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  void send(const std::string& bytes);
  // Reads until the peer closes or `timeout` passes; returns what arrived.
  std::string read_all(std::chrono::milliseconds timeout);
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// A listening socket on 127.0.0.1 at a free port, for playing a fake server.
class Listener {
 public:
  explicit Listener(int backlog = 16);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  std::uint16_t port() const { return port_; }
  // Accepts one connection (waiting at most `timeout`); -1 if none came.
  int accept(std::chrono::milliseconds timeout);
  // Starts `n` connections it never accepts, so that its queue is full and
  // the kernel drops further SYNs: a host that does not answer.
  void fill_queue(int n);

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::vector<int> queued_;
};

}  // namespace tlscmp::test
