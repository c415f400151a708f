// The one description of a test (spec/spec.hpp): every field named once, a
// request carries its test as it is, and kinds::check_test refuses what a
// kind does not read, naming the flag.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "kinds/kind.hpp"
#include "protocol/messages.hpp"
#include "spec/spec.hpp"

using namespace tlscmp;

namespace {

protocol::TestRequest decoded(const protocol::TestRequest& request) {
  const std::vector<std::byte> frame = protocol::encode(request);
  return std::get<protocol::TestRequest>(
      protocol::decode(std::span(frame).subspan(protocol::kFrameHeaderBytes)));
}

// Each kind's example, from its entry in the table.
spec::Test test_of(TestKind kind) {
  return kinds::slice_of(kind).example();
}

Mode mode_of(TestKind kind) {
  return kinds::slice_of(kind).example_mode;
}

}  // namespace

TEST_CASE("every field of a test is named once, with a flag, and its result key") {
  const spec::Test defaults;
  std::set<std::string> keys;
  spec::for_each_field(defaults, [&](const spec::Field& f, const auto&) {
    CAPTURE(f.key);
    CHECK(keys.insert(f.key).second);
    CHECK(std::string(f.flag).starts_with("-"));
  });
  CHECK(keys.contains("rr_request_bytes"));
  spec::for_each_field(defaults, [&](const spec::Field& f, const auto&) {
    if (std::string(f.key) == "duration_ms") CHECK(spec::result_key(f) == "duration_s");
    if (std::string(f.key) == "bytes") CHECK(spec::result_key(f) == "bytes");
  });
}

TEST_CASE("a request carries its test as it is, each kind, and the check passes it") {
  for (TestKind kind : kAllKinds) {
    CAPTURE(to_string(kind));
    protocol::TestRequest request;
    request.test = test_of(kind);
    request.mode = mode_of(kind);
    CHECK_NOTHROW(kinds::check_test(request.test, request.mode));
    const protocol::TestRequest back = decoded(request);
    CHECK(back.test == request.test);
    CHECK_NOTHROW(kinds::check_request(back));
    // On the wire: the shared part and the kind's own, no other kind's field.
    const nlohmann::json wire = nlohmann::json::parse(protocol::body_text(request));
    spec::for_each_field(request.test, [&](const spec::Field& f, const auto&) {
      CAPTURE(f.key);
      CHECK(wire.contains(f.key) == spec::reads(kind, f.part));
    });
  }
}

TEST_CASE("another kind's field is refused on the wire and by the check, naming it") {
  protocol::TestRequest rr;
  rr.test = test_of(TestKind::rr);
  nlohmann::json wire = nlohmann::json::parse(protocol::body_text(rr));
  wire["msg_size"] = 10;
  const std::string body = wire.dump();
  const auto bytes = std::as_bytes(std::span(body));
  CHECK_THROWS_WITH_AS(protocol::decode(bytes),
                       doctest::Contains("'msg_size' is for stream tests, not rr ones"),
                       protocol::ProtocolError);

  spec::Test t = test_of(TestKind::rr);
  t.stream.msg_size = 10;
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tcp), "--msg-size does not apply to rr tests",
                       spec::Invalid);
  t = test_of(TestKind::stream);
  t.datagram.gso = true;
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tcp), "--gso does not apply to stream tests",
                       spec::Invalid);
  t = test_of(TestKind::datagram);
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tcp), "a datagram test runs over udp or dtls",
                       spec::Invalid);
}

TEST_CASE("a kind's own needs are checked once, in flag words, for the client and the server alike") {
  spec::Test t = test_of(TestKind::stream);
  t.stream.msg_size = 0;
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tcp), "--framing len4 needs --msg-size", spec::Invalid);
  protocol::TestRequest request;
  request.test = t;
  CHECK_THROWS_WITH_AS(kinds::check_request(request), "--framing len4 needs --msg-size",
                       protocol::ProtocolError);
  t = test_of(TestKind::stream);
  t.stream.msg_size = 5000;  // above max_msg
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tcp), "--msg-size is above --max-msg", spec::Invalid);
  t = test_of(TestKind::crr);
  t.verify = true;
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tls), "--verify does not apply to --crr", spec::Invalid);
  t = test_of(TestKind::handshake);
  CHECK_THROWS_WITH_AS(kinds::check_test(t, Mode::tcp), "a handshake test needs TLS", spec::Invalid);
}

TEST_CASE("the wire holds a test's fields to their ranges") {
  protocol::TestRequest request;
  request.test = test_of(TestKind::stream);
  const auto refused = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json wire = nlohmann::json::parse(protocol::body_text(request));
    wire[key] = value;
    const std::string body = wire.dump();
    CAPTURE(body);
    CHECK_THROWS_AS(protocol::decode(std::as_bytes(std::span(body))), protocol::ProtocolError);
  };
  refused("record_size", 100);  // below 512, and not 0
  refused("interval_ms", 50);
  refused("streams", 0);
  refused("streams", protocol::kMaxStreams + 1);
  refused("framing", "len8");
  refused("direction", "sideways");
  refused("bidir", 1);
}
