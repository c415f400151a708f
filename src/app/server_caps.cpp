// The caps and budgets, in one place: a test's request against the server's
// caps, and the connections, flows and memory its tests reserve, with each
// source's share.

#include "app/server_parts.hpp"

namespace tlscmp::app {

using namespace server_parts;

std::string Server::cap_problem(const protocol::TestRequest& request) const {
  if (std::string why = stacks_->refusal(request.mode, request.tls_library); !why.empty()) return why;
  if (const std::uint64_t bytes = kinds::bytes_asked(request.test); bytes > config_.max_bytes) {
    return fmt::format("the test asks for {} bytes; this server allows at most {} (--max-bytes)", bytes,
                       config_.max_bytes);
  }
  if (std::chrono::milliseconds(request.test.duration_ms) > config_.max_duration) {
    return fmt::format("the test asks for {} s; this server allows at most {} s (--max-duration)",
                       static_cast<double>(request.test.duration_ms) / 1e3,
                       std::chrono::duration<double>(config_.max_duration).count());
  }
  if (request.server_cpu >= 0) {
    if (!kinds::slice_of(request.test.kind).server_pin) {
      return fmt::format(
          "-A's server CPU does not apply to {} tests: this server's accepting threads serve them, and every "
          "other test too; give -A the client's CPU alone",
          to_string(request.test.kind));
    }
    if (const std::string why = measure::check_cpu(request.server_cpu); !why.empty())
      return fmt::format("-A asks the server to pin to CPU {}, but {}", request.server_cpu, why);
  }
  return {};
}

std::shared_ptr<void> Server::reserve_connections(const std::string& source, std::uint32_t asked,
                                                  std::string& busy) {
  const int count = static_cast<int>(asked);  // at most a few hundred (protocol::kMaxStreams)
  std::lock_guard lock(mutex_);
  SourceUse& use = sources_[source];
  if (shared_connections_ + reserved_ + count > config_.max_connections) {
    busy = fmt::format(
        "server busy: the test needs {} connections and {} of {} are taken; try again, or raise "
        "--max-connections on the server",
        count, shared_connections_ + reserved_, config_.max_connections);
  } else if (const Share share = connection_share(use);
             use.connections + use.budget + count > share.connections) {
    busy = fmt::format(
        "server busy: the test needs {} connections, and with them {} would hold more than its share of "
        "the server, {} ({}); try again when its other tests end",
        count, source, share.connections, share.why);
  }
  if (!busy.empty()) {
    forget_if_unused(sources_.find(source));
    return nullptr;
  }
  use.budget += count;
  reserved_ += count;
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, source, count](void*) {
    std::lock_guard released(mutex_);
    auto it = sources_.find(source);
    it->second.budget -= count;
    reserved_ -= count;
    forget_if_unused(it);
  });
}

int Server::flow_room() const {
  const std::uint64_t hard = descriptor_hard_limit();
  const std::uint64_t kept = kReservedDescriptors + static_cast<std::uint64_t>(config_.max_connections);
  return hard > kept ? static_cast<int>(std::min<std::uint64_t>(hard - kept, INT32_MAX)) : 0;
}

std::shared_ptr<void> Server::reserve_flows(const std::vector<std::string>& sources, std::uint32_t asked,
                                            std::string& busy) {
  const int count = static_cast<int>(asked);  // at most spec::kMaxFlows
  std::lock_guard lock(mutex_);
  if (count > config_.max_flows) {
    busy = fmt::format(
        "this server holds at most {} flows a test (--max-flows); ask for fewer, or raise --max-flows on the "
        "server",
        config_.max_flows);
  } else if (held_flow_count_ + count > flow_room()) {
    busy = fmt::format(
        "server busy: the test needs {} flows, and running tests hold {} of the {} this server's open-file "
        "limit leaves beside --max-connections; try again when one ends, or raise the server's limit "
        "(ulimit -Hn, LimitNOFILE=)",
        count, held_flow_count_, flow_room());
  }
  if (!busy.empty()) return nullptr;
  // Each source's share: the client spreads its flows over them in turn.
  const int share = (count + static_cast<int>(sources.size()) - 1) / static_cast<int>(sources.size());
  for (const std::string& source : sources)
    sources_[source].flow_budget += share;
  held_flow_count_ += count;
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, sources, count, share](void*) {
    std::lock_guard released(mutex_);
    for (const std::string& source : sources) {
      auto it = sources_.find(source);
      it->second.flow_budget -= share;
      forget_if_unused(it);
    }
    held_flow_count_ -= count;
  });
}

std::shared_ptr<void> Server::reserve_memory(std::uint64_t bytes, std::string& busy) {
  std::lock_guard lock(mutex_);
  if (memory_held_ + bytes > config_.max_memory) {
    busy = fmt::format(
        "server busy: the test needs {} of buffers and the tests running hold {} of this server's {} "
        "(--max-memory); try again when one ends",
        measure::format_bytes(bytes), measure::format_bytes(memory_held_),
        measure::format_bytes(config_.max_memory));
    return nullptr;
  }
  memory_held_ += bytes;
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, bytes](void*) {
    std::lock_guard released(mutex_);
    memory_held_ -= bytes;
  });
}

}  // namespace tlscmp::app
