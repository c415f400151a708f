// Dispatch: a connection's control session, its tests through the table of
// kinds, and ServerSide, what a kind's server half is given.

#include "app/server_parts.hpp"

namespace tlscmp::app {

using namespace server_parts;

Server::Served Server::serve_stream(std::unique_ptr<Stream>& stream, const Peer& peer, SetUpSlot& set_up,
                                    double& cpu_mark) {
  const protocol::Preamble first = session::read_preamble(*stream);
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->claims == nullptr || !kind->claims(first)) continue;
    // Another protocol's client (HTTP's): no test to set up, served as long as it keeps the connection.
    if (!set_up.release()) throw Error(set_up.taken());
    log_.line(fmt::format("{} {}", peer.address, kind->serve_foreign(*stream, first, config_)));
    return {};
  }
  const protocol::PreambleInfo preamble = protocol::parse_preamble(first);
  if (preamble.version != protocol::kVersion && preamble.kind == protocol::ConnectionKind::control) {
    // Answer with our own preamble, so that the client can say which versions differ.
    std::error_code ignored;
    stream->write_all(protocol::encode_preamble(protocol::ConnectionKind::control), ignored);
  }
  protocol::check_version(preamble);
  const protocol::ConnectionKind kind = preamble.kind;
  if (kind == protocol::ConnectionKind::control) {
    if (stream->is_tls()) throw protocol::ProtocolError("a control connection must be plain TCP");
    serve_control(*stream, peer, set_up);
  } else if (const kinds::KindSlice* own = kinds::slice_of(kind); own != nullptr) {
    if (!set_up.release()) throw Error(set_up.taken());
    own->serve_connection(stream, pending_, cpu_mark);
    return Served{.by_kind = true, .test = std::nullopt};
  } else {
    protocol::DataHeader header{};
    std::error_code ec;
    stream->read_exact(header, ec);
    if (ec) {
      throw Error(fmt::format("data connection without a cookie and stream index: {}",
                              describe(ec, stream->error_detail())));
    }
    const protocol::DataHeaderInfo data = protocol::decode_data_header(header);
    // Its place ends here, before a test takes it (where another host took it, it goes no further).
    if (!set_up.release()) throw Error(set_up.taken());
    if (!pending_.deliver(data.cookie, data.stream, std::move(stream))) {
      throw protocol::ProtocolError("data connection for an unknown or finished test, or a stream it has");
    }
    return Served{.test = data.cookie};
  }
  return {};
}

Server::Admitted::~Admitted() {
  std::lock_guard lock(server_.mutex_);
  server_.live_fds_.erase(server_.live_fds_.find(fd_));
  --server_.active_connections_;
  auto it = server_.sources_.find(source_);
  if (budgeted_) {
    --it->second.in_budget;
  } else {
    --it->second.connections;
    --server_.shared_connections_;
  }
  server_.forget_if_unused(it);
  server_.idle_.notify_all();
}

// What the kinds' server halves get of this server (kinds/server_side.hpp).
class Server::Side final : public session::ServerSide {
 public:
  Side(Server& server, std::string source, std::string library)
      : server_(server), source_(std::move(source)), library_(std::move(library)) {}
  const std::string& source() const { return source_; }
  std::shared_ptr<void> reserve_connections(std::uint32_t count, std::string& busy) override {
    return server_.reserve_connections(source_, count, busy);
  }
  std::shared_ptr<void> reserve_memory(std::uint64_t bytes, std::string& busy) override {
    return server_.reserve_memory(bytes, busy);
  }
  const session::ServerConfig& config() const override { return server_.config_; }
  protocol::TestAccept acceptance(const protocol::Cookie& cookie) const override {
    return server_.accept_message(cookie, library_);
  }
  std::unique_ptr<session::PendingTests::Ticket> open_ticket(std::uint32_t streams, std::uint64_t handshakes,
                                                             bool keeps_connections) override {
    return server_.pending_.open(streams, handshakes, keeps_connections);
  }
  std::unique_ptr<session::PendingTests::Ticket> open_ticket(
      std::shared_ptr<session::PendingTests::ConnectionSink> sink) override {
    return server_.pending_.open(std::move(sink));
  }
  void prepare_key_type(const std::string& key_type) override { server_.prepare_key_type(key_type); }
  std::shared_ptr<void> reserve_flows(std::uint32_t count, const std::vector<std::string>& sources, Mode mode,
                                      std::string& busy) override {
    // A listener's flows come from one source where its library names no peer.
    stacks::ServerPart* part = server_.stacks_->of(mode);
    const std::vector<stacks::Listener*> listeners =
        part != nullptr ? part->listeners() : std::vector<stacks::Listener*>{};
    if (!listeners.empty() && !listeners.front()->names_peers())
      return server_.reserve_flows({listeners.front()->unnamed_source()}, count, busy);
    return server_.reserve_flows(sources.empty() ? std::vector<std::string>{source_} : sources, count, busy);
  }
  const stacks::ServerPart* stack_part(Mode mode) const override { return server_.stacks_->of(mode); }
  LiveSocket register_live(int fd) override {
    auto live = std::make_shared<LiveFd>(server_, fd);
    return LiveSocket([live]() mutable { live.reset(); });
  }
  bool stopping() override { return server_.stopping(); }
  void record(const std::vector<protocol::KindResult>& mine,
              const std::vector<protocol::KindResult>& theirs) override {
    for (const protocol::KindResult& r : mine) {
      mine_.push_back(protocol::body_text(r));
      failed_ = failed_ || !r.error().empty();
    }
    for (const protocol::KindResult& r : theirs) {
      theirs_.push_back(protocol::body_text(r));
      failed_ = failed_ || !r.error().empty();
    }
    // The client's results never came: the exchange failed.
    failed_ = failed_ || theirs.size() < mine.size();
  }
  // The results recorded, each a JSON object's text.
  const std::vector<std::string>& mine() const { return mine_; }
  const std::vector<std::string>& theirs() const { return theirs_; }
  // Whether what was recorded says the test failed, on either side.
  bool failed() const { return failed_; }

 private:
  Server& server_;
  std::string source_;
  std::string library_;  // the request's TLS library ("": the server's default)
  std::vector<std::string> mine_;
  std::vector<std::string> theirs_;
  bool failed_ = false;
};

void Server::write_result(const Peer& peer, const protocol::TestRequest& request, const Side& side,
                          const char* outcome, const std::string& text) {
  results_.record(peer.address, peer.source, request, outcome, text, side.mine(), side.theirs());
}

void Server::serve_control(Stream& control, const Peer& peer, SetUpSlot& set_up) {
  control.set_deadline(Deadline::after(config_.timeouts.control));
  // Every control session starts with the server's own preamble: a client of
  // another protocol version learns which one the server speaks.
  session::send_preamble(control, protocol::ConnectionKind::control);
  const auto refuse_undecoded = [&](const std::string& reason) { session::refuse_test(control, reason); };

  protocol::TestRequest request;
  try {
    protocol::Message message = session::receive_message(control, "the test request");
    if (std::holds_alternative<protocol::ClockRequest>(message)) {
      // --start-at: the client compares clocks, and runs no test here.
      protocol::ClockReply reply{measure::wall_ns(), {}};
      for (const Mode mode : kAllModes) {
        if (std::string why = stacks_->refusal(mode); !why.empty()) reply.refused.emplace_back(mode, why);
      }
      session::send_message(control, reply, "the clock reply");
      return;
    }
    auto* asked = std::get_if<protocol::TestRequest>(&message);
    if (asked == nullptr) throw protocol::ProtocolError("unexpected message instead of the test request");
    request = std::move(*asked);
    kinds::check_request(request);  // the request against its kind, before anything else
  } catch (const std::exception& e) {
    // Another host took its place while it was read: it hears so instead.
    if (const std::string busy = set_up.taken(); !busy.empty() && set_up.answer_once())
      session::refuse_test(control, busy);
    if (dynamic_cast<const protocol::ProtocolError*>(&e) != nullptr) refuse_undecoded(e.what());
    throw;
  }
  Side side(*this, peer.source, request.tls_library);
  bool written = false;
  // A refused test's line is written before the client hears the refusal, so
  // that whoever reads the results file after the client has exited finds it.
  const auto refuse = [&](const std::string& reason) {
    write_result(peer, request, side, "refused", reason);
    written = true;
    session::refuse_test(control, reason);
  };
  try {
    serve_test(control, request, side, refuse, peer, set_up);
  } catch (const std::exception& e) {
    if (!written) write_result(peer, request, side, "failed", e.what());
    throw;
  }
}

void Server::serve_test(Stream& control, const protocol::TestRequest& request, Side& side,
                        const std::function<void(const std::string&)>& refuse, const Peer& peer,
                        SetUpSlot& set_up) {
  // The caps, checked before anything is set up for the test.
  const kinds::KindSlice& kind = kinds::slice_of(request.test.kind);
  if (const std::string problem = cap_problem(request); !problem.empty()) refuse(problem);
  if (kind.refusal != nullptr) {
    if (const std::string problem = kind.refusal(request, side); !problem.empty()) refuse(problem);
  }
  const RunningTest running(*this, peer.source);
  if (!running.busy().empty()) refuse(running.busy());
  // A running test now, counted as one: no longer against --max-pending
  // (unless another host took its place a moment before).
  if (!set_up.release() && set_up.answer_once()) refuse(set_up.taken());
  // The library the test asks for, its context made now: one this server lacks is refused.
  const tls::Context* library = nullptr;
  try {
    library = &tls_.of(request.tls_library);
  } catch (const Error& e) {
    refuse(e.what());
  }
  // A client's --cipher outside this server's defaults is served to its test alone, and said.
  const tls::CipherGrant grant = library->grant_cipher(request.cipher);
  if (!grant.suites.empty()) {
    log_.line(fmt::format(
        "{} serves TLS suites outside this server's defaults to this test, as its client asked (--cipher {})",
        peer.address, request.cipher));
  }
  // Each kind's server half runs the test and returns its log line.
  const std::string line = kind.serve(control, request, side);
  log_.line(fmt::format("{} {}{}", peer.address, line,
                        request.tls_library.empty() ? "" : fmt::format(" (TLS by {})", request.tls_library)));
  // The outcome is what the results say, as the line does: a transfer that
  // failed on either side is no success because its half returned.
  write_result(peer, request, side, side.failed() ? "failed" : "ok", line);
}

}  // namespace tlscmp::app
