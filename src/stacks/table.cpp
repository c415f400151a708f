// The table of stacks (stack.hpp), and what every stack shares: the words
// of --mode, and the sockets of the stacks over TCP and over UDP.

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "stacks/stack.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {

extern const Stack kTcpStack;
extern const Stack kTlsStack;
extern const Stack kQuicStack;
extern const Stack kUdpStack;
extern const Stack kDtlsStack;

namespace {

// In the order --version lists them: the stream stacks, then the datagram ones.
constexpr std::array<const Stack*, 5> kStacks{&kTcpStack, &kTlsStack, &kQuicStack, &kUdpStack, &kDtlsStack};

// --mode's words for a baseline and its encrypted twin together.
struct ModePair {
  const char* word;
  Mode baseline;
  Mode encrypted;
};
constexpr ModePair kPairs[] = {{"both", Mode::tcp, Mode::tls}, {"both-udp", Mode::udp, Mode::dtls}};

}  // namespace

std::span<const Stack* const> all_stacks() {
  return kStacks;
}

const Stack& stack_of(Mode mode) {
  const auto it =
      std::find_if(kStacks.begin(), kStacks.end(), [&](const Stack* s) { return s->mode == mode; });
  return it != kStacks.end() ? **it : kTcpStack;
}

std::string unavailable(Mode mode) {
  const Stack& stack = stack_of(mode);
  return stack.unavailable != nullptr ? stack.unavailable() : std::string();
}

std::vector<Mode> modes_of_word(const std::string& word) {
  for (const ModePair& pair : kPairs) {
    if (word == pair.word) return {pair.baseline, pair.encrypted};
  }
  for (const Stack* stack : kStacks) {
    if (word == to_string(stack->mode)) return {stack->mode};
  }
  return {};
}

std::string mode_words() {
  std::string out;
  for (std::size_t i = 0; i < kStacks.size(); ++i)
    out += fmt::format("{}{}",
                       i == 0                    ? ""
                       : i + 1 == kStacks.size() ? " or "
                                                 : ", ",
                       to_string(kStacks[i]->mode));
  return out;
}

std::unique_ptr<Stream> client_stream(Mode mode, UniqueFd fd, const tls::Context* tls, const Dial& dial) {
  const Stack& stack = stack_of(mode);
  if (stack.client_stream == nullptr) return std::make_unique<TcpStream>(std::move(fd));
  return stack.client_stream(std::move(fd), tls, dial);
}

ServerParts::ServerParts(const ServerSetup& setup, const std::function<void(const std::string&)>& log) {
  for (const Stack* stack : kStacks) {
    if (stack->server_part != nullptr) parts_.emplace_back(stack->mode, stack->server_part(setup, log));
  }
}

ServerPart* ServerParts::of(Mode mode) const {
  for (const auto& [m, part] : parts_) {
    if (m == mode) return part.get();
  }
  return nullptr;
}

std::string ServerParts::refusal(Mode mode, std::string_view library) const {
  const ServerPart* part = of(mode);
  return part != nullptr ? part->refusal(library) : std::string();
}

std::unique_ptr<Stream> ServerParts::take(UniqueFd fd, std::byte first) const {
  for (const auto& [mode, part] : parts_) {
    if (std::unique_ptr<Stream> stream = part->take(fd, first)) return stream;
  }
  return std::make_unique<TcpStream>(std::move(fd));
}

std::vector<std::pair<Mode, Listener*>> ServerParts::listeners() const {
  std::vector<std::pair<Mode, Listener*>> out;
  for (const auto& [mode, part] : parts_) {
    for (Listener* listener : part->listeners())
      out.emplace_back(mode, listener);
  }
  return out;
}

UniqueFd open_tcp_socket(const DataTarget& target) {
  UniqueFd fd = connect_tcp(target.host, target.port, target.connect_by, target.bind_address);
  set_nodelay(fd.get(), true);  // until the transfer starts: no Nagle delay on the small setup messages
  set_socket_buffers(fd.get(), target.sndbuf_bytes, target.rcvbuf_bytes);
  return fd;
}

UniqueFd open_udp_socket(const DataTarget& target) {
  return connect_udp_beside(target.control_fd, target.port);
}

}  // namespace tlscmp::stacks
