#include "report/speed.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "measure/units.hpp"
#include "render/render.hpp"

namespace tlscmp::report {
namespace {

using nlohmann::ordered_json;
using render::figure_text;

double mbytes(double bytes_per_s) {
  return bytes_per_s / 1e6;
}

std::string kib_text(const std::optional<double>& bytes) {
  return bytes ? figure_text(*bytes / 1024) : "-";
}

// The AEAD table: a row per suite and direction, a column per record size.
std::string aead_table(const std::vector<measure::AeadFigure>& figures) {
  std::vector<std::uint32_t> sizes;
  for (const auto& f : figures) {
    if (std::find(sizes.begin(), sizes.end(), f.record_bytes) == sizes.end()) sizes.push_back(f.record_bytes);
  }
  std::sort(sizes.begin(), sizes.end());
  std::string out = "AEAD, records sealed and opened as the record layer does, MB/s of payload:\n";
  out += fmt::format("{:<30} {:<18} {:<5}", "suite", "aead", "");
  for (std::uint32_t size : sizes)
    out += fmt::format(" {:>10}", measure::format_bytes(size));
  out += "\n";
  std::vector<std::string> suites;
  for (const auto& f : figures) {
    if (std::find(suites.begin(), suites.end(), f.suite) == suites.end()) suites.push_back(f.suite);
  }
  for (const std::string& suite : suites) {
    for (bool seal : {true, false}) {
      std::string aead;
      std::string cells;
      for (std::uint32_t size : sizes) {
        const auto it = std::find_if(figures.begin(), figures.end(), [&](const auto& f) {
          return f.suite == suite && f.record_bytes == size;
        });
        if (it != figures.end()) aead = it->aead;
        cells += fmt::format(" {:>10}",
                             it == figures.end()
                                 ? "-"
                                 : figure_text(mbytes(seal ? it->seal_bytes_per_s : it->open_bytes_per_s)));
      }
      out += fmt::format("{:<30} {:<18} {:<5}{}\n", seal ? suite : "", seal ? aead : "",
                         seal ? "seal" : "open", cells);
    }
  }
  return out;
}

std::string bulk_table(const std::vector<measure::MemoryBulkFigure>& figures) {
  std::string out =
      "Bulk TLS in memory (two connections joined in memory, one thread), each side's time in its own "
      "calls:\n"
      "suite                          version  chunk    record   writer MB/s  reader MB/s  writer s/GiB  "
      "reader s/GiB\n";
  for (const auto& f : figures) {
    out +=
        fmt::format("{:<30} {:<8} {:<8} {:<8} {:>11}  {:>11}  {:>12}  {:>12}\n", f.suite, f.version,
                    measure::format_bytes(f.chunk_bytes),
                    f.record_bytes == 0 ? "16 KiB" : measure::format_bytes(f.record_bytes),
                    figure_text(mbytes(f.writer_bytes_per_s())), figure_text(mbytes(f.reader_bytes_per_s())),
                    figure_text(measure::seconds_per_gib(f.writer_bytes_per_s())),
                    figure_text(measure::seconds_per_gib(f.reader_bytes_per_s())));
  }
  return out;
}

std::string handshake_table(const std::vector<measure::HandshakeFigure>& figures) {
  std::string out =
      "Handshakes in memory, one after another (client and server in one thread):\n"
      "key type    group            handshake  per s      client us  server us  client B  server B  suite\n";
  for (const auto& f : figures) {
    const double n = f.handshakes > 0 ? static_cast<double>(f.handshakes) : 1;
    out += fmt::format("{:<11} {:<16} {:<10} {:>9}  {:>9}  {:>9}  {:>8}  {:>8}  {}\n", f.key_type, f.group,
                       f.resumed ? "resumed" : "full", figure_text(f.per_s()), figure_text(f.client_us()),
                       figure_text(f.server_us()), figure_text(static_cast<double>(f.client_bytes) / n),
                       figure_text(static_cast<double>(f.server_bytes) / n), f.suite);
  }
  return out;
}

std::string memory_table(const std::vector<measure::SessionMemoryFigure>& figures) {
  std::string out =
      "Heap per idle established connection (the library's own buffers, as many-connection servers run):\n"
      "variant       sessions  client KiB  server KiB  suite\n";
  for (const auto& f : figures) {
    out += fmt::format("{:<13} {:>8}  {:>10}  {:>10}  {}\n", f.released ? "tls-release" : "tls", f.sessions,
                       kib_text(f.client_bytes), kib_text(f.server_bytes), f.suite);
  }
  if (!figures.empty() && !figures.front().client_bytes) {
    out +=
        "(no heap figures: the allocator's counters cannot be read in this build, e.g. under a sanitizer)\n";
  }
  return out;
}

std::string library_text(const measure::SpeedResults& r) {
  std::string out = fmt::format("tlscmp speed: {}, {:g} s per figure\n", r.tls_library, r.seconds_per_figure);
  if (!r.aead.empty()) out += "\n" + aead_table(r.aead);
  if (!r.bulk.empty()) out += "\n" + bulk_table(r.bulk);
  if (!r.handshakes.empty()) out += "\n" + handshake_table(r.handshakes);
  if (!r.memory.empty()) out += "\n" + memory_table(r.memory);
  for (const std::string& note : r.notes)
    out += "\nnote: " + note;
  if (!r.notes.empty()) out += "\n";
  return out;
}

ordered_json library_json(const measure::SpeedResults& r) {
  ordered_json out;
  out["library"] = r.library;
  out["tls_library"] = r.tls_library;
  out["seconds_per_figure"] = r.seconds_per_figure;
  out["aead"] = ordered_json::array();
  for (const auto& f : r.aead) {
    out["aead"].push_back({{"suite", f.suite},
                           {"version", f.version},
                           {"aead", f.aead},
                           {"record_bytes", f.record_bytes},
                           {"records", f.records},
                           {"seal_mbytes_per_s", mbytes(f.seal_bytes_per_s)},
                           {"open_mbytes_per_s", mbytes(f.open_bytes_per_s)},
                           {"seal_s_per_gib", measure::seconds_per_gib(f.seal_bytes_per_s)},
                           {"open_s_per_gib", measure::seconds_per_gib(f.open_bytes_per_s)}});
  }
  out["bulk"] = ordered_json::array();
  for (const auto& f : r.bulk) {
    out["bulk"].push_back({{"suite", f.suite},
                           {"version", f.version},
                           {"chunk_bytes", f.chunk_bytes},
                           {"record_bytes", f.record_bytes == 0 ? 16384u : f.record_bytes},
                           {"read_bytes", f.read_bytes},
                           {"bytes", f.bytes},
                           {"tls_bytes", f.tls_bytes},
                           {"writes", f.writes},
                           {"reads", f.reads},
                           {"writer_s", f.writer_s},
                           {"reader_s", f.reader_s},
                           {"writer_mbytes_per_s", mbytes(f.writer_bytes_per_s())},
                           {"reader_mbytes_per_s", mbytes(f.reader_bytes_per_s())},
                           {"writer_s_per_gib", measure::seconds_per_gib(f.writer_bytes_per_s())},
                           {"reader_s_per_gib", measure::seconds_per_gib(f.reader_bytes_per_s())}});
  }
  out["handshakes"] = ordered_json::array();
  for (const auto& f : r.handshakes) {
    const double n = f.handshakes > 0 ? static_cast<double>(f.handshakes) : 1;
    out["handshakes"].push_back({{"key_type", f.key_type},
                                 {"group", f.group},
                                 {"suite", f.suite},
                                 {"version", f.version},
                                 {"resumed", f.resumed},
                                 {"handshakes", f.handshakes},
                                 {"handshakes_per_s", f.per_s()},
                                 {"client_us_per_handshake", f.client_us()},
                                 {"server_us_per_handshake", f.server_us()},
                                 {"client_bytes_per_handshake", static_cast<double>(f.client_bytes) / n},
                                 {"server_bytes_per_handshake", static_cast<double>(f.server_bytes) / n}});
  }
  out["memory"] = ordered_json::array();
  for (const auto& f : r.memory) {
    out["memory"].push_back({{"variant", f.released ? "tls-release" : "tls"},
                             {"suite", f.suite},
                             {"sessions", f.sessions},
                             {"client_bytes_per_session", render::value_or_null(f.client_bytes)},
                             {"server_bytes_per_session", render::value_or_null(f.server_bytes)}});
  }
  out["notes"] = r.notes;
  return out;
}

// `r`'s figure over `first`'s where both have it ("1.25x"), else none.
std::optional<double> ratio(std::optional<double> mine, std::optional<double> first) {
  if (!mine || !first || *first <= 0) return std::nullopt;
  return *mine / *first;
}

std::optional<double> bulk_rate(const measure::SpeedResults& r, const std::string& suite) {
  for (const auto& f : r.bulk)
    if (f.suite == suite) return f.writer_bytes_per_s();
  return std::nullopt;
}

std::optional<double> handshake_rate(const measure::SpeedResults& r, const measure::HandshakeFigure& like) {
  for (const auto& f : r.handshakes)
    if (f.key_type == like.key_type && f.group == like.group && f.resumed == like.resumed) return f.per_s();
  return std::nullopt;
}

std::optional<double> idle_bytes(const measure::SpeedResults& r) {
  for (const auto& f : r.memory)
    if (!f.released) return f.server_bytes;
  return std::nullopt;
}

// "boringssl: 1.27x openssl's bulk in memory (TLS_AES_128_GCM_SHA256), 1.47x
// its full handshakes and 2.05x its resumed ones (ecdsa-p256, X25519), 9.6
// KiB per idle session on the server against 47.1".
std::string against_first(const measure::SpeedResults& r, const measure::SpeedResults& first) {
  std::vector<std::string> parts;
  for (const auto& f : first.bulk) {
    if (const auto x = ratio(bulk_rate(r, f.suite), f.writer_bytes_per_s())) {
      parts.push_back(fmt::format("{:.2f}x {}'s bulk in memory ({})", *x, first.library, f.suite));
      break;
    }
  }
  for (const auto& f : first.handshakes) {
    if (f.resumed) continue;
    measure::HandshakeFigure resumed = f;
    resumed.resumed = true;
    const auto full = ratio(handshake_rate(r, f), f.per_s());
    const auto again = ratio(handshake_rate(r, resumed), handshake_rate(first, resumed));
    if (!full) continue;
    parts.push_back(fmt::format("{:.2f}x {} full handshakes{} ({}, {})", *full,
                                parts.empty() ? fmt::format("{}'s", first.library) : std::string("its"),
                                again ? fmt::format(" and {:.2f}x its resumed ones", *again) : "", f.key_type,
                                f.group));
    break;
  }
  if (const auto mine = idle_bytes(r), theirs = idle_bytes(first); mine && theirs)
    parts.push_back(fmt::format("{} KiB per idle session on the server against {} KiB", kib_text(mine),
                                kib_text(theirs)));
  if (parts.empty()) return fmt::format("{}: no figure {} has too", r.library, first.library);
  return fmt::format("{}: {}", r.library, fmt::join(parts, ", "));
}

}  // namespace

std::string render_speed_text(const std::vector<measure::SpeedResults>& results) {
  if (results.size() == 1) return library_text(results.front());
  std::vector<std::string> sections;
  for (const measure::SpeedResults& r : results)
    sections.push_back(library_text(r));
  std::string out = fmt::format("{}\nside by side, each against the first:\n", fmt::join(sections, "\n"));
  for (std::size_t i = 1; i < results.size(); ++i)
    out += fmt::format("{}\n", against_first(results[i], results.front()));
  return out;
}

std::string render_speed_json(const std::vector<measure::SpeedResults>& results) {
  if (results.size() == 1) return library_json(results.front()).dump(2) + "\n";
  ordered_json out;
  out["libraries"] = ordered_json::array();
  for (const measure::SpeedResults& r : results)
    out["libraries"].push_back(library_json(r));
  return out.dump(2) + "\n";
}

}  // namespace tlscmp::report
