#pragma once

// A well-formed test of each kind, for the unit tests of the spec, the wire
// and the checks: the one place a new kind adds its example (a switch over
// TestKind, so that a kind left out fails to compile here, not in each test).

#include "mode.hpp"
#include "spec/spec.hpp"

namespace tlscmp::test {

struct KindExample {
  spec::Test test;  // every field of its kind's parts off its default, and check_test passes it
  Mode mode;        // a mode it runs over
};

KindExample example_of(TestKind kind);

}  // namespace tlscmp::test
