// The datagram kind's entry in the table of kinds (kinds/kind.hpp).

#include <fmt/format.h>

#include "kinds/datagram/datagram.hpp"

#include "protocol/datagram.hpp"

namespace tlscmp::kinds {
namespace {
namespace datagram_entry {

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  measure::DatagramRun result =
      run_datagram_test(run.target, variant.mode, variant.dtls ? &*variant.dtls : nullptr, run.interrupt,
                        comparison.environment);
  result.partial = run.interrupt.interrupted();  // the senders stopped early
  session::keep_run<measure::DatagramResults>(comparison, std::move(result), variant.label, run);
}

void notes(const session::ClientConfig& config, measure::Comparison& comparison) {
  session::note_unpinned<measure::DatagramResults>(comparison, config);
}

// dtls where this build has none; a rate below the server's --min-rate.
std::string refusal(const protocol::TestRequest& request, const session::ServerSide& side) {
  if (request.mode == Mode::dtls && side.dtls() == nullptr) {
    std::string why;
    tls::DtlsContext::available(why);
    return why.empty() ? "this server has no DTLS" : why;
  }
  const std::uint64_t min_rate = side.config().min_rate;
  if (request.rate_bps > 0 && request.rate_bps / 8 < min_rate) {
    return fmt::format(
        "the test asks for {} bit/s a sender; this server has every test move at least {} bytes a second "
        "(--min-rate)",
        request.rate_bps, min_rate);
  }
  return {};
}

// "datagram_runs" and "datagram_summary".
void json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  out["datagram_runs"] = datagram_runs_json(c);
  out["datagram_summary"] = datagram_summary_json(c);
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  nlohmann::ordered_json runs = datagram_runs_json(c);
  return runs.empty() ? nlohmann::ordered_json(nullptr) : runs.back();
}

// What a datagram test may ask for, beyond the checks every test gets.
void check_request(const protocol::TestRequest& m) {
  using protocol::ProtocolError;
  if (m.bytes != 0) throw ProtocolError("a datagram test counts 'packets', not 'bytes'");
  if ((m.packets == 0) == (m.duration_ms == 0))
    throw ProtocolError("exactly one of 'packets' and 'duration_ms' must be non-zero");
  if (m.direction != Direction::client_to_server)
    throw ProtocolError("datagram tests go from client to server");
  const std::uint32_t largest =
      m.mode == Mode::dtls ? protocol::kMaxDtlsDatagramBytes : protocol::kMaxUdpDatagramBytes;
  if (m.chunk_bytes < protocol::kDatagramHeaderBytes || m.chunk_bytes > largest) {
    throw ProtocolError(fmt::format("'chunk_bytes' = {} is outside {}..{} for {}", m.chunk_bytes,
                                    protocol::kDatagramHeaderBytes, largest, to_string(m.mode)));
  }
  if (m.streams > protocol::kMaxSenders)
    throw ProtocolError(fmt::format("more than {} senders", protocol::kMaxSenders));
  if (m.bidir || m.msg_size != 0 || m.framing != framing::Framing::raw || m.verify || m.record_size != 0) {
    throw ProtocolError("a datagram test takes no stream options (bidir, framing, verify, record size)");
  }
}
}  // namespace datagram_entry
}  // namespace

const KindSlice kDatagramKind{
    .kind = TestKind::datagram,
    .run = datagram_entry::run,
    .notes = datagram_entry::notes,
    .refusal = datagram_entry::refusal,
    .check_request = datagram_entry::check_request,
    .serve = serve_datagram_test,
    .text_runs = render_datagram_runs,
    .json = datagram_entry::json,
    .last_run_json = datagram_entry::last_run_json,
    .csv = render_datagram_csv,
};

}  // namespace tlscmp::kinds
