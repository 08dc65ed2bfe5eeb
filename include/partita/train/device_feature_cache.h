#pragma once
// Device feature cache (`train --gpu-cache-ratio R`, issue 24): the feature rows of the
// hottest input nodes kept in the memory of the model's device, so that a batch's hit costs
// no host gather, no remote request and no host-to-device copy. GraphLearn-for-PyTorch's
// GPU feature cache, on our pre-sampling.
//
// Which rows: loader::warm_device_rows (loader/cache_warmup.h) pre-samples the first
// cache_presample steps of an epoch no training step uses and keeps the input nodes that
// most of them need, local or remote, a remote one counted twice (loader::
// hottest_input_nodes says why both, loader/cache_warmup.cc why twice), at most R x the
// nodes the rank owns; their rows are fetched once, through the normal fetch path,
// and copied here in the partition's stored dtype (float32, float16 or bfloat16), which
// keeps the device memory at the bytes on disk.
//
// How a batch uses it: the batch pipeline gets resident() (BatchPipelineOptions::resident,
// through ModelAdapter::resident_rows), so it fetches only the other rows (Batch::features,
// Batch::resident). assemble() then builds the batch's input matrix [input nodes, F] on the
// device: the hits by index_select from the cached rows, the fetched rows copied over and
// both scattered into place with index_copy_. Every value is copied, never computed, so the
// matrix equals, bit for bit, the stored-dtype matrix of the uncached path; the caller then
// widens it and normalizes it as it always does (gnn_adapter.cc's features_tensor), and
// losses do not change at all.
//
// On the CPU device (CPU-only torch, and CI) the rows live in host memory and assemble()
// runs the same code: the skip, the gather and the scatter, with CPU tensors.
//
// Ownership: the Trainer owns the cache and hands the model a pointer (ModelAdapter::
// set_device_cache) while it lives. Immutable once built; assemble() may be called from
// any thread (it reads the rows, and allocates its result).
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/npy.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/store/resident_rows.h"

namespace partita::train {

class DeviceFeatureCache {
 public:
  // `rows`: [resident.size(), feat_dim] of `dtype` bytes (float32, float16 or bfloat16) in
  // slot order (loader::DeviceRowsWarmup). Copies them to `device`. Throws Error on a size
  // mismatch; torch's errors (e.g. out of device memory) pass through.
  DeviceFeatureCache(store::ResidentRows resident, const std::vector<uint8_t>& rows,
                     int64_t feat_dim, DType dtype, torch::Device device);

  // The ids held, for BatchPipelineOptions::resident.
  const store::ResidentRows& resident() const { return resident_; }
  torch::Device device() const { return rows_.device(); }
  int64_t rows() const { return resident_.size(); }
  // Device memory of the rows.
  int64_t bytes() const { return static_cast<int64_t>(rows_.nbytes()); }

  // The input feature matrix of `batch` [input nodes, feat_dim] in the stored dtype, on
  // device(): row i is input node i's. `fetched`: the batch's fetched rows as a tensor
  // [fetched_feature_rows(batch), feat_dim] of the stored dtype, on any device (moved here
  // if elsewhere; its rows are those of Batch::features). A batch that skipped nothing gives
  // `fetched` itself, moved. Throws Error when the batch was split against another resident
  // set or `fetched` does not fit it.
  torch::Tensor assemble(const loader::Batch& batch, const torch::Tensor& fetched) const;

  // The two halves of assemble for a caller that copies the indices itself (batch staging,
  // with the fetched rows on its side stream): placement(batch) is the batch's index array,
  // int64 on the CPU: the hits' slots, their positions, then the fetched rows' positions
  // ([input nodes + hits]); the slots alone when every input is cached, nothing when none
  // is. assemble(batch, fetched, placement) takes it on any device.
  torch::Tensor placement(const loader::Batch& batch) const;
  torch::Tensor assemble(const loader::Batch& batch, const torch::Tensor& fetched,
                         const torch::Tensor& placement) const;

 private:
  store::ResidentRows resident_;
  torch::Tensor rows_;  // [rows(), feat_dim] on the device, stored dtype
};

// The call site's form: `fetched` unchanged when the batch skipped nothing and `cache` is
// null, else cache->assemble(batch, fetched). Throws Error on a batch that skipped rows
// with no cache to fill them.
torch::Tensor with_cached_rows(const DeviceFeatureCache* cache, const loader::Batch& batch,
                               torch::Tensor fetched);

}  // namespace partita::train
