// The rr kind's part of the reports: text, -J and CSV (its table entry
// points at them; report/ lays them out).

#include "kinds/rr/rr.hpp"
#include "kinds/transactions.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "kinds/unit_split.hpp"
#include "render/facts.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {

using render::ci_method;
using render::csv_field;
using render::facts_json;
using render::facts_runs;
using render::format_bytes;
using render::latency_json;
using render::pairs_text;
using render::ratio_json;
using render::ratio_sentence;
using render::ratio_text;
using render::render_notable;
using render::round_label;
using render::rounds_text;
using render::summary_json;
using render::text_or_null;
using render::tls_or_null;

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json side_json(const RrRun& run, const measure::SideCost& side) {
  return {{"cpu_user_s", side.cpu_user_s},
          {"cpu_system_s", side.cpu_system_s},
          {"cpu_us_per_transaction", run.cpu_us_per_transaction(side)},
          {"core_share", side.core_share()},
          {"transaction_calibration", transaction_calibration_json(side.transaction_calibration)},
          {"facts", facts_json(side.facts)}};
}

ordered_json run_json(const RrRun& run, const measure::TestParameters& p) {
  ordered_json connections = json::array();
  for (const RrConnection& c : run.connections) {
    connections.push_back({{"connection", c.index},
                           {"transactions", c.transactions},
                           {"elapsed_us", c.elapsed_us},
                           {"transactions_per_s", c.transactions_per_s()},
                           {"latency_us", latency_json(c.latency)}});
  }
  ordered_json intervals = json::array();
  for (const measure::RrInterval& i : run.intervals) {
    intervals.push_back({{"start_s", i.start_s},
                         {"end_s", i.end_s},
                         {"transactions", i.transactions},
                         {"transactions_per_s", i.transactions_per_s()},
                         {"p99_us", i.transactions > 0 ? ordered_json(i.p99_us) : ordered_json(nullptr)}});
  }
  return {{"variant", run.label()},
          {"round", run.round},
          {"warmup", run.warmup},
          {"partial", run.partial},
          {"mode", to_string(run.mode)},
          {"request_bytes", p.test.rr.request_bytes},
          {"response_bytes", p.test.rr.response_bytes},
          {"connections", p.test.streams},
          {"rate_tps", p.test.rr.rate_tps},
          {"transactions", run.transactions},
          {"elapsed_us", run.elapsed_us},
          {"transactions_per_s", run.transactions_per_s()},
          {"handshake_us", run.handshake_us},
          {"latency_us", latency_json(run.latency)},
          {"tls_version", tls_or_null(run.tls.version, run.mode)},
          {"cipher", tls_or_null(run.tls.cipher, run.mode)},
          {"group", tls_or_null(run.tls.group, run.mode)},
          {"tls_library", text_or_null(run.tls.library)},
          {"server_tls_library", text_or_null(run.tls.server_library)},
          {"certificate_key_type", tls_or_null(run.tls.certificate_key_type, run.mode)},
          {"client", side_json(run, run.client)},
          // An interrupted run never heard the server's account.
          {"server", run.partial ? ordered_json(nullptr) : side_json(run, run.server)},
          {"per_connection", connections},
          {"intervals", intervals}};
}

// Each variant's ratios to the baseline, paired by round; and quic's to tls.
std::string render_paired_ratios(const render::ComparedModes& modes, const RrResults& rr,
                                 const std::vector<std::string>& libraries) {
  std::string out;
  const std::string title = modes.title();  // "TLS/TCP"
  for (const RrStats& s : rr.stats) {
    if (!s.transactions_per_s_over_baseline) continue;
    out += fmt::format("\n{}/{}, paired by round {}: {}; {}; {}\n",
                       s.variant == modes.other ? title.substr(0, title.find('/')) : s.variant,
                       title.substr(title.find('/') + 1),
                       pairs_text(s.transactions_per_s_over_baseline->ratio.count),
                       ratio_sentence("transactions/s", s.transactions_per_s_over_baseline),
                       ratio_sentence("p50 latency", s.p50_over_baseline),
                       ratio_sentence("p99 latency", s.p99_over_baseline));
  }
  out += libraries.size() > 1 ? "\n" : "";
  out += render::library_lines<RrStats>(
      rr.stats, libraries,
      {{&RrStats::transactions_per_s, "transactions/s"},
       {&RrStats::p99_us, "p99 latency"},
       {&RrStats::client_cpu_us_per_transaction, "client CPU per transaction"},
       {&RrStats::server_cpu_us_per_transaction, "server CPU per transaction"}});
  for (const RrStats& s : rr.stats) {
    if (!s.transactions_per_s_over_tls) continue;
    out += fmt::format("\n{}/{}, paired by round {}: {}\n", s.variant, render::twin_of(s.mode, s.variant),
                       pairs_text(s.transactions_per_s_over_tls->ratio.count),
                       ratio_sentence("transactions/s", s.transactions_per_s_over_tls));
  }
  return out;
}

}  // namespace

std::string render_rr_header(const measure::TestParameters& p) {
  const std::string amount = p.test.rr.transactions > 0
                                 ? fmt::format("{} transactions in all", p.test.rr.transactions)
                                 : fmt::format("{:g} s", p.test.duration_s());
  const std::string loop = p.test.rr.rate_tps > 0
                               ? fmt::format("open loop at {:g} transactions/s in all", p.test.rr.rate_tps)
                               : std::string("closed loop");
  std::string quic;
  if (p.quic_streams > 1)
    quic = fmt::format(" (quic: {} streams on each of {})", p.quic_streams, p.test.streams / p.quic_streams);
  if (p.test.rr.stream_per_tx) quic = " (quic: a stream per transaction, as HTTP/3)";
  return fmt::format(
      "request/response: requests of {}, responses of {}, {}, {} connection{}{}, {} per run, "
      "{}{}{}\n",
      format_bytes(p.test.rr.request_bytes), format_bytes(p.test.rr.response_bytes), loop, p.test.streams,
      p.test.streams == 1 ? "" : "s", quic, amount, rounds_text(p),
      p.warmup_rounds > 0 ? fmt::format(" after {} warm-up", p.warmup_rounds) : "",
      p.test.verify ? ", every byte verified" : "");
}

std::string render_rr_runs(const measure::Comparison& c) {
  const RrResults& rr = c.or_empty<RrResults>();
  std::string out;
  if (!rr.runs.empty()) {
    out +=
        fmt::format("\n{:>5} {:<4} {:>12} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>17} {:>12}\n",
                    "round", "mode", "transactions", "time_s", "tx/s", "min_us", "p50_us", "p90_us", "p99_us",
                    "p99.9_us", "max_us", "CPU us/tx cli/srv", "handshake_us");
    for (const RrRun& run : rr.runs) {
      const measure::LatencySummary& l = run.latency;
      out += fmt::format(
          "{:>5} {:<4} {:>12} {:>8.2f} {:>10.0f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>10.1f} {:>10.1f} "
          "{:>17} "
          "{:>12.0f}\n",
          round_label(run), run.label(), run.transactions, run.elapsed_us / 1e6, run.transactions_per_s(),
          l.min, l.p50, l.p90, l.p99, l.p999, l.max,
          fmt::format(
              "{:.1f} / {}", run.cpu_us_per_transaction(run.client),
              run.partial ? std::string("-") : fmt::format("{:.1f}", run.cpu_us_per_transaction(run.server))),
          run.handshake_us);
      for (const RrConnection& k : run.connections) {
        out += fmt::format(
            "{:>5} {:<4} {:>12} {:>8.2f} {:>10.0f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>10.1f} "
            "{:>10.1f}   (connection {})\n",
            "", "", k.transactions, k.elapsed_us / 1e6, k.transactions_per_s(), k.latency.min, k.latency.p50,
            k.latency.p90, k.latency.p99, k.latency.p999, k.latency.max, k.index);
      }
    }
    if (c.parameters.warmup_rounds > 0) out += "(w: warm-up, left out of the statistics)\n";
    if (c.interrupted)
      out += "(*: interrupted, this side's figures until then; left out of the statistics)\n";
    out += fmt::format("(latency: {}; percentiles within 1% of the measured)\n",
                       c.parameters.test.rr.rate_tps > 0
                           ? "from when each request was due on the schedule to its response"
                           : "from each request's send to its response");
    out += render_notable(facts_runs(rr.runs));
  }
  if (rr.stats.empty()) return out;
  std::size_t width = 4;
  for (const RrStats& s : rr.stats)
    width = std::max(width, s.variant.size());
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  out += fmt::format("\n{:<{}} {:>4} {:>10} {:>21} {:>9} {:>9} {:>17} {:>25}\n", "mode", width, "runs",
                     "tx/s", "min - max", "p50_us", "p99_us", "CPU us/tx cli/srv",
                     fmt::format("vs {}: tx/s  p50   p99", modes.baseline));
  for (const RrStats& s : rr.stats) {
    out += fmt::format("{:<{}} {:>4} {:>10.0f} {:>21} {:>9.1f} {:>9.1f} {:>17} {:>25}\n", s.variant, width,
                       s.transactions_per_s.count, s.transactions_per_s.median,
                       fmt::format("{:.0f} - {:.0f}", s.transactions_per_s.min, s.transactions_per_s.max),
                       s.p50_us.median, s.p99_us.median,
                       fmt::format("{:.1f} / {:.1f}", s.client_cpu_us_per_transaction.median,
                                   s.server_cpu_us_per_transaction.median),
                       s.variant == modes.baseline
                           ? std::string("1.00x 1.00x 1.00x")
                           : fmt::format("{} {} {}", ratio_text(s.transactions_per_s_over_baseline),
                                         ratio_text(s.p50_over_baseline), ratio_text(s.p99_over_baseline)));
  }
  out += "(medians over the rounds)\n";
  out += render_paired_ratios(modes, rr, c.parameters.tls_policy.libraries);
  for (const RrStats& s : rr.stats)
    out += render_unit_split(c.environment, s.variant, s.client_split, s.server_split, "transaction");
  return out;
}

ordered_json rr_runs_json(const measure::Comparison& c) {
  const auto* rr = c.get<RrResults>();
  if (rr == nullptr) return nullptr;
  ordered_json runs = json::array();
  for (const RrRun& run : rr->runs)
    runs.push_back(run_json(run, c.parameters));
  return runs;
}

ordered_json rr_summary_json(const measure::Comparison& c) {
  const auto* rr = c.get<RrResults>();
  if (rr == nullptr) return nullptr;
  ordered_json summary = json::object();
  ordered_json headline = nullptr;
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  for (const RrStats& s : rr->stats) {
    ordered_json over_baseline = nullptr;
    if (s.transactions_per_s_over_baseline) {
      over_baseline = {{"transactions_per_s", ratio_json(s.transactions_per_s_over_baseline)},
                       {"p50_us", ratio_json(s.p50_over_baseline)},
                       {"p99_us", ratio_json(s.p99_over_baseline)},
                       {"ci_method", ci_method()}};
      if (s.variant == rr->headline) headline = over_baseline;
    }
    summary[s.variant] = {{"mode", to_string(s.mode)},
                          {"runs", s.transactions_per_s.count},
                          {"transactions_per_s", summary_json(s.transactions_per_s)},
                          {"p50_us", summary_json(s.p50_us)},
                          {"p99_us", summary_json(s.p99_us)},
                          {"client_cpu_us_per_transaction", summary_json(s.client_cpu_us_per_transaction)},
                          {"server_cpu_us_per_transaction", summary_json(s.server_cpu_us_per_transaction)},
                          {"cost_split", unit_split_json(s.client_split, s.server_split)},
                          {modes.over_key(), over_baseline},
                          {"over_twin", render::over_twin_json(s.mode, s.variant, "transactions_per_s",
                                                               s.transactions_per_s_over_tls)}};
  }
  summary[modes.headline_key()] = headline;
  return summary;
}

std::string render_rr_csv(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  std::string out =
      "variant,round,warmup,partial,mode,request_bytes,response_bytes,connections,rate_tps,connection,"
      "transactions,elapsed_us,transactions_per_s,handshake_us,latency_min_us,latency_p50_us,latency_p90_us,"
      "latency_p99_us,latency_p999_us,latency_max_us,latency_mean_us,tls_version,cipher,group,"
      "certificate_key_type,tls_library,server_tls_library,client_cpu_user_s,client_cpu_system_s,client_cpu_"
      "us_per_transaction,"
      "server_cpu_user_s,server_cpu_system_s,server_cpu_us_per_transaction,client_tls_library,"
      "server_tls_library,client_cpu_model,server_cpu_model," +
      std::string(kCalibrationCsvColumns) + "\n";
  const measure::Environment& e = c.environment;
  // The columns every row has: the run, the connection, its count, window and latencies.
  const auto head = [&](const RrRun& run, const std::string& connection, std::uint64_t transactions,
                        double elapsed_us, const measure::LatencySummary& l) {
    const double per_s = elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
    return fmt::format("{},{},{},{},{},{},{},{},{:g},{},{},{:.3f},{:.3f}", csv_field(run.label()), run.round,
                       run.warmup ? 1 : 0, run.partial ? 1 : 0, to_string(run.mode), p.test.rr.request_bytes,
                       p.test.rr.response_bytes, p.test.streams, p.test.rr.rate_tps, connection, transactions,
                       elapsed_us, per_s) +
           fmt::format(",{{}},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}", l.min, l.p50, l.p90, l.p99,
                       l.p999, l.max, l.mean);
  };
  for (const RrRun& run : c.or_empty<RrResults>().runs) {
    // Per connection (with -P > 1): the run's columns, its own figures, the rest empty.
    for (const RrConnection& k : run.connections) {
      out +=
          fmt::format(
              fmt::runtime(head(run, std::to_string(k.index), k.transactions, k.elapsed_us, k.latency)), "") +
          std::string(16 + 1 + kCalibrationCsvCommas, ',') + "\n";
    }
    out += fmt::format(fmt::runtime(head(run, "all", run.transactions, run.elapsed_us, run.latency)),
                       fmt::format("{:.3f}", run.handshake_us)) +
           fmt::format(",{},{},{},{},{},{},{:.6f},{:.6f},{:.3f},{:.6f},{:.6f},{:.3f},{},{},{},{},{}\n",
                       csv_field(run.tls.version), csv_field(run.tls.cipher), csv_field(run.tls.group),
                       csv_field(run.tls.certificate_key_type), csv_field(run.tls.library),
                       csv_field(run.tls.server_library), run.client.cpu_user_s, run.client.cpu_system_s,
                       run.cpu_us_per_transaction(run.client), run.server.cpu_user_s, run.server.cpu_system_s,
                       run.cpu_us_per_transaction(run.server), csv_field(e.client_tls_library),
                       csv_field(e.server_tls_library), csv_field(e.client_cpu_model),
                       csv_field(e.server_cpu_model), calibration_csv(run.client, run.server));
  }
  return out;
}

std::vector<SweepFigures> rr_sweep_figures(const measure::Comparison& c) {
  std::vector<SweepFigures> out;
  for (const RrStats& s : c.or_empty<RrResults>().stats) {
    SweepFigures f = transactions_sweep_figures(s);
    f.cell = fmt::format("{} ({:.0f} / {:.0f} us)", render::thousands(s.transactions_per_s.median),
                         s.p50_us.median, s.p99_us.median);
    // TLS against the same rounds' TCP: what the question is about.
    if (s.transactions_per_s_over_baseline && s.p50_over_baseline) {
      f.ratio_cell = fmt::format("{:.2f}x (p50 {:.2f}x)", s.transactions_per_s_over_baseline->ratio.median,
                                 s.p50_over_baseline->ratio.median);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tlscmp::kinds
