#pragma once

// A client's loops on one HTTP connection, whatever carries it: a Link
// says how requests go out and answers come in (drive.cpp: a byte stream's
// framing, HTTP/1.1 and 2; drive3.cpp: HTTP/3 on QUIC's streams). Closed
// loop (-n, -t: --streams requests in flight) or open loop (--rate: each
// request sent at its time on the schedule's grid, its latency counted
// from that time, as wrk2 does). A Link has:
//
//   ask(asked_ns)              a request, asked now or scheduled then
//   write_out()                what there is to send, sent: "" or what failed
//   take(now, result)          what came, read (without waiting where `now`),
//                              its answers counted: "" or what failed
//   readable_within(ns, ec)    bytes came within `ns`
//   failure(ec)                a failed wait, in words
//   heard()                    the server's first bytes came
//   in_flight(), asked(), server_closes()   the framing's count and state

#include <fmt/format.h>
#include <algorithm>
#include <string>
#include <vector>

#include "kinds/http/http.hpp"
#include "measure/clock.hpp"

namespace tlscmp::kinds::http_loops {

// The answers taken into this side's figures.
inline void count(const std::vector<framing::HttpAnswer>& answers, HttpSideResult& result) {
  for (const framing::HttpAnswer& a : answers) {
    result.first_byte.add(measure::ns_to_us(a.first_ns - a.asked_ns));
    result.latency.add(measure::ns_to_us(a.done_ns - a.asked_ns));
    result.bytes_received += a.body;
    ++result.transactions;
    result.end_ns = std::max(result.end_ns, a.done_ns);
  }
}

// Closed loop: --streams requests in flight (HTTP/1.1: one), a new one as
// each is answered, until -n is asked or -t is up.
template <typename Link>
std::string closed_loop(Link& link, const HttpClientSpec& spec, HttpSideResult& result) {
  for (;;) {
    while (link.in_flight() < spec.streams &&
           (spec.requests > 0 ? link.asked() < spec.requests : measure::now_ns() < spec.stop_ns)) {
      if (link.server_closes())
        return fmt::format(
            "the server closes the connection after request {}, and keep-alive was asked (its limit of "
            "requests a connection: nginx's keepalive_requests); raise it, or use -n below it times -P",
            link.asked());
      link.ask(measure::now_ns());
    }
    if (std::string failed = link.write_out(); !failed.empty()) return failed;
    if (link.in_flight() == 0) return {};
    if (std::string failed = link.take(false, result); !failed.empty()) return failed;
  }
}

// Open loop: each request asked at its time on this connection's grid,
// whether or not those before it were answered. Until the server's first
// bytes, what comes may be TLS's tickets alone: read without waiting then,
// so that a due request is not held up.
template <typename Link>
std::string open_loop(Link& link, const HttpClientSpec& spec, HttpSideResult& result) {
  const double period_ns = 1e9 / spec.rate_rps;
  std::int64_t next_ns = spec.start_ns;
  std::string failed;
  for (;;) {
    for (std::int64_t now = measure::now_ns(); next_ns < spec.stop_ns && now >= next_ns;) {
      link.ask(next_ns);
      next_ns = spec.start_ns + static_cast<std::int64_t>(static_cast<double>(link.asked()) * period_ns);
    }
    if (!(failed = link.write_out()).empty()) break;
    const bool sending = next_ns < spec.stop_ns;
    if (!sending && link.in_flight() == 0) break;
    std::error_code ec;
    const bool readable =
        !sending || link.readable_within(std::chrono::nanoseconds(next_ns - measure::now_ns()), ec);
    if (ec) {
      failed =
          fmt::format("awaiting the response to request {}: {}", result.transactions + 1, link.failure(ec));
      break;
    }
    if (readable && !(failed = link.take(sending && !link.heard(), result)).empty()) break;
  }
  // The run lasts its schedule at least, as rr's open loop does.
  result.end_ns = std::max(measure::now_ns(), spec.stop_ns);
  return failed;
}

// The loop the spec asks for.
template <typename Link>
std::string run_loop(Link& link, const HttpClientSpec& spec, HttpSideResult& result) {
  if (spec.rate_rps <= 0) return closed_loop(link, spec, result);
  result.start_ns = spec.start_ns;
  return open_loop(link, spec, result);
}

}  // namespace tlscmp::kinds::http_loops
