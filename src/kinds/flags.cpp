#include "kinds/flags.hpp"

#include <fmt/format.h>

namespace tlscmp::kinds {

namespace {

// "-b is for datagram modes (--mode udp, dtls, both-udp); --rr takes ...".
[[noreturn]] void refuse_misplaced(const char* flag, TestKind owner, TestKind kind) {
  const KindSlice& taker = slice_of(kind);
  throw UsageError(fmt::format("{} is for {}{}", flag, slice_of(owner).flags_are_for,
                               taker.takes != nullptr ? fmt::format("; {}", taker.takes) : ""));
}

}  // namespace

void refuse_unread(const spec::Test& test) {
  const std::optional<spec::Field> field = spec::unread_field(test);
  if (!field) return;
  refuse_misplaced(field->flag, *spec::kind_of(field->part), test.kind);  // never the shared part
}

void refuse_given(const CLI::Option& option, const spec::Test& test) {
  if (option.count() == 0) return;
  std::optional<spec::Field> field;  // the field the flag sets, by any of its names
  for (const std::string& name : option.get_snames()) {
    if (!field) field = spec::field_of_flag("-" + name);
  }
  for (const std::string& name : option.get_lnames()) {
    if (!field) field = spec::field_of_flag("--" + name);
  }
  // A field a kind does not read is of another kind's part: the shared part is read by every kind.
  if (field && !spec::reads(test.kind, field->part))
    refuse_misplaced(field->flag, *spec::kind_of(field->part), test.kind);
}

}  // namespace tlscmp::kinds
