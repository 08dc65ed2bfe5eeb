#pragma once
// Private to partition/: validating accessors over partita.json's untrusted JSON.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "partita/core/error.h"

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
  const Json& get(const Json& obj, const std::string& key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(fmt::format("missing key '{}{}'", where, key));
    return *it;
  }
  int64_t integer(const Json& obj, const std::string& key, const std::string& where = "",
                  int64_t min = 0) const {
    const Json& v = get(obj, key, where);
    if (!v.is_number_integer())
      fail(fmt::format("key '{}{}' must be an integer, found {}", where, key, v.type_name()));
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(fmt::format("key '{}{}' = {} is too large", where, key, v.dump()));
    const int64_t x = v.get<int64_t>();
    if (x < min) fail(fmt::format("key '{}{}' = {} must be >= {}", where, key, x, min));
    return x;
  }
  uint64_t unsigned_integer(const Json& obj, const std::string& key,
                            const std::string& where = "") const {
    const Json& v = get(obj, key, where);
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0))
      fail(
          fmt::format("key '{}{}' must be a non-negative integer, found {}", where, key, v.dump()));
    return v.get<uint64_t>();
  }
  double number(const Json& obj, const std::string& key, const std::string& where = "") const {
    const Json& v = get(obj, key, where);
    if (!v.is_number())
      fail(fmt::format("key '{}{}' must be a number, found {}", where, key, v.type_name()));
    return v.get<double>();
  }
  bool boolean(const Json& obj, const std::string& key, const std::string& where = "") const {
    const Json& v = get(obj, key, where);
    if (!v.is_boolean())
      fail(fmt::format("key '{}{}' must be true or false, found {}", where, key, v.type_name()));
    return v.get<bool>();
  }
  std::string string(const Json& obj, const std::string& key, const std::string& where = "") const {
    const Json& v = get(obj, key, where);
    if (!v.is_string())
      fail(fmt::format("key '{}{}' must be a string, found {}", where, key, v.type_name()));
    return v.get<std::string>();
  }
  const Json& typed(const Json& obj, const std::string& key, bool array,
                    const std::string& where = "") const {
    const Json& v = get(obj, key, where);
    if (array ? !v.is_array() : !v.is_object())
      fail(fmt::format("key '{}{}' must be an {}, found {}", where, key, array ? "array" : "object",
                       v.type_name()));
    return v;
  }

 private:
  const std::string& path_;
};

}  // namespace partita::partition
