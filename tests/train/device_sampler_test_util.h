#pragma once
// What the device sampler's tests share (device_sampler_test.cc,
// device_sampler_temporal_test.cc): small graphs in a partition's CSC layout, seeds, block
// options, the host pipeline to compare with, and field-by-field block comparison.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "partita/core/random.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/block_transfer.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/local_sampler.h"

namespace partita::train::device_test {

inline torch::Tensor ids(const std::vector<int64_t>& v) {
  return torch::tensor(v, torch::TensorOptions().dtype(torch::kInt64));
}

inline std::vector<int64_t> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kCPU).to(torch::kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// A graph in the layout of a partition's CSC: rows of distinct sources, typed rows sorted by
// (relation, source); streams keyed by a permutation of the ids (like original ids).
struct TestGraph {
  std::vector<int64_t> indptr{0};
  std::vector<int64_t> indices;
  std::vector<int32_t> relations;  // empty: untyped
  std::vector<int64_t> stream_ids;
  std::vector<int64_t> times;  // empty: no edge times
  std::vector<float> weights;  // empty: no edge weights
  int num_relations = 0;

  int64_t num_nodes() const { return static_cast<int64_t>(indptr.size()) - 1; }
  sample::CscView view() const {
    sample::CscView v;
    v.indptr = indptr;
    v.indices = indices;
    v.stream_ids = stream_ids;
    v.relations = relations;
    v.times = times;
    v.weights = weights;
    return v;
  }
  // Rows [begin, end) as a partition's view (global sources, offsets into the whole arrays).
  sample::CscView rows(int64_t begin, int64_t end) const {
    sample::CscView v = view();
    v.indptr = ArrayView<const int64_t>(indptr.data() + begin, end - begin + 1);
    v.first_row = begin;
    v.stream_ids = ArrayView<const int64_t>(stream_ids.data() + begin, end - begin);
    return v;
  }
};

// Degrees from 0 to `max_degree` (some rows empty, some below and above any fanout).
inline TestGraph random_graph(int64_t n, int relations, int64_t max_degree, uint64_t seed) {
  TestGraph g;
  g.num_relations = relations;
  Rng rng(seed);
  for (int64_t v = 0; v < n; ++v) {
    const uint64_t kind = rng.below(10);
    const int64_t d = kind == 0  ? 0
                      : kind < 5 ? static_cast<int64_t>(rng.below(6))
                      : kind < 9
                          ? static_cast<int64_t>(rng.below(20))
                          : static_cast<int64_t>(rng.below(static_cast<uint64_t>(max_degree) + 1));
    std::set<int64_t> sources;
    while (static_cast<int64_t>(sources.size()) < std::min(d, n))
      sources.insert(static_cast<int64_t>(rng.below(static_cast<uint64_t>(n))));
    std::vector<std::pair<int32_t, int64_t>> row;
    for (int64_t s : sources)
      row.emplace_back(relations > 0 ? static_cast<int32_t>(rng.below(relations)) : 0, s);
    std::sort(row.begin(), row.end());
    for (const auto& [r, s] : row) {
      g.indices.push_back(s);
      if (relations > 0) g.relations.push_back(r);
    }
    g.indptr.push_back(static_cast<int64_t>(g.indices.size()));
  }
  g.stream_ids.resize(static_cast<size_t>(n));
  std::iota(g.stream_ids.begin(), g.stream_ids.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(g.stream_ids[i], g.stream_ids[rng.below(static_cast<uint64_t>(i) + 1)]);
  for (int64_t& s : g.stream_ids) s += 1000003;  // not the global ids
  return g;
}

inline std::vector<int64_t> distinct_seeds(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), int64_t{0});
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(all[i], all[rng.below(static_cast<uint64_t>(i) + 1)]);
  all.resize(static_cast<size_t>(count));
  return all;
}

inline sample::BlockOptions block_options(sample::Fanouts fanouts, uint64_t batch = 3) {
  sample::BlockOptions o;
  o.fanouts = std::move(fanouts);
  o.key = {/*seed=*/7, /*epoch=*/2, batch};
  return o;
}

// The host pipeline: BlockBuilder over the kernel on `view`, blocks converted on the CPU with
// the whole-graph in-degrees of the input nodes.
struct HostBatch {
  sample::SampledBatch sampled;
  std::vector<nn::BlockTensors> tensors;
};

inline HostBatch host_batch(const TestGraph& g, const std::vector<int64_t>& seeds,
                            const sample::BlockOptions& options,
                            sample::LocalSamplerOptions so = sample::LocalSamplerOptions()) {
  so.edge_ids = true;
  sample::LocalSampler sampler(g.view(), so);
  HostBatch h;
  h.sampled = sample::sample_blocks(seeds, options, sampler);
  std::vector<int64_t> degrees;
  for (int64_t v : h.sampled.input_nodes) degrees.push_back(g.indptr[v + 1] - g.indptr[v]);
  h.tensors = h.sampled.blocks.empty() ? std::vector<nn::BlockTensors>{}
                                       : nn::to_block_tensors(h.sampled.blocks, degrees);
  return h;
}

// The host blocks' edge ids, block 0's first.
inline std::vector<int64_t> host_edge_ids(const HostBatch& h) {
  std::vector<int64_t> all;
  for (const sample::Block& b : h.sampled.blocks)
    all.insert(all.end(), b.edge_ids.begin(), b.edge_ids.end());
  return all;
}

inline void expect_same_tensor(const torch::Tensor& got, const torch::Tensor& want,
                               const std::string& what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined()) return;
  EXPECT_EQ(got.scalar_type(), want.scalar_type()) << what;
  EXPECT_TRUE(got.sizes() == want.sizes() && torch::equal(got, want))
      << what << ": got " << got.sizes() << ", want " << want.sizes();
}

inline void expect_same_block(const nn::BlockTensors& got, const nn::BlockTensors& want,
                              const std::string& what) {
  EXPECT_EQ(got.num_dst, want.num_dst) << what;
  EXPECT_EQ(got.num_src, want.num_src) << what;
  EXPECT_EQ(got.num_relations, want.num_relations) << what;
  nn::for_each_tensor(
      [&what](const char* name, const torch::Tensor& g, const torch::Tensor& w) {
        expect_same_tensor(g, w, what + "." + name);
      },
      got, want);
}

}  // namespace partita::train::device_test
