#include "partita/sample/edge_exclusion.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "partita/core/error.h"

namespace partita::sample {
namespace {

// The distinct excluded directed edges as a CSR over dst seed positions: the excluded srcs
// of dst d are srcs[offsets[d] .. offsets[d + 1]), sorted.
struct ExcludedEdges {
  std::vector<int64_t> offsets;  // num_seeds + 1
  std::vector<int64_t> srcs;

  int64_t edges_into(int64_t dst) const { return offsets[dst + 1] - offsets[dst]; }
  bool contains(int64_t src, int64_t dst) const {
    return std::binary_search(srcs.begin() + offsets[dst], srcs.begin() + offsets[dst + 1], src);
  }
};

ExcludedEdges excluded_edges(ArrayView<const SeedPair> pairs, Exclude mode, int64_t num_seeds) {
  std::vector<std::pair<int64_t, int64_t>> dst_src;
  dst_src.reserve(static_cast<size_t>(pairs.size()) * (mode == Exclude::kReverse ? 2 : 1));
  for (const SeedPair& p : pairs) {
    dst_src.emplace_back(p.dst, p.src);
    if (mode == Exclude::kReverse) dst_src.emplace_back(p.src, p.dst);
  }
  std::sort(dst_src.begin(), dst_src.end());
  dst_src.erase(std::unique(dst_src.begin(), dst_src.end()), dst_src.end());
  ExcludedEdges e;
  e.offsets.assign(static_cast<size_t>(num_seeds) + 1, 0);
  e.srcs.reserve(dst_src.size());
  for (const auto& [dst, src] : dst_src) {
    ++e.offsets[dst + 1];
    e.srcs.push_back(src);
  }
  for (int64_t d = 0; d < num_seeds; ++d) e.offsets[d + 1] += e.offsets[d];
  return e;
}

// Removes the excluded edges of `block`; returns how many. Only the seed rows [0, num_seeds)
// are scanned, and only their src ids < num_seeds can be excluded; the edges after them
// move down once, and only if something was removed.
int64_t exclude_from_block(Block& block, const ExcludedEdges& excluded, int64_t num_seeds) {
  const bool typed = !block.etypes.empty();
  int64_t kept = 0;
  for (int64_t d = 0; d < num_seeds; ++d) {
    const int64_t begin = block.indptr[d], end = block.indptr[d + 1];
    block.indptr[d] = kept;
    for (int64_t j = begin; j < end; ++j) {
      const int64_t src = block.indices[j];
      if (src < num_seeds && excluded.edges_into(d) > 0 && excluded.contains(src, d)) continue;
      block.indices[kept] = src;
      if (typed) block.etypes[kept] = block.etypes[j];
      ++kept;
    }
  }
  const int64_t seed_row_end = block.indptr[num_seeds];
  const int64_t removed = seed_row_end - kept;
  if (removed == 0) return 0;
  block.indices.erase(block.indices.begin() + kept, block.indices.begin() + seed_row_end);
  if (typed) block.etypes.erase(block.etypes.begin() + kept, block.etypes.begin() + seed_row_end);
  for (int64_t d = num_seeds; d <= block.num_dst; ++d) block.indptr[d] -= removed;
  return removed;
}

}  // namespace

int64_t exclude_seed_edges(SampledBatch& batch, ArrayView<const SeedPair> pairs, Exclude mode,
                           std::vector<int64_t>* degrees) {
  const int64_t num_seeds = static_cast<int64_t>(batch.seeds.size());
  for (int64_t i = 0; i < pairs.size(); ++i) {
    PARTITA_CHECK(pairs[i].src >= 0 && pairs[i].src < num_seeds && pairs[i].dst >= 0 &&
                      pairs[i].dst < num_seeds,
                  Error,
                  "exclude seed edges: pair {} ({} -> {}) is outside the batch's {} seed "
                  "positions",
                  i, pairs[i].src, pairs[i].dst, num_seeds);
  }
  PARTITA_CHECK(degrees == nullptr || degrees->size() == batch.input_nodes.size(), Error,
                "exclude seed edges: {} degrees for {} input nodes", degrees ? degrees->size() : 0,
                batch.input_nodes.size());
  for (const Block& block : batch.blocks) {  // the layout block_builder.h promises
    PARTITA_CHECK(block.num_dst >= num_seeds &&
                      static_cast<int64_t>(block.indptr.size()) == block.num_dst + 1,
                  Error, "exclude seed edges: a block with {} dst nodes for {} seeds",
                  block.num_dst, num_seeds);
  }
  if (mode == Exclude::kNone || pairs.empty()) return 0;

  const ExcludedEdges excluded = excluded_edges(pairs, mode, num_seeds);
  int64_t removed = 0;
  for (Block& block : batch.blocks) removed += exclude_from_block(block, excluded, num_seeds);
  if (degrees != nullptr) {
    for (int64_t d = 0; d < num_seeds; ++d) {
      int64_t& degree = (*degrees)[d];
      degree = std::max<int64_t>(0, degree - excluded.edges_into(d));
    }
  }
  return removed;
}

}  // namespace partita::sample
