#include "partita/core/huge_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "partita/core/error.h"

namespace partita {

HugeBuffer::HugeBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  PARTITA_CHECK(p != MAP_FAILED, IoError, "cannot allocate {} bytes: {}", bytes,
                std::strerror(errno));
  ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
  data_ = p;
}

HugeBuffer HugeBuffer::copy_of(const void* data, size_t bytes) {
  HugeBuffer buffer(bytes);
  if (bytes > 0) std::memcpy(buffer.data_, data, bytes);
  return buffer;
}

HugeBuffer::~HugeBuffer() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

HugeBuffer::HugeBuffer(HugeBuffer&& other) noexcept { *this = std::move(other); }

HugeBuffer& HugeBuffer::operator=(HugeBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace partita
