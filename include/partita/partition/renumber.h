#pragma once
// Contiguous renumbering (DESIGN decision 1): part p owns new ids [ranges[p], ranges[p+1]),
// and inside a part nodes keep their original relative order, so new ids are increasing in
// original ids within each part.
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"

namespace partita::partition {

struct Renumbering {
  std::vector<int64_t> ranges;    // num_parts + 1 offsets, ranges[0] = 0
  std::vector<int64_t> node_map;  // new id -> original id
  std::vector<int64_t> new_id;    // original id -> new id (the inverse permutation)

  int num_parts() const { return static_cast<int>(ranges.size()) - 1; }
  int64_t part_nodes(int p) const { return ranges[p + 1] - ranges[p]; }
};

// Builds the renumbering from an assignment part[v] in [0, num_parts). Throws Error when a
// value is out of range.
Renumbering renumber(ArrayView<const int32_t> part, int num_parts);

}  // namespace partita::partition
