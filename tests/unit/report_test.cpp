#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

using namespace tlscmp;
using namespace tlscmp::measure;

namespace {

Comparison sample() {
  Comparison c;
  c.parameters.host = "127.0.0.1";
  c.parameters.port = 5678;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  c.parameters.bytes = 1 << 20;
  c.parameters.chunk_bytes = 1 << 16;
  c.environment.client_version = "0.1.0";
  RunResult tcp;
  tcp.round = 1;
  tcp.mode = Mode::tcp;
  tcp.bytes = 1 << 20;
  tcp.transfer_us = 1000;
  tcp.sender_us = 900;
  tcp.handshake_us = 50;
  RunResult tls = tcp;
  tls.mode = Mode::tls;
  tls.transfer_us = 1500;
  tls.tls = {"TLSv1.3", "TLS_AES_128_GCM_SHA256", "x25519", "ECDSA P-256"};
  c.runs = {tcp, tls};
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
  CHECK(j["test"]["bytes"] == 1 << 20);
}

TEST_CASE("a failed comparison says why in JSON and text") {
  Comparison c = sample();
  c.error = "tls run failed";
  CHECK(nlohmann::json::parse(report::render_json(c))["error"] == "tls run failed");
  CHECK(report::render_text(c).find("stopped: tls run failed") != std::string::npos);
}

TEST_CASE("the text report shows both modes side by side and the ratio") {
  const std::string text = report::render_text(sample());
  CHECK(text.find("tcp") != std::string::npos);
  CHECK(text.find("TLSv1.3 TLS_AES_128_GCM_SHA256") != std::string::npos);
  CHECK(text.find("TLS/TCP transfer time: 1.50x") != std::string::npos);
}

TEST_CASE("byte counts in binary units") {
  CHECK(report::format_bytes(100) == "100 B");
  CHECK(report::format_bytes(65536) == "64 KiB");
  CHECK(report::format_bytes(1 << 30) == "1 GiB");
  CHECK(report::format_bytes(1572864) == "1.5 MiB");
}
