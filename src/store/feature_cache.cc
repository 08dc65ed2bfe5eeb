#include "partita/store/feature_cache.h"

#include <algorithm>

#include "partita/core/error.h"
#include "partita/store/feature_store.h"

namespace partita::store {

FeatureCache::FeatureCache(std::vector<int64_t> ids, std::vector<float> rows, int64_t feat_dim)
    : ids_(std::move(ids)), rows_(std::move(rows)), feat_dim_(feat_dim) {
  PARTITA_CHECK(feat_dim_ >= 0 &&
                    rows_.size() == ids_.size() * static_cast<size_t>(feat_dim_),
                Error, "feature cache: {} values for {} rows of width {}", rows_.size(),
                ids_.size(), feat_dim_);
  slot_.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) {
    const bool inserted = slot_.emplace(ids_[i], static_cast<int64_t>(i)).second;
    PARTITA_CHECK(inserted, Error, "feature cache: node {} given twice", ids_[i]);
  }
}

FeatureCache FeatureCache::fetch(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                 int64_t feat_dim, int64_t chunk_rows) {
  PARTITA_CHECK(chunk_rows >= 1, Error, "feature cache: chunk of {} rows", chunk_rows);
  std::vector<float> rows(ids.size() * static_cast<size_t>(feat_dim));
  for (size_t first = 0; first < ids.size(); first += static_cast<size_t>(chunk_rows)) {
    const size_t n = std::min(ids.size() - first, static_cast<size_t>(chunk_rows));
    fetcher.fetch_features(ArrayView<const int64_t>(ids.data() + first, static_cast<int64_t>(n)),
                           rows.data() + first * static_cast<size_t>(feat_dim));
  }
  return FeatureCache(std::move(ids), std::move(rows), feat_dim);
}

int64_t FeatureCache::bytes() const {
  return static_cast<int64_t>(rows_.size() * sizeof(float) +
                              slot_.capacity() * (sizeof(int64_t) * 2 + 1) +
                              ids_.size() * sizeof(int64_t));
}

}  // namespace partita::store
