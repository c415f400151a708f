// The handshake kind's entry in the table of kinds (kinds/kind.hpp): a test
// without rounds of runs, --compare-groups' table or --handshakes N timed one
// by one.

#include "kinds/handshake/handshake.hpp"
#include "kinds/variants.hpp"
#include "measure/cpu.hpp"

namespace tlscmp::kinds {
namespace {
namespace handshake_entry {

void run_whole(const session::ClientConfig& target, const tls::ClientOptions& tls_config,
               session::InterruptWatch& interrupt, measure::Comparison& comparison) {
  measure::TestParameters& parameters = comparison.parameters;
  try {
    const std::vector<tls::ClientOptions> libraries = library_options(target, tls_config);
    if (target.test.compare_groups) {
      if (parameters.test.handshake.handshakes == 0)
        parameters.test.handshake.handshakes = kGroupHandshakesPerRound;
      run_group_comparison(target, libraries, interrupt, comparison);
      return;
    }
    run_library_handshakes(target, libraries, interrupt, comparison);
  } catch (const Error& e) {
    if (interrupt.interrupted()) {
      comparison.interrupted = true;
    } else {
      comparison.error = e.what();
    }
  }
}

// One handshake, for variants.cpp's try of each TLS variant.
void probe(const session::ClientConfig& target, const tls::Context& tls, session::InterruptWatch& interrupt,
           measure::Environment& environment) {
  (void)run_handshake_test(target, 1, tls, interrupt, environment);
}

// The accepting thread's CPU moves on past the connection served.
void serve_connection(std::unique_ptr<Stream>& stream, session::PendingTests& pending, double& cpu_mark) {
  serve_handshake_connection(*stream, pending);
  cpu_mark = measure::thread_cpu_s();
}

void check(const spec::Test& t, Mode mode) {
  // --compare-groups alone: kGroupHandshakesPerRound a group and round.
  if (t.handshake.handshakes == 0 && !t.compare_groups)
    throw spec::Invalid("a handshake test needs --handshakes N");
  if (t.duration_ms != 0) throw spec::Invalid("a handshake test makes --handshakes N; it takes no -t");
  if (!facts(mode).tls_over_tcp) throw spec::Invalid("a handshake test needs TLS");
}

// A test that check passes, every field of its part off its default.
spec::Test example() {
  spec::Test t;
  t.kind = TestKind::handshake;
  t.handshake.handshakes = 7;
  t.compare_groups = true;
  return t;
}
}  // namespace handshake_entry
}  // namespace

const KindSlice kHandshakeKind{
    .kind = TestKind::handshake,
    .flag = "--handshakes",
    .flags_are_for = "handshake tests (--handshakes N)",
    .add_flags = add_handshake_flags,
    .asked_by = asked_for_handshakes,
    .configure = configure_handshake,
    .paired_ratios = false,
    .run_whole = handshake_entry::run_whole,
    .probe = handshake_entry::probe,
    .server_pin = false,
    .check = handshake_entry::check,
    .example = handshake_entry::example,
    .serve = serve_handshake_test,
    .connection = protocol::ConnectionKind::handshake,
    .serve_connection = handshake_entry::serve_connection,
    .text_headline = render_handshake_results,
    .json = add_handshake_json,
    .csv = render_handshake_csv,
    .html_section = handshake_html_section,
    .html_headline = handshake_html_headline,
};

}  // namespace tlscmp::kinds
