#pragma once

// A test kind as the rest of the program sees it: one entry in the table of
// kinds (kinds/table.cpp), as neper's neper_fn or iperf3's struct protocol.
// app/ runs a test through its kind's entry and includes no kind's folder;
// each kind's folder defines its entry beside its halves (slice.cpp).

#include <array>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "render/page.hpp"
#include "session/client_side.hpp"
#include "session/config.hpp"
#include "session/pending_tests.hpp"
#include "session/server_side.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tlscmp::kinds {

// What the client command's flags are bound into: the client's settings
// (their test, its parts and the rest), and which kinds the flags asked for
// (--rr, --crr, --handshakes ...), by TestKind. cli/ holds it; each kind's
// entry adds its own flags to it.
struct KindFlags : session::ClientConfig {
  std::array<bool, kAllKinds.size()> asked{};

  void ask(TestKind kind) { asked[static_cast<std::size_t>(kind)] = true; }
};

// The client's flags that every kind shares but reads its own way, as typed:
// -n counts bytes, datagrams, transactions or connections; -l is a chunk or
// a datagram.
struct SharedFlags {
  std::string bytes;            // -n; "" when not given
  double time_s = 0;            // -t; 0 when not given
  std::string length;           // -l; "" when not given
  int repeat = 0;               // --repeat N; 0: not given (or auto), the kind's default
  std::string mode;             // --mode as typed, for messages
  std::vector<TestKind> asked;  // the kinds their flags asked for (--rr, --crr ...)
};

// A figure of a kind's runs, as compare and merge read it back from a
// result file: its name, where it is in a run, and which way is better.
struct RunFigure {
  const char* name;                 // "p99 latency us"
  std::array<const char*, 2> path;  // {"latency_us", "p99"}, or {"transactions_per_s", nullptr}
  bool higher_is_better = true;
  // A rate a run may carry instead of its kind's first figure, and what it
  // counts, which merge adds up: "connections" (a flows run's, by its work).
  const char* amount = nullptr;
  const char* amount_unit = nullptr;
};

// A kind's runs in a result file.
struct ResultRuns {
  const char* label = nullptr;        // compare's and merge's name for the kind: "bulk", "rr"
  const char* list = nullptr;         // its -J list of runs: "rr_runs"
  const char* amount = nullptr;       // what a run moved, which merge adds up: "transactions"
  const char* amount_unit = nullptr;  // "transactions"
  // Compare's figures; the first is the rate (higher is better), which merge takes too.
  std::span<const RunFigure> figures;
  // The server's --results, per client, as merge adds them up: a figure of
  // each of the kind's server results ("messages") counted as an amount
  // ("transactions"); and where its results carry memory readings
  // (rss_before, rss_idle, heap_before, heap_idle), the figure they are per
  // ("flows"), for its memory per idle connection by variant.
  const char* server_figure = nullptr;
  const char* server_amount = nullptr;
  const char* memory_per = nullptr;
};

// One variant of one point of a sweep (tlscmp sweep), as its kind gives it
// to the sweep's table and CSV (report/sweep.cpp).
struct SweepFigures {
  std::string variant;
  Mode mode = Mode::tcp;
  std::size_t runs = 0;    // the runs its statistics are over
  std::string cell;        // the table's cell: "26,800,000 (41 / 80 us)"
  std::string ratio_cell;  // its ratio to the baseline, in a column of its own; "" where none
  // The CSV's columns it fills (of the kind's sweep_columns), by name; the rest stay empty.
  std::map<std::string, std::string> csv;
};

// A setting of a kind's that `tlscmp sweep` takes a list of (--rr
// 1/1,64/1K): its flag's name (without the dashes) and help, what one value
// does to a point's settings (parsed and checked as the flag would be:
// throws UsageError), what its first value makes of the sweep's base
// settings (the kind asked, and what its tests need; may be null), and
// where its list stands among the sweep's: the first list given, in this
// order, makes the table's rows. The settings every kind shares are
// cli/'s: -l 20, -w 30, --sndbuf 40, --rcvbuf 50, --cipher 80.
struct SweepSetting {
  const char* name;
  const char* help;
  std::function<void(session::ClientConfig&)> (*value)(const std::string& text);
  void (*base)(const std::string& first, KindFlags& flags) = nullptr;
  int order = 100;
};

// A chart of a sweep on the report page (tlscmp report): a figure of each
// variant in the kind's -J summary against the swept setting.
struct SweepChart {
  const char* title;
  const char* axis;     // the y axis: "transactions/s"
  const char* summary;  // the -J key of the kind's summary: "rr_summary"
  const char* field;    // a variant's figure in it: "transactions_per_s"
  bool log_scale = false;
  const char* low = "min";  // its bars' ends: min and max, or a ratio's "ci95_low"/"ci95_high"
  const char* high = "max";
};

struct KindSlice {
  TestKind kind;
  // It runs over a stream stack whose connections are UDP ones (QUIC): its
  // halves open and take that stack's connections and streams.
  bool over_udp_streams = false;
  // The flag that asks for this kind, for messages ("--crr"); null where none does.
  const char* flag = nullptr;
  // What its own flags are for, in a refusal's words: "-b is for datagram
  // modes (--mode udp, dtls, both-udp)"; and what its tests take, after a
  // refusal of another kind's flag ("--rr takes -t, -n, ..."), or null.
  const char* flags_are_for = nullptr;
  const char* takes = nullptr;

  // Client flags (its flags.cpp). Adds the kind's own flags to the client
  // command, bound straight into its part of the test, and those that ask
  // for it marking it asked (may be null); returns them, so that one given to
  // a test of another kind is refused by name.
  std::vector<CLI::Option*> (*add_flags)(CLI::App& command, KindFlags& flags) = nullptr;
  // Whether the settings ask for the kind beside its flags (datagram: the
  // modes); may be null. The last kind of the table that is asked for is
  // the test's (crr over rr over datagram over handshake); none: stream.
  bool (*asked_by)(const session::ClientConfig& config) = nullptr;
  // Reads the flags every kind shares as the kind means them into `config`
  // (-n, -t, -l, --repeat's default), and refuses a flag that does not apply,
  // in one line (throws UsageError).
  void (*configure)(const SharedFlags& flags, session::ClientConfig& config) = nullptr;
  // What this client's host can hold of a test of the kind (descriptors,
  // source ports), checked for the client's flags and each sweep point;
  // throws UsageError naming the limit (may be null).
  void (*check_host)(const session::ClientConfig& config) = nullptr;
  // Its connections carry the work of the other kinds asked beside it
  // (flows: --rr, --crr, --http on its event loops): asked, it is the
  // test's kind whatever else is asked.
  bool holds_work = false;
  // Its rounds pair each variant with the baseline's run: --repeat auto has
  // ratios to wait on.
  bool paired_ratios = true;
  // --streams: its connections carry QUIC streams of their own (a test of
  // another kind opens a QUIC connection per unit of work).
  bool quic_streams = false;
  // -B LIST: its connections spread over several source addresses (a
  // request's `flow_sources`).
  bool several_sources = false;
  // Its TLS variants may release their buffers while idle (tls-release: a
  // request's `release_buffers`).
  bool release_buffers = false;
  // Its requests may name the server certificate's key type
  // (--compare-key-types: a request's `key_type`).
  bool key_types = false;

  // Client half. The variants of one round; null: common_variants
  // (kinds/variants.hpp): tcp, tls or --compare-ciphers' suites, udp, dtls.
  std::vector<session::Variant> (*variants)(const session::ClientConfig& config,
                                            const tls::ClientOptions& tls_config,
                                            std::vector<std::string>& notes) = nullptr;
  // One run of a variant, kept in the comparison; throws tlscmp::Error.
  // Null for a kind without rounds of runs.
  void (*run)(const session::ClientRun& run, const session::Variant& variant,
              measure::Comparison& comparison) = nullptr;
  // A kind without rounds (handshake): the whole test, into the comparison,
  // its failure in comparison.error; with each of --tls-lib's libraries
  // (kinds/variants.hpp's library_options).
  void (*run_whole)(const session::ClientConfig& target, const tls::ClientOptions& tls_config,
                    session::InterruptWatch& interrupt, measure::Comparison& comparison) = nullptr;
  // One TLS handshake with `tls` against the target, as a test of its own,
  // before any round: a TLS variant the server cannot serve is left out or
  // named before anything runs (kinds/variants.hpp takes the first kind of
  // the table that has it). Throws tlscmp::Error; may be null.
  void (*probe)(const session::ClientConfig& target, const tls::Context& tls,
                session::InterruptWatch& interrupt, measure::Environment& environment) = nullptr;
  // After the rounds: the kind's notes on its runs (may be null).
  void (*notes)(const session::ClientConfig& config, measure::Comparison& comparison) = nullptr;

  // Server half. Why this server refuses the request, beside the caps every
  // kind shares, or "" (may be null); checked before anything is set up.
  std::string (*refusal)(const protocol::TestRequest& request, const session::ServerSide& side) = nullptr;
  // -A's server CPU applies: the kind's server half runs data threads of
  // its own (false: the accepting threads serve its connections).
  bool server_pin = true;
  // A test of this kind over `mode`, once the checks every kind shares
  // (check_test below) passed: what the kind needs of its parts. Throws
  // spec::Invalid naming the flag.
  void (*check)(const spec::Test& test, Mode mode) = nullptr;
  // A well-formed test of the kind, every field of its parts off its
  // default, and a mode it runs over: what the unit tests of the spec, the
  // wire and the checks walk the table for.
  spec::Test (*example)() = nullptr;
  Mode example_mode = Mode::tls;
  // Serves one test whose request passed the caps; returns the line to log.
  // Throws tlscmp::Error.
  std::string (*serve)(Stream& control, const protocol::TestRequest& request,
                       session::ServerSide& side) = nullptr;
  // The preamble kind of the connections its client opens beside the
  // control connection, where they are its own (handshake, crr), and their
  // server half, which may take the stream (flows' loops do). `cpu_mark` is
  // the accepting thread's CPU when the connection came; the half leaves it
  // at the thread's CPU as it returns.
  std::optional<protocol::ConnectionKind> connection = std::nullopt;
  void (*serve_connection)(std::unique_ptr<Stream>& stream, session::PendingTests& pending,
                           double& cpu_mark) = nullptr;
  // Connections of another protocol on tlscmp's port, which any of its
  // clients may open (HTTP: h2load loads the server): whether the first
  // bytes of a connection, where tlscmp's preamble would be, begin this
  // kind's protocol, and its server half of such a connection, those bytes
  // first, within the server's timeouts; it returns the line to log and
  // throws nothing. Both null for a kind without one.
  bool (*claims)(std::span<const std::byte> first) = nullptr;
  // The application protocols (ALPN) its foreign clients may ask a TLS
  // server for ("h2", "http/1.1"), which the server agrees to.
  std::span<const char* const> alpn = {};
  std::string (*serve_foreign)(Stream& stream, std::span<const std::byte> first,
                               const session::ServerConfig& config) = nullptr;

  // Reports: pure functions of the comparison (render/ has the pieces they
  // share; report/ lays them out). Each may be null. Text: the header lines
  // known before the first run, after the common ones; the runs, medians
  // and ratios, before the notes; the headline, after them.
  std::string (*text_header)(const measure::TestParameters& parameters) = nullptr;
  std::string (*text_runs)(const measure::Comparison& comparison) = nullptr;
  std::string (*text_headline)(const measure::Comparison& comparison) = nullptr;
  // -J: adds the kind's keys to the report. Every report has every kind's
  // keys, in the table's order: null or empty for a comparison of another kind.
  void (*json)(const measure::Comparison& comparison, nlohmann::ordered_json& out) = nullptr;
  // -J's "test": the kind's keys beside spec::Test's fields, written for
  // every comparison (of another kind too, as `json`).
  void (*parameters_json)(const measure::TestParameters& parameters, nlohmann::ordered_json& out) = nullptr;
  // The comparison's last run, as its kind's runs list holds it; null if none.
  nlohmann::ordered_json (*last_run_json)(const measure::Comparison& comparison) = nullptr;
  // A header line and one row per run.
  std::string (*csv)(const measure::Comparison& comparison) = nullptr;
  // The report page (tlscmp report, --html), from result files: the kind's
  // section of charts, "" where no result has its runs; the sentences of
  // its headline for one result. Each may be null.
  std::string (*html_section)(render::Page& page) = nullptr;
  void (*html_headline)(const nlohmann::json& result, std::vector<std::string>& sentences) = nullptr;
  // A sweep of its tests: the table's title over these points, one point's
  // figures per variant, and the CSV columns they fill, in order, after the
  // variant, its mode and its runs (kinds share a column of the same name).
  // Null for a kind a sweep does not run.
  std::string (*sweep_title)(const std::vector<const measure::Comparison*>& points) = nullptr;
  std::vector<SweepFigures> (*sweep_figures)(const measure::Comparison& point) = nullptr;
  std::span<const char* const> sweep_columns = {};
  std::span<const SweepChart> sweep_charts = {};
  // Its settings a sweep takes lists of, after the shared ones, in table order.
  std::span<const SweepSetting> sweep_settings = {};
  // Its flags that `tlscmp sweep` takes as they are, one value for every
  // point (may be null).
  void (*add_sweep_flags)(CLI::App& cmd, KindFlags& flags) = nullptr;
  // What compare and merge read back of its -J; none for a kind without runs.
  ResultRuns results{};
};

// The one check of a test, over one of its modes: no field of a part its
// kind does not read set, the kind over a transport it runs on, and what its
// entry's check asks. The client's flags, each point of a sweep and every
// request the server decodes are held to it. Throws spec::Invalid naming
// the flag ("--framing len4 needs --msg-size").
void check_test(const spec::Test& test, Mode mode);

// What the client's host can hold of its test: its kind's check_host.
// Throws UsageError.
void check_host(const session::ClientConfig& config);

// A request: check_test, and the fields the request adds (key_type). The
// server holds every request it decodes to it, before anything else.
// Throws protocol::ProtocolError.
void check_request(const protocol::TestRequest& request);

// What the layers above read of a test's settings without naming a kind's
// part: the bytes it asks to move (bulk -n, of a bulk test or of its
// flows), which the server's --max-bytes holds; which way its bytes go
// (-R), for the header of its report; and what a live view counts toward
// (the bytes of the streams that go the test's way, its seconds, its
// transactions).
std::uint64_t bytes_asked(const spec::Test& test);
Direction direction_of(const spec::Test& test);
struct LiveGoal {
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::uint64_t transactions = 0;
};
LiveGoal live_goal(const spec::Test& test);

// A kind's result read back as its kind reads it (each field held to its
// range): throws protocol::ProtocolError where it does not hold, or its
// type is no kind's. For the fuzzer, which meets every message a peer sends.
void check_result(const protocol::KindResult& result);

// The table: every kind, in TestKind order.
std::span<const KindSlice* const> all_kinds();
const KindSlice& slice_of(TestKind kind);
// Every kind's ALPN protocols, in table order: what a TLS server agrees to.
std::vector<std::string> alpn_protocols();
// The kind whose own connections have this preamble kind, or null (data
// connections go to their test's ticket).
const KindSlice* slice_of(protocol::ConnectionKind connection);

}  // namespace tlscmp::kinds
