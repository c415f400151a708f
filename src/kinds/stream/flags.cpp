// The stream kind's client flags: which way, both ways at once, Nagle, and
// messages (seeds/000).

#include "kinds/flags.hpp"
#include "kinds/stream/stream.hpp"

namespace tlscmp::kinds {

std::vector<CLI::Option*> add_stream_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Stream& s = flags.test.stream;
  return {
      cmd.add_flag_callback(
          "-R,--reverse", [&s] { s.direction = Direction::server_to_client; },
          "The server sends, the client receives"),
      cmd.add_option_function<std::string>(
             "--framing",
             [&s](const std::string& text) {
               s.framing = text == "len4" ? framing::Framing::len4 : framing::Framing::raw;
             },
             "raw: a byte stream; len4: each message behind a 4-byte big-endian length (Erlang {packet,4})")
          ->check(CLI::IsMember({"raw", "len4"}))
          ->default_str("raw"),
      add_size(
          &cmd, "--msg-size", s.msg_size, "--msg-size", 1, framing::kMaxMessageBytes,
          "Send messages of this size (1 byte to 1G); -n is then the payload, in whole messages, and the "
          "receiver delivers each message whole (with raw framing it cuts the stream itself)"),
      add_size(&cmd, "--max-msg", s.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
               "The receiver refuses longer length prefixes (len4)")
          ->default_str("1G"),
      add_size(&cmd, "--read-size", s.read_size, "--read-size", 1, spec::kMaxChunkBytes,
               "Bytes the receiver asks of each read call (default: -l)"),
      cmd.add_flag("--bidir", s.bidir,
                   "Both directions at once: odd-numbered streams go the other way (-P 2 at least)"),
      cmd.add_flag("-N,--no-delay", s.no_delay, "Set TCP_NODELAY during the transfer (disable Nagle)"),
  };
}

namespace {

std::function<void(session::ClientConfig&)> sweep_msg_size(const std::string& text) {
  const std::uint64_t n = spec::parse_size(text, "--msg-size", 1, framing::kMaxMessageBytes);
  return [n](session::ClientConfig& c) { c.test.stream.msg_size = n; };
}

std::function<void(session::ClientConfig&)> sweep_read_size(const std::string& text) {
  const auto n = static_cast<std::uint32_t>(spec::parse_size(text, "--read-size", 1, spec::kMaxChunkBytes));
  return [n](session::ClientConfig& c) { c.test.stream.read_size = n; };
}

std::function<void(session::ClientConfig&)> sweep_framing(const std::string& text) {
  framing::Framing f{};
  if (!spec::parse(text, f)) throw UsageError(fmt::format("--framing '{}': raw or len4", text));
  return [f](session::ClientConfig& c) { c.test.stream.framing = f; };
}

constexpr SweepSetting kSweepSettings[] = {
    {"msg-size", "Message sizes, comma-separated (10,1K,1400,...)", sweep_msg_size, nullptr, 10},
    {"read-size", "The receiver's read sizes", sweep_read_size, nullptr, 60},
    {"framing", "raw, len4, or both", sweep_framing, nullptr, 70},
};

}  // namespace

const std::span<const SweepSetting> kStreamSweepSettings = kSweepSettings;

void add_stream_sweep_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Stream& s = flags.test.stream;
  cmd.add_flag_callback(
      "-R,--reverse", [&s] { s.direction = Direction::server_to_client; }, "The server sends");
  add_size(&cmd, "--max-msg", s.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
           "The receiver refuses longer length prefixes")
      ->default_str("1G");
}

void configure_stream(const SharedFlags& flags, session::ClientConfig& c) {
  if (flags.time_s == 0) {
    c.test.stream.bytes =
        spec::parse_size(flags.bytes.empty() ? "1G" : flags.bytes, "-n/--bytes", 1, spec::kMaxTestBytes);
  }
  if (c.test.stream.bidir && c.test.streams < 2) c.test.streams = 2;  // one each way at least
}

}  // namespace tlscmp::kinds
