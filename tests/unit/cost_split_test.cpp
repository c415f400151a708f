// Where a bulk TLS run's extra CPU goes: the split from runs and
// calibrations, and the one hint its largest part calls for.

#include <doctest/doctest.h>

#include <map>
#include <string>

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
measure::StreamRun run(Mode mode, int round, double client_cpu_s, double server_cpu_s) {
  measure::StreamRun r;
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
  measure::StreamStats stats;
  stats.client_split = client;
  return kinds::render_cost_split(c, stats);
}

}  // namespace

TEST_CASE("the split: crypto from the AEAD, the record layer from memory, the socket the rest, per side") {
  const measure::StreamRun tcp1 = run(Mode::tcp, 1, 0.4, 0.2), tls1 = run(Mode::tls, 1, 1.0, 0.9);
  const measure::StreamRun tcp2 = run(Mode::tcp, 2, 0.4, 0.2), tls2 = run(Mode::tls, 2, 1.2, 0.9);
  const std::map<int, const measure::StreamRun*> base{{1, &tcp1}, {2, &tcp2}};
  const std::optional<measure::CostSplit> client =
      measure::split_cost({&tls1, &tls2}, base, /*client_side=*/true, /*client_sends=*/true);
  REQUIRE(client);
  CHECK(client->sender);
  CHECK(client->extra_s_per_gib == doctest::Approx(0.7));  // the median of 0.6 and 0.8
  CHECK(client->crypto_s_per_gib == doctest::Approx(0.2));
  CHECK(client->record_layer_s_per_gib == doctest::Approx(0.1));  // 0.3 in memory less the cipher's 0.2
  CHECK(client->socket_s_per_gib == doctest::Approx(0.4));
  CHECK(client->records_per_chunk == 4);
  CHECK(*client->tls_calls_per_chunk == doctest::Approx(4));
  const std::optional<measure::CostSplit> server =
      measure::split_cost({&tls1, &tls2}, base, /*client_side=*/false, /*client_sends=*/true);
  REQUIRE(server);
  CHECK_FALSE(server->sender);
  CHECK(server->crypto_s_per_gib == doctest::Approx(0.25));        // opening
  CHECK(server->record_layer_s_per_gib == doctest::Approx(0.15));  // the reader's 0.4 less 0.25
  CHECK(server->socket_s_per_gib == doctest::Approx(0.3));  // 0.7 less 0.4: below what it would be, shown
  // A side with no calibration has no split.
  measure::StreamRun bare = tls1;
  bare.client.calibration.reset();
  CHECK_FALSE(measure::split_cost({&bare}, base, true, true));
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
