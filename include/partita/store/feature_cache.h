#pragma once
// Hot-feature cache (issue: feature path): rows of remote nodes kept on this rank, chosen
// before training by pre-sampling (loader::hottest_remote_nodes), so that the nodes most
// batches need do not cross the wire every time (as GraphLearn-for-PyTorch does).
//
// Holds copies of the rows exactly as their owners serve them (in the partition's feature
// dtype), so a fetch answered from the cache gives the same bytes as a remote one. Immutable once
// built; find() may be called from any thread.
//
// Typed partitions (issue 28): one cache holds rows of every featured node type, each row
// its type's width (type_feature_row_bytes); find() gives the row, the caller knows the id's
// type and so its width. Built by fetch_typed; row_bytes() is then -1 unless all rows
// happen to share one width.
#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"

namespace partita::store {

class FeatureFetcher;

class FeatureCache {
 public:
  FeatureCache() = default;  // empty: find() always misses
  // `ids`: distinct global ids; `rows`: ids.size() rows of row_bytes bytes. Throws Error on
  // a size mismatch or a repeated id.
  FeatureCache(std::vector<int64_t> ids, std::vector<uint8_t> rows, int64_t row_bytes);
  // Rows of varying width: row i is widths[i] bytes, the rows packed in `ids` order. Same
  // errors.
  FeatureCache(std::vector<int64_t> ids, std::vector<uint8_t> rows,
               const std::vector<int64_t>& widths);

  // Fetches the rows of `ids` (distinct, none owned by this rank) through `fetcher`, in
  // requests of at most `chunk_rows` rows, and keeps them. Collective only in that the
  // owners must answer.
  static FeatureCache fetch(FeatureFetcher& fetcher, std::vector<int64_t> ids, int64_t row_bytes,
                            int64_t chunk_rows = 65536);
  // The same on a typed graph (fetcher.graph()): ids of featured node types, mixed; each
  // row is kept at its type's width, fetched with fetch_typed_features. ids() then lists
  // them grouped by type (ascending), in the given order within a type. Throws Error for an
  // id of a featureless type.
  static FeatureCache fetch_typed(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                  int64_t chunk_rows = 65536);

  // Edge rows (issue 41): the rows of global edge ids `ids` (distinct, none stored by this
  // rank's part) fetched with fetch_edge_features, edge_feat_row_bytes() each; the cache is
  // then keyed by edge id (FeatureFetcher::set_edge_cache). Throws Error as
  // fetch_edge_features (no edge features, an id out of range).
  static FeatureCache fetch_edges(FeatureFetcher& fetcher, std::vector<int64_t> ids,
                                  int64_t chunk_rows = 65536);

  // The cached row of `gid` (row_bytes bytes, or its type's width), or null.
  const uint8_t* find(int64_t gid) const {
    auto it = slot_.find(gid);
    return it == slot_.end() ? nullptr : rows_.data() + it->second;
  }

  int64_t rows() const { return static_cast<int64_t>(ids_.size()); }
  int64_t row_bytes() const { return row_bytes_; }  // -1: rows of several widths
  // Bytes held: the rows and the index.
  int64_t bytes() const;
  const std::vector<int64_t>& ids() const { return ids_; }

 private:
  std::vector<int64_t> ids_;
  std::vector<uint8_t> rows_;
  int64_t row_bytes_ = 0;
  absl::flat_hash_map<int64_t, int64_t> slot_;  // gid -> offset of its row in rows_ (bytes)
};

}  // namespace partita::store
