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
// given, are repeated alike into repeated_relations, so typed rows stay sorted by relation.
inline graph::Csr with_repeats(const graph::Csr& g, const std::vector<int32_t>& relations,
                               std::vector<int32_t>& repeated_relations) {
  graph::Csr out;
  out.indptr.push_back(0);
  for (int64_t v = 0; v < g.num_rows(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int copies = (e - g.indptr[v]) % 3 == 1 ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        out.indices.push_back(g.indices[e]);
        if (!relations.empty()) repeated_relations.push_back(relations[e]);
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

constexpr int64_t kTimeRange = 50;  // edge and node times in [0, 50): many ties

// A temporal test graph: CSC, relations (empty: untyped), weights and times per entry.
struct TimedGraph {
  graph::Csr g;
  std::vector<int32_t> relations;
  int32_t num_relations = 0;
  std::vector<float> w;
  std::vector<int64_t> times;

  CscView view() const {
    CscView v = csc_view_of(g, w, relations);
    v.times = ArrayView<const int64_t>(times);
    return v;
  }
};

// repeats: some (source, destination) pairs appear twice, at two times.
inline TimedGraph untyped_graph(bool repeats, uint64_t seed) {
  TimedGraph t;
  graph::Csr g = random_graph(400, 12, 4, 150, seed);
  std::vector<int32_t> none;
  t.g = repeats ? with_repeats(g, {}, none) : g;
  t.w = random_weights(t.g.num_entries(), seed);
  t.times = random_times(t.g.num_entries(), kTimeRange, seed);
  return t;
}

inline TimedGraph typed_graph(bool repeats, uint64_t seed) {
  TimedGraph t;
  TypedGraph typed = random_typed_graph(400, 3, 6, 4, 100, /*empty_relation=*/-1, seed);
  t.num_relations = typed.num_relations;
  if (repeats) {
    t.g = with_repeats(typed.g, typed.relations, t.relations);
  } else {
    t.g = typed.g;
    t.relations = typed.relations;
  }
  t.w = random_weights(t.g.num_entries(), seed);
  t.times = random_times(t.g.num_entries(), kTimeRange, seed);
  return t;
}

// Rows [first, end) of a temporal graph as a partition: indptr rebased to 0, indices
// global, relations, weights, times and stream ids (`ids`, one per row of the graph)
// sliced. The arrays live in the part; view() points into them.
struct TimedPart {
  std::vector<int64_t> indptr, indices, times, stream_ids;
  std::vector<int32_t> relations;
  std::vector<float> weights;
  int64_t first = 0;

  CscView view() const {
    CscView v;
    v.indptr = ArrayView<const int64_t>(indptr);
    v.indices = ArrayView<const int64_t>(indices);
    v.times = ArrayView<const int64_t>(times);
    v.relations = ArrayView<const int32_t>(relations);
    v.weights = ArrayView<const float>(weights);
    v.stream_ids = ArrayView<const int64_t>(stream_ids);
    v.first_row = first;
    return v;
  }
};

inline TimedPart make_timed_part(const TimedGraph& t, const std::vector<int64_t>& ids,
                                 int64_t first, int64_t end) {
  TimedPart p;
  p.first = first;
  const int64_t b = t.g.indptr[first], e = t.g.indptr[end];
  for (int64_t r = first; r <= end; ++r) p.indptr.push_back(t.g.indptr[r] - b);
  p.indices.assign(t.g.indices.begin() + b, t.g.indices.begin() + e);
  p.times.assign(t.times.begin() + b, t.times.begin() + e);
  if (!t.relations.empty()) p.relations.assign(t.relations.begin() + b, t.relations.begin() + e);
  p.weights.assign(t.w.begin() + b, t.w.begin() + e);
  p.stream_ids.assign(ids.begin() + first, ids.begin() + end);
  return p;
}

// The leakage check of one temporal batch on a graph where a (source, destination,
// relation) triple is one edge (edge_time maps it to its time), so that a sampled neighbor
// names the edge it came by. Over every hop: the dst entries are the previous frontier
// with its times (hop 0: the seeds with theirs); every block edge src -> dst exists, its
// time is <= the dst entry's time (strict: <), and its src entry carries the dst entry's
// time. Returns the number of edges checked.
using EdgeTimes = std::map<std::tuple<int64_t, int64_t, int32_t>, int64_t>;

inline EdgeTimes edge_times_of(const TimedGraph& t) {
  EdgeTimes edge_time;
  for (int64_t v = 0; v < t.g.num_rows(); ++v) {
    for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e) {
      const int32_t r = t.relations.empty() ? 0 : t.relations[e];
      EXPECT_TRUE(edge_time.emplace(std::make_tuple(t.g.indices[e], v, r), t.times[e]).second)
          << "the leakage check needs one edge per (source, destination, relation)";
    }
  }
  return edge_time;
}

inline int64_t check_no_leakage(const EdgeTimes& edge_time, const SampledBatch& b, bool strict) {
  int64_t checked = 0;
  std::vector<int64_t> frontier = b.seeds, frontier_times = b.seed_times;
  EXPECT_EQ(frontier_times.size(), frontier.size());
  for (size_t hop = 0; hop < b.blocks.size(); ++hop) {
    const Block& block = b.blocks[hop];
    EXPECT_EQ(block.src_times.size(), block.src_nodes.size());
    if (block.src_times.size() != block.src_nodes.size()) return checked;
    EXPECT_EQ(
        std::vector<int64_t>(block.src_nodes.begin(), block.src_nodes.begin() + block.num_dst),
        frontier);
    EXPECT_EQ(
        std::vector<int64_t>(block.src_times.begin(), block.src_times.begin() + block.num_dst),
        frontier_times);
    for (int64_t i = 0; i < block.num_dst; ++i) {
      for (int64_t j = block.indptr[i]; j < block.indptr[i + 1]; ++j) {
        const int64_t u = block.src_nodes[block.indices[j]];
        const int32_t r = block.etypes.empty() ? 0 : block.etypes[j];
        const auto it = edge_time.find({u, block.src_nodes[i], r});
        if (it == edge_time.end()) {
          ADD_FAILURE() << "no edge " << u << " -> " << block.src_nodes[i];
          return checked;
        }
        if (!allowed(it->second, block.src_times[i], strict)) {
          ADD_FAILURE() << "hop " << hop << ": edge " << u << " -> " << block.src_nodes[i]
                        << " at time " << it->second << " sampled for time " << block.src_times[i];
          return checked;
        }
        if (block.src_times[block.indices[j]] != block.src_times[i]) {
          ADD_FAILURE() << "hop " << hop << ": src entry " << block.indices[j]
                        << " does not carry its dst entry's time";
          return checked;
        }
        ++checked;
      }
    }
    frontier = block.src_nodes;
    frontier_times = block.src_times;
  }
  return checked;
}

}  // namespace partita::sample::testing
