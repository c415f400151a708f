// The stream kind's entry in the table of kinds (kinds/kind.hpp).

#include <fmt/format.h>
#include <tuple>

#include "kinds/stream/stream.hpp"

namespace tlscmp::kinds {
namespace {
namespace stream_entry {

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  const tls::Context* tls = variant.tls ? &*variant.tls : nullptr;
  session::keep_run<StreamResults>(comparison,
                                   run_stream_test(run.target, tls, variant.mode, run.interrupt, run.observer,
                                                   run.seed, run.round, comparison.environment),
                                   variant, run);
}

// -w/--sndbuf/--rcvbuf: what the kernel applied, where it is not what was asked.
void note_buffer_sizes(measure::Comparison& comparison) {
  const auto* streams = comparison.get<StreamResults>();
  if (streams == nullptr || streams->runs.empty()) return;
  const StreamRun& last = streams->runs.back();
  const measure::TestParameters& p = comparison.parameters;
  for (const auto& [option, asked, client, server] :
       {std::tuple{"SO_SNDBUF", p.test.sndbuf_bytes, last.client.sndbuf_bytes, last.server.sndbuf_bytes},
        std::tuple{"SO_RCVBUF", p.test.rcvbuf_bytes, last.client.rcvbuf_bytes, last.server.rcvbuf_bytes}}) {
    if (asked == 0) continue;
    const auto wanted = static_cast<int>(asked);
    if (client == wanted && server == wanted) continue;
    std::string why;
    if (client == 2 * wanted || server == 2 * wanted)
      why = "; Linux doubles what is asked, for its bookkeeping";
    if (client < 2 * wanted || server < 2 * wanted)
      why += "; less than asked is net.core.*mem_max capping it";
    comparison.notes.push_back(
        fmt::format("{} {} asked for, the kernel applied {} on the client and {} on the server{}", option,
                    asked, client, server, why));
  }
}

void notes(const session::ClientConfig& config, measure::Comparison& comparison) {
  note_buffer_sizes(comparison);
  session::note_unpinned<StreamResults>(comparison, config);
}

void check(const spec::Test& t, Mode) {
  if ((t.stream.bytes == 0) == (t.duration_ms == 0))
    throw spec::Invalid("a bulk run moves -n bytes or sends for -t seconds: give one");
  if (t.stream.framing == framing::Framing::len4 && t.stream.msg_size == 0)
    throw spec::Invalid("--framing len4 needs --msg-size");
  if (t.stream.msg_size > t.stream.max_msg) throw spec::Invalid("--msg-size is above --max-msg");
  if (t.stream.bidir && t.streams < 2) throw spec::Invalid("--bidir needs two streams at least (-P 2)");
}
// What compare and merge read of its runs in a result file.
constexpr RunFigure kFigures[] = {
    {"MB/s", {"mbytes_per_s", nullptr}, true},
    {"client CPU s/GiB", {"client", "cpu_s_per_gib"}, false},
    {"server CPU s/GiB", {"server", "cpu_s_per_gib"}, false},
};

// A test that check passes, every field of its part off its default.
spec::Test example() {
  spec::Test t;
  t.streams = 2;
  t.stream.bytes = 5 << 20;
  t.stream.direction = Direction::server_to_client;
  t.stream.no_delay = true;
  t.stream.framing = framing::Framing::len4;
  t.stream.msg_size = 1000;
  t.stream.max_msg = 4096;
  t.stream.read_size = 777;
  t.stream.bidir = true;
  t.verify = true;
  t.record_size = 4096;
  t.interval_ms = 250;
  t.sndbuf_bytes = t.rcvbuf_bytes = 1 << 20;
  return t;
}
}  // namespace stream_entry
}  // namespace

const KindSlice kStreamKind{
    .kind = TestKind::stream,
    .over_udp_streams = true,
    .flags_are_for = "bulk runs",
    .add_flags = add_stream_flags,
    .configure = configure_stream,
    .quic_streams = true,
    .run = stream_entry::run,
    .notes = stream_entry::notes,
    .check = stream_entry::check,
    .example = stream_entry::example,
    .serve = serve_stream_test,
    .text_header = render_stream_header,
    .text_runs = render_stream_runs,
    .text_headline = render_stream_headline,
    .json = add_stream_json,
    .last_run_json = stream_last_run_json,
    .csv = render_stream_csv,
    .html_section = stream_html_section,
    .html_headline = stream_html_headline,
    .sweep_title = stream_sweep_title,
    .sweep_figures = stream_sweep_figures,
    .sweep_columns = kStreamSweepColumns,
    .sweep_charts = kStreamSweepCharts,
    .sweep_settings = kStreamSweepSettings,
    .add_sweep_flags = add_stream_sweep_flags,
    .results = {"bulk", "runs", "bytes", "bytes", stream_entry::kFigures, "bytes", "bytes"},
};

}  // namespace tlscmp::kinds
