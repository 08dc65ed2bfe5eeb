#include "partita/store/feature_cache.h"

#include <algorithm>

#include "partita/core/error.h"
#include "partita/store/feature_store.h"

namespace partita::store {

FeatureCache::FeatureCache(std::vector<int64_t> ids, std::vector<uint8_t> rows, int64_t row_bytes)
    : ids_(std::move(ids)), rows_(std::move(rows)), row_bytes_(row_bytes) {
  PARTITA_CHECK(row_bytes_ >= 0 && rows_.size() == ids_.size() * static_cast<size_t>(row_bytes_),
                Error, "feature cache: {} bytes for {} rows of {} bytes", rows_.size(), ids_.size(),
                row_bytes_);
  slot_.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) {
    const bool inserted = slot_.emplace(ids_[i], static_cast<int64_t>(i)).second;
    PARTITA_CHECK(inserted, Error, "feature cache: node {} given twice", ids_[i]);
  }
}

FeatureCache FeatureCache::fetch(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                 int64_t row_bytes, int64_t chunk_rows) {
  PARTITA_CHECK(chunk_rows >= 1, Error, "feature cache: chunk of {} rows", chunk_rows);
  std::vector<uint8_t> rows(ids.size() * static_cast<size_t>(row_bytes));
  for (size_t first = 0; first < ids.size(); first += static_cast<size_t>(chunk_rows)) {
    const size_t n = std::min(ids.size() - first, static_cast<size_t>(chunk_rows));
    fetcher.fetch_features(ArrayView<const int64_t>(ids.data() + first, static_cast<int64_t>(n)),
                           rows.data() + first * static_cast<size_t>(row_bytes));
  }
  return FeatureCache(std::move(ids), std::move(rows), row_bytes);
}

int64_t FeatureCache::bytes() const {
  return static_cast<int64_t>(rows_.size() + slot_.capacity() * (sizeof(int64_t) * 2 + 1) +
                              ids_.size() * sizeof(int64_t));
}

}  // namespace partita::store
