// Cora and CiteSeer in OGB's raw layout (shared/datasets/ogb-layout): counts and spot
// values checked against the files with zcat/awk.
#include <gtest/gtest.h>

#include <numeric>

#include "helpers/test_paths.h"
#include "partita/data/dataset.h"

namespace partita::data {
namespace {

std::string ogb_dir(const std::string& name) {
  return partita::testing::shared_datasets_dir() + "/ogb-layout/" + name;
}

double feature_sum(const FeatureMatrix& f) {
  return std::accumulate(f.data(), f.data() + f.rows() * f.cols(), 0.0);
}

int64_t nonzeros(const FeatureMatrix& f, int64_t row) {
  int64_t n = 0;
  for (int64_t j = 0; j < f.cols(); ++j) n += f.row(row)[j] != 0;
  return n;
}

std::vector<int64_t> in_neighbors(const Dataset& ds, int64_t v) {
  return {ds.in_edges.indices.begin() + ds.in_edges.indptr[v],
          ds.in_edges.indices.begin() + ds.in_edges.indptr[v + 1]};
}

TEST(RealDatasets, Cora) {
  LoadStats stats;
  Dataset ds = load_dataset(ogb_dir("cora"), {}, &stats);
  EXPECT_EQ(ds.layout, "ogb");
  EXPECT_EQ(ds.split, "public");
  EXPECT_EQ(ds.num_nodes, 2708);
  EXPECT_EQ(ds.input_edges, 10556);
  EXPECT_EQ(ds.num_edges(), 10556);  // both directions listed, no self loops or duplicates
  EXPECT_EQ(ds.self_loops_dropped, 0);
  EXPECT_EQ(ds.duplicates_dropped, 0);
  EXPECT_EQ(ds.feat_dim(), 1433);
  EXPECT_EQ(ds.num_classes, 7);
  EXPECT_EQ(ds.train_idx.size(), 140u);
  EXPECT_EQ(ds.valid_idx.size(), 500u);
  EXPECT_EQ(ds.test_idx.size(), 1000u);
  EXPECT_EQ(ds.train_idx.front(), 0);
  EXPECT_EQ(ds.test_idx.front(), 1708);
  EXPECT_EQ(ds.labels[0], 3);
  EXPECT_EQ(ds.labels[99], 6);
  EXPECT_EQ(ds.labels[2707], 3);
  EXPECT_EQ(nonzeros(ds.features, 0), 9);
  EXPECT_EQ(ds.features.row(0)[19], 1.0f);
  EXPECT_EQ(ds.features.row(0)[81], 1.0f);
  EXPECT_EQ(ds.features.row(0)[18], 0.0f);
  EXPECT_EQ(feature_sum(ds.features), 49216.0);
  EXPECT_EQ(in_neighbors(ds, 0), (std::vector<int64_t>{633, 1862, 2582}));
  EXPECT_GT(stats.text_bytes, 7761128);
  EXPECT_GT(stats.text_s, 0);

  LoadOptions undirected;
  undirected.undirected = true;
  Dataset sym = load_dataset(ogb_dir("cora"), undirected);
  EXPECT_EQ(sym.num_edges(), 10556);  // already symmetric
  EXPECT_EQ(sym.duplicates_dropped, 10556);
}

TEST(RealDatasets, CiteSeer) {
  Dataset ds = load_dataset(ogb_dir("citeseer"), {});
  EXPECT_EQ(ds.num_nodes, 3327);
  EXPECT_EQ(ds.input_edges, 9104);
  EXPECT_EQ(ds.num_edges(), 9104);
  EXPECT_EQ(ds.feat_dim(), 3703);
  EXPECT_EQ(ds.num_classes, 6);
  EXPECT_EQ(ds.train_idx.size(), 120u);
  EXPECT_EQ(ds.valid_idx.size(), 500u);
  EXPECT_EQ(ds.test_idx.size(), 1000u);
  EXPECT_EQ(ds.labels[0], 3);
  EXPECT_EQ(ds.labels[99], 1);
  EXPECT_EQ(nonzeros(ds.features, 0), 31);
  EXPECT_EQ(ds.features.row(0)[184], 1.0f);
  EXPECT_EQ(nonzeros(ds.features, 3326), 26);
  EXPECT_EQ(feature_sum(ds.features), 105165.0);
  EXPECT_EQ(in_neighbors(ds, 0), (std::vector<int64_t>{628}));
}

}  // namespace
}  // namespace partita::data
