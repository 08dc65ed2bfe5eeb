// The heterogeneous layouts (OGB raw and Partita numpy): an exact result on a hand-checked
// graph, both layouts giving identical datasets, the typed CSC against a brute-force
// reference on a random graph, and one test per kind of bad input asserting that the
// message starts with the offending file.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "hetero_test_util.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"

namespace partita::data::testing {
namespace {

std::vector<float> all_features(const FeatureMatrix& f) {
  return {f.data(), f.data() + f.rows() * f.cols()};
}

// Each relation held gets its reverse appended, in order: the name prefixed with rev_,
// the types swapped, marked reverse; the relations held before are left as they were.
TEST(HeteroSchema, AddReverseRelationsMirrorsEachRelationInOrder) {
  HeteroSchema h;
  h.relations = {{"writes", 1, 0, 4, false}, {"cites", 0, 0, 3, false}};
  h.add_reverse_relations();
  ASSERT_EQ(h.num_relations(), 4);
  const std::vector<std::tuple<std::string, int, int, bool>> expected = {{"writes", 1, 0, false},
                                                                         {"cites", 0, 0, false},
                                                                         {"rev_writes", 0, 1, true},
                                                                         {"rev_cites", 0, 0, true}};
  for (int r = 0; r < 4; ++r) {
    const Relation& rel = h.relations[r];
    EXPECT_EQ(std::tie(rel.name, rel.src_type, rel.dst_type, rel.reverse), expected[r]) << r;
    EXPECT_EQ(rel.num_edges, r % 2 == 0 ? 4 : 3) << r;
  }
}

void expect_tiny(const Dataset& ds) {
  ASSERT_TRUE(ds.hetero.has_value());
  const HeteroSchema& h = *ds.hetero;
  ASSERT_EQ(h.num_types(), 3);
  EXPECT_EQ(h.node_types[0].name, "paper");
  EXPECT_EQ(h.node_types[1].offset, 3);
  EXPECT_EQ(h.node_types[2].offset, 7);
  EXPECT_EQ(h.target_type, 0);
  EXPECT_EQ(ds.num_nodes, 9);
  ASSERT_EQ(h.num_relations(), 6);
  const std::vector<std::string> names = {"writes",     "cites",     "has_topic",
                                          "rev_writes", "rev_cites", "rev_has_topic"};
  const std::vector<int64_t> counts = {4, 3, 3, 4, 3, 3};
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(h.relations[r].name, names[r]);
    EXPECT_EQ(h.relations[r].num_edges, counts[r]) << r;
    EXPECT_EQ(h.relations[r].reverse, r >= 3);
  }
  EXPECT_EQ(h.triplet(3), "paper___rev_writes___author");
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 5, 9, 13, 14, 16, 16, 17, 19, 20}));
  EXPECT_EQ(ds.in_edges.indices,
            (std::vector<int64_t>{3, 4, 2, 1, 7, 4, 0, 2, 7, 6, 0, 1, 8, 0, 0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(ds.edge_relation,
            (std::vector<int32_t>{0, 0, 1, 4, 5, 0, 1, 1, 5, 0, 4, 4, 5, 3, 3, 3, 3, 2, 2, 2}));
  EXPECT_EQ(ds.input_edges, 12);
  EXPECT_EQ(ds.self_loops_dropped, 1);
  EXPECT_EQ(ds.duplicates_dropped, 1);
  EXPECT_EQ(ds.feat_dim(), 0);
  EXPECT_EQ(h.node_types[0].feat_dim(), 2);
  EXPECT_EQ(h.node_types[1].feat_dim(), 0);
  EXPECT_EQ(all_features(h.node_types[0].features),
            (std::vector<float>{0.5f, 1, -2, 3.25f, 1e-3f, 7}));
  EXPECT_EQ(all_features(h.node_types[2].features), (std::vector<float>{4, 5}));
  EXPECT_EQ(ds.labels, (std::vector<int64_t>{1, 0, 2, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train_idx, (std::vector<int64_t>{0}));
  EXPECT_EQ(ds.valid_idx, (std::vector<int64_t>{1}));
  EXPECT_EQ(ds.test_idx, (std::vector<int64_t>{2}));
}

TEST(HeteroReader, OgbTinyExact) {
  TempDir dir;
  write_ogb_hetero(dir.path(), tiny_hetero());
  Dataset ds = load_dataset(dir.path(), {});
  EXPECT_EQ(ds.layout, "ogb");
  EXPECT_EQ(ds.split, "main");
  expect_tiny(ds);
}

TEST(HeteroReader, NumpyTinyExact) {
  TempDir dir;
  write_numpy_hetero(dir.path(), tiny_hetero());
  Dataset ds = load_dataset(dir.path(), {});
  EXPECT_EQ(ds.layout, "numpy");
  expect_tiny(ds);
}

TEST(HeteroReader, NoReverseRelations) {
  TempDir dir;
  write_ogb_hetero(dir.path(), tiny_hetero());
  LoadOptions options;
  options.reverse_relations = false;
  Dataset ds = load_dataset(dir.path(), options);
  ASSERT_EQ(ds.hetero->num_relations(), 3);
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 3, 6, 7, 7, 7, 7, 7, 9, 10}));
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{3, 4, 2, 4, 0, 2, 6, 0, 1, 2}));
  EXPECT_EQ(ds.edge_relation, (std::vector<int32_t>{0, 0, 1, 0, 1, 1, 0, 2, 2, 2}));
  EXPECT_EQ(ds.duplicates_dropped, 1);
}

TEST(HeteroReader, UndirectedIsAUsageError) {
  TempDir dir;
  write_ogb_hetero(dir.path(), tiny_hetero());
  LoadOptions options;
  options.undirected = true;
  expect_load_error<ParameterError>(dir.path(), "undirected",
                                    {"rev_<name>", "by default", "`reverse_relations`"}, options);
}

// A random graph (target type not first, a relation within one type, one without edges)
// against a reference built with std::set; both layouts and 1 or 3 threads agree exactly.
HeteroSpec random_hetero(uint64_t seed) {
  Rng rng(stream_key(seed));
  HeteroSpec s;
  s.types = {{"b", 37, 0, {}}, {"a", 50, 3, {}}, {"c", 5, 0, {}}};
  for (int64_t i = 0; i < 50 * 3; ++i) s.types[1].feats.push_back(static_cast<float>(i) / 7);
  s.relations = {
      {"b", "x", "a", {}}, {"a", "y", "a", {}}, {"c", "z", "b", {}}, {"a", "empty", "c", {}}};
  const int64_t sizes[] = {400, 300, 60, 0};
  for (size_t r = 0; r < 4; ++r) {
    const auto count = [&](const std::string& n) {
      for (const auto& t : s.types)
        if (t.name == n) return t.count;
      return int64_t{0};
    };
    for (int64_t i = 0; i < sizes[r]; ++i) {
      s.relations[r].pairs.push_back(static_cast<int64_t>(rng.below(count(s.relations[r].head))));
      s.relations[r].pairs.push_back(static_cast<int64_t>(rng.below(count(s.relations[r].tail))));
    }
  }
  s.target = "a";
  for (int i = 0; i < 50; ++i) s.labels.push_back(i % 4);
  s.train = {3, 1, 40};
  s.valid = {7};
  s.test = {8, 9};
  return s;
}

TEST(HeteroReader, RandomGraphMatchesReference) {
  const HeteroSpec spec = random_hetero(7);
  const int64_t offset[] = {0, 37, 87};  // b, a, c
  const std::map<std::string, int> type = {{"b", 0}, {"a", 1}, {"c", 2}};
  // (dst, relation, src), dedup by the set.
  using Entry = std::tuple<int64_t, int32_t, int64_t>;
  std::set<Entry> want;
  int64_t loops = 0;
  for (int r = 0; r < 4; ++r) {
    const auto& rel = spec.relations[r];
    for (size_t i = 0; i < rel.pairs.size(); i += 2) {
      const int64_t s = rel.pairs[i] + offset[type.at(rel.head)];
      const int64_t d = rel.pairs[i + 1] + offset[type.at(rel.tail)];
      if (s == d) {
        ++loops;
        continue;
      }
      want.insert({d, r, s});
      want.insert({s, 4 + r, d});
    }
  }
  TempDir ogb, npy;
  write_ogb_hetero(ogb.path(), spec);
  write_numpy_hetero(npy.path(), spec);
  for (int threads : {1, 3}) {
    LoadOptions options;
    options.threads = threads;
    for (const auto& dir : {ogb.path(), npy.path()}) {
      Dataset ds = load_dataset(dir, options);
      std::vector<Entry> got;
      for (int64_t v = 0; v < ds.num_nodes; ++v) {
        for (int64_t j = ds.in_edges.indptr[v]; j < ds.in_edges.indptr[v + 1]; ++j) {
          got.emplace_back(v, ds.edge_relation[j], ds.in_edges.indices[j]);
        }
      }
      EXPECT_EQ(got, std::vector<Entry>(want.begin(), want.end()));
      EXPECT_EQ(ds.self_loops_dropped, loops);
      EXPECT_EQ(ds.hetero->relations[3].num_edges, 0);
      EXPECT_EQ(ds.hetero->relations[7].num_edges, 0);
      EXPECT_EQ(ds.hetero->relations[1].num_edges, ds.hetero->relations[5].num_edges);
      EXPECT_EQ(ds.hetero->target_type, 1);
      EXPECT_EQ(ds.train_idx, (std::vector<int64_t>{38, 40, 77}));
      EXPECT_EQ(ds.labels[36], -1);
      EXPECT_EQ(ds.labels[37], 0);
      EXPECT_EQ(ds.labels[39], 2);
      EXPECT_EQ(ds.labels[87], -1);
      EXPECT_EQ(ds.num_classes, 4);
    }
  }
}

TEST(HeteroReader, BothLayoutsLoadIdentically) {
  const HeteroSpec spec = random_hetero(11);
  TempDir ogb, npy;
  write_ogb_hetero(ogb.path(), spec);
  write_numpy_hetero(npy.path(), spec);
  const Dataset a = load_dataset(ogb.path(), {});
  const Dataset b = load_dataset(npy.path(), {});
  EXPECT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.in_edges.indptr, b.in_edges.indptr);
  EXPECT_EQ(a.in_edges.indices, b.in_edges.indices);
  EXPECT_EQ(a.edge_relation, b.edge_relation);
  EXPECT_EQ(a.input_edges, b.input_edges);
  EXPECT_EQ(a.self_loops_dropped, b.self_loops_dropped);
  EXPECT_EQ(a.duplicates_dropped, b.duplicates_dropped);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.train_idx, b.train_idx);
  EXPECT_EQ(a.valid_idx, b.valid_idx);
  EXPECT_EQ(a.test_idx, b.test_idx);
  ASSERT_EQ(a.hetero->num_types(), b.hetero->num_types());
  for (int t = 0; t < a.hetero->num_types(); ++t) {
    const NodeType &x = a.hetero->node_types[t], &y = b.hetero->node_types[t];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.count, y.count);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.feat_dim(), y.feat_dim());
    EXPECT_EQ(all_features(x.features), all_features(y.features));
  }
  ASSERT_EQ(a.hetero->num_relations(), b.hetero->num_relations());
  for (int r = 0; r < a.hetero->num_relations(); ++r) {
    EXPECT_EQ(a.hetero->triplet(r), b.hetero->triplet(r));
    EXPECT_EQ(a.hetero->relations[r].num_edges, b.hetero->relations[r].num_edges);
    EXPECT_EQ(a.hetero->relations[r].reverse, b.hetero->relations[r].reverse);
  }
  EXPECT_EQ(a.hetero->target_type, b.hetero->target_type);
}

// ---- Hostile input, OGB layout ----

struct OgbCase {
  TempDir dir;
  std::string raw;
  explicit OgbCase(const HeteroSpec& spec = tiny_hetero()) {
    write_ogb_hetero(dir.path(), spec);
    raw = dir.path() + "/raw/";
  }
};

TEST(HeteroReaderErrors, OgbRelationNamesUnknownType) {
  OgbCase c;
  write_gz(c.raw + "triplet-type-list.csv.gz",
           "author,writes,paper\npaper,cites,venue\npaper,has_topic,field\n");
  expect_load_error<FormatError>(c.dir.path(), c.raw + "triplet-type-list.csv.gz",
                                 {"line 2", "unknown node type 'venue'"});
}

TEST(HeteroReaderErrors, OgbEdgeIdPastTypeCount) {
  OgbCase c;
  const std::string path = c.raw + "relations/author___writes___paper/edge.csv.gz";
  write_gz(path, "0,0\n1,0\n4,1\n3,2\n1,0\n");
  expect_load_error<FormatError>(c.dir.path(), path,
                                 {"line 3", "source id 4 is outside [0, 4)", "author has 4 nodes"});
  write_gz(path, "0,0\n1,0\n1,3\n3,2\n1,0\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"line 3", "destination id 3", "paper"});
  write_gz(path, "0,0\n-1,0\n1,1\n3,2\n1,0\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"line 2", "source id -1"});
}

TEST(HeteroReaderErrors, OgbMissingNumEdgeList) {
  OgbCase c;
  const std::string path = c.raw + "relations/paper___cites___paper/num-edge-list.csv.gz";
  std::filesystem::remove(path);
  expect_load_error<FormatError>(c.dir.path(), path, {"missing"});
}

TEST(HeteroReaderErrors, OgbEdgeCountMismatch) {
  OgbCase c;
  const std::string folder = c.raw + "relations/paper___cites___paper/";
  write_gz(folder + "num-edge-list.csv.gz", "5\n");
  expect_load_error<FormatError>(c.dir.path(), folder + "edge.csv.gz", {"4 edge lines", "5"});
}

TEST(HeteroReaderErrors, OgbLabelFileWrongLength) {
  OgbCase c;
  const std::string path = c.raw + "node-label/paper/node-label.csv.gz";
  write_gz(path, "1\n0\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"2 labels", "'paper' has 3 nodes"});
}

TEST(HeteroReaderErrors, OgbSplitNamesUnlabelledType) {
  OgbCase c;
  const std::string path = c.dir.path() + "/split/main/nodetype-has-split.csv.gz";
  write_gz(path, "paper,author,field\nTrue,True,False\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"'author' has a split but is not labelled"});
}

TEST(HeteroReaderErrors, OgbTypeCountZero) {
  OgbCase c;
  const std::string path = c.raw + "num-node-dict.csv.gz";
  write_gz(path, "paper,author,field\n3,0,2\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"'author' has 0 nodes"});
}

TEST(HeteroReaderErrors, OgbNodeDictMalformed) {
  OgbCase c;
  const std::string path = c.raw + "num-node-dict.csv.gz";
  write_gz(path, "paper,author,field\n3,4\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"3 node types", "2 values"});
  write_gz(path, "paper,author,paper\n3,4,2\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"'paper' is listed twice"});
  write_gz(path, "paper,author,field\n3,x,2\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"not an integer"});
  write_gz(path, "paper,author,field\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"expected 2 lines"});
}

TEST(HeteroReaderErrors, OgbSeveralLabelledTypes) {
  OgbCase c;
  const std::string path = c.raw + "nodetype-has-label.csv.gz";
  write_gz(path, "paper,author,field\nTrue,True,False\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"2 node types are labelled", "only one"});
  write_gz(path, "paper,author,field\nFalse,False,False\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"no node type is labelled"});
  write_gz(path, "paper,author,field\nyes,False,False\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"neither True nor False"});
}

TEST(HeteroReaderErrors, OgbFeatureRowsWrong) {
  OgbCase c;
  const std::string path = c.raw + "node-feat/field/node-feat.csv.gz";
  write_gz(path, "4\n5\n6\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"more than 2 feature rows", "'field'"});
  std::filesystem::remove_all(c.raw + "node-feat/field");
  std::filesystem::create_directories(c.raw + "node-feat/venue");
  expect_load_error<FormatError>(c.dir.path(), c.raw + "node-feat/venue", {"not a node type"});
}

TEST(HeteroReaderErrors, OgbSplitIdPastTargetCount) {
  OgbCase c;
  const std::string path = c.dir.path() + "/split/main/paper/test.csv.gz";
  write_gz(path, "3\n");
  expect_load_error<FormatError>(c.dir.path(), path, {"line 1", "node id 3 is outside [0, 3)"});
}

TEST(HeteroReaderErrors, OgbDuplicateRelation) {
  OgbCase c;
  write_gz(c.raw + "triplet-type-list.csv.gz", "author,writes,paper\nauthor,writes,paper\n");
  expect_load_error<FormatError>(c.dir.path(), c.raw + "triplet-type-list.csv.gz",
                                 {"line 2", "listed twice"});
}

TEST(HeteroReaderErrors, OgbNoEdgesAtAll) {
  HeteroSpec spec = tiny_hetero();
  for (auto& r : spec.relations) r.pairs.clear();
  OgbCase c(spec);
  expect_load_error<FormatError>(c.dir.path(),
                                 c.raw + "relations/author___writes___paper/edge.csv.gz",
                                 {"no relation has an edge"});
}

// ---- Hostile input, numpy layout ----

struct NumpyCase {
  TempDir dir;
  std::string json;
  explicit NumpyCase(const HeteroSpec& spec = tiny_hetero()) {
    write_numpy_hetero(dir.path(), spec);
    json = dir.path() + "/hetero.json";
  }
};

TEST(HeteroReaderErrors, NumpyRelationNamesUnknownType) {
  HeteroSpec spec = tiny_hetero();
  NumpyCase c(spec);
  spec.relations[1].tail = "venue";
  write_file(c.json, hetero_json(spec));
  expect_load_error<FormatError>(c.dir.path(), c.json,
                                 {"relations[1]", "unknown node type 'venue'"});
  spec = tiny_hetero();
  spec.target = "venue";
  write_file(c.json, hetero_json(spec));
  expect_load_error<FormatError>(c.dir.path(), c.json, {"\"target\"", "'venue'"});
}

TEST(HeteroReaderErrors, NumpyEdgeIdPastTypeCount) {
  NumpyCase c;
  const std::string path = c.dir.path() + "/edges/paper___has_topic___field.npy";
  write_npy<int64_t>(path, ArrayView<const int64_t>(std::vector<int64_t>{0, 0, 1, 2}), {2, 2});
  expect_load_error<FormatError>(c.dir.path(), path,
                                 {"row 1", "destination id 2 is outside [0, 2)", "field"});
}

TEST(HeteroReaderErrors, NumpyMissingEdgeFile) {
  NumpyCase c;
  const std::string path = c.dir.path() + "/edges/paper___cites___paper.npy";
  std::filesystem::remove(path);
  expect_load_error<IoError>(c.dir.path(), path, {});
}

TEST(HeteroReaderErrors, NumpyLabelFileWrongLength) {
  NumpyCase c;
  write_npy<int64_t>(c.dir.path() + "/label.npy", std::vector<int64_t>{0, 1, 2, 0});
  expect_load_error<FormatError>(c.dir.path(), c.dir.path() + "/label.npy",
                                 {"4 labels", "'paper' has 3 nodes"});
}

TEST(HeteroReaderErrors, NumpyTypeCountZero) {
  HeteroSpec spec = tiny_hetero();
  NumpyCase c(spec);
  spec.types[2].count = 0;
  write_file(c.json, hetero_json(spec));
  expect_load_error<FormatError>(c.dir.path(), c.json, {"'field' has 0 nodes"});
}

TEST(HeteroReaderErrors, NumpyJsonMalformed) {
  NumpyCase c;
  write_file(c.json, "{\"node_types\": [");
  expect_load_error<FormatError>(c.dir.path(), c.json, {"invalid JSON"});
  write_file(c.json, "{\"node_types\": [], \"relations\": [], \"target\": \"x\"}");
  expect_load_error<FormatError>(c.dir.path(), c.json, {"non-empty list"});
  write_file(c.json, "{\"relations\": [], \"target\": \"x\"}");
  expect_load_error<FormatError>(c.dir.path(), c.json, {"missing key \"node_types\""});
}

TEST(HeteroReaderErrors, NumpyFeatureFiles) {
  NumpyCase c;
  const std::string path = c.dir.path() + "/feat/field.npy";
  write_npy<float>(path, ArrayView<const float>(std::vector<float>{1, 2, 3}), {3, 1});
  expect_load_error<FormatError>(c.dir.path(), path, {"3 rows", "'field' has 2 nodes"});
  write_npy<float>(path, ArrayView<const float>(std::vector<float>{1, NAN}), {2, 1});
  expect_load_error<FormatError>(c.dir.path(), path, {"row 1 column 0", "not finite"});
  std::filesystem::remove(path);
  write_npy<float>(c.dir.path() + "/feat/venue.npy", std::vector<float>{1});
  expect_load_error<FormatError>(c.dir.path(), c.dir.path() + "/feat/venue.npy",
                                 {"not <node type>.npy"});
}

TEST(HeteroReaderErrors, NumpySplitPastTargetCount) {
  NumpyCase c;
  write_npy<int64_t>(c.dir.path() + "/valid_idx.npy", std::vector<int64_t>{1, 3});
  expect_load_error<FormatError>(c.dir.path(), c.dir.path() + "/valid_idx.npy",
                                 {"entry 1", "node id 3 is outside [0, 3)"});
}

}  // namespace
}  // namespace partita::data::testing
