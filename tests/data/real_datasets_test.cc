// Cora and CiteSeer in OGB's raw layout (shared/datasets/ogb-layout): counts and spot
// values checked against the files with zcat/awk. The HeCo datasets in OGB's heterogeneous
// layout: the per-type and per-relation counts of shared/datasets/README.md (skipped when
// the data is absent).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
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

struct HecoExpected {
  std::string target;
  int64_t classes;
  std::map<std::string, int64_t> types;      // name -> count
  std::map<std::string, int64_t> relations;  // triplet -> edges
  std::map<std::string, int64_t> feat_dims;  // featured types only
  int64_t train20;
};

void check_heco(const std::string& name, const HecoExpected& want) {
  const std::string dir = ogb_dir(name);
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is absent";
  for (const char* split : {"heco20", "heco40", "heco60"}) {
    LoadOptions options;
    options.split = split;
    Dataset ds = load_dataset(dir, options);
    ASSERT_TRUE(ds.hetero.has_value());
    const HeteroSchema& h = *ds.hetero;
    EXPECT_EQ(h.node_types[h.target_type].name, want.target);
    EXPECT_EQ(ds.num_classes, want.classes);
    ASSERT_EQ(h.num_types(), static_cast<int>(want.types.size()));
    int64_t total = 0;
    for (const NodeType& t : h.node_types) {
      EXPECT_EQ(t.count, want.types.at(t.name)) << t.name;
      EXPECT_EQ(t.offset, total);
      total += t.count;
      const auto f = want.feat_dims.find(t.name);
      EXPECT_EQ(t.feat_dim(), f == want.feat_dims.end() ? 0 : f->second) << t.name;
    }
    EXPECT_EQ(ds.num_nodes, total);
    const int inputs = static_cast<int>(want.relations.size());
    ASSERT_EQ(h.num_relations(), 2 * inputs);
    int64_t edges = 0;
    for (int r = 0; r < inputs; ++r) {
      EXPECT_EQ(h.relations[r].num_edges, want.relations.at(h.triplet(r))) << h.triplet(r);
      EXPECT_EQ(h.relations[inputs + r].num_edges, h.relations[r].num_edges);
      EXPECT_EQ(h.relations[inputs + r].name, "rev_" + h.relations[r].name);
      edges += 2 * h.relations[r].num_edges;
    }
    EXPECT_EQ(ds.num_edges(), edges);
    EXPECT_EQ(ds.input_edges, edges / 2);
    EXPECT_EQ(ds.duplicates_dropped, 0);  // the conversion dropped them
    EXPECT_EQ(ds.self_loops_dropped, 0);
    const std::string s = split;
    const int64_t per_class = std::stoll(s.substr(4));
    EXPECT_EQ(static_cast<int64_t>(ds.train_idx.size()), want.train20 * per_class / 20);
    EXPECT_EQ(ds.valid_idx.size(), 1000u);
    EXPECT_EQ(ds.test_idx.size(), 1000u);
    const NodeType& target = h.node_types[h.target_type];
    for (const auto* ids : {&ds.train_idx, &ds.valid_idx, &ds.test_idx}) {
      for (int64_t v : *ids) {
        ASSERT_EQ(h.type_of(v), h.target_type);
        ASSERT_GE(ds.labels[v], 0);
      }
    }
    int64_t labelled = 0;
    for (int64_t l : ds.labels) labelled += l >= 0;
    EXPECT_EQ(labelled, target.count);
    // Every row sorted by (relation, source), sources of the relation's source type.
    for (int64_t v = 0; v < ds.num_nodes; ++v) {
      for (int64_t j = ds.in_edges.indptr[v]; j < ds.in_edges.indptr[v + 1]; ++j) {
        const Relation& rel = h.relations[ds.edge_relation[j]];
        ASSERT_EQ(h.type_of(v), rel.dst_type);
        ASSERT_EQ(h.type_of(ds.in_edges.indices[j]), rel.src_type);
        if (j > ds.in_edges.indptr[v]) {
          ASSERT_LT(std::make_pair(ds.edge_relation[j - 1], ds.in_edges.indices[j - 1]),
                    std::make_pair(ds.edge_relation[j], ds.in_edges.indices[j]));
        }
      }
    }
  }
}

TEST(RealDatasets, HecoAcm) {
  check_heco("heco-acm",
             {"paper",
              3,
              {{"paper", 4019}, {"author", 7167}, {"subject", 60}},
              {{"author___writes___paper", 13407}, {"paper___has_subject___subject", 4019}},
              {{"paper", 1902}, {"author", 1902}},
              60});
}

TEST(RealDatasets, HecoDblp) {
  check_heco("heco-dblp", {"author",
                           4,
                           {{"author", 4057}, {"paper", 14328}, {"term", 7723}, {"conference", 20}},
                           {{"author___writes___paper", 19645},
                            {"paper___published_in___conference", 14328},
                            {"paper___has_term___term", 85810}},
                           {{"author", 334}, {"paper", 4231}, {"term", 50}},
                           80});
}

TEST(RealDatasets, HecoFreebase) {
  check_heco("heco-freebase",
             {"movie",
              3,
              {{"movie", 3492}, {"actor", 33401}, {"director", 2502}, {"writer", 4459}},
              {{"movie___has_actor___actor", 65341},
               {"movie___has_director___director", 3762},
               {"movie___has_writer___writer", 6414}},
              {},
              60});
}

}  // namespace
}  // namespace partita::data
