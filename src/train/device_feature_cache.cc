// Device feature cache: see partita/train/device_feature_cache.h.
#include "partita/train/device_feature_cache.h"

#include <algorithm>
#include <utility>

#include "feature_tensors.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/train/model_adapter.h"

namespace partita::train {

DeviceFeatureCache::DeviceFeatureCache(store::ResidentRows resident,
                                       const std::vector<uint8_t>& rows, int64_t feat_dim,
                                       DType dtype, torch::Device device)
    : resident_(std::move(resident)) {
  const size_t row_bytes = static_cast<size_t>(feat_dim) * dtype_size(dtype);
  PARTITA_CHECK(feat_dim >= 0 && rows.size() == static_cast<size_t>(resident_.size()) * row_bytes,
                Error, "device feature cache: {} bytes for {} rows of {} features", rows.size(),
                resident_.size(), feat_dim);
  // from_blob only views `rows`: the copy (clone on the CPU) owns its memory.
  rows_ = torch::from_blob(const_cast<uint8_t*>(rows.data()), {resident_.size(), feat_dim},
                           torch_type_of(dtype))
              .to(device, /*non_blocking=*/false, /*copy=*/true);
}

torch::Tensor DeviceFeatureCache::assemble(const loader::Batch& batch,
                                           const torch::Tensor& fetched) const {
  const store::ResidentHits& hits = batch.resident.hits;
  PARTITA_CHECK(batch.resident.set == nullptr || batch.resident.set == &resident_, Error,
                "internal: a batch split against another resident set than the device cache's");
  const int64_t n = static_cast<int64_t>(batch.sampled.input_nodes.size());
  const int64_t h = static_cast<int64_t>(hits.positions.size());
  PARTITA_CHECK(hits.slots.size() == hits.positions.size() && fetched.dim() == 2 &&
                    fetched.size(0) == n - h && fetched.size(1) == rows_.size(1) &&
                    fetched.scalar_type() == rows_.scalar_type(),
                Error,
                "internal: device feature cache: {} fetched rows of {} for {} input nodes with "
                "{} cached, {} features of {} expected",
                fetched.dim() == 2 ? fetched.size(0) : -1, c10::toString(fetched.scalar_type()), n,
                h, rows_.size(1), c10::toString(rows_.scalar_type()));
  const torch::Device device = rows_.device();
  if (h == 0) return fetched.to(device);
  // One host-to-device copy of every index: the slots of the hits, their positions, then
  // the positions of the fetched rows (the others, ascending).
  std::vector<int64_t> index(static_cast<size_t>(n + h));
  std::copy(hits.slots.begin(), hits.slots.end(), index.begin());
  std::copy(hits.positions.begin(), hits.positions.end(), index.begin() + h);
  int64_t* misses = index.data() + 2 * h;
  size_t next_hit = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (next_hit < hits.positions.size() && hits.positions[next_hit] == i) {
      ++next_hit;
    } else {
      *misses++ = i;
    }
  }
  PARTITA_CHECK(next_hit == hits.positions.size(), Error,
                "internal: device feature cache: cached positions not ascending within [0, {})", n);
  // (On the CPU a view of `index`, which outlives every use below.)
  const torch::Tensor indices = torch::from_blob(index.data(), {n + h}, torch::kInt64).to(device);
  const torch::Tensor cached = rows_.index_select(0, indices.narrow(0, 0, h));
  if (h == n) return cached;
  torch::Tensor x = torch::empty({n, rows_.size(1)}, rows_.options());
  x.index_copy_(0, indices.narrow(0, h, h), cached);
  x.index_copy_(0, indices.narrow(0, 2 * h, n - h), fetched.to(device));
  return x;
}

torch::Tensor with_cached_rows(const DeviceFeatureCache* cache, const loader::Batch& batch,
                               torch::Tensor fetched) {
  if (cache != nullptr) return cache->assemble(batch, fetched);
  PARTITA_CHECK(batch.resident.hits.positions.empty(), Error,
                "internal: a batch skipped {} resident rows, and the model has no device cache",
                batch.resident.hits.positions.size());
  return fetched;
}

void ModelAdapter::set_device_cache(const DeviceFeatureCache* cache) {
  PARTITA_CHECK_PARAM(cache == nullptr, "gpu_cache_ratio",
                      "the device feature cache serves models with homogeneous input features "
                      "(sage, gcn, gat), not this one");
}

}  // namespace partita::train
