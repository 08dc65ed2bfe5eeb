// The synthetic generator: determinism across thread counts, shapes and invariants,
// option validation, and learnability (features help, neighborhoods help more).
#include "partita/data/generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/core/parameter_error.h"
#include "partita/data/dataset.h"

namespace partita::data {
namespace {

using partita::testing::read_file;
using partita::testing::TempDir;

const char* const kFiles[] = {"edges.npy",     "feat.npy",      "label.npy",
                              "train_idx.npy", "valid_idx.npy", "test_idx.npy"};

GenerateOptions small_options(const std::string& out) {
  GenerateOptions o;
  o.nodes = 3000;
  o.avg_degree = 6;
  o.feat_dim = 16;
  o.classes = 5;
  o.seed = 42;
  o.out_dir = out;
  return o;
}

TEST(Generate, SameBytesWhateverTheThreads) {
  TempDir dir;
  GenerateOptions o = small_options(dir / "t1");
  o.nodes = 70000;   // several node chunks
  o.avg_degree = 9;  // several edge chunks
  o.threads = 1;
  generate_synthetic(o);
  o.out_dir = dir / "t2";
  o.threads = 2;
  generate_synthetic(o);
  o.out_dir = dir / "t3";
  o.threads = 3;
  generate_synthetic(o);
  for (const char* f : kFiles) {
    const std::string a = read_file(dir / "t1/" + f);
    EXPECT_EQ(a, read_file(dir / "t2/" + f)) << f;
    EXPECT_EQ(a, read_file(dir / "t3/" + f)) << f;
  }
}

TEST(Generate, DifferentSeedDifferentGraph) {
  TempDir dir;
  GenerateOptions o = small_options(dir / "a");
  generate_synthetic(o);
  o.seed = 43;
  o.out_dir = dir / "b";
  generate_synthetic(o);
  for (const char* f : kFiles) EXPECT_NE(read_file(dir / "a/" + f), read_file(dir / "b/" + f)) << f;
}

TEST(Generate, ShapesAndInvariants) {
  TempDir dir;
  GenerateOptions o = small_options(dir / "g");
  o.avg_degree = 6.5;
  GenerateStats stats = generate_synthetic(o);
  EXPECT_EQ(stats.nodes, 3000);
  EXPECT_EQ(stats.edges, 19500);
  EXPECT_GT(stats.bytes_written, 19500 * 16 + 3000 * 16 * 4);

  NpyArray edges = NpyArray::open(dir / "g/edges.npy");
  edges.expect(DType::kInt64, 2);
  ASSERT_EQ(edges.dim(0), 19500);
  ASSERT_EQ(edges.dim(1), 2);
  ArrayView<const int64_t> e = edges.view<int64_t>();
  for (int64_t i = 0; i < edges.dim(0); ++i) {
    ASSERT_NE(e[2 * i], e[2 * i + 1]) << "self loop at edge " << i;
    ASSERT_TRUE(e[2 * i] >= 0 && e[2 * i] < 3000 && e[2 * i + 1] >= 0 && e[2 * i + 1] < 3000);
  }
  NpyArray feat = NpyArray::open(dir / "g/feat.npy");
  feat.expect(DType::kFloat32, 2);
  EXPECT_EQ(feat.dim(0), 3000);
  EXPECT_EQ(feat.dim(1), 16);

  Dataset ds = load_dataset(dir / "g", {});
  EXPECT_EQ(ds.num_nodes, 3000);
  EXPECT_EQ(ds.num_classes, 5);
  EXPECT_EQ(ds.self_loops_dropped, 0);
  EXPECT_EQ(ds.train_idx.size(), 1800u);
  EXPECT_EQ(ds.valid_idx.size(), 600u);
  EXPECT_EQ(ds.test_idx.size(), 600u);
  std::vector<int64_t> all = ds.train_idx;
  all.insert(all.end(), ds.valid_idx.begin(), ds.valid_idx.end());
  all.insert(all.end(), ds.test_idx.begin(), ds.test_idx.end());
  std::sort(all.begin(), all.end());
  for (int64_t v = 0; v < 3000; ++v) ASSERT_EQ(all[v], v);  // a partition of the nodes
  // Every class is populated roughly uniformly.
  std::vector<int64_t> per_class(5, 0);
  for (int64_t c : ds.labels) ++per_class[c];
  for (int64_t n : per_class) EXPECT_GT(n, 450);
}

TEST(Generate, HeavyTailedDegrees) {
  TempDir dir;
  GenerateOptions o = small_options(dir / "g");
  o.nodes = 20000;
  o.avg_degree = 10;
  generate_synthetic(o);
  Dataset ds = load_dataset(dir / "g", {});
  int64_t max_degree = 0;
  for (int64_t v = 0; v < ds.num_nodes; ++v)
    max_degree = std::max(max_degree, ds.in_edges.degree(v));
  const double mean = static_cast<double>(ds.num_edges()) / ds.num_nodes;
  EXPECT_GT(max_degree, 8 * mean);                     // hubs exist
  EXPECT_LT(max_degree, 2 * std::sqrt(20000.0 * 10));  // but are capped
}

uint64_t fnv1a(const std::vector<int64_t>& ids) {
  uint64_t h = 14695981039346656037ull;
  for (int64_t x : ids) h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
  return h;
}

TEST(Generate, DefaultSplitIsTheOriginal60_20_20) {
  // Golden values written by `partita generate` before the fraction flags existed
  // (--nodes 3000 --seed 42; the split depends only on nodes and seed).
  TempDir dir;
  const GenerateStats stats = generate_synthetic(small_options(dir / "g"));
  EXPECT_EQ(stats.split.train, 1800);
  EXPECT_EQ(stats.split.valid, 600);
  EXPECT_EQ(stats.split.test, 600);
  const std::vector<int64_t> train = read_npy_vector<int64_t>(dir / "g/train_idx.npy");
  const std::vector<int64_t> valid = read_npy_vector<int64_t>(dir / "g/valid_idx.npy");
  const std::vector<int64_t> test = read_npy_vector<int64_t>(dir / "g/test_idx.npy");
  ASSERT_EQ(train.size(), 1800u);
  ASSERT_EQ(valid.size(), 600u);
  ASSERT_EQ(test.size(), 600u);
  EXPECT_EQ(std::vector<int64_t>(train.begin(), train.begin() + 5),
            (std::vector<int64_t>{3, 4, 5, 6, 8}));
  EXPECT_EQ(fnv1a(train), 0x2715543f71e15479ull);
  EXPECT_EQ(fnv1a(valid), 0xf0eb963247319c8eull);
  EXPECT_EQ(fnv1a(test), 0x478bbdd9d9b95f62ull);
}

TEST(Generate, DefaultSplitSizesAreFloorFloorRest) {
  // The formula before the fraction flags: floor(0.6 N), floor(0.2 N), the rest.
  GenerateOptions o;
  for (int64_t n : {2, 3, 5, 7, 9, 10, 11, 99, 3000, 10007, 99999, 2400000, 2147483647}) {
    o.nodes = n;
    const SplitSizes s = split_sizes(o);
    EXPECT_EQ(s.train, n * 6 / 10) << n;
    EXPECT_EQ(s.valid, n * 2 / 10) << n;
    EXPECT_EQ(s.test, n - n * 6 / 10 - n * 2 / 10) << n;
  }
}

TEST(Generate, SplitSizesFollowTheFractions) {
  auto sizes = [](int64_t n, double train, double valid, double test) {
    GenerateOptions o;
    o.nodes = n;
    o.train_fraction = train;
    o.valid_fraction = valid;
    o.test_fraction = test;
    const SplitSizes s = split_sizes(o);
    return std::vector<int64_t>{s.train, s.valid, s.test};
  };
  using V = std::vector<int64_t>;
  // ogbn-products-like: 8% / 1% / 1%, the other 90% in no split.
  EXPECT_EQ(sizes(2400000, 0.08, 0.01, 0.01), (V{192000, 24000, 24000}));
  EXPECT_EQ(sizes(1001, 0.08, 0.01, 0.01), (V{80, 10, 10}));  // floors
  EXPECT_EQ(sizes(100, 0.29, 0.07, 0.57), (V{29, 7, 57}));    // 0.29 * 100 < 29 in doubles
  EXPECT_EQ(sizes(7, 0.5, 0.5, 0), (V{3, 4, 0}));  // sum 1: remainder to the last asked for
  EXPECT_EQ(sizes(7, 1, 0, 0), (V{7, 0, 0}));
  EXPECT_EQ(sizes(10, 0.7, 0.2, 0.1), (V{7, 2, 1}));  // 0.7 + 0.2 + 0.1 != 1 in doubles
  EXPECT_EQ(sizes(11, 0.7, 0.2, 0.1), (V{7, 2, 2}));
  EXPECT_EQ(sizes(10, 0.5, 0, 0), (V{5, 0, 0}));
}

TEST(Generate, FractionsOnlyChooseWhereTheSplitIsCut) {
  TempDir dir;
  GenerateOptions o = small_options(dir / "default");
  generate_synthetic(o);
  o.out_dir = dir / "small";
  o.train_fraction = 0.08;
  o.valid_fraction = 0.01;
  o.test_fraction = 0.01;
  const GenerateStats stats = generate_synthetic(o);
  EXPECT_EQ(stats.split.train, 240);
  EXPECT_EQ(stats.split.valid, 30);
  EXPECT_EQ(stats.split.test, 30);
  // The graph, features and labels do not depend on the split.
  for (const char* f : {"edges.npy", "feat.npy", "label.npy"}) {
    EXPECT_EQ(read_file(dir / "default/" + f), read_file(dir / "small/" + f)) << f;
  }
  Dataset ds = load_dataset(dir / "small", {});
  ASSERT_EQ(ds.train_idx.size(), 240u);
  ASSERT_EQ(ds.valid_idx.size(), 30u);
  ASSERT_EQ(ds.test_idx.size(), 30u);
  std::vector<int64_t> all = ds.train_idx;
  all.insert(all.end(), ds.valid_idx.begin(), ds.valid_idx.end());
  all.insert(all.end(), ds.test_idx.begin(), ds.test_idx.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());  // disjoint
  EXPECT_EQ(3000 - static_cast<int64_t>(all.size()), 2700);          // in no split

  // Same permutation, cut elsewhere: 0.6 / 0.2 / 0.1 keeps train and valid, halves test.
  o.out_dir = dir / "cut";
  o.train_fraction = 0.6;
  o.valid_fraction = 0.2;
  o.test_fraction = 0.1;
  generate_synthetic(o);
  for (const char* f : {"train_idx.npy", "valid_idx.npy"}) {
    EXPECT_EQ(read_file(dir / "default/" + f), read_file(dir / "cut/" + f)) << f;
  }
  const std::vector<int64_t> full = read_npy_vector<int64_t>(dir / "default/test_idx.npy");
  const std::vector<int64_t> half = read_npy_vector<int64_t>(dir / "cut/test_idx.npy");
  EXPECT_EQ(half.size(), 300u);
  EXPECT_TRUE(std::includes(full.begin(), full.end(), half.begin(), half.end()));
}

// Errors name the option's field (ParameterError); the fractions' sum names all three.
TEST(Generate, ValidatesOptionsNamingTheParameter) {
  auto expect_flag = [](GenerateOptions o, const std::string& parameter) {
    try {
      generate_synthetic(o);
      ADD_FAILURE() << "no error for " << parameter;
    } catch (const ParameterError& e) {
      EXPECT_EQ(e.parameter(), parameter) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(parameter + ": ", 0), 0u) << e.what();
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(parameter + ": ", 0), 0u) << e.what();
    }
  };
  TempDir dir;
  const GenerateOptions ok = small_options(dir / "never");
  GenerateOptions o = ok;
  o.nodes = 1;
  expect_flag(o, "nodes");
  o = ok;
  o.avg_degree = 0;
  expect_flag(o, "avg_degree");
  o.avg_degree = std::nan("");
  expect_flag(o, "avg_degree");
  o = ok;
  o.feat_dim = 0;
  expect_flag(o, "feat_dim");
  o = ok;
  o.classes = 1;
  expect_flag(o, "classes");
  o = ok;
  o.homophily = 1.5;
  expect_flag(o, "homophily");
  o = ok;
  o.power_law = 1;
  expect_flag(o, "power_law");
  o = ok;
  o.feature_noise = -1;
  expect_flag(o, "feature_noise");
  o = ok;
  o.out_dir = "";
  expect_flag(o, "out_dir");
  o = ok;
  o.nodes = int64_t{1} << 30;
  o.feat_dim = 1 << 20;
  expect_flag(o, "feat_dim");
  o = ok;
  o.classes = 3000;
  o.feat_dim = 1 << 20;
  expect_flag(o, "classes");
  o = ok;
  o.train_fraction = 1.5;
  expect_flag(o, "train_fraction");
  o.train_fraction = 0;  // a dataset needs training nodes
  expect_flag(o, "train_fraction");
  o.train_fraction = 0.0003;  // 0.9 of a node
  expect_flag(o, "train_fraction");
  o = ok;
  o.valid_fraction = -0.1;
  expect_flag(o, "valid_fraction");
  o = ok;
  o.test_fraction = std::nan("");
  expect_flag(o, "test_fraction");
  o = ok;
  o.test_fraction = 0.3;  // sums to 1.1
  expect_flag(o, "`train_fraction`, `valid_fraction`, `test_fraction`");
  o.test_fraction = 0.2 + 1e-10;  // within the tolerance: every node in a split
  o.out_dir = dir / "tolerance";
  EXPECT_EQ(generate_synthetic(o).split.test, 600);
}

// Nearest-centroid accuracy on the test split, centroids from the train split, using
// (a) a node's own features, (b) the mean of its in-neighbors' features (own features
// when it has none), (c) the mean over the node and its in-neighbors (GCN-like).
struct Accuracy {
  double features = 0, neighbors = 0, with_self = 0;
};

Accuracy nearest_centroid_accuracy(const Dataset& ds) {
  const int64_t f = ds.feat_dim(), c = ds.num_classes;
  std::vector<double> agg(static_cast<size_t>(ds.num_nodes * f), 0.0);
  for (int64_t v = 0; v < ds.num_nodes; ++v) {
    const int64_t deg = ds.in_edges.degree(v);
    for (int64_t k = ds.in_edges.indptr[v]; k < ds.in_edges.indptr[v + 1]; ++k) {
      const float* x = ds.features.row(ds.in_edges.indices[k]);
      for (int64_t j = 0; j < f; ++j) agg[v * f + j] += x[j] / static_cast<double>(deg);
    }
    if (deg == 0) {
      for (int64_t j = 0; j < f; ++j) agg[v * f + j] = ds.features.row(v)[j];
    }
  }
  auto accuracy = [&](auto value) {
    std::vector<double> centroid(static_cast<size_t>(c * f), 0.0);
    std::vector<int64_t> count(static_cast<size_t>(c), 0);
    for (int64_t v : ds.train_idx) {
      ++count[ds.labels[v]];
      for (int64_t j = 0; j < f; ++j) centroid[ds.labels[v] * f + j] += value(v, j);
    }
    for (int64_t k = 0; k < c; ++k)
      for (int64_t j = 0; j < f; ++j) centroid[k * f + j] /= std::max<int64_t>(1, count[k]);
    int64_t correct = 0;
    for (int64_t v : ds.test_idx) {
      int64_t best = 0;
      double best_d = 1e300;
      for (int64_t k = 0; k < c; ++k) {
        double d = 0;
        for (int64_t j = 0; j < f; ++j) d += std::pow(value(v, j) - centroid[k * f + j], 2);
        if (d < best_d) best_d = d, best = k;
      }
      correct += best == ds.labels[v];
    }
    return static_cast<double>(correct) / static_cast<double>(ds.test_idx.size());
  };
  Accuracy a;
  a.features = accuracy([&](int64_t v, int64_t j) { return double{ds.features.row(v)[j]}; });
  a.neighbors = accuracy([&](int64_t v, int64_t j) { return agg[v * f + j]; });
  a.with_self = accuracy([&](int64_t v, int64_t j) {
    const double k = static_cast<double>(ds.in_edges.degree(v));
    return k == 0 ? agg[v * f + j] : (agg[v * f + j] * k + ds.features.row(v)[j]) / (k + 1);
  });
  return a;
}

TEST(Generate, DefaultsAreLearnableMostlyFromNeighborhoods) {
  TempDir dir;
  GenerateOptions o;  // defaults: 10000 nodes, degree 10, 32 features, 8 classes
  o.out_dir = dir / "g";
  generate_synthetic(o);
  const Accuracy a = nearest_centroid_accuracy(load_dataset(dir / "g", {}));
  std::cout << "nearest-centroid accuracy, 8 classes: features " << a.features
            << ", in-neighbor mean " << a.neighbors << ", self + in-neighbor mean " << a.with_self
            << "\n";
  EXPECT_GT(a.features, 0.4);  // well above chance (0.125)
  EXPECT_LT(a.features, 0.6);
  EXPECT_GT(a.neighbors, 0.83);
  EXPECT_GT(a.with_self, a.neighbors);
}

TEST(Generate, NoHomophilyMeansNeighborsDoNotHelp) {
  TempDir dir;
  GenerateOptions o = small_options(dir / "g");
  o.homophily = 0;
  generate_synthetic(o);
  const Accuracy a = nearest_centroid_accuracy(load_dataset(dir / "g", {}));
  EXPECT_LT(a.neighbors, a.features);
}

}  // namespace
}  // namespace partita::data
