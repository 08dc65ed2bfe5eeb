// Edge and node arrays of the numpy layout (data/edge_arrays.h): read, carried into the CSC
// in (source, time, listing position) order, repeats kept with edge_time and dropped (first
// kept) without; read in shares; written by the generator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

#include "data_test_util.h"
#include "partita/data/generate.h"
#include "partita/data/shard.h"

namespace partita::data {
namespace {

using testing::NumpyArrays;
using testing::TempDir;
using testing::write_numpy;

template <class T>
std::vector<T> values_of(const ExtraArray& a) {
  std::vector<T> out(a.values.size() / sizeof(T));
  std::memcpy(out.data(), a.values.data(), a.values.size());
  return out;
}

// Six listed edges of 4 nodes: (0,1) three times (times 5, 3, 3), a self loop, (1,2), (3,0).
NumpyArrays six_edges() {
  NumpyArrays a;
  a.edges = {0, 1, 1, 2, 2, 2, 0, 1, 3, 0, 0, 1};
  return a;
}
const std::vector<int64_t> kTimes = {5, 1, 0, 3, 9, 3};
const std::vector<float> kWeights = {1, 2, 3, 4, 5, 6};

void write_arrays(const std::string& dir, bool time, bool weight, bool feat) {
  if (time) write_npy<int64_t>(dir + "/edge_time.npy", kTimes);
  if (weight) write_npy<float>(dir + "/edge_weight.npy", kWeights);
  if (feat) {
    std::vector<float> f;
    for (int i = 0; i < 6; ++i)
      for (int c = 0; c < 2; ++c) f.push_back(static_cast<float>(10 * i + c));
    write_npy<float>(dir + "/edge_feat.npy", ArrayView<const float>(f), {6, 2});
  }
}

TEST(EdgeArrays, TimeKeepsRepeatedPairsInSourceTimePositionOrder) {
  TempDir tmp;
  write_numpy(tmp.path(), six_edges());
  write_arrays(tmp.path(), true, true, true);
  write_npy<int64_t>(tmp.path() + "/node_time.npy", std::vector<int64_t>{7, 8, 9, 10});
  const Dataset ds = load_dataset(tmp.path(), {});
  EXPECT_EQ(ds.input_edges, 6);
  EXPECT_EQ(ds.self_loops_dropped, 1);
  EXPECT_EQ(ds.duplicates_dropped, 0);
  // Row 0: (3, t9, edge 4); row 1: source 0 at (t3, edge 3), (t3, edge 5), (t5, edge 0);
  // row 2: (1, t1, edge 1).
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 1, 4, 5, 5}));
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{3, 0, 0, 0, 1}));
  ASSERT_EQ(ds.edge_arrays.size(), 3u);
  EXPECT_EQ(ds.edge_arrays[0].name, kEdgeTimeName);
  EXPECT_EQ(values_of<int64_t>(ds.edge_arrays[0]), (std::vector<int64_t>{9, 3, 3, 5, 1}));
  EXPECT_EQ(ds.edge_arrays[1].name, kEdgeWeightName);
  EXPECT_EQ(values_of<float>(ds.edge_arrays[1]), (std::vector<float>{5, 4, 6, 1, 2}));
  EXPECT_EQ(ds.edge_arrays[2].name, kEdgeFeatName);
  EXPECT_EQ(ds.edge_arrays[2].dim, 2);
  EXPECT_EQ(values_of<float>(ds.edge_arrays[2]),
            (std::vector<float>{40, 41, 30, 31, 50, 51, 0, 1, 10, 11}));
  ASSERT_EQ(ds.node_arrays.size(), 1u);
  EXPECT_EQ(ds.node_arrays[0].name, kNodeTimeName);
  EXPECT_EQ(values_of<int64_t>(ds.node_arrays[0]), (std::vector<int64_t>{7, 8, 9, 10}));
}

// Undirected: every listed edge but the self loop is stored both ways, each way once, with
// its edge's values.
TEST(EdgeArrays, UndirectedStoresEachTimedEdgeBothWays) {
  TempDir tmp;
  write_numpy(tmp.path(), six_edges());
  write_arrays(tmp.path(), true, true, false);
  LoadOptions load;
  load.undirected = true;
  const Dataset ds = load_dataset(tmp.path(), load);
  using Stored = std::tuple<int64_t, int64_t, int64_t, float>;  // src, dst, time, weight
  std::vector<Stored> want, got;
  for (int i = 0; i < 6; ++i) {
    const int64_t s = six_edges().edges[2 * i], d = six_edges().edges[2 * i + 1];
    if (s == d) continue;
    want.emplace_back(s, d, kTimes[i], kWeights[i]);
    want.emplace_back(d, s, kTimes[i], kWeights[i]);
  }
  const std::vector<int64_t> t = values_of<int64_t>(ds.edge_arrays[0]);
  const std::vector<float> w = values_of<float>(ds.edge_arrays[1]);
  for (int64_t v = 0; v < ds.num_nodes; ++v)
    for (int64_t k = ds.in_edges.indptr[v]; k < ds.in_edges.indptr[v + 1]; ++k) {
      got.emplace_back(ds.in_edges.indices[k], v, t[k], w[k]);
      if (k > ds.in_edges.indptr[v]) {  // ascending by (source, time)
        EXPECT_LE(std::make_pair(ds.in_edges.indices[k - 1], t[k - 1]),
                  std::make_pair(ds.in_edges.indices[k], t[k]));
      }
    }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

// Without edge_time a repeated pair is one edge, as without arrays: the graph is the same and
// the first listed edge's values are kept.
TEST(EdgeArrays, WithoutTimeRepeatsAreDroppedKeepingTheFirst) {
  TempDir plain, weighted;
  write_numpy(plain.path(), six_edges());
  write_numpy(weighted.path(), six_edges());
  write_arrays(weighted.path(), false, true, true);
  for (bool undirected : {false, true}) {
    LoadOptions load;
    load.undirected = undirected;
    const Dataset a = load_dataset(plain.path(), load);
    const Dataset b = load_dataset(weighted.path(), load);
    EXPECT_EQ(b.in_edges.indptr, a.in_edges.indptr);
    EXPECT_EQ(b.in_edges.indices, a.in_edges.indices);
    EXPECT_EQ(b.duplicates_dropped, a.duplicates_dropped);
    EXPECT_EQ(b.self_loops_dropped, a.self_loops_dropped);
    ASSERT_EQ(b.edge_arrays.size(), 2u);
    const std::vector<float> w = values_of<float>(b.edge_arrays[0]);
    // Directed rows: 0 <- 3 (edge 4), 1 <- 0 (edge 0 first of 0, 3, 5), 2 <- 1 (edge 1).
    const std::vector<float> want =
        undirected ? std::vector<float>{1, 5, 1, 2, 2, 5} : std::vector<float>{5, 1, 2};
    EXPECT_EQ(w, want);
  }
}

// A share holds its rows of every edge array and where they start in the listing.
TEST(EdgeArrays, ShareReadsItsRows) {
  TempDir tmp;
  write_numpy(tmp.path(), six_edges());
  write_arrays(tmp.path(), true, true, true);
  write_npy<int64_t>(tmp.path() + "/node_time.npy", std::vector<int64_t>{7, 8, 9, 10});
  const DatasetShard s = read_dataset_shard(tmp.path(), 1, 2);
  EXPECT_EQ(s.first_edge, 3);
  ASSERT_EQ(s.edge_arrays.size(), 3u);
  EXPECT_EQ(values_of<int64_t>(s.edge_arrays[0]), (std::vector<int64_t>{3, 9, 3}));
  EXPECT_EQ(values_of<float>(s.edge_arrays[1]), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(s.edge_arrays[2].rows(), 3);
  ASSERT_EQ(s.node_arrays.size(), 1u);
  EXPECT_EQ(values_of<int64_t>(s.node_arrays[0]), (std::vector<int64_t>{9, 10}));
}

std::string read_bytes(const std::string& path) { return partita::testing::read_file(path); }

// The generator's arrays: a function of the seed (not of threads), in their stated ranges,
// leaving every other file as without them.
TEST(EdgeArrays, GeneratedArraysAreDeterministicAndLeaveTheRestAlone) {
  TempDir tmp;
  GenerateOptions o;
  o.nodes = 300;
  o.avg_degree = 5;
  o.feat_dim = 3;
  o.classes = 3;
  o.seed = 9;
  o.threads = 1;
  o.out_dir = tmp.path() + "/plain";
  generate_synthetic(o);
  o.edge_time = o.edge_weight = o.node_time = true;
  o.edge_feat_dim = 4;
  o.out_dir = tmp.path() + "/a";
  generate_synthetic(o);
  o.threads = 3;
  o.out_dir = tmp.path() + "/b";
  generate_synthetic(o);
  for (const char* f : {"edges.npy", "feat.npy", "label.npy", "train_idx.npy"})
    EXPECT_EQ(read_bytes(tmp.path() + "/a/" + f), read_bytes(tmp.path() + "/plain/" + f)) << f;
  for (const char* f : {"edge_time.npy", "edge_weight.npy", "edge_feat.npy", "node_time.npy"})
    EXPECT_EQ(read_bytes(tmp.path() + "/a/" + f), read_bytes(tmp.path() + "/b/" + f)) << f;
  const auto t = read_npy_vector<int64_t>(tmp.path() + "/a/edge_time.npy");
  const auto w = read_npy_vector<float>(tmp.path() + "/a/edge_weight.npy");
  const auto n = read_npy_vector<int64_t>(tmp.path() + "/a/node_time.npy");
  const auto f = read_npy_vector<float>(tmp.path() + "/a/edge_feat.npy", 2);
  ASSERT_EQ(t.size(), 1500u);
  ASSERT_EQ(w.size(), 1500u);
  ASSERT_EQ(n.size(), 300u);
  ASSERT_EQ(f.size(), 1500u * 4);
  for (int64_t x : t) EXPECT_TRUE(x >= 0 && x < kGeneratedTimes) << x;
  for (int64_t x : n) EXPECT_TRUE(x >= 0 && x < kGeneratedTimes) << x;
  for (float x : w) EXPECT_TRUE(x >= 0.5f && x < 1.5f) << x;
  EXPECT_GT(std::set<int64_t>(t.begin(), t.end()).size(), 500u);  // not a constant
  // Loading keeps every listed edge but self loops (the generator draws none).
  const Dataset ds = load_dataset(tmp.path() + "/a", {});
  EXPECT_EQ(ds.in_edges.num_entries(), 1500);
}

}  // namespace
}  // namespace partita::data
