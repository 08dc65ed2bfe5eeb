// Edge exclusion: see partita/sample/edge_exclusion.h.
#include "partita/sample/edge_exclusion.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "partita/core/error.h"

namespace partita::sample {
namespace {

// The distinct excluded directed edges, as (dst, src) global ids, and how many go into
// each dst.
struct ExcludedEdges {
  absl::flat_hash_set<std::pair<int64_t, int64_t>> edges;
  absl::flat_hash_map<int64_t, int64_t> into;
};

ExcludedEdges excluded_edges(ArrayView<const int64_t> pairs, Exclude mode) {
  ExcludedEdges e;
  const auto add = [&e](int64_t src, int64_t dst) {
    if (e.edges.insert({dst, src}).second) ++e.into[dst];
  };
  for (int64_t i = 0; i + 1 < pairs.size(); i += 2) {
    add(pairs[i], pairs[i + 1]);
    if (mode == Exclude::kReverse) add(pairs[i + 1], pairs[i]);
  }
  return e;
}

// Removes the excluded edges of `block`; returns how many.
int64_t exclude_from_block(Block& block, const ExcludedEdges& excluded) {
  const bool typed = !block.etypes.empty();
  const bool with_ids = !block.edge_ids.empty();
  int64_t kept = 0;
  for (int64_t d = 0; d < block.num_dst; ++d) {
    const int64_t begin = block.indptr[d], end = block.indptr[d + 1];
    block.indptr[d] = kept;
    const int64_t dst = block.src_nodes[d];  // dst nodes are the first src nodes
    const bool has_excluded = excluded.into.contains(dst);
    for (int64_t j = begin; j < end; ++j) {
      const int64_t src = block.indices[j];
      if (has_excluded && excluded.edges.contains({dst, block.src_nodes[src]})) continue;
      block.indices[kept] = src;
      if (typed) block.etypes[kept] = block.etypes[j];
      if (with_ids) block.edge_ids[kept] = block.edge_ids[j];
      ++kept;
    }
  }
  const int64_t removed = block.indptr[block.num_dst] - kept;
  block.indptr[block.num_dst] = kept;
  block.indices.resize(kept);
  if (typed) block.etypes.resize(kept);
  if (with_ids) block.edge_ids.resize(kept);
  return removed;
}

}  // namespace

int64_t exclude_edges(SampledBatch& batch, ArrayView<const int64_t> pairs, Exclude mode,
                      std::vector<int64_t>* degrees) {
  PARTITA_CHECK(pairs.size() % 2 == 0, Error, "exclude edges: {} ids do not make pairs",
                pairs.size());
  for (int64_t i = 0; i < pairs.size(); ++i) {
    PARTITA_CHECK(pairs[i] >= 0, Error, "exclude edges: pair {} holds node {}", i / 2, pairs[i]);
  }
  PARTITA_CHECK(degrees == nullptr || degrees->size() == batch.input_nodes.size(), Error,
                "exclude edges: {} degrees for {} input nodes", degrees ? degrees->size() : 0,
                batch.input_nodes.size());
  for (const Block& block : batch.blocks) {
    PARTITA_CHECK(static_cast<int64_t>(block.indptr.size()) == block.num_dst + 1 &&
                      static_cast<int64_t>(block.src_nodes.size()) >= block.num_dst,
                  Error, "exclude edges: a block of {} dst nodes has {} offsets and {} src nodes",
                  block.num_dst, block.indptr.size(), block.src_nodes.size());
  }
  if (mode == Exclude::kNone || pairs.empty()) return 0;

  const ExcludedEdges excluded = excluded_edges(pairs, mode);
  int64_t removed = 0;
  for (Block& block : batch.blocks) removed += exclude_from_block(block, excluded);
  if (degrees != nullptr) {
    for (size_t i = 0; i < batch.input_nodes.size(); ++i) {
      const auto it = excluded.into.find(batch.input_nodes[i]);
      if (it != excluded.into.end())
        (*degrees)[i] = std::max<int64_t>(0, (*degrees)[i] - it->second);
    }
  }
  return removed;
}

}  // namespace partita::sample
