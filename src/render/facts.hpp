#pragma once

// The facts that explain a run (TCP_INFO, the host's CPU split, where the
// data threads ran), in JSON and, where notable, as text lines; shared by
// every kind's part of the report.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "run_facts.hpp"

namespace tlscmp::render {

// {tcp_info, host_cpu, cpus, main_cpu, pinned_cpu, udp}: null where unknown
// (udp: QUIC runs, {path, host}).
nlohmann::ordered_json facts_json(const RunFacts& facts);

// The facts' CSV columns for one side, each after a comma: ",client_retransmits,...".
std::string facts_columns(const char* side);
// Their fields, in that order, each after a comma; empty where unknown.
std::string facts_fields(const RunFacts& facts);

// One run, as the notes need it.
struct FactsRun {
  int round = 0;
  bool warmup = false;
  std::string label;        // "tcp", "tls", or the variant
  std::string round_label;  // as the runs table shows the round ("2", "w1")
  const RunFacts* client = nullptr;
  const RunFacts* server = nullptr;
};

// Any kind's runs (each with round, warmup, label() and client and server
// SideCosts), as the notes need them.
template <typename Runs>
std::vector<FactsRun> facts_runs(const Runs& runs) {
  std::vector<FactsRun> out;
  for (const auto& run : runs)
    out.push_back(
        {run.round, run.warmup, run.label(), round_label(run), &run.client.facts, &run.server.facts});
  return out;
}

// Where a run's data threads ran: "client cpu 0, server cpu 1"; "" when
// neither side says.
std::string placement(const FactsRun& run);

// A line per run only where something is notable: retransmits, steal above
// 1%, a QUIC run's datagrams and UDP drops, or a placement other than that
// of the round's first run (the pair's two runs ran on different CPUs). ""
// when nothing is.
std::string render_notable(const std::vector<FactsRun>& runs);

}  // namespace tlscmp::render
