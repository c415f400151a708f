// The test binaries' main: doctest's, and kSkipExitCode where a test case
// skipped and none failed (support/skip.hpp).

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>

#include "support/skip.hpp"

namespace tlscmp::test {
namespace {

std::atomic<int> skips{0};
std::mutex name_mutex;
std::string running_test;  // the test case running now, for the skip log

// Keeps the running test case's name (doctest's reporters are told of each).
struct TestNames : doctest::IReporter {
  explicit TestNames(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    const std::lock_guard lock(name_mutex);
    running_test = data.m_name;
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

void record_skip(const char* sort, const std::string& reason) {
  ++skips;
  std::cerr << "SKIPPED: " << reason << "\n";
  MESSAGE("skipped: " << reason);
  if (const char* log = std::getenv("TLSCMP_SKIP_LOG"); log != nullptr && *log != '\0') {
    const std::lock_guard lock(name_mutex);
    std::ofstream(log, std::ios::app) << sort << '\t' << running_test << '\t' << reason << '\n';
  }
}

}  // namespace

void skip(const std::string& reason) {
  record_skip("machine", reason);
}

void skip_unsupported(const std::string& reason) {
  record_skip("build", reason);
}

int skipped_count() {
  return skips.load();
}

}  // namespace tlscmp::test

DOCTEST_REGISTER_LISTENER("test-names", 1, tlscmp::test::TestNames);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (context.shouldExit()) return failed;
  if (failed == 0 && tlscmp::test::skipped_count() > 0) return tlscmp::test::kSkipExitCode;
  return failed;
}
