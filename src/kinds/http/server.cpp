// The server half of an HTTP test (see kinds/http/http.hpp).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "session/control.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// The server's log line: what ran, and how it ended.
std::string describe_test(const protocol::TestRequest& request, const std::vector<HttpSideResult>& mine,
                          const std::vector<SideResult>& theirs, const std::string& exchange_error) {
  const std::string what = fmt::format(
      "http {} {} {}/{}", http_version_name(http_version_on(request.test.http.version, request.mode)),
      to_string(request.mode), request.test.rr.request_bytes, request.test.rr.response_bytes);
  const std::string failed =
      fmt::format("{}{} failed", what, request.round > 0 ? fmt::format(" round {}", request.round) : "");
  std::uint64_t requests = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const std::string which = mine.size() > 1 ? fmt::format(" on connection {}", i) : "";
    if (!mine[i].error.empty()) return fmt::format("{}{}: {}", failed, which, mine[i].error);
    if (i < theirs.size() && !theirs[i].error.empty())
      return fmt::format("{} on the client{}: {}", failed, which, theirs[i].error);
    requests += mine[i].transactions;
  }
  if (theirs.empty())
    return fmt::format("{} after {} requests answered: {}", failed, requests, exchange_error);
  return fmt::format("{} {} requests answered on {} connection{}", what, requests, mine.size(),
                     mine.size() == 1 ? "" : "s");
}

// The client's results, one per connection, for this side's; "" or what failed.
std::string trade(Stream& control, const std::vector<SideResult>& my_sides, std::vector<SideResult>& theirs) {
  try {
    for (const SideResult& side : my_sides)
      session::send_message(control, side, "the server's result");
    for (std::uint32_t i = 0; i < my_sides.size(); ++i) {
      theirs.push_back(session::receive<SideResult>(control, "the client's result"));
      if (theirs.back().stream != i || theirs.back().role != Role::sender)
        throw protocol::ProtocolError("the client's results do not match the connections");
    }
  } catch (const Error& e) {
    theirs.clear();
    return e.what();
  }
  return {};
}

}  // namespace

std::string serve_http_test(Stream& control, const protocol::TestRequest& request,
                            session::ServerSide& side) {
  if (request.test.http.requests_per_connection > 0) return serve_http_reconnecting(control, request, side);
  const RunClock clock;
  const session::Timeouts& t = side.config().timeouts;
  const auto reserved = reserve_data_connections(control, request, side);
  // HTTP/3: the requests' streams are the test's to take, not the listener's.
  const bool own_streams = request.test.http.version == 3 && facts(request.mode).streams;
  const auto ticket = side.open_ticket(request.test.streams, 0, own_streams);
  session::send_message(control, side.acceptance(ticket->cookie()), "the test acceptance");
  std::vector<std::unique_ptr<Stream>> data = await_data_connections(control, request, side, *ticket);
  std::vector<HttpSideResult> mine(data.size());
  {
    std::vector<std::unique_ptr<session::ServerSide::LiveSocket>> live;
    std::vector<int> fds;
    for (const auto& stream : data) {
      live.push_back(
          std::make_unique<session::ServerSide::LiveSocket>(side.register_live(stream->native_handle())));
      set_nodelay(stream->native_handle(), true);
      send_ready(*stream, t.handshake);
      fds.push_back(stream->native_handle());
    }
    std::vector<RunFacts> facts = run_data_threads(fds, request.server_cpu, [&](std::size_t i) {
      mine[i] = run_http_server(*data[i], request.test.http.version, t.idle);
    });
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i].facts = std::move(facts[i]);
    live.clear();
  }
  data.clear();
  std::int64_t earliest = INT64_MAX;
  for (const HttpSideResult& r : mine)
    earliest = std::min(earliest, r.start_ns);
  std::vector<SideResult> my_sides;
  for (std::uint32_t i = 0; i < mine.size(); ++i)
    my_sides.push_back(to_side_result(mine[i], Role::receiver, i, earliest));
  const bool failed_here =
      std::any_of(mine.begin(), mine.end(), [](const HttpSideResult& r) { return !r.error.empty(); });
  control.set_deadline(Deadline::after(failed_here ? std::min(t.control, session::kResultGrace) : t.control));
  std::vector<SideResult> theirs;
  const std::string exchange_error = trade(control, my_sides, theirs);
  if (!failed_here && !theirs.empty() &&
      std::none_of(theirs.begin(), theirs.end(), [](const SideResult& r) { return !r.error.empty(); })) {
    const PeerJudge judge(Peer::client, clock.elapsed_us(), request.test.streams);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (std::string line = check_http_peer(judge, request, my_sides[i], theirs[i]); !line.empty()) {
        mine[i].error = my_sides[i].error = std::move(line);
        break;
      }
    }
  }
  side.record(my_sides, theirs);
  return describe_test(request, mine, theirs, exchange_error);
}

}  // namespace tlscmp::kinds
