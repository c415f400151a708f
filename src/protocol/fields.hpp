#pragma once

// One description of a message's fields, walked both ways. A struct that
// the wire carries (a kind's result, a calibration) lists its fields once,
// in a static member template
//
//   template <typename Walk, typename Self> static void walk(Walk& w, Self& t) {
//     w.field("connections", t.connections, kMaxConnections);  // a number and its range
//     w.field("error", t.error);
//   }
//
// and FieldWriter turns it into JSON (for the wire, or for -J), FieldReader
// back, holding each field to its type and range as every message is held
// (the checks below, shared with messages.cpp). A kind's result travels as a
// KindResult: its type (the kind's name for it) and those fields; protocol/ frames
// it without knowing whose it is, and the kind reads it with read_result.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "mode.hpp"
#include "run_facts.hpp"

namespace tlscmp::protocol {

using nlohmann::json;

// The checks every field read goes through; each throws ProtocolError
// ("bad control message: 'flows' = 9 is outside 0..8").
namespace wire {
[[noreturn]] void bad(const std::string& what);
const json& field(const json& object, const char* name);
std::uint64_t get_uint(const json& object, const char* name, std::uint64_t min, std::uint64_t max);
double get_double(const json& object, const char* name, double max);
bool get_bool(const json& object, const char* name);
// Bounded, and free of control characters: strings end up in logs.
std::string get_string(const json& object, const char* name);
Role get_role(const json& object, const char* name);
// A side's run facts, as `key` in `object` (absent from older peers: none).
json facts_json(const RunFacts& facts);
RunFacts get_facts(const json& object, const char* key = "facts");
}  // namespace wire

// A kind's result on the wire: a message whose type ends in "_result"
// (bar the stream kinds' side_result), its fields as the kind's walk wrote them.
struct KindResult {
  std::string type;
  json fields = json::object();
  // The side's failure as it said it ("error"), "" where it has none.
  std::string error() const;
};

// Writes the fields a walk names into `out`, a JSON object (json for the
// wire, ordered_json for -J): a number, boolean or string as it is, an enum
// by name, an optional as null where it is none.
template <typename Json>
class FieldWriter {
 public:
  Json out = Json::object();

  template <typename T>
  void field(const char* key, const T& value, double /*most*/ = 0, double /*least*/ = 0) {
    out[key] = value_of(value);
  }
  void field(const char* key, const RunFacts& facts) {
    static_assert(std::is_same_v<Json, json>, "run facts go on the wire alone");
    out[key] = wire::facts_json(facts);
  }
  // A list of structs, each an object of its own walk's fields.
  template <typename Item>
  void list(const char* key, const std::vector<Item>& items, std::size_t /*most*/) {
    Json array = Json::array();
    for (const Item& item : items)
      array.push_back(written(item));
    out[key] = std::move(array);
  }
  // A list of structs, each an array of its walk's fields in order (compact
  // for long lists: intervals).
  template <typename Item>
  void rows(const char* key, const std::vector<Item>& items, std::size_t /*most*/) {
    Json array = Json::array();
    for (const Item& item : items) {
      Row row;
      Item::walk(row, item);
      array.push_back(std::move(row.values));
    }
    out[key] = std::move(array);
  }
  // A struct of its own, or null where there is none.
  template <typename Sub>
  void object(const char* key, const std::optional<Sub>& sub) {
    out[key] = sub ? written(*sub) : Json(nullptr);
  }
  // A field that says something only where `when` holds: null elsewhere.
  template <typename T>
  void field_if(bool when, const char* key, const T& value) {
    out[key] = when ? value_of(value) : Json(nullptr);
  }
  // A field added after the message's first release, written as any other.
  template <typename T>
  void later(const char* key, const T& value, double most, double least = 0) {
    field(key, value, most, least);
  }

  template <typename T>
  static Json written(const T& t) {
    FieldWriter w;
    T::walk(w, t);
    return std::move(w.out);
  }

 private:
  struct Row {
    Json values = Json::array();
    template <typename T>
    void field(const char*, const T& value, double = 0, double = 0) {
      values.push_back(value_of(value));
    }
  };
  template <typename T>
  static Json value_of(const T& value) {
    if constexpr (std::is_enum_v<T>) {
      return to_string(value);
    } else {
      return Json(value);
    }
  }
  template <typename T>
  static Json value_of(const std::optional<T>& value) {
    return value ? Json(*value) : Json(nullptr);
  }
};

// Reads the fields a walk names from `in`, each held to its type and range
// (a number at most `most` and at least `least`); throws ProtocolError.
// Every field must be there, bar optionals (absent or null: none), rows
// (absent: none) and objects (absent or null: none).
class FieldReader {
 public:
  explicit FieldReader(const json& in) : in_(in) {}

  template <typename T>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)void field(const char* key, T& value, double most, double least = 0) {
    value = static_cast<T>(
        wire::get_uint(in_, key, static_cast<std::uint64_t>(least), static_cast<std::uint64_t>(most)));
  }
  void field(const char* key, double& value, double most, double /*least*/ = 0) {
    value = wire::get_double(in_, key, most);
  }
  void field(const char* key, bool& value) { value = wire::get_bool(in_, key); }
  void field(const char* key, std::string& value) { value = wire::get_string(in_, key); }
  void field(const char* key, Role& value) { value = wire::get_role(in_, key); }
  void field(const char* key, RunFacts& facts) { facts = wire::get_facts(in_, key); }
  template <typename T>
  void field(const char* key, std::optional<T>& value, double most, double least = 0) {
    value.reset();
    if (!in_.contains(key) || in_[key].is_null()) return;
    T v{};
    field(key, v, most, least);
    value = v;
  }
  template <typename Item>
  void list(const char* key, std::vector<Item>& items, std::size_t most) {
    const json& array = wire::field(in_, key);
    check_list(key, array, most);
    items.clear();
    for (const json& item : array) {
      if (!item.is_object()) wire::bad(std::string("an item of '") + key + "' is not an object");
      items.push_back(read<Item>(item));
    }
  }
  template <typename Item>
  void rows(const char* key, std::vector<Item>& items, std::size_t most) {
    items.clear();
    if (!in_.contains(key)) return;
    const json& array = in_[key];
    check_list(key, array, most);
    for (const json& values : array) {
      Row row{values, key};
      Item item;
      Item::walk(row, item);
      if (row.next != values.size()) row.malformed();
      items.push_back(item);
    }
  }
  template <typename Sub>
  void object(const char* key, std::optional<Sub>& sub) {
    sub.reset();
    if (!in_.contains(key) || in_[key].is_null()) return;
    if (!in_[key].is_object()) wire::bad(std::string("'") + key + "' is not an object");
    sub = read<Sub>(in_[key]);
  }
  template <typename T>
  void field_if(bool /*when*/, const char* key, T& value) {
    if (in_.contains(key) && !in_[key].is_null()) field(key, value);
  }
  // A field added after the message's first release: absent (an older
  // peer's) leaves it as it was.
  template <typename T>
  void later(const char* key, T& value, double most, double least = 0) {
    if (in_.contains(key)) field(key, value, most, least);
  }

  template <typename T>
  static T read(const json& in) {
    FieldReader r(in);
    T t{};
    T::walk(r, t);
    return t;
  }

 private:
  // One row's values, in the walk's order: unsigned integers and numbers.
  struct Row {
    const json& values;
    const char* key;
    std::size_t next = 0;
    [[noreturn]] void malformed() const;
    template <typename T>
    void field(const char*, T& value, double most, double least = 0) {
      if (!values.is_array() || next >= values.size()) malformed();
      const json wrapped{{key, values[next++]}};
      FieldReader(wrapped).field(key, value, most, least);
    }
  };
  static void check_list(const char* key, const json& array, std::size_t most);

  const json& in_;
};

// The kind result `t` as it goes on the wire, its type T::kWireType.
template <typename T>
KindResult kind_result(const T& t) {
  return {T::kWireType, FieldWriter<json>::written(t)};
}

// A kind result read back as T: of T's type, each field in range, and
// passing T::check(t) where T has one (it returns why not, or "").
template <typename T>
T read_result(const KindResult& r) {
  if (r.type != T::kWireType) wire::bad("'" + r.type + "' instead of '" + T::kWireType + "'");
  T t = FieldReader::read<T>(r.fields);
  if constexpr (requires { T::check(t); }) {
    if (const std::string problem = T::check(t); !problem.empty()) wire::bad(problem);
  }
  return t;
}

// Whether T is a kind result (it names its wire type).
template <typename T>
concept KindResultType = requires {
  T::kWireType;
};

}  // namespace tlscmp::protocol
