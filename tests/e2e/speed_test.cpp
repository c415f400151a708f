// tlscmp speed: this host's TLS library in memory, every figure there and
// positive, and its mistakes each one line.

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kSuites13 = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                            "TLS_CHACHA20_POLY1305_SHA256"};
const std::vector<std::string> kSuites12 = {"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                                            "ECDHE-ECDSA-CHACHA20-POLY1305"};

json speed_json(std::vector<std::string> args) {
  args.insert(args.begin(), {"speed", "-J"});
  const ProcessResult r = run_tlscmp(args, std::chrono::seconds(120));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

bool has_row(const json& rows, const std::string& key, const std::string& value) {
  for (const json& row : rows) {
    if (row[key] == value) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("tlscmp speed -J: every suite and size sealed and opened, bulk per suite, handshakes, memory") {
  const json j = speed_json({"--time", "0.02", "--key-types", "ecdsa-p256,rsa-2048", "--groups",
                             "X25519,P-256", "--sessions", "20"});
  CHECK(j["tls_library"].get<std::string>().size() > 3);
  // AEAD: six suites at three sizes, each rate positive, and a record takes longer than nothing.
  REQUIRE(j["aead"].size() == 18);
  for (const json& row : j["aead"]) {
    CAPTURE(row.dump());
    CHECK(row["seal_mbytes_per_s"].get<double>() > 0);
    CHECK(row["open_mbytes_per_s"].get<double>() > 0);
    CHECK(row["records"].get<double>() > 0);
    CHECK(row["seal_s_per_gib"].get<double>() > 0);
  }
  for (const auto& suite : kSuites13)
    CHECK(has_row(j["aead"], "suite", suite));
  // Bulk: every TLS 1.2 suite; OpenSSL every TLS 1.3 one too, BoringSSL the
  // one it chooses, and a note for the others.
  for (const auto& suite : kSuites12)
    CHECK(has_row(j["bulk"], "suite", suite));
  if (boringssl_build()) {
    CHECK(j["bulk"].size() == 4);
    CHECK(j["notes"].size() == 2);
  } else {
    for (const auto& suite : kSuites13)
      CHECK(has_row(j["bulk"], "suite", suite));
    CHECK(j["notes"].empty());
  }
  for (const json& row : j["bulk"]) {
    CAPTURE(row.dump());
    CHECK(row["bytes"].get<double>() >= 64 * 1024);
    CHECK(row["tls_bytes"].get<double>() > row["bytes"].get<double>());  // headers and tags
    CHECK(row["writer_mbytes_per_s"].get<double>() > 0);
    CHECK(row["reader_mbytes_per_s"].get<double>() > 0);
    CHECK(row["reads"].get<double>() >= row["writes"].get<double>());
  }
  // Handshakes: full and resumed per key type, and per group beyond the
  // default (X25519 is the key types' rows already): six rows.
  REQUIRE(j["handshakes"].size() == 6);
  for (const json& row : j["handshakes"]) {
    CAPTURE(row.dump());
    CHECK(row["handshakes_per_s"].get<double>() > 0);
    CHECK(row["client_us_per_handshake"].get<double>() > 0);
    CHECK(row["server_us_per_handshake"].get<double>() > 0);
    CHECK(row["client_bytes_per_handshake"].get<double>() > 100);  // a ClientHello at least
    CHECK(row["server_bytes_per_handshake"].get<double>() > 100);
  }
  CHECK(j["handshakes"][4]["group"] == "P-256");
  CHECK(j["handshakes"][5]["resumed"] == true);
  // A full handshake sends the certificate; a resumed one does not.
  CHECK(j["handshakes"][0]["server_bytes_per_handshake"].get<double>() >
        j["handshakes"][1]["server_bytes_per_handshake"].get<double>() + 200);
  // Memory: tls and tls-release; the heap is none under a sanitizer.
  REQUIRE(j["memory"].size() == 2);
  CHECK(j["memory"][1]["variant"] == "tls-release");
  if (!j["memory"][0]["server_bytes_per_session"].is_null()) {
    CHECK(j["memory"][0]["server_bytes_per_session"].get<double>() > 1000);
    CHECK(j["memory"][0]["client_bytes_per_session"].get<double>() > 1000);
    // OpenSSL hands its idle buffers back only in release mode; BoringSSL always.
    if (!boringssl_build()) {
      CHECK(j["memory"][1]["server_bytes_per_session"].get<double>() <
            j["memory"][0]["server_bytes_per_session"].get<double>());
    }
  }
}

TEST_CASE(
    "tlscmp speed: the parts asked for alone, a table per part, and a record size that sets the records") {
  const ProcessResult text = run_tlscmp({"speed", "--time", "0.02", "--parts", "aead", "--suites",
                                         "TLS_AES_128_GCM_SHA256", "--sizes", "1K,16K"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("AEAD") != std::string::npos);
  CHECK(text.out.find("TLS_AES_128_GCM_SHA256") != std::string::npos);
  CHECK(text.out.find("16 KiB") != std::string::npos);
  CHECK(text.out.find("Handshakes") == std::string::npos);

  // 1 KiB records: a 64 KiB chunk is 64 of them, each with its header and tag.
  const json j = speed_json({"--time", "0.02", "--parts", "bulk", "--suites", "ECDHE-ECDSA-AES128-GCM-SHA256",
                             "--record-size", "1K"});
  REQUIRE(j["bulk"].size() == 1);
  const json& row = j["bulk"][0];
  CHECK(row["record_bytes"] == 1024);
  const double records = row["bytes"].get<double>() / 1024;
  CHECK(row["tls_bytes"].get<double>() == doctest::Approx(row["bytes"].get<double>() + records * 29));
  CHECK(j["aead"].empty());
  CHECK(j["handshakes"].empty());
}

TEST_CASE("tlscmp speed: mistakes are one line and exit 2") {
  expect_mistakes("speed", {
                               {{"--suites", "TLS_NOPE"}, 2, "not a suite tlscmp offers"},
                               {{"--sizes", "20K"}, 2, "--sizes"},
                               {{"--sizes", "0"}, 2, "--sizes"},
                               {{"--key-types", "dsa-1024"}, 2, "not a key type"},
                               {{"--groups", "NOPE"}, 2, "not a group this TLS library"},
                               {{"--parts", "ciphers"}, 2, "give some of aead, bulk, handshakes, memory"},
                               {{"--time", "0"}, 2, "--time"},
                               {{"--record-size", "100"}, 2, "--record-size"},
                               {{"-l", "0"}, 2, "-l"},
                               {{"--tls-lib", "nosuchssl"}, 2, "--tls-lib nosuchssl: this tlscmp has no"},
                           });
}

TEST_CASE("tlscmp speed --tls-lib: each library's figures from one process, and a line against the first") {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  if (std::ranges::find(names, "boringssl") == names.end() ||
      std::ranges::find(names, "openssl") == names.end()) {
    skip_unsupported(
        "this binary holds one TLS backend (a build with -DTLSCMP_BORINGSSL_BINARY=ON holds both)");
    return;
  }
  const std::vector<std::string> args{
      "--tls-lib",  "all", "--time",      "0.02",       "--suites", "TLS_AES_256_GCM_SHA384",
      "--sizes",    "16K", "--key-types", "ecdsa-p256", "--groups", "X25519",
      "--sessions", "20"};
  const json j = speed_json(args);
  // Every backend the binary holds, each through its own memory pair (GnuTLS's too, where built).
  REQUIRE(j["libraries"].size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i)
    CHECK(j["libraries"][i]["library"] == names[i]);
  CHECK(std::string(j["libraries"][0]["tls_library"]).rfind("OpenSSL", 0) == 0);
  CHECK(std::string(j["libraries"][1]["tls_library"]).rfind("BoringSSL", 0) == 0);
  for (const json& library : j["libraries"]) {
    CAPTURE(library["library"]);
    REQUIRE(library["aead"].size() == 1);  // one suite at one size, sealed and opened
    CHECK(library["aead"][0]["seal_mbytes_per_s"].get<double>() > 0);
    // Full and resumed with X25519; a library whose client shares another group by default
    // (GnuTLS 3.7's P-256) has that group's two rows before.
    const json& handshakes = library["handshakes"];
    CHECK((handshakes.size() == 2 || handshakes.size() == 4));
    CHECK(handshakes[handshakes.size() - 1]["group"] == "X25519");
    CHECK(handshakes[handshakes.size() - 1]["resumed"] == true);
    CHECK(library["memory"].size() == 2);
    // A library that takes the TLS 1.3 suite asked for has its bulk row (BoringSSL chooses its own).
    if (library["library"] != "boringssl") CHECK(library["bulk"].size() == 1);
  }
  // BoringSSL chooses its own TLS 1.3 suite: its bulk row is a note where it is not the one asked for.
  CHECK(j["libraries"][0]["bulk"].size() == 1);
  std::vector<std::string> text_args{"speed"};
  text_args.insert(text_args.end(), args.begin(), args.end());
  const ProcessResult text = run_tlscmp(text_args, std::chrono::seconds(120));
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("tlscmp speed: OpenSSL") != std::string::npos);
  CHECK(text.out.find("tlscmp speed: BoringSSL") != std::string::npos);
  const std::size_t line = text.out.find("side by side, each against the first:\nboringssl: ");
  REQUIRE(line != std::string::npos);
  CHECK(text.out.find("x openssl's full handshakes and ", line) != std::string::npos);
  // Heap figures where the allocator's counters can be read (not under a sanitizer), and then only.
  const bool heap = !j["libraries"][0]["memory"][0]["server_bytes_per_session"].is_null() &&
                    !j["libraries"][1]["memory"][0]["server_bytes_per_session"].is_null();
  CHECK((text.out.find("KiB per idle session on the server against ", line) != std::string::npos) == heap);
}

namespace {

// A side's split: the parts add up to the extra (the socket part is the
// rest by construction), crypto positive, the figures of the suite run.
void check_split(const json& split, const char* role, const std::string& suite) {
  CAPTURE(split.dump());
  REQUIRE(split.is_object());
  CHECK(split["role"] == role);
  CHECK(split["suite"] == suite);
  CHECK(split["crypto_s_per_gib"].get<double>() > 0);
  CHECK(split["aead_mbytes_per_s"].get<double>() > 0);
  const double parts = split["crypto_s_per_gib"].get<double>() +
                       split["record_layer_s_per_gib"].get<double>() +
                       split["socket_s_per_gib"].get<double>();
  CHECK(parts == doctest::Approx(split["extra_s_per_gib"].get<double>()).epsilon(1e-9));
  CHECK(split["extra_s_per_gib"].get<double>() ==
        doctest::Approx(split["tls_cpu_s_per_gib"].get<double>() - split["tcp_cpu_s_per_gib"].get<double>())
            .epsilon(0.5));                // a median of differences, near the difference of medians
  CHECK(split["records_per_chunk"] == 4);  // 64 KiB chunks in 16 KiB records
  CHECK(split["tls_calls_per_chunk"].get<double>() > 0);
  CHECK(split["tcp_calls_per_chunk"].get<double>() > 0);
}

}  // namespace

TEST_CASE("a bulk TLS run splits each side's extra CPU: crypto, record layer, socket, adding up") {
  ServerProcess server;
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"127.0.0.1", "-p",  server.port_text(), "--insecure",
                                  "-n",        "16M", "--repeat",         "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return client_json(args);
  };
  const json j = run({});
  const std::string suite = j["runs"][1]["cipher"].get<std::string>();
  check_split(j["summary"]["tls"]["cost_split"]["client"], "sender", suite);
  check_split(j["summary"]["tls"]["cost_split"]["server"], "receiver", suite);
  CHECK(j["summary"]["tcp"]["cost_split"].is_null());
  // Each side calibrated on its own host: the server's figures came with its results.
  for (const json& r : j["runs"]) {
    CAPTURE(r["variant"]);
    const bool tls = r["mode"] == "tls";
    for (const char* side : {"client", "server"})
      CHECK(r[side]["calibration"].is_null() != tls);
    // The sender's write calls, the receiver's reads (and its one write: "go").
    CHECK(r["client"]["write_calls"].get<double>() >= 16 * 1024 * 1024 / (64 * 1024));
    CHECK(r["client"]["read_calls"] == 0);
    CHECK(r["server"]["read_calls"].get<double>() > 0);
    CHECK(r["server"]["write_calls"] == 1);
    if (tls) CHECK(r["server"]["calibration"]["suite"] == suite);
  }
  // -R: the server sends, and the roles go with it.
  const json reverse = run({"-R"});
  check_split(reverse["summary"]["tls"]["cost_split"]["server"], "sender", suite);
  check_split(reverse["summary"]["tls"]["cost_split"]["client"], "receiver", suite);
}

TEST_CASE("the text report says where TLS's extra CPU went, side by side, with one hint") {
  const ProcessResult r = run_tlscmp({"client", "-n", "16M", "--repeat", "2"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("the client (sender)'s TLS extra ") != std::string::npos);
  CHECK(r.out.find("the server (receiver)'s TLS extra ") != std::string::npos);
  CHECK(r.out.find("crypto ") != std::string::npos);
  CHECK(r.out.find("of the sender's ") != std::string::npos);
  CHECK(r.out.find("\nhint: ") != std::string::npos);
  // The CSV has each side's system calls and calibration.
  const ProcessResult csv = run_tlscmp({"client", "-n", "4M", "--repeat", "1", "--csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find("client_read_calls") != std::string::npos);
  CHECK(csv.out.find("server_aead_seal_mbytes_per_s") != std::string::npos);
}

namespace {

// An rr or crr side's split: the parts add up to the extra (the rest by
// construction), crypto positive, the run's suite; a handshake part only
// where `handshake` (crr), and then positive.
void check_unit_split(const json& split, const std::string& suite, bool handshake) {
  CAPTURE(split.dump());
  REQUIRE(split.is_object());
  CHECK(split["suite"] == suite);
  CHECK(split["calibration"]["suite"] == suite);
  CHECK(split["crypto_us"].get<double>() > 0);
  CHECK(split["calibration"]["client_tls_us"].get<double>() > 0);
  CHECK(split["calibration"]["server_tls_us"].get<double>() > 0);
  CHECK(split["handshake_us"].is_null() != handshake);
  const double first = handshake ? split["handshake_us"].get<double>() : 0;
  if (handshake) CHECK(first > 0);
  const double parts = first + split["crypto_us"].get<double>() + split["record_layer_us"].get<double>() +
                       split["socket_us"].get<double>();
  CHECK(parts == doctest::Approx(split["extra_us"].get<double>()).epsilon(1e-9));
}

}  // namespace

TEST_CASE("a TLS rr run splits each side's extra CPU per transaction, and the server's calibration comes") {
  ServerProcess server;
  const json j = client_json(
      {"127.0.0.1", "-p", server.port_text(), "--insecure", "--rr", "64/2K", "-n", "2000", "--repeat", "2"});
  const std::string suite = j["rr_runs"][1]["cipher"].get<std::string>();
  check_unit_split(j["rr_summary"]["tls"]["cost_split"]["client"], suite, false);
  check_unit_split(j["rr_summary"]["tls"]["cost_split"]["server"], suite, false);
  CHECK(j["rr_summary"]["tcp"]["cost_split"].is_null());
  for (const json& r : j["rr_runs"]) {
    CAPTURE(r["variant"]);
    const bool tls = r["mode"] == "tls";
    for (const char* side : {"client", "server"}) {
      const json& c = r[side]["transaction_calibration"];
      CHECK(c.is_null() != tls);
      if (!tls) continue;
      CHECK(c["suite"] == suite);
      CHECK(c["request_bytes"] == 64);
      CHECK(c["response_bytes"] == 2048);
      CHECK(c["client_handshake_us"].is_null());
    }
  }
  // The text: a line per side and one hint.
  const ProcessResult text = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure",
                                         "--rr", "1/1", "-n", "500", "--repeat", "1"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("tls: the client's TLS extra ") != std::string::npos);
  CHECK(text.out.find("tls: the server's TLS extra ") != std::string::npos);
  CHECK(text.out.find(" us per transaction: crypto ") != std::string::npos);
  CHECK(text.out.find("\nhint: ") != std::string::npos);
  // The CSV: each side's calibration on each run's row, as many fields as the header has.
  const ProcessResult csv = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure", "--rr",
                                        "1/1", "-n", "300", "--repeat", "1", "--csv"});
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header, row;
  std::getline(lines, header);
  CHECK(header.find(",client_crypto_us,client_tls_memory_us,client_handshake_us,server_crypto_us,") !=
        std::string::npos);
  int rows = 0;
  while (std::getline(lines, row)) {
    CAPTURE(row);
    ++rows;
    CHECK(std::count(row.begin(), row.end(), ',') == std::count(header.begin(), header.end(), ','));
    const bool tls = row.find(",tls,") != std::string::npos;
    CHECK(row.ends_with(",,,,,,") != tls);  // tcp: no calibration
  }
  CHECK(rows == 2);
}

TEST_CASE("a TLS crr run splits each side's extra CPU per connection: the handshake in memory first") {
  ServerProcess server;
  const json j = client_json(
      {"127.0.0.1", "-p", server.port_text(), "--insecure", "--crr", "-n", "150", "--repeat", "2"});
  std::string suite;
  for (const json& r : j["crr_runs"]) {
    if (r["variant"] == "tls") suite = r["cipher"].get<std::string>();
  }
  for (const char* variant : {"tls", "tls-resumed"}) {
    CAPTURE(variant);
    for (const char* side : {"client", "server"}) {
      const json& split = j["crr_summary"][variant]["cost_split"][side];
      check_unit_split(split, suite, true);
      // Each side calibrated with what its connections did: the throwaway
      // certificate's key, the group, and resumed where they resumed.
      CHECK(split["calibration"]["key_type"] == "ecdsa-p256");
      CHECK_FALSE(split["calibration"]["group"].get<std::string>().empty());
      CHECK(split["calibration"]["resumed"] == (std::string(variant) == "tls-resumed"));
    }
  }
  CHECK(j["crr_summary"]["tcp"]["cost_split"].is_null());
  // --compare-key-types: each variant's handshake in memory is its key type's.
  const json types = client_json({"127.0.0.1", "-p", server.port_text(), "--insecure", "--crr", "-n", "20",
                                  "--repeat", "1", "--compare-key-types"});
  int seen = 0;
  for (const json& r : types["crr_runs"]) {
    if (r["key_type"].is_null()) continue;
    CAPTURE(r["key_type"]);
    ++seen;
    CHECK(r["client"]["transaction_calibration"]["key_type"] == r["key_type"]);
    CHECK(r["server"]["transaction_calibration"]["key_type"] == r["key_type"]);
  }
  CHECK(seen >= 4);
}
