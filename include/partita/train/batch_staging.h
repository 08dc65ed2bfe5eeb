#pragma once
// Moving a batch to the model's device: every tensor a step feeds the model (input features,
// block tensors, labels, pair indices, embedding rows) goes through one BatchStaging (the
// model adapters', train/model_adapter.h; inference's; the Python loader's), so that the CPU
// and a GPU run the same code and differ only here.
//
// CPU (device cpu): nothing is copied and no stream is touched: to_device returns its argument
// and ready() does nothing, so a CPU run computes on exactly the tensors it did before.
//
// Another device (CUDA): to_device(host) copies `host` into pinned host memory (only when
// torch::cuda::is_available(); the loader's buffers are pageable) and issues the copy to the
// device non_blocking on a side stream of this BatchStaging (one stream from the device's
// global pool, device-generic c10 APIs: DeviceGuardImplInterface, c10::Event, StreamGuard).
// Ordering contract:
//   - Copies issued by to_device() run on the side stream in issue order; nothing on the
//     compute stream (the thread's current stream on the device) may read their results until
//     ready() has been called: ready() records one event on the side stream after every copy
//     issued since the previous ready() and makes the compute stream wait for it (GPU-side;
//     the host does not block). Call it once per group, after the group's last to_device.
//   - Each device tensor is marked used by the compute stream (record_stream), so the caching
//     allocator does not hand its memory to the side stream again before the compute stream's
//     work on it has finished; the pinned host copy is released to torch's caching host
//     allocator, which keeps it until the copy's event completed.
//   - What overlaps: the copies of batch k run on the side stream while the compute stream
//     still runs the work queued before them: the host queues batch k's copies as soon as the
//     batch is formed, without waiting for the GPU. A training step reads nothing back on the
//     host (trainer.h: losses and counts stay on the device until a progress record), so with
//     one rank the host runs ahead of the device: it forms batch k+1 and queues its copies
//     while the device still computes step k, and they overlap it. With several ranks the
//     gradient allreduce through host memory waits for step k's backward, so batch k+1's
//     copies overlap step k's optimizer step and each other (features, blocks and labels are
//     in flight together). Each group has its own event.
//   - Host buffers: the feature rows come from the loader's buffer, which is pinned memory
//     when the pipeline gathers into feature_memory() (no host copy here), else copied into
//     pinned memory first.
// Not thread-safe: one BatchStaging per model, used by the thread that trains.
#include <c10/core/Stream.h>
#include <torch/types.h>

#include <memory>
#include <memory_resource>
#include <optional>
#include <vector>

#include "partita/core/npy.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/nn/block_tensors.h"
#include "partita/store/dist_graph.h"

namespace partita::train {

class DeviceFeatureCache;  // device_feature_cache.h
class HostTensorMemory;    // host_tensor_memory.h
struct DeviceSample;       // device_sampler.h

class BatchStaging {
 public:
  explicit BatchStaging(torch::Device device);
  ~BatchStaging();

  const torch::Device& device() const { return device_; }
  bool on_cpu() const { return device_.is_cpu(); }

  // `host` (a CPU tensor) on the device; see the contract above. CPU: `host` itself.
  torch::Tensor to_device(const torch::Tensor& host);
  // Every tensor of `host` (built on the CPU by nn::to_block_tensors) on the device.
  nn::BlockTensors to_device(nn::BlockTensors host);
  std::vector<nn::BlockTensors> to_device(std::vector<nn::BlockTensors> host);
  // The compute stream waits for every copy issued since the last ready(). CPU: nothing.
  void ready();

  // The memory the batch pipelines that feed this staging should gather feature rows into
  // (loader::BatchPipelineOptions::feature_memory): pinned host memory when the copies are
  // pinned (CUDA), so that features() copies a batch's rows to the device straight from the
  // loader's buffer; null (the default resource) otherwise. Lives as long as this staging.
  std::pmr::memory_resource* feature_memory();

  // The blocks of `batch` as tensors on the device (with the in-degrees when the batch
  // carries them). Where nn's ops take the device-generic path (nn/kernel_path.h: a GPU, or
  // the CPU under KernelPathScope(kGeneric)), an untyped batch's index arrays are packed
  // into one host buffer, copied in one transfer on the side stream, and the other fields
  // derived on the device (nn::pack_blocks, unpack_blocks): ready() is called here, before
  // the derivation. Otherwise the CPU-built tensors are moved (call ready() before use).
  // Blocks sampled on the device (train/device_sampling.h) are used as they are, nothing
  // copied; they must be on this staging's device (Error otherwise).
  std::vector<nn::BlockTensors> blocks(const loader::Batch& batch);

  // The model input of a batch of a homogeneous graph, on the device. Features stay in their
  // stored type until here (and across the copy): float32 (no copy on the CPU), or 16-bit
  // rows widened to float32, except bfloat16 rows for a bf16 model, which take them as they
  // are. Normalizing (normalize_features) works in float32; a row it cannot normalize is an
  // Error naming the node. Call ready() before use.
  // With a device feature cache (device_feature_cache.h; null: none), the batch holds only
  // its fetched rows: they are copied, then assembled with the cached rows on the device,
  // before widening and normalizing, so the result equals the uncached one bit for bit.
  torch::Tensor features(loader::Batch& batch, const store::DistGraph& graph, bool normalize,
                         bool bf16_model, const DeviceFeatureCache* cache = nullptr);

  // Sets every block's edge_feat from the batch's edge features (loader::Batch::
  // edge_features: the graph's edge_feat rows of each block's edges, in the stored dtype):
  // float32 [block edges, edge_feat_dim] on the device, one more copy (on the side stream,
  // as the features; ready() is called here, then 16-bit rows are widened on the compute
  // stream), each block's rows a slice of it. Throws Error when the batch holds another
  // number of rows than its blocks have edges. `blocks`: blocks(batch), sampled on the host
  // or on the device.
  void edge_features(const loader::Batch& batch, const store::DistGraph& graph,
                     std::vector<nn::BlockTensors>& blocks);

 private:
  std::vector<nn::BlockTensors> sampled_blocks(const DeviceSample& sampled);

  torch::Device device_;
  bool pin_ = false;                 // torch::cuda::is_available(): copy via pinned memory
  std::optional<c10::Stream> side_;  // the copies' stream (not on the CPU)
  bool pending_ = false;             // copies issued since the last ready()
  std::unique_ptr<HostTensorMemory> feature_memory_;  // pinned, when pin_
};

}  // namespace partita::train
