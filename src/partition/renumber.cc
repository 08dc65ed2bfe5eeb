// Contiguous renumbering of an assignment.
#include "partita/partition/renumber.h"

#include "partita/core/error.h"

namespace partita::partition {

Renumbering renumber(ArrayView<const int32_t> part, int num_parts) {
  const int64_t n = part.size();
  Renumbering r;
  r.ranges.assign(static_cast<size_t>(num_parts) + 1, 0);
  for (int64_t v = 0; v < n; ++v) {
    const int32_t p = part[v];
    PARTITA_CHECK(p >= 0 && p < num_parts, Error,
                  "internal: node {} assigned to part {}, outside [0, {})", v, p, num_parts);
    ++r.ranges[p + 1];
  }
  for (int p = 0; p < num_parts; ++p) r.ranges[p + 1] += r.ranges[p];

  // One pass in original order: each part's cursor hands out its ids in increasing order,
  // so within a part new ids follow original ids. A sequential pass over n int32 is memory
  // bound and fast; splitting it by chunks would need per-chunk, per-part offsets.
  r.node_map.resize(static_cast<size_t>(n));
  r.new_id.resize(static_cast<size_t>(n));
  std::vector<int64_t> cursor(r.ranges.begin(), r.ranges.end() - 1);
  for (int64_t v = 0; v < n; ++v) {
    const int64_t id = cursor[part[v]]++;
    r.new_id[v] = id;
    r.node_map[id] = v;
  }
  return r;
}

}  // namespace partita::partition
