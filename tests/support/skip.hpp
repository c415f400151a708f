#pragma once

// A test whose precondition is missing says so and is counted as skipped,
// never as passed. skip() records the reason and the test case returns; the
// test binary then exits with kSkipExitCode where nothing failed, which
// ctest's SKIP_RETURN_CODE reports as "Skipped" (tests/CMakeLists.txt);
// ctest runs one test case a process, so the code is that test case's.
//
// Two sorts, because CI holds them apart: what this machine lacks (root,
// chromium, a tmpfs) is set up by scripts/install-deps and CI runs as root,
// so CI fails on any (scripts/test, TLSCMP_NO_SKIPS); what the build or stage
// under test lacks (QUIC before OpenSSL 3.5, BoringSSL's DTLS server, the
// other library's binary outside the BoringSSL stage) is a fact of the build,
// and the other release's, library's or stage's run covers it. With TLSCMP_SKIP_LOG set, each skip adds a line to that file:
// "machine" or "build", a tab, the test case's name, a tab, the reason.

#include <string>

namespace tlscmp::test {

inline constexpr int kSkipExitCode = 77;  // automake's and ctest's customary "skipped"

// This machine lacks what the running test case needs (root, a binary, a
// mount): records it, prints "SKIPPED: <reason>" on stderr. The caller returns.
void skip(const std::string& reason);
// The build or stage under test (its TLS library, the kernel, no peer binary
// in this stage) makes the test moot: it lacks the feature, or has what the
// test checks the absence of.
void skip_unsupported(const std::string& reason);
// How many skips this process has seen.
int skipped_count();

}  // namespace tlscmp::test
