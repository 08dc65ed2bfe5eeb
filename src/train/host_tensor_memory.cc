// Host memory as torch tensors: see host_tensor_memory.h.
#include "host_tensor_memory.h"

#include <algorithm>
#include <cstdint>

#include "partita/core/error.h"

namespace partita::train {

torch::Tensor HostTensorMemory::tensor_of(const void* data, int64_t bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(data);
  if (it == blocks_.end() || bytes > it->second.numel()) return {};
  return it->second.narrow(0, 0, bytes);
}

size_t HostTensorMemory::live_blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocks_.size();
}

void* HostTensorMemory::do_allocate(size_t bytes, size_t alignment) {
  const torch::Tensor block =
      torch::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))},
                   torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(pinned_));
  void* p = block.data_ptr();
  PARTITA_CHECK(reinterpret_cast<uintptr_t>(p) % alignment == 0, Error,
                "internal: host tensor memory: a block not aligned to {} bytes", alignment);
  std::lock_guard<std::mutex> lock(mu_);
  blocks_.emplace(p, block);
  return p;
}

void HostTensorMemory::do_deallocate(void* p, size_t /*bytes*/, size_t /*alignment*/) {
  std::lock_guard<std::mutex> lock(mu_);
  blocks_.erase(p);
}

}  // namespace partita::train
