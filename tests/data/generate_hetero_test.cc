// generate_hetero (partita generate --hetero mag): byte-identical output whatever the
// thread count, exact counts per type and relation, endpoints of the right types, loading
// through load_dataset, and labels the graph carries (homophily).
#include <gtest/gtest.h>

#include <filesystem>

#include "data_test_util.h"
#include "partita/data/generate.h"

namespace partita::data::testing {
namespace {

using partita::testing::read_file;

HeteroGenerateOptions small_mag(const std::string& out, int threads) {
  HeteroGenerateOptions o;
  o.nodes = 30000;
  o.feat_dim = 6;
  o.classes = 12;
  o.seed = 5;
  o.out_dir = out;
  o.threads = threads;
  return o;
}

const std::vector<std::string> kFiles = {"hetero.json",
                                         "label.npy",
                                         "train_idx.npy",
                                         "valid_idx.npy",
                                         "test_idx.npy",
                                         "feat/paper.npy",
                                         "edges/author___affiliated_with___institution.npy",
                                         "edges/author___writes___paper.npy",
                                         "edges/paper___cites___paper.npy",
                                         "edges/paper___has_topic___field_of_study.npy"};

TEST(GenerateHetero, FullScaleCountsAreOgbnMags) {
  EXPECT_EQ(mag_type_counts(MagShape::kNodes),
            (std::vector<int64_t>{MagShape::kAuthors, MagShape::kFields, MagShape::kInstitutions,
                                  MagShape::kPapers}));
  EXPECT_EQ(mag_relation_edges(MagShape::kNodes),
            (std::vector<int64_t>{MagShape::kAffiliatedWith, MagShape::kWrites, MagShape::kCites,
                                  MagShape::kHasTopic}));
  const std::vector<int64_t> small = mag_type_counts(100);
  EXPECT_EQ(small, (std::vector<int64_t>{58, 3, 1, 38}));
}

TEST(GenerateHetero, SameBytesWhateverTheThreads) {
  TempDir dir;
  generate_hetero(small_mag(dir / "t1", 1));
  generate_hetero(small_mag(dir / "t3", 3));
  for (const auto& f : kFiles) {
    const std::string a = read_file(dir / "t1/" + f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, read_file(dir / "t3/" + f)) << f;
  }
  HeteroGenerateOptions other = small_mag(dir / "s6", 2);
  other.seed = 6;
  generate_hetero(other);
  EXPECT_NE(read_file(dir / "t1/edges/paper___cites___paper.npy"),
            read_file(dir / "s6/edges/paper___cites___paper.npy"));
}

TEST(GenerateHetero, LoadsWithExactCountsAndTypedEndpoints) {
  TempDir dir;
  const HeteroGenerateOptions o = small_mag(dir.path(), 2);
  const HeteroGenerateStats stats = generate_hetero(o);
  const std::vector<int64_t> counts = mag_type_counts(o.nodes);
  const std::vector<int64_t> edges = mag_relation_edges(o.nodes);
  EXPECT_EQ(stats.type_counts, counts);
  EXPECT_EQ(stats.relation_edges, edges);

  Dataset ds = load_dataset(dir.path(), {});
  ASSERT_TRUE(ds.hetero.has_value());
  const HeteroSchema& h = *ds.hetero;
  ASSERT_EQ(h.num_types(), 4);
  const char* names[] = {"author", "field_of_study", "institution", "paper"};
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(h.node_types[t].name, names[t]);
    EXPECT_EQ(h.node_types[t].count, counts[t]);
    EXPECT_EQ(h.node_types[t].feat_dim(), t == 3 ? o.feat_dim : 0);
  }
  EXPECT_EQ(ds.num_nodes, o.nodes);
  EXPECT_EQ(h.node_types[h.target_type].name, "paper");
  ASSERT_EQ(h.num_relations(), 8);
  EXPECT_EQ(h.triplet(2), "paper___cites___paper");
  EXPECT_EQ(h.triplet(5), "paper___rev_writes___author");
  int64_t input = 0;
  for (int64_t e : edges) input += e;
  EXPECT_EQ(ds.input_edges, input);
  EXPECT_EQ(ds.self_loops_dropped, 0);  // cites never draws one
  int64_t stored = 0;
  for (int r = 0; r < 4; ++r) {
    EXPECT_LE(h.relations[r].num_edges, edges[r]);
    EXPECT_GT(h.relations[r].num_edges, edges[r] / 2);
    EXPECT_EQ(h.relations[r + 4].num_edges, h.relations[r].num_edges);
    stored += h.relations[r].num_edges;
  }
  EXPECT_EQ(ds.duplicates_dropped, input - stored);
  EXPECT_EQ(ds.num_classes, o.classes);

  // Every entry's endpoints have its relation's types; cites mostly within a class.
  const int cites = 2;
  int64_t cites_total = 0, cites_same = 0;
  for (int64_t v = 0; v < ds.num_nodes; ++v) {
    for (int64_t j = ds.in_edges.indptr[v]; j < ds.in_edges.indptr[v + 1]; ++j) {
      const Relation& rel = h.relations[ds.edge_relation[j]];
      const int64_t u = ds.in_edges.indices[j];
      ASSERT_EQ(h.type_of(v), rel.dst_type);
      ASSERT_EQ(h.type_of(u), rel.src_type);
      if (ds.edge_relation[j] == cites) {
        ++cites_total;
        cites_same += ds.labels[u] == ds.labels[v];
      }
    }
  }
  // Expected share: h + (1 - h) / classes = 0.8 + 0.2 / 12, about 0.82.
  EXPECT_GT(static_cast<double>(cites_same) / static_cast<double>(cites_total), 0.75);
  const int64_t papers = counts[3];
  EXPECT_EQ(static_cast<int64_t>(ds.train_idx.size()), papers * 6 / 10);
  EXPECT_EQ(ds.train_idx.size() + ds.valid_idx.size() + ds.test_idx.size(),
            static_cast<size_t>(papers));
  for (int64_t v : ds.test_idx) ASSERT_EQ(h.type_of(v), 3);
}

TEST(GenerateHetero, BadOptionsNameTheParameter) {
  TempDir dir;
  auto expect_usage = [&](HeteroGenerateOptions o, const std::string& parameter) {
    try {
      generate_hetero(o);
      ADD_FAILURE() << "no error for " << parameter;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(parameter + ": ", 0), 0u) << e.what();
    }
  };
  HeteroGenerateOptions o = small_mag(dir.path(), 1);
  o.nodes = 99;
  expect_usage(o, "nodes");
  o = small_mag(dir.path(), 1);
  o.classes = 20000;  // more than the papers
  expect_usage(o, "classes");
  o = small_mag(dir.path(), 1);
  o.shape = "dblp";
  expect_usage(o, "shape");
  o = small_mag(dir.path(), 1);
  o.homophily = 1.5;
  expect_usage(o, "homophily");
  o = small_mag(dir.path(), 1);
  o.out_dir.clear();
  expect_usage(o, "out_dir");
  o = small_mag(dir.path(), 1);
  o.train_fraction = 0.9;
  expect_usage(o, "`train_fraction`, `valid_fraction`, `test_fraction`");
}

}  // namespace
}  // namespace partita::data::testing
