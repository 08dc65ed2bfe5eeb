#pragma once
// Private to partition/: validating accessors over partita.json's untrusted JSON, and the
// "hetero" object of a typed partition's partita.json (format version 2).
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "partita/core/error.h"
#include "partita/partition/format.h"

namespace partita::partition {

using Json = nlohmann::ordered_json;

// Validating accessors over untrusted JSON. Every failure names the file and the key path.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  // "<file>: key '<key>'", for messages built elsewhere.
  std::string key_name(const std::string& key) const {
    return fmt::format("{}: key '{}'", path_, key);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(fmt::format("{}: {}", path_, what));
  }
  // fail(fmt::format(format, args...)) when `failed`. The arguments are evaluated either
  // way: only cheap ones, valid whether or not it failed.
  template <class... Args>
  void fail_if(bool failed, fmt::format_string<Args...> format, Args&&... args) const {
    if (failed) fail(fmt::format(format, std::forward<Args>(args)...));
  }
  // The value at `key`; with `is`, only if (v.*is)(), else "key '<where><key>' must be
  // <what>, found <type>".
  const Json& get(const Json& obj, const std::string& key, const std::string& where,
                  bool (Json::*is)() const noexcept = nullptr, const char* what = "") const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(fmt::format("missing key '{}{}'", where, key));
    fail_if(is != nullptr && !((*it).*is)(), "key '{}{}' must be {}, found {}", where, key, what,
            it->type_name());
    return *it;
  }
  int64_t integer(const Json& obj, const std::string& key, const std::string& where = "",
                  int64_t min = 0) const {
    const Json& v = get(obj, key, where, &Json::is_number_integer, "an integer");
    fail_if(v.is_number_unsigned() &&
                v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
            "key '{}{}' = {} is too large", where, key, v.dump());
    const int64_t x = v.get<int64_t>();
    fail_if(x < min, "key '{}{}' = {} must be >= {}", where, key, x, min);
    return x;
  }
  uint64_t unsigned_integer(const Json& obj, const std::string& key,
                            const std::string& where = "") const {
    const Json& v = get(obj, key, where);
    fail_if(!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0),
            "key '{}{}' must be a non-negative integer, found {}", where, key, v.dump());
    return v.get<uint64_t>();
  }
  double number(const Json& obj, const std::string& key, const std::string& where = "") const {
    return get(obj, key, where, &Json::is_number, "a number").get<double>();
  }
  bool boolean(const Json& obj, const std::string& key, const std::string& where = "") const {
    return get(obj, key, where, &Json::is_boolean, "true or false").get<bool>();
  }
  std::string string(const Json& obj, const std::string& key, const std::string& where = "") const {
    return get(obj, key, where, &Json::is_string, "a string").get<std::string>();
  }
  const Json& typed(const Json& obj, const std::string& key, bool array,
                    const std::string& where = "") const {
    return get(obj, key, where, array ? &Json::is_array : &Json::is_object,
               array ? "an array" : "an object");
  }

 private:
  const std::string& path_;
};

// The "hetero" object: node_types, relations (types by name), target_type (a name),
// reverse_relations, type_starts.
Json typed_meta_json(const TypedMeta& typed);
// Parses it (types only: names, indices and counts are checked by check_typed_meta).
TypedMeta parse_typed_meta(const Reader& rd, const Json& hetero);
// Type names valid and unique, relation types and target in range, counts summing to
// num_nodes and num_edges, type_starts consistent with ranges, the per-part type and relation
// figures of the summary equal to the starts and summing to the relation totals.
void check_typed_meta(const Reader& rd, const PartitionMeta& meta);

}  // namespace partita::partition
