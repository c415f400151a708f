#include "support/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tlscmp::test {
namespace {

std::vector<char*> argv_of(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

int decode_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

// TLSCMP_TEST_BINARY and TLSCMP_TEST_PEER, when set, name another build's
// binaries: scripts/test runs these tests against the BoringSSL and the
// sanitized binaries too, without building the tests again for each.
std::string tlscmp_binary() {
  const char* other = std::getenv("TLSCMP_TEST_BINARY");
  return other != nullptr && *other != '\0' ? other : TLSCMP_BINARY;
}

std::string built_binary() {
  return TLSCMP_BINARY;
}

std::string peer_binary() {
  const char* other = std::getenv("TLSCMP_TEST_PEER");
  return other != nullptr ? other : TLSCMP_PEER_BINARY;
}

ProcessResult run_process(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  std::vector<char*> argv = argv_of(args);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_pipes = 2;
  bool timed_out = false;
  while (open_pipes > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      }
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = timed_out ? -1 : decode_status(status);
  return result;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ =
      std::filesystem::temp_directory_path() / ("tlscmp-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& args,
                                     const std::filesystem::path& log_file,
                                     const std::filesystem::path& out_file)
    : log_file_(log_file) {
  std::vector<char*> argv = argv_of(args);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
}

BackgroundProcess::~BackgroundProcess() {
  if (running()) stop(SIGKILL);
}

bool BackgroundProcess::running() const {
  if (exited_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    exit_code_ = decode_status(status);
    return false;
  }
  return true;
}

int BackgroundProcess::stop(int signal) {
  if (running()) {
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    exit_code_ = decode_status(status);
  }
  return exit_code_;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool wait_for_file_text(const std::filesystem::path& path, const std::string& text,
                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return read_file(path).find(text) != std::string::npos;
}

std::size_t tcp_sockets_at(std::uint16_t port, const std::string& state) {
  const auto port_of = [](const std::string& end) {
    const std::size_t colon = end.rfind(':');
    return colon == std::string::npos ? 0UL : std::stoul(end.substr(colon + 1), nullptr, 16);
  };
  std::size_t count = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, socket_state;
      fields >> slot >> local >> remote >> socket_state;
      if (socket_state == state && (port_of(local) == port || port_of(remote) == port)) ++count;
    }
  }
  return count;
}

std::string BackgroundProcess::log() const {
  return read_file(log_file_);
}

bool BackgroundProcess::wait_for_log(const std::string& text, std::chrono::milliseconds timeout) const {
  return wait_for_file_text(log_file_, text, timeout);
}

ServerProcess::ServerProcess(const std::vector<std::string>& extra_args, const std::string& bind,
                             const std::string& binary) {
  std::vector<std::string> args{binary, "server", "-p", "0", "--bind", bind};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  process_ = std::make_unique<BackgroundProcess>(args, dir_.path() / "server.log");
  if (!process_->wait_for_log("listening on")) {
    throw std::runtime_error("the server did not start: " + process_->log());
  }
  std::smatch match;
  const std::string log = process_->log();
  if (!std::regex_search(log, match, std::regex(R"(listening on \S+:(\d+))"))) {
    throw std::runtime_error("no port in the server log: " + log);
  }
  port_ = static_cast<std::uint16_t>(std::stoi(match[1].str()));
}

std::size_t ServerProcess::open_fds() const {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(process_->pid()) + "/fd")) {
    ++n;
  }
  return n;
}

namespace {

// A number field of /proc/PID/status ("VmRSS:", "Threads:"), or -1.
long long status_field(pid_t pid, const std::string& field) {
  const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  const std::size_t at = status.find("\n" + field);
  if (at == std::string::npos) return -1;
  return std::stoll(status.substr(at + 1 + field.size()));
}

}  // namespace

std::uint64_t ServerProcess::rss_bytes() const {
  return static_cast<std::uint64_t>(status_field(process_->pid(), "VmRSS:")) * 1024;  // kB
}

int ServerProcess::threads() const {
  return static_cast<int>(status_field(process_->pid(), "Threads:"));
}

RawConnection::RawConnection(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("cannot connect to the server under test");
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void RawConnection::send(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close on us: that is its right
    done += static_cast<std::size_t>(n);
  }
}

std::string RawConnection::read_all(std::chrono::milliseconds timeout) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return text;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return text;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
  }
}

Listener::Listener(int backlog) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd_, backlog) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("cannot listen on loopback");
  }
  port_ = ntohs(addr.sin_port);
}

Listener::~Listener() {
  for (int fd : queued_)
    ::close(fd);
  if (fd_ >= 0) ::close(fd_);
}

void Listener::fill_queue(int n) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port_);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // EINPROGRESS, or queued
    queued_.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

int Listener::accept(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return -1;
  return ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
}

}  // namespace tlscmp::test
