// See batch_exclusion.h.
#include "partita/loader/batch_exclusion.h"

#include <cstring>
#include <vector>

#include "partita/core/error.h"

namespace partita::loader {

int64_t exclude_batch_edges(Batch& batch, ArrayView<const int64_t> pairs, sample::Exclude mode) {
  const int64_t sampled = batch.sampled.num_sampled_edges();
  std::vector<std::vector<int64_t>> ids_before;
  if (!batch.edge_features.empty())
    for (const sample::Block& block : batch.sampled.blocks) ids_before.push_back(block.edge_ids);
  const int64_t removed = sample::exclude_edges(batch.sampled, pairs, mode,
                                                batch.degrees.empty() ? nullptr : &batch.degrees);
  if (ids_before.empty() || removed == 0) return removed;
  const size_t row_bytes = batch.edge_features.size() / static_cast<size_t>(sampled);
  uint8_t* rows = batch.edge_features.data();
  size_t from = 0, to = 0;  // rows over all blocks: before and after the exclusion
  for (size_t l = 0; l < ids_before.size(); ++l) {
    const std::vector<int64_t>& before = ids_before[l];
    size_t i = 0;
    for (int64_t id : batch.sampled.blocks[l].edge_ids) {
      while (i < before.size() && before[i] != id) ++i;
      PARTITA_CHECK(i < before.size(), Error,
                    "internal: block {} kept edge {}, which it did not sample", l, id);
      std::memmove(rows + to * row_bytes, rows + (from + i) * row_bytes, row_bytes);
      ++i;
      ++to;
    }
    from += before.size();
  }
  batch.edge_features.resize(to * row_bytes);
  return removed;
}

}  // namespace partita::loader
