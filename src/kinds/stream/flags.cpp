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

void configure_stream(const SharedFlags& flags, session::ClientConfig& c) {
  if (flags.time_s == 0) {
    c.test.stream.bytes =
        spec::parse_size(flags.bytes.empty() ? "1G" : flags.bytes, "-n/--bytes", 1, spec::kMaxTestBytes);
  }
  if (c.test.stream.bidir && c.test.streams < 2) c.test.streams = 2;  // one each way at least
}

}  // namespace tlscmp::kinds
