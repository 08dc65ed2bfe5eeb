#include "partita/store/feature_cache.h"

#include <algorithm>

#include "partita/core/error.h"
#include "partita/store/feature_store.h"

namespace partita::store {
namespace {

// The rows of `ids`, row_bytes each in ids' order, fetched by fetch_rows(chunk, out) in
// chunks of at most chunk_rows ids (fetch and fetch_edges: one row kind each).
template <class FetchRows>
std::vector<uint8_t> fetch_in_chunks(const std::vector<int64_t>& ids, int64_t row_bytes,
                                     int64_t chunk_rows, FetchRows fetch_rows) {
  PARTITA_CHECK(chunk_rows >= 1, Error, "feature cache: chunk of {} rows", chunk_rows);
  std::vector<uint8_t> rows(ids.size() * static_cast<size_t>(row_bytes));
  for (size_t first = 0; first < ids.size(); first += static_cast<size_t>(chunk_rows)) {
    const size_t n = std::min(ids.size() - first, static_cast<size_t>(chunk_rows));
    fetch_rows(ArrayView<const int64_t>(ids.data() + first, static_cast<int64_t>(n)),
               rows.data() + first * static_cast<size_t>(row_bytes));
  }
  return rows;
}

}  // namespace

FeatureCache::FeatureCache(std::vector<int64_t> ids, std::vector<uint8_t> rows, int64_t row_bytes)
    : ids_(std::move(ids)), rows_(std::move(rows)), row_bytes_(row_bytes) {
  PARTITA_CHECK(row_bytes_ >= 0 && rows_.size() == ids_.size() * static_cast<size_t>(row_bytes_),
                Error, "feature cache: {} bytes for {} rows of {} bytes", rows_.size(), ids_.size(),
                row_bytes_);
  slot_.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) {
    const bool inserted = slot_.emplace(ids_[i], static_cast<int64_t>(i) * row_bytes_).second;
    PARTITA_CHECK(inserted, Error, "feature cache: node {} given twice", ids_[i]);
  }
}

FeatureCache::FeatureCache(std::vector<int64_t> ids, std::vector<uint8_t> rows,
                           const std::vector<int64_t>& widths)
    : ids_(std::move(ids)), rows_(std::move(rows)) {
  PARTITA_CHECK(widths.size() == ids_.size(), Error, "feature cache: {} widths for {} rows",
                widths.size(), ids_.size());
  row_bytes_ = widths.empty() ? 0 : widths[0];
  int64_t offset = 0;
  slot_.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) {
    PARTITA_CHECK(widths[i] >= 0, Error, "feature cache: row {} of {} bytes", i, widths[i]);
    if (widths[i] != row_bytes_) row_bytes_ = -1;
    const bool inserted = slot_.emplace(ids_[i], offset).second;
    PARTITA_CHECK(inserted, Error, "feature cache: node {} given twice", ids_[i]);
    offset += widths[i];
  }
  PARTITA_CHECK(rows_.size() == static_cast<size_t>(offset), Error,
                "feature cache: {} bytes for {} rows of {} bytes in all", rows_.size(), ids_.size(),
                offset);
}

FeatureCache FeatureCache::fetch(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                 int64_t row_bytes, int64_t chunk_rows) {
  std::vector<uint8_t> rows = fetch_in_chunks(
      ids, row_bytes, chunk_rows,
      [&](ArrayView<const int64_t> chunk, uint8_t* out) { fetcher.fetch_features(chunk, out); });
  return FeatureCache(std::move(ids), std::move(rows), row_bytes);
}

FeatureCache FeatureCache::fetch_edges(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                       int64_t chunk_rows) {
  const int64_t row_bytes = fetcher.graph().edge_feat_row_bytes();
  std::vector<uint8_t> rows = fetch_in_chunks(ids, row_bytes, chunk_rows,
                                              [&](ArrayView<const int64_t> chunk, uint8_t* out) {
                                                fetcher.fetch_edge_features(chunk, out);
                                              });
  return FeatureCache(std::move(ids), std::move(rows), row_bytes);
}

FeatureCache FeatureCache::fetch_typed(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                       int64_t chunk_rows) {
  PARTITA_CHECK(chunk_rows >= 1, Error, "feature cache: chunk of {} rows", chunk_rows);
  const DistGraph& graph = fetcher.graph();
  const int types = graph.num_node_types();
  // Grouped by type (stable), so that each chunk is one run of ids per type.
  std::vector<int> type_of(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) type_of[i] = graph.node_type(ids[i]);
  std::vector<size_t> order(ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return type_of[a] < type_of[b]; });
  std::vector<int64_t> grouped(ids.size()), widths(ids.size());
  std::vector<size_t> offset(ids.size() + 1, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    grouped[i] = ids[order[i]];
    widths[i] = graph.type_feature_row_bytes(type_of[order[i]]);
    offset[i + 1] = offset[i] + static_cast<size_t>(widths[i]);
  }
  std::vector<uint8_t> rows(offset.back());
  for (size_t first = 0; first < grouped.size(); first += static_cast<size_t>(chunk_rows)) {
    const size_t end = std::min(grouped.size(), first + static_cast<size_t>(chunk_rows));
    std::vector<ArrayView<const int64_t>> views(static_cast<size_t>(types));
    std::vector<uint8_t*> out(static_cast<size_t>(types), nullptr);
    for (size_t i = first; i < end;) {
      const int t = type_of[order[i]];
      size_t j = i;
      while (j < end && type_of[order[j]] == t) ++j;
      views[static_cast<size_t>(t)] =
          ArrayView<const int64_t>(grouped.data() + i, static_cast<int64_t>(j - i));
      out[static_cast<size_t>(t)] = rows.data() + offset[i];
      i = j;
    }
    fetcher.fetch_typed_features(views, out);
  }
  return FeatureCache(std::move(grouped), std::move(rows), widths);
}

int64_t FeatureCache::bytes() const {
  return static_cast<int64_t>(rows_.size() + slot_.capacity() * (sizeof(int64_t) * 2 + 1) +
                              ids_.size() * sizeof(int64_t));
}

}  // namespace partita::store
