#pragma once
// Small graphs and a naive reference sampler for the sample/ tests. The reference follows
// the algorithms spelled out in neighbor_kernel.h with the plainest code (std::set,
// full sorts, linear scans, std::unordered_map) and the same per-node streams.
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

// The reference sample of one node.
// `stream_ids`: empty, or the id keying each row's stream (CscView::stream_ids).
inline std::vector<int64_t> reference_sample(const graph::Csr& g, const std::vector<float>& w,
                                             int64_t v, uint64_t hop, int64_t k,
                                             Replacement replacement, Weighting weighting,
                                             const std::vector<int64_t>& stream_ids = {}) {
  const bool weighted = weighting == Weighting::kEdgeWeight;
  const int64_t b = g.indptr[v], d = g.indptr[v + 1] - b;
  std::vector<int64_t> all;
  for (int64_t i = 0; i < d; ++i) {
    if (!weighted || positive_weight(w[b + i])) all.push_back(g.indices[b + i]);
  }
  if (k < 0) return all;
  Rng rng(node_key(hop, stream_ids.empty() ? v : stream_ids[v]));
  std::vector<int64_t> out;
  if (!weighted && replacement == Replacement::kWithout) {
    if (k >= d) return all;
    std::set<int64_t> taken;
    for (int64_t j = d - k; j < d; ++j) {
      int64_t t = static_cast<int64_t>(rng.below(j + 1));
      taken.insert(taken.count(t) ? j : t);
    }
    for (int64_t p : taken) out.push_back(g.indices[b + p]);
  } else if (!weighted) {
    for (int64_t i = 0; d > 0 && i < k; ++i) out.push_back(g.indices[b + rng.below(d)]);
  } else if (replacement == Replacement::kWithout) {
    if (k >= d) return all;
    std::vector<std::pair<double, int64_t>> keyed;
    for (int64_t i = 0; i < d; ++i) {
      double u = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;
      if (positive_weight(w[b + i])) keyed.emplace_back(-std::log(u) / w[b + i], i);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<int64_t> pos;
    for (int64_t i = 0; i < std::min<int64_t>(k, keyed.size()); ++i) pos.push_back(keyed[i].second);
    std::sort(pos.begin(), pos.end());
    for (int64_t p : pos) out.push_back(g.indices[b + p]);
  } else {
    std::vector<double> cum;
    double total = 0;
    int64_t last = -1;
    for (int64_t i = 0; i < d; ++i) {
      if (positive_weight(w[b + i])) total += w[b + i], last = i;
      cum.push_back(total);
    }
    for (int64_t j = 0; last >= 0 && j < k; ++j) {
      double x = rng.uniform() * total;
      int64_t i = 0;
      while (i < d && !(cum[i] > x)) ++i;
      out.push_back(g.indices[b + std::min(i, last)]);
    }
  }
  return out;
}

struct ReferenceMode {
  Replacement replacement = Replacement::kWithout;
  Weighting weighting = Weighting::kUniform;
};

// The reference multi-hop sampler: blocks built with std::unordered_map.
inline SampledBatch reference_blocks(const graph::Csr& g, const std::vector<float>& w,
                                     const std::vector<int64_t>& seeds, const BlockOptions& options,
                                     ReferenceMode mode) {
  SampledBatch batch;
  batch.seeds = seeds;
  std::vector<int64_t> nodes = seeds;
  std::unordered_map<int64_t, int64_t> local;
  for (size_t i = 0; i < seeds.size(); ++i) local[seeds[i]] = static_cast<int64_t>(i);
  for (size_t hop = 0; hop < options.fanouts.size(); ++hop) {
    Block block;
    block.num_dst = static_cast<int64_t>(nodes.size());
    block.indptr.push_back(0);
    const uint64_t key = hop_key(options.key, static_cast<int>(hop));
    for (int64_t i = 0; i < block.num_dst; ++i) {
      for (int64_t u : reference_sample(g, w, nodes[i], key, options.fanouts[hop], mode.replacement,
                                        mode.weighting)) {
        auto it = local.find(u);
        if (it == local.end()) {
          it = local.emplace(u, static_cast<int64_t>(nodes.size())).first;
          nodes.push_back(u);
        }
        block.indices.push_back(it->second);
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
  }
  EXPECT_EQ(a.input_nodes, b.input_nodes);
}

}  // namespace partita::sample::testing
