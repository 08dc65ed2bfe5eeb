#pragma once
// Arrays beside a graph's structure (docs/dataset-format.md, "Edge and node arrays"): per
// listed edge edge_time (int64), edge_weight (float32, finite, > 0) and edge_feat ([E, d],
// float32, float16 or bfloat16); per node node_time (int64). The numpy layouts (homogeneous
// files, typed folders with a file per relation or node type), the chunked layout (chunks
// beside the edge and label chunks) and OGB's raw CSVs (edge_year -> edge_time, node_year ->
// node_time) read them; the partition carries them into every part next to indices.npy and
// label.npy (docs/partition-format.md).
//
// Order of a row: the entries of one destination are ordered by (original source, time,
// listing position), with time 0 for every edge when there is no edge_time, and the reverse
// entry of listed edge i (undirected graphs, or a typed relation's rev_ relation) at position
// 2i + 1 after 2i. Typed graphs: the source is the packed (relation, source) key, so rows are
// by relation first, and the listing is the relations' edge lists end to end. Without
// edge_time, only the first entry of each source is kept (repeats are dropped, as always);
// with it, every listed edge is kept: a pair repeated at different (or equal) times is
// several edges. This order is a function of the listing alone, never of rank or thread
// counts, so one process and every number of ranks store the same values in the same slots.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/npy.h"

namespace partita::data {

constexpr const char* kEdgeTimeName = "edge_time";
constexpr const char* kEdgeWeightName = "edge_weight";
constexpr const char* kEdgeFeatName = "edge_feat";
constexpr const char* kNodeTimeName = "node_time";

// One such array in memory: `name` (one of the above), one row per edge (or entry, or node).
struct ExtraArray {
  std::string name;
  DType dtype = DType::kInt64;
  int64_t dim = 0;              // 0: one value per row ([rows]); d > 0: d values ([rows, d])
  std::vector<uint8_t> values;  // rows() * row_bytes() bytes, row-major

  size_t row_bytes() const { return dtype_size(dtype) * static_cast<size_t>(dim > 0 ? dim : 1); }
  int64_t rows() const { return static_cast<int64_t>(values.size() / row_bytes()); }
};

// The array named `name` in `arrays`, or nullptr.
const ExtraArray* find_array(const std::vector<ExtraArray>& arrays, const std::string& name);

// One entry of a row being ordered (above): position = 2 * listing position (+ 1 for a
// reverse entry), unique within a row.
struct EdgeOrderKey {
  int64_t source = 0;  // original id (typed graphs: the packed (relation, source) key)
  int64_t time = 0;
  int64_t position = 0;
  bool operator<(const EdgeOrderKey& o) const {
    if (source != o.source) return source < o.source;
    if (time != o.time) return time < o.time;
    return position < o.position;
  }
};

// Sorts one row's entries by key(entry) (an EdgeOrderKey) and, unless `keep_repeats`, keeps
// only the first entry of each source (moved to the front); returns how many are kept.
template <class T, class Key>
int64_t order_row(T* first, T* last, bool keep_repeats, Key key) {
  std::sort(first, last, [&](const T& a, const T& b) { return key(a) < key(b); });
  if (keep_repeats) return last - first;
  return std::unique(first, last,
                     [&](const T& a, const T& b) { return key(a).source == key(b).source; }) -
         first;
}

// The rows `positions` (listing positions, one per entry) of each array of `listed`, in that
// order: the arrays of the entries.
std::vector<ExtraArray> gather_rows(const std::vector<ExtraArray>& listed,
                                    const std::vector<int64_t>& positions);

}  // namespace partita::data
