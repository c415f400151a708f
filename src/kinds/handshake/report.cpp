// The handshake kind's part of the reports: text and -J (its table entry
// points at them; report/ lays them out).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/handshake/handshake.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {

using render::summary_json;

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json to_json(const measure::Summary& s) {
  return summary_json(s);
}

ordered_json to_json(const HandshakeStats& k) {
  return {{"count", k.handshake_us.count},
          {"resumed", k.resumed},
          {"handshake_us", to_json(k.handshake_us)},
          {"tls_us", to_json(k.tls_us)},
          {"bytes_received", to_json(k.bytes_received)},
          {"bytes_sent", to_json(k.bytes_sent)},
          {"client_hello_bytes", to_json(k.client_hello_bytes)},
          {"server_hello_bytes", to_json(k.server_hello_bytes)},
          {"per_second", k.per_second()}};
}

ordered_json to_json(const HandshakeResults& h) {
  return {{"requested", h.requested},
          {"tls_library", h.tls.library.empty() ? ordered_json(nullptr) : ordered_json(h.tls.library)},
          {"tls_version", h.tls.version},
          {"cipher", h.tls.cipher},
          {"group", h.tls.group},
          {"certificate_key_type", h.tls.certificate_key_type},
          {"full", to_json(h.full)},
          {"resumed", to_json(h.resumed)}};
}

// The first library's (the only one's without --tls-lib).
ordered_json handshakes_json(const measure::Comparison& c) {
  const auto* handshakes = c.get<HandshakeLibraries>();
  return handshakes != nullptr && !handshakes->libraries.empty() ? to_json(handshakes->libraries.front())
                                                                 : ordered_json(nullptr);
}

// Another library's figures over the first's: > 1 means more.
ordered_json over_first_json(const HandshakeResults& h, const HandshakeResults& first) {
  const GroupRatios r = group_ratios(h, first);
  return {{"full_per_second", r.full_per_second},
          {"resumed_per_second", r.resumed_per_second},
          {"full_tls_us_median", r.full_tls_us_median},
          {"resumed_tls_us_median", r.resumed_tls_us_median}};
}

// Every library's, with --tls-lib's several; each other one over the first.
ordered_json libraries_json(const measure::Comparison& c) {
  const auto* handshakes = c.get<HandshakeLibraries>();
  if (handshakes == nullptr || handshakes->libraries.size() < 2) return nullptr;
  ordered_json out = json::array();
  const HandshakeResults& first = handshakes->libraries.front();
  for (const HandshakeResults& h : handshakes->libraries) {
    ordered_json one = to_json(h);
    one["over_first_library"] = &h == &first ? ordered_json(nullptr) : over_first_json(h, first);
    out.push_back(std::move(one));
  }
  return out;
}

// --compare-groups: a row per group, with its ratios to X25519's row.
ordered_json groups_json(const measure::Comparison& c) {
  const auto* groups = c.get<GroupResults>();
  if (groups == nullptr) return nullptr;
  ordered_json rows = json::array();
  for (const GroupHandshakes& g : groups->groups) {
    const HandshakeResults* base = group_baseline(groups->groups, g.library);
    ordered_json row = {{"group", g.group},
                        {"tls_library", g.library.empty() ? ordered_json(nullptr) : ordered_json(g.library)},
                        {"error", g.error.empty() ? ordered_json(nullptr) : ordered_json(g.error)}};
    if (g.results) {
      row.update(to_json(*g.results));
      row["vs_x25519"] = nullptr;
      if (base != nullptr) {
        const GroupRatios r = group_ratios(*g.results, *base);
        row["vs_x25519"] = {
            {"full_per_second", r.full_per_second},       {"resumed_per_second", r.resumed_per_second},
            {"full_tls_us_median", r.full_tls_us_median}, {"resumed_tls_us_median", r.resumed_tls_us_median},
            {"client_hello_bytes", r.client_hello_bytes}, {"server_hello_bytes", r.server_hello_bytes}};
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string render_handshakes(const HandshakeResults& h) {
  std::string out = fmt::format(
      "\n{}{} full and {} resumed handshakes, alternating: {} {} {}, {} certificate\n",
      h.tls.library.empty() ? "" : h.tls.library + ": ", h.full.handshake_us.count,
      h.resumed.handshake_us.count, h.tls.version, h.tls.cipher, h.tls.group, h.tls.certificate_key_type);
  out += fmt::format("{:<8} {:>6} {:>8} {:>40} {:>14} {:>11} {:>15} {:>19}\n", "kind", "count", "resumed",
                     "connect+handshake_us min / median / max", "tls_us median", "per second",
                     "bytes in / out", "Client/ServerHello");
  for (const auto& [name, k] : {std::pair{"full", &h.full}, std::pair{"resumed", &h.resumed}}) {
    out += fmt::format(
        "{:<8} {:>6} {:>8} {:>40} {:>14.0f} {:>11.0f} {:>15} {:>19}\n", name, k->handshake_us.count,
        k->resumed,
        fmt::format("{:.0f} / {:.0f} / {:.0f}", k->handshake_us.min, k->handshake_us.median,
                    k->handshake_us.max),
        k->tls_us.median, k->per_second(),
        fmt::format("{:.0f} / {:.0f}", k->bytes_received.median, k->bytes_sent.median),
        fmt::format("{:.0f} / {:.0f}", k->client_hello_bytes.median, k->server_hello_bytes.median));
  }
  if (h.full.tls_us.median > 0 && h.resumed.tls_us.count > 0) {
    out += fmt::format("resumed / full TLS handshake time (medians): {:.2f}x\n",
                       h.resumed.tls_us.median / h.full.tls_us.median);
  }
  if (h.resumed.resumed < h.resumed.handshake_us.count) {
    out += fmt::format(
        "note: the server resumed only {} of {} offered sessions; the rest were full handshakes\n",
        h.resumed.resumed, h.resumed.handshake_us.count);
  }
  return out;
}

// A group's row: its name, and the library's after it for every library but the first.
std::string group_label(const GroupHandshakes& g, const GroupResults& c) {
  return g.library.empty() || g.library == c.groups.front().library ? g.group : g.group + " " + g.library;
}

// Each library's table, then each other library over the first.
std::string render_libraries(const HandshakeLibraries& handshakes) {
  std::string out;
  for (const HandshakeResults& h : handshakes.libraries)
    out += render_handshakes(h);
  if (handshakes.libraries.size() < 2) return out;
  const HandshakeResults& first = handshakes.libraries.front();
  out += "\n";
  for (const HandshakeResults& h : handshakes.libraries) {
    if (&h == &first) continue;
    const GroupRatios r = group_ratios(h, first);
    out += fmt::format(
        "{}: {:.2f}x {}'s full handshakes a second and {:.2f}x its resumed ones; TLS handshake time "
        "(medians) "
        "{:.2f}x full, {:.2f}x resumed\n",
        h.tls.library, r.full_per_second, first.tls.library, r.resumed_per_second, r.full_tls_us_median,
        r.resumed_tls_us_median);
  }
  return out;
}

// --compare-groups: one row per key exchange group, then each over X25519.
std::string render_groups(const measure::TestParameters& p, const GroupResults& c) {
  std::string out;
  const GroupHandshakes* first = nullptr;
  std::size_t width = 5;
  for (const GroupHandshakes& g : c.groups) {
    width = std::max(width, group_label(g, c).size());
    if (first == nullptr && g.results) first = &g;
  }
  out += fmt::format(
      "\nkey exchange groups: up to {} full and {} resumed handshakes per group and round, {} round{}{}\n",
      p.test.handshake.handshakes, p.test.handshake.handshakes, p.rounds, p.rounds == 1 ? "" : "s",
      first != nullptr ? fmt::format("; {} {}, {} certificate", first->results->tls.version,
                                     first->results->tls.cipher, first->results->tls.certificate_key_type)
                       : "");
  out += fmt::format("{:<{}} {:>8} {:>9} {:>21} {:>22} {:>11} {:>11} {:>9}\n", "group", width, "full/s",
                     "resumed/s", "full tls_us p50/p99", "resumed tls_us p50/p99", "ClientHello",
                     "ServerHello", "resumed");
  for (const GroupHandshakes& g : c.groups) {
    if (!g.results) {
      out += fmt::format("{:<{}} failed: {}\n", group_label(g, c), width,
                         g.error.empty() ? "no handshakes" : g.error);
      continue;
    }
    const HandshakeResults& h = *g.results;
    out += fmt::format("{:<{}} {:>8.0f} {:>9.0f} {:>21} {:>22} {:>11.0f} {:>11.0f} {:>9}\n",
                       group_label(g, c), width, h.full.per_second(), h.resumed.per_second(),
                       fmt::format("{:.0f} / {:.0f}", h.full.tls_us.median, h.full.tls_us.p99),
                       fmt::format("{:.0f} / {:.0f}", h.resumed.tls_us.median, h.resumed.tls_us.p99),
                       h.full.client_hello_bytes.median, h.full.server_hello_bytes.median,
                       fmt::format("{}/{}", h.resumed.resumed, h.resumed.handshake_us.count));
  }
  if (std::none_of(c.groups.begin(), c.groups.end(),
                   [&c](const GroupHandshakes& g) { return group_baseline(c.groups, g.library) != nullptr; }))
    return out + "(no X25519 row, so no ratios)\n";
  out += fmt::format("\n{:<{}} {:>8} {:>9} {:>13} {:>16} {:>11} {:>11}   (over X25519, tls_us medians)\n",
                     "group", width, "full/s", "resumed/s", "full tls_us", "resumed tls_us", "ClientHello",
                     "ServerHello");
  for (const GroupHandshakes& g : c.groups) {
    const HandshakeResults* base = group_baseline(c.groups, g.library);
    if (!g.results || base == nullptr) continue;
    const GroupRatios r = group_ratios(*g.results, *base);
    out +=
        fmt::format("{:<{}} {:>7.2f}x {:>8.2f}x {:>12.2f}x {:>15.2f}x {:>10.2f}x {:>10.2f}x\n",
                    group_label(g, c), width, r.full_per_second, r.resumed_per_second, r.full_tls_us_median,
                    r.resumed_tls_us_median, r.client_hello_bytes, r.server_hello_bytes);
  }
  return out;
}

// One row: a group ("" outside --compare-groups), a sort (full, resumed) and its figures.
std::string csv_row(const std::string& group, const char* sort, const HandshakeStats& k,
                    const std::string& library) {
  return fmt::format("{},{},{},{},{:.1f},{:.1f},{:.1f},{:.1f},{:.0f},{:.0f},{:.0f},{:.0f},{:.1f},{}\n",
                     render::csv_field(group), sort, k.handshake_us.count, k.resumed, k.handshake_us.median,
                     k.handshake_us.mean, k.handshake_us.p99, k.tls_us.median, k.bytes_received.median,
                     k.bytes_sent.median, k.client_hello_bytes.median, k.server_hello_bytes.median,
                     k.per_second(), render::csv_field(library));
}

}  // namespace

std::string render_handshake_csv(const measure::Comparison& c) {
  std::string out =
      "group,handshake,count,resumed,handshake_us_median,handshake_us_mean,handshake_us_p99,tls_us_median,"
      "bytes_received_median,bytes_sent_median,client_hello_bytes_median,server_hello_bytes_median,"
      "per_second,tls_library\n";
  const auto add = [&out](const std::string& group, const HandshakeResults& h) {
    out += csv_row(group, "full", h.full, h.tls.library);
    out += csv_row(group, "resumed", h.resumed, h.tls.library);
  };
  for (const HandshakeResults& h : c.or_empty<HandshakeLibraries>().libraries)
    add("", h);
  for (const GroupHandshakes& g : c.or_empty<GroupResults>().groups)
    if (g.results) add(g.group, *g.results);
  return out;
}

std::string render_handshake_results(const measure::Comparison& c) {
  if (const auto* handshakes = c.get<HandshakeLibraries>()) return render_libraries(*handshakes);
  if (const auto* groups = c.get<GroupResults>()) return render_groups(c.parameters, *groups);
  return {};
}

void add_handshake_json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  out["handshakes"] = handshakes_json(c);
  out["handshakes_libraries"] = libraries_json(c);
  out["groups"] = groups_json(c);
}

}  // namespace tlscmp::kinds
