#pragma once

// What a comparison measured: what it asked for, where it ran, and its
// kind's results (each kind's folder defines its own: kinds/NAME/results.hpp),
// with what every kind's runs share: a run's place in the rounds, its TLS
// parameters and each side's cost. Plain values; the kinds fill and render them.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/intervals.hpp"
#include "measure/speed.hpp"
#include "measure/stats.hpp"
#include "measure/stopping.hpp"
#include "mode.hpp"
#include "run_facts.hpp"
#include "spec/spec.hpp"
#include "spec/tls_policy.hpp"

namespace tlscmp::measure {

// One side's cost and socket settings during one run's transfer window.
struct SideCost {
  double window_us = 0;         // this side's window: transfer_us on the receiver, sender_us on the sender
  double cpu_user_s = 0;        // user CPU seconds of the thread that moved the data, in the window
  double cpu_system_s = 0;      // system CPU seconds of that thread, in the window
  int sndbuf_bytes = 0;         // SO_SNDBUF the kernel applied on the data socket
  int rcvbuf_bytes = 0;         // SO_RCVBUF the kernel applied on the data socket
  int mss_bytes = 0;            // TCP_MAXSEG of the data socket
  std::string congestion;       // TCP_CONGESTION of the data socket, "cubic"
  bool ktls_send = false;       // TLS: the kernel encrypted what this side sent
  bool ktls_receive = false;    // TLS: the kernel decrypted what this side received
  std::uint64_t tls_bytes = 0;  // TLS: record bytes written (sender) or read (receiver) in the transfer
  RunFacts facts;               // TCP_INFO, the host's CPU split, where the data threads ran
  // Read and write system calls of the data threads in the window
  // (/proc/thread-self/io); none where the kernel does not count them.
  std::optional<std::uint64_t> read_calls, write_calls;
  // TLS: this side's host calibrated for the run's suite, chunk and record
  // (measure/speed.hpp); none for TCP, kTLS, or where it could not.
  std::optional<TlsCalibration> calibration;
  // TLS rr and crr: this side's host calibrated for the run's suite, sizes
  // and (crr) handshake; none for TCP, or where it could not.
  std::optional<TransactionCalibration> transaction_calibration;

  double cpu_s() const { return cpu_user_s + cpu_system_s; }
  // CPU seconds per GiB (2^30 bytes) moved.
  double cpu_s_per_gib(std::uint64_t bytes) const {
    return bytes > 0 ? cpu_s() / (static_cast<double>(bytes) / (1ull << 30)) : 0;
  }
  // Busy share of one core over the window: 1.0 is one core fully busy.
  double core_share() const { return window_us > 0 ? cpu_s() / (window_us / 1e6) : 0; }
};

// The TLS parameters one run negotiated; empty strings for plain TCP.
struct TlsParameters {
  std::string version;                      // "TLSv1.3"
  std::string cipher;                       // "TLS_AES_256_GCM_SHA384"
  std::string group;                        // key exchange group, "X25519"
  std::string certificate_key_type;         // server certificate key, "ECDSA P-256"
  std::string client_certificate_key_type;  // mutual TLS: the client certificate's key, else ""
  std::uint32_t record_size = 0;            // the sender's largest record plaintext; 0: 16384
  // The libraries at each end as --tls-lib names them ("openssl"): the
  // client's; the server's where the client asked for one ("": its default).
  std::string library;
  std::string server_library;
};

// What every kind's run has, whatever it measured: its place in the
// rounds, its mode and what TLS negotiated, and both sides' cost. Each
// kind's run (kinds/NAME/results.hpp) is one of these and its own figures.
struct RunHeader {
  std::string variant;   // the variant's label: "tcp", "tls", a suite, "tls-resumed" ...; empty: the mode's
  int round = 0;         // 1-based; one round runs each variant once; warm-up rounds count from 1 too
  bool warmup = false;   // a warm-up run: reported, left out of the statistics
  bool partial = false;  // interrupted (Ctrl-C): what this side measured until then
  Mode mode = Mode::tcp;
  TlsParameters tls;  // what the run's (last full) handshake negotiated; empty for tcp and udp
  SideCost client;    // the client's data threads, added up (datagrams: the senders)
  SideCost server;    // the server's (datagrams: the receiver)

  std::string label() const { return variant.empty() ? to_string(mode) : variant; }
};

// One interval of a request/response run (-i): the transactions whose
// responses came in it, on the client's clock from the first request.
struct RrInterval {
  double start_s = 0;
  double end_s = 0;
  std::uint64_t transactions = 0;
  double p99_us = 0;  // 0 when none came

  double transactions_per_s() const {
    return end_s > start_s ? static_cast<double>(transactions) / (end_s - start_s) : 0;
  }
};

// A variant's figure over the same round's baseline figure (the first of the
// modes asked for, tcp in `--mode both`): the median of those ratios and its
// 95% bootstrap interval.
struct PairedRatio {
  Summary ratio;
  std::optional<Interval95> ci;
};

// Where the two ends ran. The server's half arrives in its test_accept message.
struct Environment {
  std::string client_version;
  std::string client_tls_library;
  std::string client_cpu_model;
  std::string client_cpu_features;
  std::string client_kernel;
  std::string server_version;
  std::string server_tls_library;                 // several, "; " between them (server_tls_libraries)
  std::vector<std::string> server_tls_libraries;  // those the server's TLS runs used, in order
  std::string server_cpu_model;
  std::string server_cpu_features;
  std::string server_kernel;
  std::string client_tls_ulps;  // tcp_available_ulp: kTLS needs "tls" in it
  std::string server_tls_ulps;
};

// What a client is told to run: the test it sends (spec::Test) and how it
// runs it. The client's settings (session::ClientConfig) are these and how
// this side connects; a result's TestParameters are these as they were and
// what came of them. Neither copies them field by field.
struct Settings {
  spec::Test test;           // the kind and the fields it reads
  std::string command_line;  // as typed, shell-quoted: the report shows how to run it again
  std::vector<Mode> modes{Mode::tcp,
                          Mode::tls};  // one round runs each, in this order; the first is the baseline
  int rounds = 5;
  int warmup_rounds = 0;  // run first, reported, left out of the statistics
  // --repeat auto: rounds until the ratios' intervals are narrow enough
  // (`rounds` is then the most, auto_repeat->max_rounds).
  std::optional<AutoRepeat> auto_repeat;
  // --start-at: the first run starts at this wall-clock time (ns since the
  // epoch), if this host's clock is within max_skew_s of the server's.
  std::optional<std::int64_t> start_at_ns;
  double max_skew_s = 0.1;
  spec::TlsPolicy tls_policy;  // what the client offers (version, suites, groups, kTLS)
  // --streams: QUIC streams per connection; test.streams (-P times this) is
  // then every mode's streams, tcp and tls each on a connection of its own.
  std::uint32_t quic_streams = 1;

  // The mode every other mode's runs are compared with: the first of two or
  // more (tcp in `--mode both`, udp in `both-udp`); none with one mode.
  std::optional<Mode> baseline() const {
    return modes.size() > 1 ? std::optional<Mode>(modes.front()) : std::nullopt;
  }
  // Whether a mode it runs is encrypted (tls, dtls): what the TLS flags need.
  bool encrypts() const {
    return std::any_of(modes.begin(), modes.end(), [](Mode m) { return is_encrypted(m); });
  }
};

// What was asked for, as it was, and what the run found of its target.
struct TestParameters : Settings {
  std::string host;  // as given, or 127.0.0.1 for the embedded server
  std::uint16_t port = 0;
  bool embedded_server = false;       // no host given: a server in this process on loopback
  std::vector<std::string> variants;  // the order of a round, by label; empty: the modes
  bool client_certificate = false;    // --cert given: mutual TLS
};

struct Comparison;

// What one test kind measured: a comparison holds one kind's results (or
// none yet), of a type its kind defines. A type may have, found by
// argument-dependent lookup beside it:
//   void fill_statistics(T& results, const Comparison& comparison);
//     its statistics (one per variant, with ratios to the baseline) and its
//     headline, from the runs that count: complete, not warm-up;
//   std::vector<HeadlineRatio> ratios_to_wait_on(const T& results);
//     the ratios to the baseline --repeat auto waits on (measure/stopping.hpp).
// Copies copy the results.
class KindResults {
 public:
  KindResults() = default;
  KindResults(const KindResults& other) : held_(other.held_ ? other.held_->clone() : nullptr) {}
  KindResults& operator=(const KindResults& other) {
    if (this != &other) held_ = other.held_ ? other.held_->clone() : nullptr;
    return *this;
  }
  KindResults(KindResults&&) noexcept = default;
  KindResults& operator=(KindResults&&) noexcept = default;
  ~KindResults() = default;

  // The results as T, or null where there are none or they are another type.
  template <typename T>
  const T* get() const {
    const auto* held = dynamic_cast<const Held<T>*>(held_.get());
    return held != nullptr ? &held->value : nullptr;
  }
  // The results as T, for filling: made T (empty) where they were not.
  template <typename T>
  T& as() {
    auto* held = dynamic_cast<Held<T>*>(held_.get());
    if (held == nullptr) {
      auto made = std::make_unique<Held<T>>();
      held = made.get();
      held_ = std::move(made);
    }
    return held->value;
  }
  // The type's fill_statistics and ratios_to_wait_on, where it has them.
  void compute_statistics(const Comparison& comparison) {
    if (held_) held_->fill(comparison);
  }
  std::vector<HeadlineRatio> headline_ratios() const {
    return held_ ? held_->ratios() : std::vector<HeadlineRatio>{};
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::unique_ptr<Base> clone() const = 0;
    virtual void fill(const Comparison& comparison) = 0;
    virtual std::vector<HeadlineRatio> ratios() const = 0;
  };
  template <typename T>
  struct Held final : Base {
    T value{};
    std::unique_ptr<Base> clone() const override { return std::make_unique<Held>(*this); }
    void fill(const Comparison& comparison) override {
      if constexpr (requires { fill_statistics(value, comparison); }) fill_statistics(value, comparison);
    }
    std::vector<HeadlineRatio> ratios() const override {
      if constexpr (requires { ratios_to_wait_on(value); }) {
        return ratios_to_wait_on(value);
      } else {
        return {};
      }
    }
  };
  std::unique_ptr<Base> held_;
};

struct Comparison {
  TestParameters parameters;
  Environment environment;
  KindResults results;             // the kind's results (none until a run)
  std::vector<std::string> notes;  // remarks for the reader, e.g. a suite this library cannot run
  bool interrupted = false;        // Ctrl-C: the runs so far, the last one partial
  std::string error;               // empty, or why the comparison stopped early
  std::optional<AutoRepeatOutcome> auto_repeat;  // --repeat auto: how many rounds, and why no more
  std::optional<double> clock_offset_s;          // --start-at: the server's clock ahead of this host's

  // The results as kind T, or null where they are of another kind.
  template <typename T>
  const T* get() const {
    return results.get<T>();
  }
  // The results as kind T, or an empty T where they are of another kind: for
  // reports that list what a kind has, whatever the comparison ran.
  template <typename T>
  const T& or_empty() const {
    static const T kEmpty{};
    const T* found = get<T>();
    return found != nullptr ? *found : kEmpty;
  }
  // The results as kind T, for filling: made T (empty) where they were another kind.
  template <typename T>
  T& as() {
    return results.as<T>();
  }
};

// Fills each kind's `stats` (one per variant, with ratios to the baseline)
// and its headline from the runs that count: complete, not warm-up.
void compute_statistics(Comparison& comparison);

// The variant whose ratio to the baseline is the headline ("TLS/TCP transfer
// time"): of two modes, the one variant that has a ratio, or where several
// have one, the other mode's plain variant (crr's "tls" beside
// "tls-resumed"); "" where there is none (several suites or groups, one mode).
// `compared` lists the variants with a ratio.
std::string headline_variant(const TestParameters& parameters, const std::vector<std::string>& compared);

}  // namespace tlscmp::measure
