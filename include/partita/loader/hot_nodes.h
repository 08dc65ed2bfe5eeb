#pragma once
// Choosing the rows of the hot-feature caches by pre-sampling: the batches a rank is about to
// train on are sampled once (blocks only, no features) and their input nodes counted by how
// many batches need their feature row. The host cache (store/feature_cache.h) ranks remote
// nodes only; the device cache (train/device_feature_cache.h) ranks every input node, local
// or remote (hottest_input_nodes; why: there).
#include <cstdint>
#include <limits>
#include <vector>

#include "partita/sample/fanouts.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/neighbor_sampler.h"
#include "partita/store/dist_graph.h"

namespace partita::loader {

struct HotNodes {
  std::vector<int64_t> ids;        // at most `budget` nodes, most needed first
  int64_t batches = 0;             // batches pre-sampled
  int64_t remote_appearances = 0;  // remote input rows over those batches (with repeats)
  int64_t covered = 0;             // of the rows counted (remote, or all), how many `ids` cover
  // hottest_input_nodes only: all input rows over the batches (with repeats), and how many
  // of the remote ones `ids` cover.
  int64_t appearances = 0;
  int64_t remote_covered = 0;
};

// Throws ParameterError, naming `cache_ratio` / `cache_presample_batches`, unless
// 0 <= ratio <= 1 and presample_batches >= 1 (train and sample-bench take both).
void check_cache_options(double ratio, int64_t presample_batches);

// The cache's row budget: ratio x the nodes this rank owns (rounded down). In ROWS on a
// typed graph too: ratio x the nodes of every type this rank owns, spent on rows of featured
// types, each held at its type's width (the memory is then rows x their widths, reported
// by FeatureCache::bytes()). Rows, not bytes: a cached row saves one row of traffic per
// appearance whatever the budget unit, and ogbn-mag-shaped graphs feature one type only,
// where both units pick the same rows.
int64_t cache_budget(const store::DistGraph& graph, double ratio);

// The edge cache's row budget (issue 41): ratio x the edges this rank's part stores
// (graph.indices().size(): the in-edges of the nodes it owns), rounded down.
int64_t edge_cache_budget(const store::DistGraph& graph, double ratio);

// On a typed graph (both functions) only nodes of featured types count: appearances,
// coverage and the chosen ids leave featureless nodes out, since they have no row.
//
// Samples every batch of `batches` through `sampler` with `fanouts` under key
// {seed, epoch, step} (choose an epoch no training step uses) and returns the `budget`
// nodes not owned by this rank that appear most often among the batches' input nodes;
// ties go to the smaller id, so the choice is deterministic. budget >= 0.
//
// `temporal`: the sampler samples by time (its strategy; kNone: it does not), so it needs a
// time per seed (sample::BlockOptions::seed_times). Every seed then gets the latest time,
// kLatestTime: every in-edge is allowed (strict: every one before that time), so the
// batches' neighbourhoods are those without times.
//
// `edges` (null: not counted; issue 41): the same pass also counts the edge ids of the
// batches' blocks (Block::edge_ids: the sampler must return them, or Error) that this rank's
// part does not store, and *edges (overwritten) gets the `edge_budget` most frequent, ties
// to the smaller id: ids, batches, remote_appearances (= appearances) and covered
// (= remote_covered), all counted in edges. As for nodes, an edge stored by a part mapped
// here (host-local) counts as remote: the fetcher reads such rows from the mapping before
// it consults a cache, so caching one costs memory, never a wrong row.
inline constexpr int64_t kLatestTime = std::numeric_limits<int64_t>::max();
HotNodes hottest_remote_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                              const std::vector<std::vector<int64_t>>& batches,
                              const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                              int64_t budget, sample::Temporal temporal = sample::Temporal::kNone,
                              HotNodes* edges = nullptr, int64_t edge_budget = 0);

// The same over every input node, owned or not: the `budget` nodes with the highest score,
// the number of batches that need the node, times remote_weight (>= 1) for a node this rank
// does not own; ties to the smaller id. covered and remote_covered count appearances, not
// scores.
//
// Why local nodes too (the device cache): on a device every input row costs a host gather
// and a host-to-device copy, a remote one its owner's gather and a transfer besides; a
// device hit saves all of that for any row. Ranking remote nodes only would leave a
// single-rank (or replicated) run, where nothing is remote, with no cache at all. Why a
// weight: a remote row costs more, and with few pre-sampled batches many nodes tie at the
// top count, where smaller ids (this rank's first, under contiguous numbering) would
// otherwise win every tie (loader/cache_warmup.cc measures it).
HotNodes hottest_input_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                             const std::vector<std::vector<int64_t>>& batches,
                             const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                             int64_t budget, int64_t remote_weight,
                             sample::Temporal temporal = sample::Temporal::kNone);

}  // namespace partita::loader
