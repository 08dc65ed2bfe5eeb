#pragma once
// Byte encoding of request and reply payloads, and a router that lets several services
// share one RpcEndpoint. Header-only.
//
// WireWriter appends little-endian PODs to a byte vector. WireReader reads them back and
// checks every length against the buffer: a short or malformed message throws CommError
// naming `what`, never reads out of bounds.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "partita/comm/errors.h"
#include "partita/comm/request_kinds.h"
#include "partita/comm/rpc.h"
#include "partita/core/array_view.h"

namespace partita {

class WireWriter {
 public:
  explicit WireWriter(size_t reserve = 0) { bytes_.reserve(reserve); }
  size_t size() const { return bytes_.size(); }  // bytes written so far
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof(T));
  }
  // Count followed by the values.
  template <class T>
  void put_array(ArrayView<const T> values) {
    put<uint64_t>(static_cast<uint64_t>(values.size()));
    append(values.data(), static_cast<size_t>(values.size()) * sizeof(T));
  }
  // Room for `count` values of T, to be filled in place (valid until the next put).
  template <class T>
  T* put_uninitialized(int64_t count) {
    put<uint64_t>(static_cast<uint64_t>(count));
    const size_t at = bytes_.size();
    bytes_.resize(at + static_cast<size_t>(count) * sizeof(T));
    return reinterpret_cast<T*>(bytes_.data() + at);
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  void append(const void* data, size_t n) {
    const size_t at = bytes_.size();
    bytes_.resize(at + n);
    if (n > 0) std::memcpy(bytes_.data() + at, data, n);
  }
  std::vector<uint8_t> bytes_;
};

class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size, std::string what)
      : p_(data), end_(data + size), what_(std::move(what)) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T value;
    std::memcpy(&value, p_, sizeof(T));
    p_ += sizeof(T);
    return value;
  }
  // A counted array, viewed in place. The buffer must be suitably aligned for T; payloads
  // built with WireWriter from 8-byte fields keep 8-byte alignment of vector storage.
  template <class T>
  ArrayView<const T> get_array() {
    const uint64_t count = get<uint64_t>();
    if (count > static_cast<uint64_t>(end_ - p_) / sizeof(T)) fail("array longer than the message");
    ArrayView<const T> view(reinterpret_cast<const T*>(p_), static_cast<int64_t>(count));
    p_ += count * sizeof(T);
    return view;
  }
  void expect_end() const {
    if (p_ != end_) fail("unexpected bytes at the end of the message");
  }

 private:
  void need(size_t n) const {
    if (static_cast<size_t>(end_ - p_) < n) fail("message too short");
  }
  [[noreturn]] void fail(const char* problem) const { throw CommError(what_ + ": " + problem); }
  const uint8_t* p_;
  const uint8_t* end_;
  std::string what_;
};

// Routes requests by their first 8 bytes (a kind code written with put<uint64_t>) to the
// handler registered for that kind. Every code comes from the registry of request kinds
// (comm/request_kinds.h). Register every route before handing handler() to an RpcEndpoint:
// a request of an unknown kind is answered with a CommError.
class RpcRouter {
 public:
  using Route = std::function<std::vector<uint8_t>(int source, WireReader& request)>;
  // Registers `route` for `kind` under `name` (what registers it, for errors; by default
  // the registry entry's name). Throws Error when `kind` is in no registry entry, or has a
  // route already (naming both registrants): two services would share one code, and the
  // one registered first would never be asked.
  void add(uint64_t kind, std::string name, Route route) {
    const RequestKindEntry* entry = find_request_kind(kind);
    if (entry == nullptr)
      throw Error("internal: request kind " + hex(kind) + " ('" + name +
                  "') is in no entry of comm/request_kinds.h");
    auto [it, inserted] = routes_.try_emplace(kind);
    if (!inserted)
      throw Error("internal: request kind " + hex(kind) + " of service '" + entry->name +
                  "' is registered twice: by '" + it->second.name + "' and by '" + name + "'");
    it->second = {std::move(name), std::move(route)};
  }
  void add(uint64_t kind, Route route) {
    const RequestKindEntry* entry = find_request_kind(kind);
    add(kind, entry != nullptr ? entry->name : "unregistered", std::move(route));
  }
  RpcHandler handler() const {
    std::unordered_map<uint64_t, Route> routes;
    for (const auto& [kind, named] : routes_) routes.emplace(kind, named.route);
    return [routes = std::move(routes)](int source, const uint8_t* data, size_t size) {
      WireReader reader(data, size, "request from rank " + std::to_string(source));
      const uint64_t kind = reader.get<uint64_t>();
      auto it = routes.find(kind);
      if (it == routes.end())
        throw CommError("request from rank " + std::to_string(source) + ": unknown kind " +
                        hex(kind));
      return it->second(source, reader);
    };
  }

 private:
  struct NamedRoute {
    std::string name;
    Route route;
  };
  static std::string hex(uint64_t kind) {
    static const char kDigits[] = "0123456789abcdef";
    std::string out;
    do {
      out.insert(out.begin(), kDigits[kind & 15]);
      kind >>= 4;
    } while (kind != 0);
    return "0x" + out;
  }
  std::unordered_map<uint64_t, NamedRoute> routes_;
};

}  // namespace partita
