// The table of kinds (kinds/kind.hpp): every TestKind has one entry, whole,
// and each kind's own connections find it by their preamble kind.

#include <doctest/doctest.h>

#include <set>

#include "kinds/kind.hpp"
#include "kinds/transactions.hpp"
#include "protocol/messages.hpp"

using namespace tlscmp;
using namespace tlscmp::kinds;

TEST_CASE("the table of kinds: one entry per kind, in TestKind order, each with both halves") {
  REQUIRE(all_kinds().size() == kAllKinds.size());
  for (std::size_t i = 0; i < kAllKinds.size(); ++i) {
    CAPTURE(to_string(kAllKinds[i]));
    const KindSlice& slice = slice_of(kAllKinds[i]);
    CHECK(slice.kind == kAllKinds[i]);
    CHECK(static_cast<std::size_t>(kAllKinds[i]) == i);  // KindFlags::asked is indexed by it
    CHECK(all_kinds()[i] == &slice);
    CHECK(static_cast<bool>(slice.serve));
    // A kind runs either rounds of runs or one whole test, not both.
    CHECK((slice.run != nullptr) != (slice.run_whole != nullptr));
    CHECK(slice.connection.has_value() == (slice.serve_connection != nullptr));
    // Every kind's own flags say what they are for, in a refusal; the first
    // kind is what nothing asks for, every other is asked for by a flag or
    // by the settings.
    CHECK(slice.flags_are_for != nullptr);
    REQUIRE(static_cast<bool>(slice.example));
    CHECK(slice.example().kind == kAllKinds[i]);
    CHECK(static_cast<bool>(slice.add_flags));
    if (i > 0) CHECK((slice.flag != nullptr || static_cast<bool>(slice.asked_by)));
  }
  CHECK(all_kinds().front()->flag == nullptr);
  CHECK_FALSE(static_cast<bool>(all_kinds().front()->asked_by));
}

TEST_CASE("a kind's own connections find their kind, data and control connections none") {
  CHECK(slice_of(protocol::ConnectionKind::handshake) == &slice_of(TestKind::handshake));
  CHECK(slice_of(protocol::ConnectionKind::crr) == &slice_of(TestKind::crr));
  CHECK(slice_of(protocol::ConnectionKind::http) == &slice_of(TestKind::http));
  CHECK(slice_of(protocol::ConnectionKind::data) == nullptr);
  CHECK(slice_of(protocol::ConnectionKind::control) == nullptr);
  std::set<protocol::ConnectionKind> seen;
  for (const KindSlice* slice : all_kinds()) {
    if (slice->connection) CHECK(seen.insert(*slice->connection).second);
  }
}

TEST_CASE("-A's server CPU applies where the kind's server half has data threads of its own") {
  CHECK(slice_of(TestKind::stream).server_pin);
  CHECK(slice_of(TestKind::rr).server_pin);
  CHECK(slice_of(TestKind::datagram).server_pin);
  CHECK_FALSE(slice_of(TestKind::crr).server_pin);
  CHECK_FALSE(slice_of(TestKind::handshake).server_pin);
}

TEST_CASE("compare and merge read every kind with runs through the table: a list, a rate first") {
  std::set<std::string> lists;
  for (const KindSlice* slice : all_kinds()) {
    CAPTURE(to_string(slice->kind));
    const ResultRuns& r = slice->results;
    // A kind with rounds of runs has them in a list of its own in -J.
    CHECK((r.list != nullptr) == (slice->run != nullptr));
    if (r.list == nullptr) continue;
    CHECK(lists.insert(r.list).second);
    REQUIRE_FALSE(r.figures.empty());
    CHECK(r.figures.front().higher_is_better);  // merge adds it up over hosts
    CHECK(r.label != nullptr);
    CHECK(r.amount != nullptr);
  }
  CHECK(lists.contains("rr_runs"));
}

TEST_CASE("an open-loop schedule no thread can keep is refused: a request every 0.5 us") {
  CHECK(schedule_problem(2e6, 1).find("lower the rate or add connections") != std::string::npos);
  CHECK(schedule_problem(2e6, 2).empty());
  CHECK(schedule_problem(0, 1).empty());
}

TEST_CASE("a request's fields for some kinds are refused for the others, naming the kind that takes them") {
  protocol::TestRequest flows;
  flows.mode = Mode::tls;
  flows.test = slice_of(TestKind::flows).example();
  flows.release_buffers = true;
  flows.flow_sources = {"127.0.0.2", "127.0.0.3"};
  CHECK_NOTHROW(check_request(flows));
  flows.mode = Mode::tcp;
  CHECK_THROWS_WITH_AS(check_request(flows),
                       "bad control message: 'release_buffers' is for flows tests over tls",
                       protocol::ProtocolError);

  protocol::TestRequest rr;
  rr.mode = Mode::tls;
  rr.test = slice_of(TestKind::rr).example();
  CHECK_NOTHROW(check_request(rr));
  rr.flow_sources = {"127.0.0.2"};
  CHECK_THROWS_WITH_AS(check_request(rr), "bad control message: 'flow_sources' is for flows tests",
                       protocol::ProtocolError);
  rr.flow_sources.clear();
  rr.key_type = "ecdsa-p384";
  CHECK_THROWS_WITH_AS(check_request(rr), "bad control message: 'key_type' is for crr tests over tls",
                       protocol::ProtocolError);
}
