#pragma once

// What each kind's client flags (its flags.cpp) share: CLI11, the parsers of
// sizes and rates, and the refusal of a flag given to a test of another kind.
// cli/ adds the flags every kind shares and each kind's own through the table.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "error.hpp"
#include "kinds/kind.hpp"
#include "spec/size.hpp"

namespace tlscmp::kinds {

// A size option (64K, 1.5M, 1G: powers of 1024) that CLI11 parses with
// parse_size straight into `target`; a bad value is refused naming `flag`.
template <typename T>
CLI::Option* add_size(CLI::App* cmd, const std::string& names, T& target, const char* flag, std::uint64_t min,
                      std::uint64_t max, const std::string& what) {
  return cmd
      ->add_option_function<std::string>(
          names,
          [&target, flag, min, max](const std::string& text) {
            target = static_cast<T>(spec::parse_size(text, flag, min, max));
          },
          what)
      ->type_name("SIZE");
}

// A field of `test` that its kind does not read, set by a flag: refused in
// one line that says what the flag is for and what the test's kind takes
// ("-b is for datagram modes (--mode udp, dtls, both-udp); --rr takes ...").
void refuse_unread(const spec::Test& test);

// A kind's own flag, given to a test whose kind does not read the field it
// sets, even at its default value (--close reset without --crr): the same
// line. Flags that ask for a kind, and set no field, pass.
void refuse_given(const CLI::Option& option, const spec::Test& test);

}  // namespace tlscmp::kinds
