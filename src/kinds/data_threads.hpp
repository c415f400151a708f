#pragma once

// The data threads of one side of a run, as every kind with a thread per
// connection (stream, rr) or per sender (datagrams) runs them: pinned with
// -A and watched while they work (measure::RunWatch).

#include <functional>
#include <vector>

#include "run_facts.hpp"

namespace tlscmp {
class Stream;
}

namespace tlscmp::kinds {

// run_data_threads' `port` for a side whose first stream is `stream`: a QUIC
// server's port counts; else none (a client counts its connections itself).
std::function<std::optional<UdpPath>()> port_of(const Stream& stream);

// Runs work(i) for each of `fds` at once, one thread each (the first on the
// calling thread), each pinned to `cpu` unless it is -1, and returns each
// one's facts: its socket's TCP_INFO as its work ended (fds[i] -1 or not
// TCP: none), the CPUs its thread ran on, the host's CPU split over them
// all, and `pinned_cpu` where the pin held. A thread that cannot be pinned
// works unpinned (the client notes it: the CPU was checked before the test).
// With `watch_udp` (QUIC), each also has the host's UDP counters over them all.
// With `port` (a QUIC server's port counts: Stream::port_path), the
// first one's udp_path is what they moved by over them all, so that the
// side's facts added up count the port once.
std::vector<RunFacts> run_data_threads(const std::vector<int>& fds, int cpu,
                                       const std::function<void(std::size_t)>& work, bool watch_udp = false,
                                       const std::function<std::optional<UdpPath>()>& port = {});

}  // namespace tlscmp::kinds
