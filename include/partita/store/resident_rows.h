#pragma once
// Resident rows (issue 24): the global ids whose feature rows a consumer already holds
// elsewhere (train/device_feature_cache.h keeps them in the model device's memory), so that
// fetching a batch's features skips them: no host gather, no remote request, no copy
// (FeatureFetcher::fetch_features_except, loader::BatchPipelineOptions::resident).
//
// Each resident id has a slot: its rank among the resident ids in ascending order, so the
// holder stores row `slot` for id ids()[slot]. Lookup is O(1) with no hashing: a bitmap over
// the partition's global ids [0, num_nodes) and, per 64-bit word, the number of resident ids
// before it (slot = that count + the set bits below the id's bit). Memory: num_nodes / 4
// bytes (two 64-bit words per 64 ids) plus the ids, whatever their number: 50 MB for 200 M
// nodes.
//
// Immutable once built: every const member may be called from any number of threads (the
// batch pipeline's workers share one set).
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"

namespace partita::store {

// The resident inputs of one list of ids, as ResidentRows::split leaves them.
struct ResidentHits {
  std::vector<int64_t> positions;  // indices into the list, ascending
  std::vector<int64_t> slots;      // their slots (ResidentRows::slot), aligned with positions
};

class ResidentRows {
 public:
  ResidentRows() = default;  // empty: nothing is resident
  // `ids`: distinct global ids in [0, num_nodes), any order. Throws Error on an id out of
  // range or given twice.
  ResidentRows(int64_t num_nodes, std::vector<int64_t> ids);

  // The slot of `gid`, or -1 when it is not resident (any gid, in range or not).
  int64_t slot(int64_t gid) const {
    if (static_cast<uint64_t>(gid) >= static_cast<uint64_t>(num_nodes_)) return -1;
    const uint64_t word = bits_[static_cast<size_t>(gid >> 6)];
    const uint64_t bit = uint64_t{1} << (gid & 63);
    if ((word & bit) == 0) return -1;
    return before_[static_cast<size_t>(gid >> 6)] + __builtin_popcountll(word & (bit - 1));
  }
  bool contains(int64_t gid) const { return slot(gid) >= 0; }

  // Appends the positions and slots of the resident entries of `ids` to *hits and the other
  // ids, in input order, to *misses (either may be null: not written).
  void split(ArrayView<const int64_t> ids, ResidentHits* hits, std::vector<int64_t>* misses) const;

  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  bool empty() const { return ids_.empty(); }
  int64_t num_nodes() const { return num_nodes_; }
  // The resident ids in slot order (ascending).
  const std::vector<int64_t>& ids() const { return ids_; }
  // Host memory of the index (bitmap, counts and ids).
  int64_t bytes() const;

 private:
  int64_t num_nodes_ = 0;
  std::vector<uint64_t> bits_;   // bit g % 64 of word g / 64: g is resident
  std::vector<int64_t> before_;  // resident ids in the words before this one
  std::vector<int64_t> ids_;     // ascending
};

}  // namespace partita::store
