#include "spec/spec.hpp"

namespace tlscmp::spec {
namespace {

template <typename Enum, std::size_t N>
bool parse_name(const std::string& text, const std::array<Enum, N>& values, Enum& value) {
  for (Enum v : values) {
    if (text == to_string(v)) {
      value = v;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string result_key(const Field& field) {
  std::string key = field.key;
  if (field.milliseconds && key.ends_with("_ms")) key.replace(key.size() - 3, 3, "_s");
  return key;
}

std::optional<Field> unread_field(const Test& test) {
  const Test defaults;
  std::optional<Field> unread;
  for_each_field_of(
      [&](const Field& f, const auto& value, const auto& default_value) {
        if (!unread && !reads(test.kind, f.part) && value != default_value) unread = f;
      },
      test, defaults);
  return unread;
}

const char* unread_flag(const Test& test) {
  const std::optional<Field> f = unread_field(test);
  return f ? f->flag : nullptr;
}

std::optional<Field> field_of_flag(const std::string& flag) {
  const Test any;
  std::optional<Field> found;
  for_each_field(any, [&](const Field& f, const auto&) {
    if (!found && flag == f.flag) found = f;
  });
  return found;
}

std::optional<TestKind> kind_of(Part part) {
  // Each kind's part follows the shared one in TestKind's order (spec.hpp).
  if (part == Part::shared) return std::nullopt;
  return kAllKinds.at(static_cast<std::size_t>(part) - 1);
}

bool parse(const std::string& text, Direction& value) {
  return parse_name(text, std::array{Direction::client_to_server, Direction::server_to_client}, value);
}

bool parse(const std::string& text, framing::Framing& value) {
  return parse_name(text, std::array{framing::Framing::raw, framing::Framing::len4}, value);
}

bool parse(const std::string& text, Close& value) {
  return parse_name(text, std::array{Close::reset, Close::fin}, value);
}

bool parse(const std::string& text, FlowWork& value) {
  return parse_name(text, std::array{FlowWork::stream, FlowWork::rr, FlowWork::crr, FlowWork::http}, value);
}

}  // namespace tlscmp::spec
