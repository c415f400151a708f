// Where a bulk TLS run's extra CPU goes: the split from runs and
// calibrations, and the one hint its largest part calls for.

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "kinds/crr/results.hpp"
#include "kinds/stream/cost_split.hpp"
#include "kinds/stream/stream.hpp"
#include "measure/cost_split.hpp"

using namespace tlscmp;

namespace {

measure::TlsCalibration calibration() {
  measure::TlsCalibration c;
  c.suite = "TLS_AES_128_GCM_SHA256";
  c.aead = "AES-128-GCM";
  c.chunk_bytes = 65536;
  c.record_bytes = 16384;
  c.read_bytes = 65536;
  c.seal_bytes_per_s = measure::kBytesPerGib / 0.2;  // 0.2 s/GiB
  c.open_bytes_per_s = measure::kBytesPerGib / 0.25;
  c.writer_s_per_gib = 0.3;
  c.reader_s_per_gib = 0.4;
  return c;
}

// One GiB moved in a round, each side's CPU as given.
kinds::StreamRun run(Mode mode, int round, double client_cpu_s, double server_cpu_s) {
  kinds::StreamRun r;
  r.mode = mode;
  r.round = round;
  r.bytes = 1ull << 30;
  r.transfer_us = 1e6;
  r.client.cpu_user_s = client_cpu_s;
  r.server.cpu_user_s = server_cpu_s;
  r.client.write_calls = 4 * 16384;
  r.server.read_calls = 16384;
  if (mode == Mode::tls) r.client.calibration = r.server.calibration = calibration();
  return r;
}

measure::CostSplit split(double crypto, double record, double socket) {
  measure::CostSplit s;
  s.aead = "AES-128-GCM";
  s.chunk_bytes = 65536;
  s.record_bytes = 16384;
  s.crypto_s_per_gib = crypto;
  s.record_layer_s_per_gib = record;
  s.socket_s_per_gib = socket;
  s.extra_s_per_gib = crypto + record + socket;
  return s;
}

std::string text_of(const measure::CostSplit& client, const std::string& ulps = "mptcp") {
  measure::Comparison c;
  c.environment.client_tls_ulps = ulps;
  c.environment.server_tls_ulps = ulps;
  kinds::StreamStats stats;
  stats.client_split = client;
  return kinds::render_cost_split(c, stats);
}

}  // namespace

TEST_CASE("the split: crypto from the AEAD, the record layer from memory, the socket the rest, per side") {
  const kinds::StreamRun tcp1 = run(Mode::tcp, 1, 0.4, 0.2), tls1 = run(Mode::tls, 1, 1.0, 0.9);
  const kinds::StreamRun tcp2 = run(Mode::tcp, 2, 0.4, 0.2), tls2 = run(Mode::tls, 2, 1.2, 0.9);
  const std::map<int, const kinds::StreamRun*> base{{1, &tcp1}, {2, &tcp2}};
  const std::optional<measure::CostSplit> client =
      kinds::split_cost({&tls1, &tls2}, base, /*client_side=*/true, /*client_sends=*/true);
  REQUIRE(client);
  CHECK(client->sender);
  CHECK(client->extra_s_per_gib == doctest::Approx(0.7));  // the median of 0.6 and 0.8
  CHECK(client->crypto_s_per_gib == doctest::Approx(0.2));
  CHECK(client->record_layer_s_per_gib == doctest::Approx(0.1));  // 0.3 in memory less the cipher's 0.2
  CHECK(client->socket_s_per_gib == doctest::Approx(0.4));
  CHECK(client->records_per_chunk == 4);
  CHECK(*client->tls_calls_per_chunk == doctest::Approx(4));
  const std::optional<measure::CostSplit> server =
      kinds::split_cost({&tls1, &tls2}, base, /*client_side=*/false, /*client_sends=*/true);
  REQUIRE(server);
  CHECK_FALSE(server->sender);
  CHECK(server->crypto_s_per_gib == doctest::Approx(0.25));        // opening
  CHECK(server->record_layer_s_per_gib == doctest::Approx(0.15));  // the reader's 0.4 less 0.25
  CHECK(server->socket_s_per_gib == doctest::Approx(0.3));  // 0.7 less 0.4: below what it would be, shown
  // A side with no calibration has no split.
  kinds::StreamRun bare = tls1;
  bare.client.calibration.reset();
  CHECK_FALSE(kinds::split_cost({&bare}, base, true, true));
}

TEST_CASE("one hint, from the largest part: the cipher, the records, kTLS where the kernel has it") {
  CHECK(text_of(split(0.5, 0.1, 0.1)).find("hint: the cipher leads on the client") != std::string::npos);
  CHECK(text_of(split(0.5, 0.1, 0.1)).find("--compare-ciphers") != std::string::npos);
  const std::string records = text_of(split(0.1, 0.5, 0.1));
  CHECK(records.find("hint: the record layer leads") != std::string::npos);
  CHECK(records.find("--record-size, 16 KiB now") != std::string::npos);
  const std::string socket = text_of(split(0.1, 0.1, 0.5), "mptcp");
  CHECK(socket.find("this kernel has no tls module (tcp_available_ulp: mptcp)") != std::string::npos);
  const std::string ktls = text_of(split(0.1, 0.1, 0.5), "tls mptcp");
  CHECK(ktls.find("kernel TLS (--ktls) moves the records") != std::string::npos);
  // A part below zero is shown as it is, and said to be noise.
  const std::string negative = text_of(split(0.3, 0.1, -0.05));
  CHECK(negative.find("socket -0.050") != std::string::npos);
  CHECK(negative.find("a part below zero is noise") != std::string::npos);
}

namespace {

// A tcp and a tls variant at the given rates (MB/s) and the sender's (the
// client's) core shares, the tls variant split as a sender on its client.
std::string bulk_text(double tcp_rate, double tls_rate, double tcp_busy, double tls_busy) {
  measure::Comparison c;
  kinds::StreamResults& results = c.as<kinds::StreamResults>();
  kinds::StreamStats tcp;
  tcp.mode = Mode::tcp;
  tcp.variant = "tcp";
  tcp.mbytes_per_s.median = tcp_rate;
  tcp.client_core_share.median = tcp_busy;
  kinds::StreamStats tls = tcp;
  tls.mode = Mode::tls;
  tls.variant = "tls";
  tls.mbytes_per_s.median = tls_rate;
  tls.client_core_share.median = tls_busy;
  measure::CostSplit sender = split(0.3, 0.1, 0.2);
  sender.sender = true;
  sender.aead_bytes_per_s = 3e9;
  sender.rate_share_of_aead = tls_rate * 1e6 / 3e9;
  tls.client_split = sender;
  results.stats = {tcp, tls};
  return kinds::render_cost_split(c, tls);
}

}  // namespace

TEST_CASE("a run the link limits says so in place of a hint, and a small share is not 0%") {
  // Both at about 20 MB/s, the sender's threads nearly idle: the link set the pace.
  const std::string link = bulk_text(20.0, 19.5, 0.004, 0.02);
  CHECK(link.find("the link limits this run, not the CPU: tcp 20.0 MB/s and tls 19.5 MB/s") !=
        std::string::npos);
  CHECK(link.find("busy 0.4% and 2% of a core") != std::string::npos);
  CHECK(link.find("TLS's cost here is CPU") != std::string::npos);
  CHECK(link.find("hint:") == std::string::npos);
  CHECK(link.find("of the sender's AES-128-GCM rate") == std::string::npos);
  // The sender busy, or TLS well below TCP's rate: the CPU's figures and a hint.
  const std::string busy = bulk_text(20.0, 19.5, 0.9, 0.95);
  CHECK(busy.find("the link limits") == std::string::npos);
  CHECK(busy.find("hint:") != std::string::npos);
  CHECK(busy.find("the run reached 0.7% of the sender's AES-128-GCM rate") != std::string::npos);
  const std::string slower = bulk_text(20.0, 12.0, 0.01, 0.02);
  CHECK(slower.find("the link limits") == std::string::npos);
}

// rr and crr: each side's extra CPU per transaction or connection.

#include "kinds/unit_split.hpp"

namespace {

measure::TransactionCalibration transaction_calibration(bool handshake) {
  measure::TransactionCalibration c;
  c.suite = "TLS_AES_128_GCM_SHA256";
  c.aead = "AES-128-GCM";
  c.request_bytes = 100;
  c.response_bytes = 2000;
  c.record_bytes = 16384;
  c.client_crypto_us = 0.5;
  c.server_crypto_us = 0.6;
  c.client_tls_us = 2.0;
  c.server_tls_us = 2.5;
  if (handshake) {
    c.key_type = "ecdsa-p256";
    c.group = "X25519";
    c.client_handshake_us = 300;
    c.server_handshake_us = 150;
  }
  return c;
}

// A crr run of 1,000 connections, each side's CPU as given.
kinds::CrrRun crr_run(Mode mode, int round, double client_cpu_s, double server_cpu_s) {
  kinds::CrrRun r;
  r.mode = mode;
  r.variant = mode == Mode::tls ? "tls" : "tcp";
  r.round = round;
  r.connections = 1000;
  r.elapsed_us = 1e6;
  r.client.cpu_user_s = client_cpu_s;
  r.server.cpu_user_s = server_cpu_s;
  if (mode == Mode::tls)
    r.client.transaction_calibration = r.server.transaction_calibration = transaction_calibration(true);
  return r;
}

measure::UnitSplit unit_split(std::optional<double> handshake, double crypto, double record, double socket,
                              bool resumed = false) {
  measure::UnitSplit s;
  s.calibration = transaction_calibration(handshake.has_value());
  s.calibration.resumed = resumed;
  s.handshake_us = handshake;
  s.crypto_us = crypto;
  s.record_layer_us = record;
  s.socket_us = socket;
  s.extra_us = handshake.value_or(0) + crypto + record + socket;
  return s;
}

std::string unit_text(const measure::UnitSplit& s, const char* unit, const std::string& ulps = "mptcp") {
  measure::Environment e;
  e.client_tls_ulps = e.server_tls_ulps = ulps;
  return kinds::render_unit_split(e, "tls", s, std::nullopt, unit);
}

}  // namespace

TEST_CASE("crr: the handshake from memory, the transaction's crypto and record layer, the rest, per side") {
  measure::Comparison c;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  c.parameters.variants = {"tcp", "tls"};
  kinds::CrrResults& results = c.as<kinds::CrrResults>();
  // Per connection: TCP 100 us client, 80 server; TLS 500 and 350, then 540 and 350.
  results.runs = {crr_run(Mode::tcp, 1, 0.1, 0.08), crr_run(Mode::tls, 1, 0.5, 0.35),
                  crr_run(Mode::tcp, 2, 0.1, 0.08), crr_run(Mode::tls, 2, 0.54, 0.35)};
  measure::compute_statistics(c);
  const kinds::CrrStats& tls = c.get<kinds::CrrResults>()->stats.at(1);
  CHECK_FALSE(c.get<kinds::CrrResults>()->stats.at(0).client_split);  // TCP has none
  REQUIRE(tls.client_split);
  REQUIRE(tls.server_split);
  const measure::UnitSplit& client = *tls.client_split;
  CHECK(client.client);
  CHECK(client.extra_us == doctest::Approx(420));  // the median of 400 and 440
  CHECK(*client.handshake_us == doctest::Approx(300));
  CHECK(client.crypto_us == doctest::Approx(0.5));
  CHECK(client.record_layer_us == doctest::Approx(1.5));  // 2.0 in memory less the cipher's 0.5
  CHECK(client.socket_us == doctest::Approx(420 - 300 - 2.0));
  const measure::UnitSplit& server = *tls.server_split;
  CHECK_FALSE(server.client);
  CHECK(*server.handshake_us == doctest::Approx(150));
  CHECK(server.record_layer_us == doctest::Approx(1.9));
  CHECK(server.socket_us == doctest::Approx(270 - 150 - 2.5));
  CHECK(std::string(measure::largest_part(client)) == "handshake");
  // A side that did not calibrate has no split; rr's has no handshake part.
  for (kinds::CrrRun& run : results.runs)
    run.server.transaction_calibration.reset();
  measure::compute_statistics(c);
  CHECK_FALSE(c.get<kinds::CrrResults>()->stats.at(1).server_split);
  measure::UnitCost one{10, 4, &*results.runs[1].client.transaction_calibration};
  const std::optional<measure::UnitSplit> rr = measure::split_unit_cost({one}, true, /*handshake=*/false);
  REQUIRE(rr);
  CHECK_FALSE(rr->handshake_us);
  CHECK(rr->socket_us == doctest::Approx(6 - 2.0));
}

TEST_CASE("rr and crr: one line per side and one hint, from the largest part") {
  const std::string handshake = unit_text(unit_split(300, 0.5, 1.5, 50), "connection");
  INFO(handshake);
  CHECK(handshake.find("tls: the client's TLS extra 352.0 us per connection: handshake 300.0 (full, "
                       "ecdsa-p256, X25519, in memory here), crypto 0.50 (AES-128-GCM here: 100 B sealed, "
                       "1.95 KiB opened), record layer 1.50, socket and the rest 50.0") != std::string::npos);
  CHECK(handshake.find("hint: the handshake leads on the client: resumed sessions") != std::string::npos);
  CHECK(unit_text(unit_split(300, 0.5, 1.5, 50, true), "connection").find("stay open (--rr)") !=
        std::string::npos);
  CHECK(unit_text(unit_split(std::nullopt, 5, 1, 1), "transaction").find("hint: the cipher leads") !=
        std::string::npos);
  CHECK(unit_text(unit_split(std::nullopt, 1, 5, 1), "transaction").find("hint: the record layer leads") !=
        std::string::npos);
  const std::string socket = unit_text(unit_split(std::nullopt, 1, 1, 5), "transaction");
  CHECK(socket.find("socket 5.00\n") != std::string::npos);
  CHECK(socket.find("no tls module (tcp_available_ulp: mptcp)") != std::string::npos);
  CHECK(unit_text(unit_split(std::nullopt, 1, 1, 5), "transaction", "tls mptcp").find("moves the records") !=
        std::string::npos);
  CHECK(unit_text(unit_split(300, 1, 1, 500), "connection").find("close_notify") != std::string::npos);
  // One side alone: the other's lack is said.
  CHECK(
      socket.find("(no split for the server: its host could not measure TLS_AES_128_GCM_SHA256 in memory") !=
      std::string::npos);
  const std::string negative = unit_text(unit_split(std::nullopt, 1, 1, -0.5), "transaction");
  CHECK(negative.find("socket -0.50") != std::string::npos);
  CHECK(negative.find("a part below zero is noise") != std::string::npos);
}
