// Device feature cache: see partita/train/device_feature_cache.h.
#include "partita/train/device_feature_cache.h"

#include <algorithm>
#include <utility>

#include "feature_tensors.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/train/model_adapter.h"

namespace partita::train {
namespace {

// The indices of DeviceFeatureCache::placement for n inputs of which h are cached.
int64_t placement_size(int64_t n, int64_t h) { return h == 0 ? 0 : h == n ? n : n + h; }

}  // namespace

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

torch::Tensor DeviceFeatureCache::placement(const loader::Batch& batch) const {
  const store::ResidentHits& hits = batch.resident.hits;
  PARTITA_CHECK(batch.resident.set == nullptr || batch.resident.set == &resident_, Error,
                "internal: a batch split against another resident set than the device cache's");
  PARTITA_CHECK(hits.slots.size() == hits.positions.size(), Error,
                "internal: device feature cache: {} slots for {} cached positions",
                hits.slots.size(), hits.positions.size());
  const int64_t n = static_cast<int64_t>(batch.sampled.input_nodes.size());
  const int64_t h = static_cast<int64_t>(hits.positions.size());
  // The slots of the hits, their positions, then the positions of the fetched rows (the
  // others, ascending); the slots alone when every input is cached, nothing when none is.
  torch::Tensor index = torch::empty({placement_size(n, h)}, torch::kInt64);
  if (h == 0) return index;
  if (h == n) {
    PARTITA_CHECK(
        std::adjacent_find(hits.positions.begin(), hits.positions.end(),
                           [](int64_t a, int64_t b) { return b != a + 1; }) ==
                hits.positions.end() &&
            hits.positions.front() == 0,
        Error, "internal: device feature cache: cached positions not ascending within [0, {})", n);
    std::copy(hits.slots.begin(), hits.slots.end(), index.data_ptr<int64_t>());
    return index;
  }
  int64_t* out = index.data_ptr<int64_t>();
  std::copy(hits.slots.begin(), hits.slots.end(), out);
  std::copy(hits.positions.begin(), hits.positions.end(), out + h);
  int64_t* misses = out + 2 * h;
  size_t next_hit = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (next_hit < hits.positions.size() && hits.positions[next_hit] == i) {
      ++next_hit;
    } else {
      PARTITA_CHECK(misses < out + n + h, Error,
                    "internal: device feature cache: cached positions not ascending within [0, {})",
                    n);
      *misses++ = i;
    }
  }
  PARTITA_CHECK(next_hit == hits.positions.size(), Error,
                "internal: device feature cache: cached positions not ascending within [0, {})", n);
  return index;
}

torch::Tensor DeviceFeatureCache::assemble(const loader::Batch& batch, const torch::Tensor& fetched,
                                           const torch::Tensor& placement) const {
  const int64_t n = static_cast<int64_t>(batch.sampled.input_nodes.size());
  const int64_t h = static_cast<int64_t>(batch.resident.hits.positions.size());
  PARTITA_CHECK(batch.resident.set == nullptr || batch.resident.set == &resident_, Error,
                "internal: a batch split against another resident set than the device cache's");
  PARTITA_CHECK(fetched.dim() == 2 && fetched.size(0) == n - h &&
                    fetched.size(1) == rows_.size(1) &&
                    fetched.scalar_type() == rows_.scalar_type(),
                Error,
                "internal: device feature cache: {} fetched rows of {} for {} input nodes with "
                "{} cached, {} features of {} expected",
                fetched.dim() == 2 ? fetched.size(0) : -1, c10::toString(fetched.scalar_type()), n,
                h, rows_.size(1), c10::toString(rows_.scalar_type()));
  PARTITA_CHECK(placement.dim() == 1 && placement.size(0) == placement_size(n, h), Error,
                "internal: device feature cache: {} placement indices for {} input nodes with {} "
                "cached",
                placement.dim() == 1 ? placement.size(0) : -1, n, h);
  const torch::Device device = rows_.device();
  if (h == 0) return fetched.to(device);
  const torch::Tensor indices = placement.to(device);
  const torch::Tensor cached = rows_.index_select(0, indices.narrow(0, 0, h));
  if (h == n) return cached;  // every input cached (positions 0 .. n - 1 in order)
  torch::Tensor x = torch::empty({n, rows_.size(1)}, rows_.options());
  x.index_copy_(0, indices.narrow(0, h, h), cached);
  x.index_copy_(0, indices.narrow(0, 2 * h, n - h), fetched.to(device));
  return x;
}

torch::Tensor DeviceFeatureCache::assemble(const loader::Batch& batch,
                                           const torch::Tensor& fetched) const {
  return assemble(batch, fetched, placement(batch));
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
                      "(sage, gcn, gat, gatv2, gine), not this one");
}

}  // namespace partita::train
