// The handshake kind's entry in the table of kinds (kinds/kind.hpp): a test
// without rounds of runs, --compare-groups' table or --handshakes N timed one
// by one.

#include "kinds/handshake/handshake.hpp"
#include "kinds/stream/stream.hpp"
#include "measure/cpu.hpp"

namespace tlscmp::kinds {
namespace {
namespace handshake_entry {

void run_whole(const session::ClientConfig& target, const tls::ClientOptions& tls_config,
               session::InterruptWatch& interrupt, measure::Comparison& comparison) {
  measure::TestParameters& parameters = comparison.parameters;
  if (target.compare_groups) {
    parameters.compare_groups = true;
    parameters.handshakes = target.handshakes > 0 ? target.handshakes : kGroupHandshakesPerRound;
    run_group_comparison(target, tls_config, interrupt, comparison);
    return;
  }
  parameters.handshakes = target.handshakes;
  try {
    const tls::Context tls = tls::Context::for_client(tls_config);
    const HandshakeTest test =
        run_handshake_test(target, target.handshakes, tls, interrupt, comparison.environment);
    comparison.results = measure::HandshakeResults{target.handshakes, test.kinds[0].summarize(),
                                                   test.kinds[1].summarize(), test.tls};
  } catch (const Error& e) {
    if (interrupt.interrupted()) {
      comparison.interrupted = true;
    } else {
      comparison.error = e.what();
    }
  }
}

// The accepting thread's CPU moves on past the connection served.
void serve_connection(Stream& stream, session::PendingTests& pending, double& cpu_mark) {
  serve_handshake_connection(stream, pending);
  cpu_mark = measure::thread_cpu_s();
}

void check_request(const protocol::TestRequest& m) {
  if (m.handshakes == 0) throw protocol::ProtocolError("a handshake test needs 'handshakes'");
  if (m.bytes != 0 || m.duration_ms != 0) throw protocol::ProtocolError("a handshake test moves no payload");
  if (m.mode != Mode::tls) throw protocol::ProtocolError("a handshake test needs TLS");
}
}  // namespace handshake_entry
}  // namespace

const KindSlice kHandshakeKind{
    .kind = TestKind::handshake,
    .run_whole = handshake_entry::run_whole,
    .server_pin = false,
    .check_request = handshake_entry::check_request,
    .serve = serve_handshake_test,
    .connection = protocol::ConnectionKind::handshake,
    .serve_connection = handshake_entry::serve_connection,
    .text_headline = render_handshake_results,
    .json = add_handshake_json,
    .csv = render_stream_csv,  // the stream header, no rows: a handshake test has no runs
};

}  // namespace tlscmp::kinds
