#pragma once
// Host memory for the batch pipeline's feature rows, as torch tensors (private to train/):
// with `pinned`, page-locked memory from torch's caching host allocator, so that the loader
// threads gather a batch's rows straight into the buffer a copy to the GPU reads (no second
// host copy into pinned memory on the training thread), and the allocator, which sees the
// copy read its block, keeps the block from reuse until the copy is done, whenever the batch
// frees it. A std::pmr::memory_resource (loader::BatchPipelineOptions::feature_memory):
// allocate and deallocate may be called from any thread.
#include <torch/types.h>

#include <cstddef>
#include <memory_resource>
#include <mutex>
#include <unordered_map>

namespace partita::train {

class HostTensorMemory final : public std::pmr::memory_resource {
 public:
  // pinned: page-locked (needs CUDA); else plain host memory (what the tests use).
  explicit HostTensorMemory(bool pinned) : pinned_(pinned) {}

  // The uint8 tensor of the block that starts at `data`, its first `bytes` bytes (a view
  // sharing its storage); undefined when no live block of this resource starts there.
  torch::Tensor tensor_of(const void* data, int64_t bytes) const;
  // Blocks allocated and not freed.
  size_t live_blocks() const;

 private:
  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void* p, size_t bytes, size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  bool pinned_;
  mutable std::mutex mu_;
  std::unordered_map<const void*, torch::Tensor> blocks_;
};

}  // namespace partita::train
