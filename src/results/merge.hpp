#pragma once

// `tlscmp merge CLIENT.json... [--results SERVER.jsonl]`: many clients' results
// (a fleet run through Ansible, say) as one: the totals, each host, and the
// server's own account of who ran what.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlscmp::results {

struct MergeConfig {
  std::vector<std::string> paths;  // the clients' -J results
  std::string results_path;        // the server's --results file, or ""
};

// One host's (one file's) figures for one kind and variant, over its runs that count.
struct MergedHost {
  std::string host;  // the file's name without .json: Ansible names it after the inventory host
  std::string kind;  // the kind's label in its results (KindSlice::results)
  std::string variant;
  int runs = 0;
  double amount = 0;       // bytes (bulk), transactions (rr), connections (crr), datagrams received
  double median_rate = 0;  // MB/s, transactions/s, connections/s, received/s: the runs' median
};

// The hosts together, per kind and variant.
struct MergedTotal {
  std::string kind;
  std::string variant;
  int hosts = 0;
  int runs = 0;
  double amount = 0;        // added up over the hosts
  double rate_sum = 0;      // the hosts' medians added up: the fleet's rate when they ran at once
  std::string amount_unit;  // "bytes", "transactions", "connections", "datagrams"
  std::string rate_unit;    // "MB/s" ...
};

// What the server's --results file says, per client address.
struct ServerView {
  std::string client_address;
  int tests = 0;
  int ok = 0;
  int refused = 0;
  int failed = 0;
  // What its tests moved, as the server counted them, by each kind's amount
  // (kinds::ResultRuns::server_amount: bytes, transactions, connections,
  // flows), every kind's in the table's order.
  std::vector<std::pair<std::string, double>> amounts;
  // Kinds whose server results carry memory readings (the many-connection
  // tests): by the kind's label, then by variant (tcp, tls, ...), the
  // server's memory per connection with every connection of a test
  // established and idle (its RSS, and its heap, over its own before the
  // test's first), the median over the tests; none without a reading.
  // Tests that ran at once count each other's connections.
  struct Memory {
    std::optional<double> idle_bytes_per_connection;
    std::optional<double> idle_heap_bytes_per_connection;
  };
  std::map<std::string, std::map<std::string, Memory>> memory;
};

struct MergeResult {
  std::vector<MergedHost> hosts;
  std::vector<MergedTotal> totals;
  std::vector<ServerView> server;  // empty without --results
  bool has_server_view = false;
};

// Throws UsageError, one line, for a file that is no result or no results file.
MergeResult merge_results(const MergeConfig& config);

}  // namespace tlscmp::results
