#pragma once

// Several data connections of one test, run at once (-P, --bidir).

#include <vector>

#include "kinds/stream/transfer.hpp"
#include "tls/tls_stream.hpp"

namespace tlscmp::kinds {

// The role this side plays on stream `index`: the direction's, or with
// --bidir the other one on odd-numbered streams.
Role stream_role(Direction direction, bool bidir, std::uint32_t index, bool server_side);

struct StreamWork {
  Stream* stream = nullptr;
  TransferSpec spec;
};

// Runs every stream's transfer at once, one thread each (the first on the
// calling thread), each pinned to `cpu` unless it is -1 (-A), and returns
// their results in order with `stream` and `offset_us` set, and the run's
// facts (TCP_INFO, the host's CPU split, the threads' CPUs); TLS streams also
// get kTLS facts and record bytes.
std::vector<SideResult> run_streams(const std::vector<StreamWork>& work, int cpu);

// One side's streams as one result, for a log line: bytes and messages
// added up, the window from the first stream's start to the last one's end,
// CPU added up, the facts merged (measure::merge_facts), the first error
// (naming its stream).
SideResult combine(const std::vector<SideResult>& results);

}  // namespace tlscmp::kinds
