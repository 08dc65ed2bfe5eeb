#pragma once
// A non-owning view of a contiguous array (C++17 stand-in for std::span).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace partita {

template <class T>
class ArrayView {
 public:
  ArrayView() = default;
  ArrayView(T* data, int64_t size) : data_(data), size_(size) {}
  template <class U>
  ArrayView(const std::vector<U>& v) : data_(v.data()), size_(static_cast<int64_t>(v.size())) {}
  template <class U>
  ArrayView(std::vector<U>& v) : data_(v.data()), size_(static_cast<int64_t>(v.size())) {}

  T* data() const { return data_; }
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](int64_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }
  ArrayView subview(int64_t offset, int64_t count) const { return {data_ + offset, count}; }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace partita
