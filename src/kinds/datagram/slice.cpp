// The datagram kind's entry in the table of kinds (kinds/kind.hpp).

#include <fmt/format.h>

#include "kinds/datagram/datagram.hpp"

#include "protocol/datagram.hpp"

namespace tlscmp::kinds {
namespace {
namespace datagram_entry {

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  DatagramRun result = run_datagram_test(run.target, variant.mode, variant.dtls ? &*variant.dtls : nullptr,
                                         run.interrupt, comparison.environment);
  result.partial = run.interrupt.interrupted();  // the senders stopped early
  session::keep_run<DatagramResults>(comparison, std::move(result), variant, run);
}

void notes(const session::ClientConfig& config, measure::Comparison& comparison) {
  session::note_unpinned<DatagramResults>(comparison, config);
}

// A rate below the server's --min-rate (a stack the server lacks, dtls in
// a build without it, its part of the server refuses).
std::string refusal(const protocol::TestRequest& request, const session::ServerSide& side) {
  const std::uint64_t min_rate = side.config().min_rate;
  if (request.test.datagram.rate_bps > 0 && request.test.datagram.rate_bps / 8 < min_rate) {
    return fmt::format(
        "the test asks for {} bit/s a sender; this server has every test move at least {} bytes a second "
        "(--min-rate)",
        request.test.datagram.rate_bps, min_rate);
  }
  return {};
}

// "datagram_runs" and "datagram_summary".
void json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  out["datagram_runs"] = datagram_runs_json(c);
  out["datagram_summary"] = datagram_summary_json(c);
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  nlohmann::ordered_json runs = datagram_runs_json(c);
  return runs.empty() ? nlohmann::ordered_json(nullptr) : runs.back();
}

// What a datagram test may ask for, beyond the checks every test gets.
void check(const spec::Test& t, Mode mode) {
  if ((t.datagram.packets == 0) == (t.duration_ms == 0))
    throw spec::Invalid("a datagram test sends -n datagrams per sender or for -t seconds: give one");
  const std::uint32_t largest =
      is_encrypted(mode) ? protocol::kMaxDtlsDatagramBytes : protocol::kMaxUdpDatagramBytes;
  if (t.chunk_bytes < protocol::kDatagramHeaderBytes || t.chunk_bytes > largest) {
    throw spec::Invalid(fmt::format("-l {} is outside {}..{} bytes for {}", t.chunk_bytes,
                                    protocol::kDatagramHeaderBytes, largest, to_string(mode)));
  }
  if (t.streams > protocol::kMaxSenders)
    throw spec::Invalid(fmt::format("-P {}: at most {} senders", t.streams, protocol::kMaxSenders));
  if (t.verify || t.record_size != 0)
    throw spec::Invalid("--verify and --record-size are for tcp and tls; datagram tests take neither");
}
// What compare and merge read of its runs in a result file.
constexpr RunFigure kFigures[] = {
    {"received/s", {"received_per_s", nullptr}, true},
};

// A test that check passes, every field of its part off its default.
spec::Test example() {
  spec::Test t;
  t.kind = TestKind::datagram;
  t.streams = 2;
  t.chunk_bytes = 1200;
  t.datagram.packets = 99;
  t.datagram.rate_bps = 1'000'000;
  t.datagram.gso = true;
  return t;
}
}  // namespace datagram_entry
}  // namespace

const KindSlice kDatagramKind{
    .kind = TestKind::datagram,
    .flags_are_for = "datagram modes (--mode udp, dtls, both-udp)",
    .takes = "datagram modes take -n, -t, -l, -b, -P, -i, --rcvbuf, --sndbuf",
    .add_flags = add_datagram_flags,
    .asked_by = asked_for_datagrams,
    .configure = configure_datagram,
    .paired_ratios = false,
    .run = datagram_entry::run,
    .notes = datagram_entry::notes,
    .refusal = datagram_entry::refusal,
    .check = datagram_entry::check,
    .example = datagram_entry::example,
    .example_mode = Mode::udp,
    .serve = serve_datagram_test,
    .text_runs = render_datagram_runs,
    .json = datagram_entry::json,
    .last_run_json = datagram_entry::last_run_json,
    .csv = render_datagram_csv,
    .html_section = datagram_html_section,
    .html_headline = datagram_html_headline,
    .results = {"datagram", "datagram_runs", "received", "datagrams", datagram_entry::kFigures},
};

}  // namespace tlscmp::kinds
