#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "kinds/stream/results.hpp"
#include "render/render.hpp"
#include "report/report.hpp"

using namespace tlscmp;
using namespace tlscmp::measure;
using namespace tlscmp::kinds;

namespace {

Comparison sample() {
  Comparison c;
  c.parameters.host = "127.0.0.1";
  c.parameters.port = 5678;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  c.parameters.test.stream.bytes = 1 << 20;
  c.parameters.test.chunk_bytes = 1 << 16;
  c.environment.client_version = "0.1.0";
  StreamRun tcp;
  tcp.round = 1;
  tcp.mode = Mode::tcp;
  tcp.bytes = 1 << 20;
  tcp.transfer_us = 1000;
  tcp.sender_us = 900;
  tcp.handshake_us = 50;
  StreamRun tls = tcp;
  tls.mode = Mode::tls;
  tls.transfer_us = 1500;
  tls.tls = {"TLSv1.3", "TLS_AES_128_GCM_SHA256", "x25519", "ECDSA P-256", "", 0, "openssl", {}};
  c.as<kinds::StreamResults>().runs = {tcp, tls};
  compute_statistics(c);
  return c;
}

}  // namespace

TEST_CASE("JSON carries the documented fields for every run") {
  const auto j = nlohmann::json::parse(report::render_json(sample()));
  REQUIRE(j["runs"].size() == 2);
  for (const auto& run : j["runs"]) {
    for (const char* field :
         {"round", "mode", "bytes", "transfer_us", "sender_us", "handshake_us", "mbytes_per_s", "tls_version",
          "cipher", "group", "certificate_key_type", "chunk_bytes", "direction", "client", "server"}) {
      CAPTURE(field);
      CHECK(run.contains(field));
    }
  }
  CHECK(j["runs"][0]["mode"] == "tcp");
  CHECK(j["runs"][0]["tls_version"].is_null());
  CHECK(j["runs"][1]["tls_version"] == "TLSv1.3");
  CHECK(j["runs"][1]["cipher"] == "TLS_AES_128_GCM_SHA256");
  CHECK(j["runs"][0]["mbytes_per_s"].get<double>() == doctest::Approx(1048.576));
  CHECK(j["summary"]["tls"]["transfer_us"]["median"] == 1500);
  CHECK(j["summary"]["tls_over_tcp_transfer_time"]["median"].get<double>() == doctest::Approx(1.5));
  CHECK(j["error"].is_null());
  CHECK(j["interrupted"] == false);
  CHECK(j["test"]["bytes"] == 1 << 20);
  for (const char* side : {"window_us", "cpu_user_s", "cpu_system_s", "cpu_s_per_gib", "core_share",
                           "sndbuf_bytes", "rcvbuf_bytes", "mss_bytes", "congestion"}) {
    CAPTURE(side);
    CHECK(j["runs"][0]["client"].contains(side));
    CHECK(j["runs"][0]["server"].contains(side));
  }
  CHECK(j["runs"][0]["warmup"] == false);
  CHECK(j["runs"][0]["partial"] == false);
  CHECK(j["runs"][0]["intervals"].is_array());
  for (const char* field : {"cpu_features", "kernel", "tls_library", "cpu_model", "tlscmp_version"}) {
    CAPTURE(field);
    CHECK(j["environment"]["server"].contains(field));
    CHECK(j["environment"]["client"].contains(field));
  }
}

TEST_CASE("the ratio's confidence interval and its method are in the JSON") {
  Comparison c = sample();
  StreamRun tcp2 = c.as<kinds::StreamResults>().runs[0];
  tcp2.round = 2;
  StreamRun tls2 = c.as<kinds::StreamResults>().runs[1];
  tls2.round = 2;
  tls2.transfer_us = 2000;
  c.as<kinds::StreamResults>().runs.push_back(tcp2);
  c.as<kinds::StreamResults>().runs.push_back(tls2);
  compute_statistics(c);
  const auto r = nlohmann::json::parse(report::render_json(c))["summary"]["tls_over_tcp_transfer_time"];
  CHECK(r["count"] == 2);
  CHECK(r["ci95_low"].get<double>() == doctest::Approx(1.5));
  CHECK(r["ci95_high"].get<double>() == doctest::Approx(2.0));
  CHECK(r["ci_method"].get<std::string>().find("bootstrap") != std::string::npos);
}

TEST_CASE("CSV: a header, one row per run, the same number of fields in each, units in the names") {
  Comparison c = sample();
  c.environment.client_cpu_model = "Vendor, Model";  // a comma that must be quoted
  const std::string csv = report::render_csv(c);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = csv.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(csv.substr(start, end - start));
  }
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("variant,round,warmup,partial,mode,direction,bytes,chunk_bytes,transfer_us,sender_us,",
                       0) == 0);
  CHECK(lines[0].find("client_cpu_s_per_gib") != std::string::npos);
  CHECK(lines[0].find("server_core_share") != std::string::npos);
  auto fields = [](const std::string& line) {
    std::size_t n = 1;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      if (ch == ',' && !quoted) ++n;
    }
    return n;
  };
  CHECK(fields(lines[1]) == fields(lines[0]));
  CHECK(fields(lines[2]) == fields(lines[0]));
  CHECK(lines[1].rfind("tcp,1,0,0,tcp,client_to_server,1048576,65536,1000.000,", 0) == 0);
  CHECK(lines[2].find("TLS_AES_128_GCM_SHA256") != std::string::npos);
  CHECK(lines[1].find("\"Vendor, Model\"") != std::string::npos);
}

TEST_CASE("a failed comparison says why in JSON, and the text leaves it to the one error line") {
  Comparison c = sample();
  c.error = "tls run failed";
  CHECK(nlohmann::json::parse(report::render_json(c))["error"] == "tls run failed");
  // The text leaves it to the one error line on stderr (main), so it is said once.
  CHECK(report::render_text(c).find("tls run failed") == std::string::npos);
}

TEST_CASE("the text report shows both modes side by side and the ratio") {
  const std::string text = report::render_text(sample());
  CHECK(text.find("tcp") != std::string::npos);
  CHECK(text.find("TLSv1.3 TLS_AES_128_GCM_SHA256") != std::string::npos);
  CHECK(text.find("TLS/TCP transfer time: 1.50x") != std::string::npos);
}

TEST_CASE("byte counts in binary units") {
  CHECK(render::format_bytes(100) == "100 B");
  CHECK(render::format_bytes(65536) == "64 KiB");
  CHECK(render::format_bytes(1 << 30) == "1 GiB");
  CHECK(render::format_bytes(1572864) == "1.5 MiB");
}

TEST_CASE("figures for people: four significant digits at most, thousands grouped") {
  using tlscmp::render::figure_text;
  CHECK(figure_text(2221.32) == "2,221");
  CHECK(figure_text(5.12345) == "5.123");
  CHECK(figure_text(0.0451234) == "0.04512");
  CHECK(figure_text(123456) == "123,500");
  CHECK(figure_text(1234567) == "1,235,000");
  CHECK(figure_text(999.96) == "1,000");
  CHECK(figure_text(-2221.32) == "-2,221");
  CHECK(figure_text(0) == "0");
  CHECK(figure_text(12) == "12.00");
  CHECK(figure_text(std::nan("")) == "-");
}
