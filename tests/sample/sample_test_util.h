#pragma once
// Small graphs and a naive reference sampler for the sample/ tests. The reference follows
// the algorithms spelled out in neighbor_kernel.h with the plainest code (std::set,
// full sorts, linear scans, std::unordered_map) and the same per-node (and, on typed
// graphs, per-relation) streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "partita/core/random.h"
#include "partita/graph/csr.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/sample_key.h"

namespace partita::sample::testing {

// n nodes; row v gets about avg_degree random distinct sources (none equal to v), except
// the first `hubs` rows, which get hub_degree. Rows sorted and unique; some rows empty.
inline graph::Csr random_graph(int64_t n, int64_t avg_degree, int64_t hubs, int64_t hub_degree,
                               uint64_t seed) {
  Rng rng(stream_key(seed, 77));
  graph::Csr g;
  g.indptr.push_back(0);
  for (int64_t v = 0; v < n; ++v) {
    int64_t want = v < hubs ? hub_degree : static_cast<int64_t>(rng.below(2 * avg_degree + 1));
    if (v % 11 == 5) want = 0;  // isolated rows
    std::set<int64_t> row;
    while (static_cast<int64_t>(row.size()) < std::min(want, n - 1)) {
      int64_t u = static_cast<int64_t>(rng.below(n));
      if (u != v) row.insert(u);
    }
    g.indices.insert(g.indices.end(), row.begin(), row.end());
    g.indptr.push_back(static_cast<int64_t>(g.indices.size()));
  }
  return g;
}

// Node 0 with in-neighbors 1..leaves; leaves have no in-edges.
inline graph::Csr star_graph(int64_t leaves) {
  graph::Csr g;
  g.indptr.assign(static_cast<size_t>(leaves) + 2, leaves);
  g.indptr[0] = 0;
  for (int64_t u = 1; u <= leaves; ++u) g.indices.push_back(u);
  return g;
}

// One weight per entry in [0, 4), about a tenth of them 0; a few negative or NaN.
inline std::vector<float> random_weights(int64_t count, uint64_t seed) {
  Rng rng(stream_key(seed, 99));
  std::vector<float> w(static_cast<size_t>(count));
  for (float& x : w) {
    uint64_t r = rng.below(100);
    x = r < 8 ? 0.0f : r < 9 ? -1.0f : r < 10 ? NAN : static_cast<float>(rng.uniform() * 4.0);
  }
  return w;
}

inline bool positive_weight(float w) { return w > 0.0f && std::isfinite(w); }

// Successive sampling's inclusion probability of each entry: the sum over every ordered
// sequence of k distinct positive entries of the product of w[i] / (weight not yet taken)
// (the chi-square tests' expectation for weighted sampling without replacement; k at most
// the positive entries).
inline std::vector<double> inclusion_probabilities(const std::vector<float>& w, int64_t k) {
  const int64_t d = static_cast<int64_t>(w.size());
  std::vector<double> pi(w.size(), 0.0);
  std::vector<bool> taken(w.size(), false);
  std::vector<int64_t> path;
  double total = 0;
  for (float x : w) total += positive_weight(x) ? x : 0.0;
  auto walk = [&](auto&& self, double p, double left) -> void {
    if (static_cast<int64_t>(path.size()) == k) {
      for (int64_t i : path) pi[i] += p;
      return;
    }
    for (int64_t i = 0; i < d; ++i) {
      if (taken[i] || !positive_weight(w[i])) continue;
      taken[i] = true;
      path.push_back(i);
      self(self, p * w[i] / left, left - w[i]);
      path.pop_back();
      taken[i] = false;
    }
  };
  walk(walk, 1.0, total);
  return pi;
}

// Weighted runs of at most this many entries take the small-run rule (neighbor_kernel.h).
constexpr int64_t kSmallRun = 64;

// How neighbor_kernel.h decides between rejection and the exact fallbacks for a weighted
// run: p positive entries, m the largest positive weight, h those with w >= 0.5f * m.

struct WeightRule {
  int64_t positive = 0, heavy = 0;
  float max = 0;

  bool rejection_without(int64_t d, int64_t k) const { return 8 * (heavy - k + 1) >= d; }
  bool rejection_with(int64_t d) const { return 8 * heavy >= d; }
  // Runs of d <= kSmallRun that fail rejection_without: rejection among the untaken
  // entries (else Efraimidis-Spirakis).
  bool rejection_small() const { return 8 * heavy >= positive; }
};

inline WeightRule weight_rule(const float* w, int64_t d) {
  WeightRule r;
  for (int64_t i = 0; i < d; ++i) {
    if (positive_weight(w[i])) ++r.positive, r.max = std::max(r.max, w[i]);
  }
  for (int64_t i = 0; i < d; ++i) r.heavy += positive_weight(w[i]) && w[i] >= 0.5f * r.max;
  return r;
}

// A rejection trial's position and u from one draw x: the high and low words of x * d.
inline std::pair<int64_t, double> rejection_draw(Rng& rng, int64_t d) {
  const unsigned __int128 x = static_cast<unsigned __int128>(rng.next()) * static_cast<uint64_t>(d);
  return {static_cast<int64_t>(x >> 64), std::ldexp(static_cast<double>(uint64_t(x) >> 11), -53)};
}

// The reference algorithms of neighbor_kernel.h on one run of d entries (ids, weights)
// with fanout k, drawing from Rng(stream).
inline std::vector<int64_t> reference_run(const int64_t* ids, const float* w, int64_t d,
                                          uint64_t stream, int64_t k, Replacement replacement,
                                          Weighting weighting) {
  const bool weighted = weighting == Weighting::kEdgeWeight;
  std::vector<int64_t> all;
  for (int64_t i = 0; i < d; ++i) {
    if (!weighted || positive_weight(w[i])) all.push_back(ids[i]);
  }
  if (k < 0) return all;
  Rng rng(stream);
  std::vector<int64_t> out;
  if (!weighted && replacement == Replacement::kWithout) {
    if (k >= d) return all;
    std::set<int64_t> taken;
    for (int64_t j = d - k; j < d; ++j) {
      int64_t t = static_cast<int64_t>(rng.below(j + 1));
      taken.insert(taken.count(t) ? j : t);
    }
    for (int64_t p : taken) out.push_back(ids[p]);
  } else if (!weighted) {
    for (int64_t i = 0; d > 0 && i < k; ++i) out.push_back(ids[rng.below(d)]);
  } else if (replacement == Replacement::kWithout) {
    if (static_cast<int64_t>(all.size()) <= k) return all;
    const WeightRule rule = weight_rule(w, d);
    std::set<int64_t> taken;
    auto exponential_keys = [&](int64_t picks) {  // a draw per entry not taken yet
      std::vector<std::pair<double, int64_t>> keyed;
      for (int64_t i = 0; i < d; ++i) {
        if (taken.count(i)) continue;
        double u = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;
        if (positive_weight(w[i])) keyed.emplace_back(-std::log(u) / w[i], i);
      }
      std::sort(keyed.begin(), keyed.end());
      for (int64_t i = 0; i < picks; ++i) taken.insert(keyed[i].second);
    };
    if (rule.rejection_without(d, k)) {
      while (static_cast<int64_t>(taken.size()) < k) {
        auto [i, u] = rejection_draw(rng, d);
        if (positive_weight(w[i]) && u * rule.max < w[i]) taken.insert(i);
      }
    } else if (d <= kSmallRun && rule.rejection_small()) {
      std::vector<int64_t> left;  // untaken positive positions
      for (int64_t i = 0; i < d; ++i) {
        if (positive_weight(w[i])) left.push_back(i);
      }
      for (int64_t t = 0; t < 8 * k + 16 && static_cast<int64_t>(taken.size()) < k; ++t) {
        auto [j, u] = rejection_draw(rng, static_cast<int64_t>(left.size()));
        if (u * rule.max < w[left[j]]) {
          taken.insert(left[j]);
          left[j] = left.back();
          left.pop_back();
        }
      }
      exponential_keys(k - static_cast<int64_t>(taken.size()));
    } else {
      exponential_keys(k);
    }
    for (int64_t p : taken) out.push_back(ids[p]);
  } else {
    const WeightRule rule = weight_rule(w, d);
    if (rule.positive == 0) return out;
    if (rule.rejection_with(d)) {
      while (static_cast<int64_t>(out.size()) < k) {
        auto [i, u] = rejection_draw(rng, d);
        if (positive_weight(w[i]) && u * rule.max < w[i]) out.push_back(ids[i]);
      }
      return out;
    }
    std::vector<double> cum;
    double total = 0;
    int64_t last = -1;
    for (int64_t i = 0; i < d; ++i) {
      if (positive_weight(w[i])) total += w[i], last = i;
      cum.push_back(total);
    }
    for (int64_t j = 0; j < k; ++j) {
      double x = rng.uniform() * total;
      int64_t i = 0;
      while (i < d && !(cum[i] > x)) ++i;
      out.push_back(ids[std::min(i, last)]);
    }
  }
  return out;
}

// The reference sample of one node.
// `stream_ids`: empty, or the id keying each row's stream (CscView::stream_ids).
inline std::vector<int64_t> reference_sample(const graph::Csr& g, const std::vector<float>& w,
                                             int64_t v, uint64_t hop, int64_t k,
                                             Replacement replacement, Weighting weighting,
                                             const std::vector<int64_t>& stream_ids = {}) {
  const int64_t b = g.indptr[v], d = g.indptr[v + 1] - b;
  return reference_run(g.indices.data() + b, w.empty() ? nullptr : w.data() + b, d,
                       node_key(hop, stream_ids.empty() ? v : stream_ids[v]), k, replacement,
                       weighting);
}

// A typed graph: one CSC plus a relation id per entry, rows sorted by (relation, source).
struct TypedGraph {
  graph::Csr g;
  std::vector<int32_t> relations;
  int32_t num_relations = 0;

  CscView view(const std::vector<float>& w = {}) const { return csc_view_of(g, w, relations); }
};

// n nodes, `num_relations` relations. Each row draws about avg_degree entries per relation
// (hub rows: hub_degree for relation 0), except that relation r is left out of a row with
// probability r / (num_relations + 1) and relation `empty_relation` (if >= 0) has no edges
// at all. Sources distinct within a relation, != v; some rows empty.
inline TypedGraph random_typed_graph(int64_t n, int32_t num_relations, int64_t avg_degree,
                                     int64_t hubs, int64_t hub_degree, int32_t empty_relation,
                                     uint64_t seed) {
  Rng rng(stream_key(seed, 78));
  TypedGraph t;
  t.num_relations = num_relations;
  t.g.indptr.push_back(0);
  for (int64_t v = 0; v < n; ++v) {
    for (int32_t r = 0; r < num_relations; ++r) {
      if (r == empty_relation || v % 13 == 6) continue;  // isolated rows
      if (rng.below(static_cast<uint64_t>(num_relations) + 1) < static_cast<uint64_t>(r)) continue;
      int64_t want =
          v < hubs && r == 0 ? hub_degree : static_cast<int64_t>(rng.below(2 * avg_degree + 1));
      std::set<int64_t> row;
      while (static_cast<int64_t>(row.size()) < std::min(want, n - 1)) {
        int64_t u = static_cast<int64_t>(rng.below(n));
        if (u != v) row.insert(u);
      }
      t.g.indices.insert(t.g.indices.end(), row.begin(), row.end());
      t.relations.insert(t.relations.end(), row.size(), r);
    }
    t.g.indptr.push_back(static_cast<int64_t>(t.g.indices.size()));
  }
  return t;
}

// Rows [first, end) of a typed graph as a partition: indptr rebased to 0, indices global,
// relations, weights (w must have one per entry) and stream ids sliced.
struct TypedPart {
  std::vector<int64_t> indptr, indices, stream_ids;
  std::vector<int32_t> relations;
  std::vector<float> weights;
  CscView view;
};

inline TypedPart make_typed_part(const TypedGraph& t, const std::vector<float>& w,
                                 const std::vector<int64_t>& ids, int64_t first, int64_t end) {
  TypedPart p;
  const int64_t b = t.g.indptr[first], e = t.g.indptr[end];
  for (int64_t r = first; r <= end; ++r) p.indptr.push_back(t.g.indptr[r] - b);
  p.indices.assign(t.g.indices.begin() + b, t.g.indices.begin() + e);
  p.relations.assign(t.relations.begin() + b, t.relations.begin() + e);
  p.weights.assign(w.begin() + b, w.begin() + e);
  p.stream_ids.assign(ids.begin() + first, ids.begin() + end);
  p.view.indptr = ArrayView<const int64_t>(p.indptr);
  p.view.indices = ArrayView<const int64_t>(p.indices);
  p.view.relations = ArrayView<const int32_t>(p.relations);
  p.view.weights = ArrayView<const float>(p.weights);
  p.view.stream_ids = ArrayView<const int64_t>(p.stream_ids);
  p.view.first_row = first;
  return p;
}

// Per-relation fanouts of the reference (empty: `fanout` for every relation).
struct TypedFanouts {
  int64_t fanout = -1;
  std::vector<int64_t> per_relation;

  int64_t of(int32_t r) const { return per_relation.empty() ? fanout : per_relation[r]; }
};

// The reference sample of one node of a typed graph, re-derived from the contract: each
// relation's entries alone (a filter of the row, not its runs), in increasing relation,
// drawing from Rng(stream_key(stream_key(hop, id), r)).
inline std::vector<std::pair<int64_t, int32_t>> reference_typed_sample(
    const TypedGraph& t, const std::vector<float>& w, int64_t v, uint64_t hop,
    const TypedFanouts& fanouts, Replacement replacement, Weighting weighting,
    const std::vector<int64_t>& stream_ids = {}) {
  const uint64_t node =
      stream_key(hop, static_cast<uint64_t>(stream_ids.empty() ? v : stream_ids[v]));
  std::vector<std::pair<int64_t, int32_t>> out;
  for (int32_t r = 0; r < t.num_relations; ++r) {
    std::vector<int64_t> ids;
    std::vector<float> weights;
    for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e) {
      if (t.relations[e] != r) continue;
      ids.push_back(t.g.indices[e]);
      weights.push_back(w.empty() ? 1.0f : w[e]);
    }
    if (ids.empty()) continue;
    for (int64_t u : reference_run(ids.data(), weights.data(), static_cast<int64_t>(ids.size()),
                                   stream_key(node, static_cast<uint64_t>(r)), fanouts.of(r),
                                   replacement, weighting)) {
      out.emplace_back(u, r);
    }
  }
  return out;
}

struct ReferenceMode {
  Replacement replacement = Replacement::kWithout;
  Weighting weighting = Weighting::kUniform;
};

// The reference multi-hop sampler: blocks built with std::unordered_map. `typed`: the
// graph's relations (then g is typed->g and blocks get etypes), or null.
inline SampledBatch reference_blocks(const graph::Csr& g, const std::vector<float>& w,
                                     const std::vector<int64_t>& seeds, const BlockOptions& options,
                                     ReferenceMode mode, const TypedGraph* typed = nullptr) {
  SampledBatch batch;
  batch.seeds = seeds;
  std::vector<int64_t> nodes = seeds;
  std::unordered_map<int64_t, int64_t> local;
  for (size_t i = 0; i < seeds.size(); ++i) local[seeds[i]] = static_cast<int64_t>(i);
  for (size_t hop = 0; hop < options.fanouts.num_hops(); ++hop) {
    Block block;
    block.num_dst = static_cast<int64_t>(nodes.size());
    block.indptr.push_back(0);
    const uint64_t key = hop_key(options.key, static_cast<int>(hop));
    for (int64_t i = 0; i < block.num_dst; ++i) {
      std::vector<std::pair<int64_t, int32_t>> picks;
      if (typed) {
        TypedFanouts f{options.fanouts.hops[hop], options.fanouts.relations.empty()
                                                      ? std::vector<int64_t>{}
                                                      : options.fanouts.relations[hop]};
        picks =
            reference_typed_sample(*typed, w, nodes[i], key, f, mode.replacement, mode.weighting);
      } else {
        for (int64_t u : reference_sample(g, w, nodes[i], key, options.fanouts.hops[hop],
                                          mode.replacement, mode.weighting)) {
          picks.emplace_back(u, 0);
        }
      }
      for (auto [u, r] : picks) {
        auto it = local.find(u);
        if (it == local.end()) {
          it = local.emplace(u, static_cast<int64_t>(nodes.size())).first;
          nodes.push_back(u);
        }
        block.indices.push_back(it->second);
        if (typed) block.etypes.push_back(r);
      }
      block.indptr.push_back(static_cast<int64_t>(block.indices.size()));
    }
    block.num_src = static_cast<int64_t>(nodes.size());
    block.src_nodes = nodes;
    batch.blocks.push_back(block);
  }
  batch.input_nodes = nodes;
  return batch;
}

inline void expect_same_batch(const SampledBatch& a, const SampledBatch& b) {
  EXPECT_EQ(a.seeds, b.seeds);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "block " << i);
    EXPECT_EQ(a.blocks[i].num_dst, b.blocks[i].num_dst);
    EXPECT_EQ(a.blocks[i].num_src, b.blocks[i].num_src);
    EXPECT_EQ(a.blocks[i].indptr, b.blocks[i].indptr);
    EXPECT_EQ(a.blocks[i].indices, b.blocks[i].indices);
    EXPECT_EQ(a.blocks[i].src_nodes, b.blocks[i].src_nodes);
    EXPECT_EQ(a.blocks[i].etypes, b.blocks[i].etypes);
  }
  EXPECT_EQ(a.input_nodes, b.input_nodes);
}

}  // namespace partita::sample::testing
