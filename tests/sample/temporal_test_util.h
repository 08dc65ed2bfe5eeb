#pragma once
// Temporal graphs and a naive reference of temporal sampling (neighbor_kernel.h,
// block_builder.h) for the sample/ tests: filter each run to the entries a time allows,
// then the reference algorithms of sample_test_util.h on what is left (kUniform), or a
// full sort by (time descending, position ascending) (kRecent); blocks with an
// unordered_map keyed by (node, time) pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "partita/core/random.h"
#include "partita/graph/csr.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/sample_key.h"
#include "sample_test_util.h"

namespace partita::sample::testing {

// One time per entry in [0, range): small ranges give many ties.
inline std::vector<int64_t> random_times(int64_t count, int64_t range, uint64_t seed) {
  Rng rng(stream_key(seed, 101));
  std::vector<int64_t> t(static_cast<size_t>(count));
  for (int64_t& x : t) x = static_cast<int64_t>(rng.below(static_cast<uint64_t>(range)));
  return t;
}

// The graph with every third entry of each row repeated right after itself (a multigraph:
// the same (source, destination) pair at two times once times are drawn). Relations, if
// given, are repeated alike, so typed rows stay sorted by relation.
inline graph::Csr with_repeats(const graph::Csr& g, const std::vector<int32_t>& relations,
                               std::vector<int32_t>* repeated_relations) {
  graph::Csr out;
  out.indptr.push_back(0);
  for (int64_t v = 0; v < g.num_rows(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int copies = (e - g.indptr[v]) % 3 == 1 ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        out.indices.push_back(g.indices[e]);
        if (!relations.empty()) repeated_relations->push_back(relations[e]);
      }
    }
    out.indptr.push_back(static_cast<int64_t>(out.indices.size()));
  }
  return out;
}

struct TemporalMode {
  Temporal temporal = Temporal::kUniform;
  bool strict = false;
  Replacement replacement = Replacement::kWithout;
  Weighting weighting = Weighting::kUniform;
};

// Every mode the kernel accepts.
inline std::vector<TemporalMode> all_temporal_modes() {
  std::vector<TemporalMode> modes;
  for (bool strict : {false, true}) {
    for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
      for (Weighting w : {Weighting::kUniform, Weighting::kEdgeWeight}) {
        modes.push_back({Temporal::kUniform, strict, r, w});
      }
    }
    modes.push_back({Temporal::kRecent, strict, Replacement::kWithout, Weighting::kUniform});
  }
  return modes;
}

inline bool allowed(int64_t edge_time, int64_t node_time, bool strict) {
  return strict ? edge_time < node_time : edge_time <= node_time;
}

// The reference of one run: ids, weights (or null) and times of its d entries.
inline std::vector<int64_t> reference_temporal_run(const int64_t* ids, const float* w,
                                                   const int64_t* times, int64_t d, uint64_t stream,
                                                   int64_t k, int64_t node_time,
                                                   const TemporalMode& mode) {
  std::vector<int64_t> a_ids, a_times;
  std::vector<float> a_w;
  for (int64_t i = 0; i < d; ++i) {
    if (!allowed(times[i], node_time, mode.strict)) continue;
    a_ids.push_back(ids[i]);
    a_times.push_back(times[i]);
    a_w.push_back(w ? w[i] : 1.0f);
  }
  const int64_t m = static_cast<int64_t>(a_ids.size());
  if (mode.temporal == Temporal::kUniform) {
    return reference_run(a_ids.data(), a_w.data(), m, stream, k, mode.replacement, mode.weighting);
  }
  std::vector<int64_t> order(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return std::make_pair(-a_times[x], x) < std::make_pair(-a_times[y], y);
  });
  if (k >= 0 && k < m) order.resize(static_cast<size_t>(k));
  std::sort(order.begin(), order.end());
  std::vector<int64_t> out;
  for (int64_t i : order) out.push_back(a_ids[i]);
  return out;
}

// The reference sample of node v at `node_time`: (neighbor, relation) pairs. `relations`
// empty: untyped (relation 0); else per-relation runs in increasing relation, each with
// fanouts.of(r) and the relation's stream.
inline std::vector<std::pair<int64_t, int32_t>> reference_temporal_sample(
    const graph::Csr& g, const std::vector<int32_t>& relations, int32_t num_relations,
    const std::vector<float>& w, const std::vector<int64_t>& times, int64_t v, int64_t node_time,
    uint64_t hop, const TypedFanouts& fanouts, const TemporalMode& mode) {
  const uint64_t node = node_key(hop, v);
  std::vector<std::pair<int64_t, int32_t>> out;
  if (relations.empty()) {
    const int64_t b = g.indptr[v], d = g.indptr[v + 1] - b;
    for (int64_t u :
         reference_temporal_run(g.indices.data() + b, w.empty() ? nullptr : &w[b], times.data() + b,
                                d, node, fanouts.fanout, node_time, mode)) {
      out.emplace_back(u, 0);
    }
    return out;
  }
  for (int32_t r = 0; r < num_relations; ++r) {
    std::vector<int64_t> ids, ts;
    std::vector<float> ws;
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      if (relations[e] != r) continue;
      ids.push_back(g.indices[e]);
      ts.push_back(times[e]);
      ws.push_back(w.empty() ? 1.0f : w[e]);
    }
    if (ids.empty()) continue;
    for (int64_t u :
         reference_temporal_run(ids.data(), ws.data(), ts.data(), static_cast<int64_t>(ids.size()),
                                relation_key(node, r), fanouts.of(r), node_time, mode)) {
      out.emplace_back(u, r);
    }
  }
  return out;
}

// The reference temporal multi-hop sampler: frontier entries are (node, time) pairs,
// relabelled with std::map.
inline SampledBatch reference_temporal_blocks(
    const graph::Csr& g, const std::vector<int32_t>& relations, int32_t num_relations,
    const std::vector<float>& w, const std::vector<int64_t>& times,
    const std::vector<int64_t>& seeds, const std::vector<int64_t>& seed_times,
    const BlockOptions& options, const TemporalMode& mode) {
  SampledBatch batch;
  batch.seeds = seeds;
  batch.seed_times = seed_times;
  std::vector<int64_t> nodes = seeds, node_times = seed_times;
  std::map<std::pair<int64_t, int64_t>, int64_t> local;
  for (size_t i = 0; i < seeds.size(); ++i) local[{seeds[i], seed_times[i]}] = i;
  for (size_t hop = 0; hop < options.fanouts.num_hops(); ++hop) {
    Block block;
    block.num_dst = static_cast<int64_t>(nodes.size());
    block.indptr.push_back(0);
    const uint64_t key = hop_key(options.key, static_cast<int>(hop));
    const TypedFanouts f{options.fanouts.hops[hop], options.fanouts.relations_of(hop)};
    for (int64_t i = 0; i < block.num_dst; ++i) {
      const int64_t t = node_times[i];
      for (auto [u, r] : reference_temporal_sample(g, relations, num_relations, w, times, nodes[i],
                                                   t, key, f, mode)) {
        auto it = local.find({u, t});
        if (it == local.end()) {
          it = local.emplace(std::make_pair(u, t), static_cast<int64_t>(nodes.size())).first;
          nodes.push_back(u);
          node_times.push_back(t);
        }
        block.indices.push_back(it->second);
        if (!relations.empty()) block.etypes.push_back(r);
      }
      block.indptr.push_back(static_cast<int64_t>(block.indices.size()));
    }
    block.num_src = static_cast<int64_t>(nodes.size());
    block.src_nodes = nodes;
    block.src_times = node_times;
    batch.blocks.push_back(block);
  }
  batch.input_nodes = nodes;
  return batch;
}

inline void expect_same_temporal_batch(const SampledBatch& a, const SampledBatch& b) {
  expect_same_batch(a, b);
  EXPECT_EQ(a.seed_times, b.seed_times);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    EXPECT_EQ(a.blocks[i].src_times, b.blocks[i].src_times) << "block " << i;
  }
}

// `count` seeds over n nodes with times in [0, range): distinct (node, time) pairs, and
// some nodes drawn at two times.
inline void temporal_seeds(int64_t n, int64_t count, int64_t range, uint64_t seed,
                           std::vector<int64_t>* seeds, std::vector<int64_t>* seed_times) {
  Rng rng(stream_key(seed, 6));
  std::set<std::pair<int64_t, int64_t>> seen;
  seeds->clear();
  seed_times->clear();
  while (static_cast<int64_t>(seeds->size()) < count) {
    const bool again = !seeds->empty() && rng.below(5) == 0;  // a seed already drawn
    const int64_t v = again ? (*seeds)[rng.below(seeds->size())]
                            : static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(range)));
    if (!seen.insert({v, t}).second) continue;
    seeds->push_back(v);
    seed_times->push_back(t);
  }
}

}  // namespace partita::sample::testing
