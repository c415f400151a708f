// tlscmp-delay: a link with a round-trip time, for tests between network
// namespaces on a kernel without netem (tc's delay). It forwards IP packets
// between two TUN devices, one in each of two namespaces, and holds each
// packet for half the round trip before writing it to the other side. The
// namespaces then talk as two hosts on a WAN would: one end-to-end TCP
// connection (the kernels' own congestion control and retransmission, no
// proxy in between), and UDP datagrams as they are.
//
//   tlscmp-delay --rtt-ms MS [--limit PACKETS] NETNS:DEVICE NETNS:DEVICE
//
// Each direction is a FIFO of at most --limit packets (as netem's limit):
// a packet that finds it full is dropped (drop-tail) and counted. Order is
// kept per direction, since every packet of a direction is held for the same
// time. One thread, one epoll set: the two TUN descriptors, a timerfd armed
// for the next packet due, and a signalfd for SIGTERM and SIGINT, on which
// it prints what it forwarded and dropped, one line per direction, and
// exits 0. scripts/netns-harness --delay runs it.

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace {

constexpr const char* kUsage =
    "usage: tlscmp-delay --rtt-ms MS [--limit PACKETS] NETNS:DEVICE NETNS:DEVICE "
    "(NETNS: a name under /run/netns or a path such as /proc/PID/ns/net; DEVICE: a TUN device there)";

// The largest IP packet a TUN device can carry (its MTU is at most 65535).
constexpr std::size_t kMaxPacketBytes = 65536;
// At most this many packets are read from one device per wake-up, so that a
// busy direction cannot hold back the other one's due packets for long.
constexpr int kReadBatch = 64;
// A packet goes out at most this late: the timer is armed this far past the
// head packet's time, so that packets due within it leave in one wake-up
// rather than one wake-up each (at 1500 bytes and 1 Gbit/s, 80,000 a second).
// Never early: every packet is held at least the one-way delay, which is what
// the tests' lower bounds on handshake times rely on.
constexpr std::int64_t kCoalesceNs = 50'000;

struct Settings {
  double rtt_ms = -1;
  std::size_t limit_packets = 1000;  // per direction, as netem's default
  std::string netns[2];
  std::string device[2];
};

// A setup failure: one line, exit 2 for a bad argument, 1 otherwise.
struct Failure : std::runtime_error {
  Failure(int code, const std::string& what) : std::runtime_error(what), exit_code(code) {}
  int exit_code;
};

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

template <typename Number>
Number parse_number(std::string_view flag, std::string_view text, Number low, Number high) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !(value >= low && value <= high))
    throw Failure(2, fmt::format("{}: '{}' is not a number from {} to {}", flag, text, low, high));
  return value;
}

Settings parse_arguments(int argc, char** argv) {
  Settings settings;
  int endpoints = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw Failure(2, fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}\n", kUsage);
      std::exit(0);
    } else if (arg == "--rtt-ms") {
      settings.rtt_ms = parse_number(arg, value(), 0.0, 600'000.0);
    } else if (arg == "--limit") {
      settings.limit_packets = parse_number<std::size_t>(arg, value(), 1, 1'000'000);
    } else if (arg.starts_with("-")) {
      throw Failure(2, fmt::format("unknown option '{}' ({})", arg, kUsage));
    } else {
      const auto colon = arg.rfind(':');
      if (colon == std::string_view::npos || colon == 0 || colon + 1 == arg.size())
        throw Failure(2, fmt::format("'{}' is not NETNS:DEVICE", arg));
      if (endpoints == 2) throw Failure(2, fmt::format("'{}': two ends only ({})", arg, kUsage));
      settings.netns[endpoints] = std::string(arg.substr(0, colon));
      settings.device[endpoints] = std::string(arg.substr(colon + 1));
      if (settings.device[endpoints].size() >= IFNAMSIZ)
        throw Failure(2, fmt::format("'{}': a device name has at most {} characters", arg, IFNAMSIZ - 1));
      ++endpoints;
    }
  }
  if (settings.rtt_ms < 0) throw Failure(2, fmt::format("--rtt-ms is missing ({})", kUsage));
  if (endpoints != 2) throw Failure(2, fmt::format("two NETNS:DEVICE ends are needed ({})", kUsage));
  return settings;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Enters the network namespace at `netns` (a path, or a name under /run/netns).
void enter_netns(const std::string& netns) {
  const std::string path = netns.find('/') == std::string::npos ? "/run/netns/" + netns : netns;
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw Failure(1, errno_text("network namespace " + path));
  if (::setns(fd.get(), CLONE_NEWNET) != 0) throw Failure(1, errno_text("entering " + path));
}

// Attaches to TUN device `device` in `netns`. The device must exist there
// (ip tuntap add), so that a typo is an error rather than a new device in the
// wrong place; the descriptor then works from any namespace.
Fd open_tun(const std::string& netns, const std::string& device) {
  enter_netns(netns);
  if (::if_nametoindex(device.c_str()) == 0)
    throw Failure(1, fmt::format("no device '{}' in network namespace '{}' (ip -n {} tuntap add {} mode tun)",
                                 device, netns, netns, device));
  Fd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) throw Failure(1, errno_text("/dev/net/tun"));
  ifreq request{};
  // IFF_NO_PI: bare IP packets, with no 4-byte protocol header before each.
  request.ifr_flags = static_cast<short>(IFF_TUN | IFF_NO_PI);
  std::memcpy(request.ifr_name, device.c_str(), device.size());
  if (::ioctl(fd.get(), TUNSETIFF, &request) != 0)
    throw Failure(1,
                  errno_text(fmt::format("attaching to '{}' in '{}' (is it a TUN device?)", device, netns)));
  return fd;
}

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// One direction of the link: packets read from one device, held in arrival
// order until their time, then written to the other device. The slots are
// reused, each keeping its buffer, so that the data path allocates nothing
// once every slot has held a packet of the largest size.
class Direction {
 public:
  Direction(std::string name, std::size_t limit) : name_(std::move(name)), slots_(limit) {}

  bool empty() const { return queued_ == 0; }
  std::int64_t head_due_ns() const { return slots_[head_].due_ns; }

  // Reads what `from` has (at most kReadBatch packets); each is due `hold_ns` from now.
  void read_from(int from, std::int64_t hold_ns, std::vector<std::byte>& scratch) {
    for (int i = 0; i < kReadBatch; ++i) {
      const ssize_t n = ::read(from, scratch.data(), scratch.size());
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        throw Failure(1, errno_text("reading from " + name_));
      }
      if (queued_ == slots_.size()) {
        ++dropped_packets_;
        continue;
      }
      Slot& slot = slots_[(head_ + queued_) % slots_.size()];
      slot.due_ns = now_ns() + hold_ns;
      slot.bytes.assign(scratch.begin(), scratch.begin() + n);
      ++queued_;
      if (queued_ > most_queued_) most_queued_ = queued_;
    }
  }

  // Writes to `to` every packet due by `now`.
  void write_due(int to, std::int64_t now) {
    while (queued_ > 0 && slots_[head_].due_ns <= now) {
      const Slot& slot = slots_[head_];
      // A TUN write hands the packet to the kernel's stack and does not
      // block; a packet the stack refuses (the device down) is counted lost.
      if (::write(to, slot.bytes.data(), slot.bytes.size()) == static_cast<ssize_t>(slot.bytes.size())) {
        ++forwarded_packets_;
        forwarded_bytes_ += slot.bytes.size();
      } else {
        ++write_failures_;
      }
      head_ = (head_ + 1) % slots_.size();
      --queued_;
    }
  }

  std::string report() const {
    return fmt::format(
        "tlscmp-delay: {}: {} packets ({} bytes) forwarded, {} dropped past the limit of {}, "
        "{} refused by the kernel, {} still held at exit, at most {} held",
        name_, forwarded_packets_, forwarded_bytes_, dropped_packets_, slots_.size(), write_failures_,
        queued_, most_queued_);
  }

 private:
  struct Slot {
    std::int64_t due_ns = 0;  // CLOCK_MONOTONIC time at which it goes out
    std::vector<std::byte> bytes;
  };
  std::string name_;  // "A:dev to B:dev"
  std::vector<Slot> slots_;
  std::size_t head_ = 0;
  std::size_t queued_ = 0;
  std::size_t most_queued_ = 0;
  std::uint64_t forwarded_packets_ = 0;  // written whole to the other device
  std::uint64_t forwarded_bytes_ = 0;    // their IP bytes, headers included
  std::uint64_t dropped_packets_ = 0;    // found the queue full (drop-tail)
  std::uint64_t write_failures_ = 0;     // due, but the other device refused them
};

// SIGTERM and SIGINT arrive through a descriptor, so that a signal ends the
// loop between packets and the counts are printed whole.
Fd stop_signals_fd() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (::sigprocmask(SIG_BLOCK, &stop_signals, nullptr) != 0) throw Failure(1, errno_text("sigprocmask"));
  Fd signals(::signalfd(-1, &stop_signals, SFD_NONBLOCK | SFD_CLOEXEC));
  if (signals.get() < 0) throw Failure(1, errno_text("signalfd"));
  return signals;
}

// An epoll set of `fds`, each event's data its index.
Fd epoll_of(std::initializer_list<int> fds) {
  Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (epoll.get() < 0) throw Failure(1, errno_text("epoll"));
  std::uint64_t i = 0;
  for (const int fd : fds) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = i++;
    if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &event) != 0) throw Failure(1, errno_text("epoll_ctl"));
  }
  return epoll;
}

// Arms `timer` for the earliest packet due in either direction (and a little
// more, to take several at once), only when that is sooner than `armed_ns`:
// not once per packet read. Returns the expiry armed, or `armed_ns`.
std::int64_t arm_for_next(const Fd& timer, const Direction (&directions)[2], std::int64_t armed_ns) {
  std::int64_t next_ns = 0;
  for (const Direction& d : directions)
    if (!d.empty() && (next_ns == 0 || d.head_due_ns() < next_ns)) next_ns = d.head_due_ns();
  if (next_ns == 0) return armed_ns;
  next_ns += kCoalesceNs;
  if (armed_ns != 0 && next_ns >= armed_ns) return armed_ns;
  itimerspec when{};
  when.it_value.tv_sec = next_ns / 1'000'000'000;
  when.it_value.tv_nsec = next_ns % 1'000'000'000;
  if (::timerfd_settime(timer.get(), TFD_TIMER_ABSTIME, &when, nullptr) != 0)
    throw Failure(1, errno_text("timerfd_settime"));
  return next_ns;
}

int run(const Settings& settings) {
  const Fd signals = stop_signals_fd();
  const Fd home(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  if (home.get() < 0) throw Failure(1, errno_text("/proc/self/ns/net"));
  const Fd tun[2] = {open_tun(settings.netns[0], settings.device[0]),
                     open_tun(settings.netns[1], settings.device[1])};
  if (::setns(home.get(), CLONE_NEWNET) != 0)
    throw Failure(1, errno_text("returning to the first namespace"));

  const Fd timer(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (timer.get() < 0) throw Failure(1, errno_text("timerfd"));
  // The event's data says which: 0 and 1 the devices, 2 the timer, 3 the signals.
  const Fd epoll = epoll_of({tun[0].get(), tun[1].get(), timer.get(), signals.get()});

  const auto end = [&](int i) { return settings.netns[i] + ":" + settings.device[i]; };
  // directions[i] carries what device i sends, to the other device.
  Direction directions[2] = {Direction(end(0) + " to " + end(1), settings.limit_packets),
                             Direction(end(1) + " to " + end(0), settings.limit_packets)};
  const auto hold_ns = static_cast<std::int64_t>(std::llround(settings.rtt_ms * 1e6 / 2));
  std::vector<std::byte> scratch(kMaxPacketBytes);
  // The harness waits for this line before it starts anything over the link.
  fmt::print(stderr,
             "tlscmp-delay: forwarding between {} and {}, {} ms each way, at most {} packets held each way\n",
             end(0), end(1), settings.rtt_ms / 2, settings.limit_packets);

  std::int64_t armed_ns = 0;  // the timer's expiry, 0 when disarmed
  int status = 0;
  for (bool stopping = false; !stopping;) {
    epoll_event events[4];
    const int n = ::epoll_wait(epoll.get(), events, 4, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Failure(1, errno_text("epoll_wait"));
    }
    try {
      for (int e = 0; e < n; ++e) {
        const std::uint64_t which = events[e].data.u64;
        if (which < 2) {
          directions[which].read_from(tun[which].get(), hold_ns, scratch);
        } else if (which == 2) {
          std::uint64_t expirations = 0;
          if (::read(timer.get(), &expirations, sizeof expirations) < 0 && errno != EAGAIN)
            throw Failure(1, errno_text("timerfd"));
          armed_ns = 0;
        } else {
          stopping = true;
        }
      }
    } catch (const Failure& failure) {
      // A device gone (deleted under it): say so, then print the counts.
      fmt::print(stderr, "tlscmp-delay: {}\n", failure.what());
      status = 1;
      stopping = true;
    }
    const std::int64_t now = now_ns();
    directions[0].write_due(tun[1].get(), now);
    directions[1].write_due(tun[0].get(), now);
    armed_ns = arm_for_next(timer, directions, armed_ns);
  }
  for (const Direction& d : directions)
    fmt::print(stderr, "{}\n", d.report());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_arguments(argc, argv));
  } catch (const Failure& failure) {
    fmt::print(stderr, "tlscmp-delay: {}\n", failure.what());
    return failure.exit_code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tlscmp-delay: {}\n", e.what());
    return 1;
  }
}
