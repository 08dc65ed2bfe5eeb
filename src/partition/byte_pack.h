#pragma once
// Private to partition/: packing plain values and arrays into the byte buffers that
// DistComm moves, and reading them back. Values keep the host's byte order (every rank of
// one job runs the same binary on the same architecture). Every array is padded to 8 bytes,
// so 8-byte values stay aligned in buffers that start aligned.
#include <cstdint>
#include <cstring>
#include <vector>

#include "partita/core/error.h"

namespace partita::partition {

class BytePacker {
 public:
  explicit BytePacker(std::vector<uint8_t>* out) : out_(out) {}
  void put(int64_t value) { put_bytes(&value, sizeof value); }
  template <class T>
  void put_array(const T* values, int64_t count) {
    put_bytes(values, static_cast<size_t>(count) * sizeof(T));
  }
  // Room for `bytes` bytes (padded) at the end; returns where to write them.
  uint8_t* reserve(size_t bytes) {
    const size_t at = out_->size();
    out_->resize(at + padded(bytes), 0);
    return out_->data() + at;
  }
  void put_bytes(const void* data, size_t bytes) {
    if (bytes > 0) std::memcpy(reserve(bytes), data, bytes);
  }
  static size_t padded(size_t bytes) { return (bytes + 7) / 8 * 8; }

 private:
  std::vector<uint8_t>* out_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& in) : in_(in) {}
  bool done() const { return at_ == in_.size(); }
  int64_t get() {
    int64_t v = 0;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  // The next `count` values of T, in place (valid while the buffer lives; copy them out
  // with memcpy when T's alignment matters).
  const uint8_t* take(size_t bytes) {
    const size_t step = BytePacker::padded(bytes);
    PARTITA_CHECK(at_ + step <= in_.size(), Error,
                  "internal: a message of {} bytes read past its end", in_.size());
    const uint8_t* p = in_.data() + at_;
    at_ += step;
    return p;
  }

 private:
  const std::vector<uint8_t>& in_;
  size_t at_ = 0;
};

}  // namespace partita::partition
