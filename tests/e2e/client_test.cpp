// The client against its embedded loopback server: the whole comparison from one command.

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

TEST_CASE("both modes move exactly the bytes asked for, and report every documented field") {
  const json j = client_json({"-n", "4M", "-l", "16K", "--repeat", "1", "--verify"});
  CHECK(j["test"]["embedded_server"] == true);
  CHECK(j["error"].is_null());
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][0]["mode"] == "tcp");
  CHECK(j["runs"][1]["mode"] == "tls");
  for (const json& run : j["runs"]) {
    CAPTURE(run.dump());
    CHECK(run["bytes"] == 4 << 20);
    CHECK(run["chunk_bytes"] == 16 << 10);
    CHECK(run["direction"] == "client_to_server");
    CHECK(run["transfer_us"].get<double>() > 0);
    CHECK(run["sender_us"].get<double>() > 0);
    CHECK(run["handshake_us"].get<double>() > 0);
    CHECK(run["mbytes_per_s"].get<double>() > 0);
    CHECK(run["server"]["rcvbuf_bytes"].get<int>() > 0);
  }
  const json& tcp = j["runs"][0];
  const json& tls = j["runs"][1];
  CHECK(tcp["tls_version"].is_null());
  CHECK(tcp["cipher"].is_null());
  CHECK(tls["tls_version"] == "TLSv1.3");
  CHECK(tls["cipher"].get<std::string>().rfind("TLS_", 0) == 0);
  CHECK(tls["certificate_key_type"] == "ECDSA P-256");
  CHECK_FALSE(tls["group"].get<std::string>().empty());
  CHECK(j["summary"]["tls_over_tcp_transfer_time"]["count"] == 1);
  CHECK_FALSE(j["environment"]["client"]["tls_library"].get<std::string>().empty());
  CHECK(j["environment"]["server"]["tlscmp_version"] == j["tlscmp_version"]);
}

TEST_CASE("-R makes the server send, and the client count") {
  const json j = client_json({"-n", "3M", "-R", "--repeat", "1", "--verify"});
  CHECK(j["test"]["direction"] == "server_to_client");
  REQUIRE(j["runs"].size() == 2);
  for (const json& run : j["runs"]) {
    CHECK(run["direction"] == "server_to_client");
    CHECK(run["bytes"] == 3 << 20);
    CHECK(run["transfer_us"].get<double>() > 0);
  }
}

TEST_CASE("a byte count that is no multiple of the chunk size arrives exactly") {
  const json j = client_json({"-n", "1000001", "-l", "4096", "-R", "--repeat", "1", "--verify"});
  for (const json& run : j["runs"])
    CHECK(run["bytes"] == 1000001);
  const json one = client_json({"-n", "1", "--mode", "tls", "--repeat", "1"});
  CHECK(one["runs"][0]["bytes"] == 1);
}

TEST_CASE("--repeat alternates tcp, tls, tcp, tls and summarises each mode") {
  const json j = client_json({"-n", "2M", "--repeat", "3"});
  REQUIRE(j["runs"].size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(j["runs"][i]["mode"] == (i % 2 == 0 ? "tcp" : "tls"));
    CHECK(j["runs"][i]["round"] == i / 2 + 1);
  }
  for (const char* mode : {"tcp", "tls"}) {
    const json& s = j["summary"][mode];
    CHECK(s["runs"] == 3);
    CHECK(s["transfer_us"]["min"].get<double>() <= s["transfer_us"]["median"].get<double>());
    CHECK(s["transfer_us"]["median"].get<double>() <= s["transfer_us"]["max"].get<double>());
  }
  const json& ratio = j["summary"]["tls_over_tcp_transfer_time"];
  CHECK(ratio["count"] == 3);
  CHECK(ratio["min"].get<double>() <= ratio["median"].get<double>());
}

TEST_CASE("one mode only, with a chosen TLS 1.3 suite") {
  if (boringssl_build()) {
    const ProcessResult r =
        run_tlscmp({"client", "-n", "1M", "--mode", "tls", "--cipher", "TLS_AES_128_GCM_SHA256"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("BoringSSL chooses TLS 1.3 suites itself") != std::string::npos);
    return;
  }
  const json j =
      client_json({"-n", "1M", "--mode", "tls", "--cipher", "TLS_AES_128_GCM_SHA256", "--repeat", "1"});
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["cipher"] == "TLS_AES_128_GCM_SHA256");
  CHECK(j["summary"]["tls_over_tcp_transfer_time"].is_null());
  const json tcp = client_json({"-n", "1M", "--mode", "tcp", "--repeat", "1"});
  REQUIRE(tcp["runs"].size() == 1);
  CHECK(tcp["runs"][0]["mode"] == "tcp");
}

TEST_CASE("a TLS 1.2 cipher negotiates TLS 1.2") {
  const json j = client_json(
      {"-n", "1M", "--mode", "tls", "--cipher", "ECDHE-ECDSA-AES128-GCM-SHA256", "--repeat", "1"});
  CHECK(j["runs"][0]["tls_version"] == "TLSv1.2");
  CHECK(j["runs"][0]["cipher"] == "ECDHE-ECDSA-AES128-GCM-SHA256");
}

TEST_CASE("the default output is a table with the ratio") {
  const ProcessResult r = run_tlscmp({"client", "-n", "1M", "--repeat", "1"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("transfer_us") != std::string::npos);
  CHECK(r.out.find("TLS/TCP transfer time:") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("--mode tls,tcp runs tls first and gives tcp's ratios to it, in every kind's summary") {
  const json bulk = client_json({"-n", "2M", "--mode", "tls,tcp", "--repeat", "2"});
  REQUIRE(bulk["runs"].size() == 4);
  CHECK(bulk["runs"][0]["mode"] == "tls");
  CHECK(bulk["runs"][1]["mode"] == "tcp");
  CHECK(bulk["test"]["modes"] == json::array({"tls", "tcp"}));
  CHECK(bulk["summary"]["tls"]["over_tls_transfer_time"].is_null());
  CHECK(bulk["summary"]["tcp"]["over_tls_transfer_time"]["count"] == 2);
  CHECK(bulk["summary"]["tcp_over_tls_transfer_time"]["count"] == 2);
  CHECK_FALSE(bulk["summary"].contains("tls_over_tcp_transfer_time"));

  const json rr = client_json({"--rr", "1/1", "-n", "200", "--mode", "tls,tcp", "--repeat", "1"});
  CHECK(rr["rr_summary"]["tcp"]["over_tls"]["transactions_per_s"]["count"] == 1);
  CHECK(rr["rr_summary"]["tcp_over_tls"]["transactions_per_s"]["count"] == 1);
  const json crr = client_json({"--crr", "-n", "20", "--mode", "tls,tcp", "--repeat", "1"});
  CHECK(crr["crr_summary"]["tcp"]["over_tls"]["connections_per_s"]["count"] == 1);
  CHECK(crr["crr_summary"]["tls-resumed"]["over_tls"].is_null());  // a variant of the baseline's mode
  CHECK(crr["crr_summary"]["tcp_over_tls"]["connections_per_s"]["count"] == 1);

  const ProcessResult text = run_tlscmp({"client", "-n", "1M", "--mode", "tls,tcp", "--repeat", "1"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("TCP/TLS transfer time:") != std::string::npos);
  CHECK(text.out.find("vs tls") != std::string::npos);
}
