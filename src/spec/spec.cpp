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

const char* unread_flag(const Test& test) {
  const Test defaults;
  const char* flag = nullptr;
  for_each_field_of(
      [&](const Field& f, const auto& value, const auto& default_value) {
        if (flag == nullptr && !reads(test.kind, f.part) && value != default_value) flag = f.flag;
      },
      test, defaults);
  return flag;
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

}  // namespace tlscmp::spec
