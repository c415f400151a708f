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
  const std::optional<TestKind> owner = spec::kind_of(field->part);
  if (owner) refuse_misplaced(field->flag, *owner, test.kind);
}

void refuse_given(const CLI::Option& option, TestKind owner, const spec::Test& test) {
  if (option.count() == 0) return;
  std::optional<spec::Field> field;  // the field the flag sets, by any of its names
  for (const std::string& name : option.get_snames()) {
    if (!field) field = spec::field_of_flag("-" + name);
  }
  for (const std::string& name : option.get_lnames()) {
    if (!field) field = spec::field_of_flag("--" + name);
  }
  if (field && !spec::reads(test.kind, field->part))
    refuse_misplaced(field->flag, spec::kind_of(field->part).value_or(owner), test.kind);
}

}  // namespace tlscmp::kinds
