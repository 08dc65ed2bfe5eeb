#pragma once
// An anonymous memory region advised for transparent huge pages (2 MiB), for arrays that
// are read at random (graph structure, feature rows): huge pages cut the TLB misses that
// dominate such reads on 4 KiB pages. Move-only; unmaps on destruction. Where the kernel
// does not grant huge pages the region is ordinary memory and behaves the same.
#include <cstddef>

namespace partita {

class HugeBuffer {
 public:
  HugeBuffer() = default;
  // Allocates `bytes` (zero-filled on first touch). Throws IoError when mmap fails.
  explicit HugeBuffer(size_t bytes);
  // A copy of [data, data + bytes), made with the huge-page advice in place.
  static HugeBuffer copy_of(const void* data, size_t bytes);
  ~HugeBuffer();
  HugeBuffer(HugeBuffer&& other) noexcept;
  HugeBuffer& operator=(HugeBuffer&& other) noexcept;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace partita
