// The arrays OGB ships beside a node-property graph (readers.h, read_ogb_arrays): a gzip CSV
// fixture written here (the shared datasets have none of these files) loads to exactly the
// Dataset of its numpy twin with edge_time.npy etc.; malformed files are one FormatError
// naming the file and the line.
#include <gtest/gtest.h>

#include <filesystem>

#include "data_test_util.h"

namespace partita::data {
namespace {

using testing::expect_load_error;
using testing::NumpyArrays;
using testing::OgbText;
using testing::TempDir;
using testing::write_gz;

// Five listed edges (a self loop, (0, 1) twice): years, weights, two feature columns; years of
// the four nodes.
const std::vector<int64_t> kYears = {2019, 2011, 2015, 2011, 2020};
const std::vector<float> kWeights = {1, 2.5f, 3, 0.25f, 5};
const std::vector<float> kFeats = {0, 1, 10, 11, 20, 21, 30, 31, 40, 41};
const std::vector<int64_t> kNodeYears = {2001, 2002, 2003, 2004};

void write_ogb_arrays(const std::string& dir) {
  std::string years, weights, feats, node_years;
  for (size_t i = 0; i < 5; ++i) {
    years += fmt::format("{}\n", kYears[i]);
    weights += fmt::format("{}\n", kWeights[i]);
    feats += fmt::format("{},{}\n", kFeats[2 * i], kFeats[2 * i + 1]);
  }
  for (int64_t y : kNodeYears) node_years += fmt::format("{}\n", y);
  write_gz(dir + "/raw/edge_year.csv.gz", years);
  write_gz(dir + "/raw/edge_weight.csv.gz", weights);
  write_gz(dir + "/raw/edge_feat.csv.gz", feats);
  write_gz(dir + "/raw/node_year.csv.gz", node_years);
}

void write_numpy_arrays(const std::string& dir) {
  write_npy<int64_t>(dir + "/edge_time.npy", kYears);
  write_npy<float>(dir + "/edge_weight.npy", kWeights);
  write_npy<float>(dir + "/edge_feat.npy", ArrayView<const float>(kFeats), {5, 2});
  write_npy<int64_t>(dir + "/node_time.npy", kNodeYears);
}

void expect_same(const ExtraArray& a, const ExtraArray& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.values, b.values) << a.name;
}

TEST(OgbArrays, LoadAsTheirNumpyTwin) {
  TempDir ogb, numpy;
  write_ogb(ogb.path(), OgbText{});
  write_ogb_arrays(ogb.path());
  write_numpy(numpy.path(), NumpyArrays{});
  write_numpy_arrays(numpy.path());
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    LoadOptions o;
    o.undirected = undirected;
    const Dataset a = load_dataset(ogb.path(), o), b = load_dataset(numpy.path(), o);
    EXPECT_EQ(a.in_edges.indptr, b.in_edges.indptr);
    EXPECT_EQ(a.in_edges.indices, b.in_edges.indices);
    EXPECT_EQ(a.duplicates_dropped, 0);  // edge_year keeps the repeated pair
    ASSERT_EQ(a.edge_arrays.size(), 3u);
    ASSERT_EQ(b.edge_arrays.size(), 3u);
    for (size_t k = 0; k < 3; ++k) expect_same(a.edge_arrays[k], b.edge_arrays[k]);
    ASSERT_EQ(a.node_arrays.size(), 1u);
    expect_same(a.node_arrays[0], b.node_arrays[0]);
    EXPECT_EQ(a.edge_arrays[0].rows(), undirected ? 8 : 4);
  }
}

// Each file is optional on its own: weights alone keep the first of a repeated pair.
TEST(OgbArrays, WeightsAloneKeepTheFirstOfARepeat) {
  TempDir ogb;
  write_ogb(ogb.path(), OgbText{});
  write_gz(ogb.path() + "/raw/edge_weight.csv.gz", "1\n2.5\n3\n0.25\n5\n");
  const Dataset ds = load_dataset(ogb.path(), {});
  EXPECT_EQ(ds.duplicates_dropped, 1);
  ASSERT_EQ(ds.edge_arrays.size(), 1u);
  const float* w = reinterpret_cast<const float*>(ds.edge_arrays[0].values.data());
  // Rows: 0 <- 3 (5), 1 <- 0 (listed first with 1), 2 <- 1 (2.5).
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{3, 0, 1}));
  EXPECT_EQ(std::vector<float>(w, w + 3), (std::vector<float>{5, 1, 2.5f}));
  EXPECT_TRUE(ds.node_arrays.empty());
}

TEST(OgbArrays, MalformedFilesNameTheFileAndLine) {
  TempDir ogb;
  write_ogb(ogb.path(), OgbText{});
  const std::string raw = ogb.path() + "/raw/";
  write_gz(raw + "edge_weight.csv.gz", "1\n2\n0\n4\n5\n");
  expect_load_error<FormatError>(ogb.path(), raw + "edge_weight.csv.gz",
                                 {"line 3 is 0; a weight must be finite and > 0"});
  write_gz(raw + "edge_weight.csv.gz", "1\n2\n3\n4\n");
  expect_load_error<FormatError>(
      ogb.path(), raw + "edge_weight.csv.gz",
      {"4 lines, but " + raw + "num-edge-list.csv.gz says 5 edges (one line per edge)"});
  std::filesystem::remove(raw + "edge_weight.csv.gz");
  write_gz(raw + "edge_year.csv.gz", "1\n2.5\n3\n4\n5\n");
  expect_load_error<FormatError>(ogb.path(), raw + "edge_year.csv.gz", {"line 2"});
  std::filesystem::remove(raw + "edge_year.csv.gz");
  write_gz(raw + "edge_feat.csv.gz", "1,2\n3,4\n5\n7,8\n9,10\n");
  expect_load_error<FormatError>(ogb.path(), raw + "edge_feat.csv.gz", {"line 3"});
  std::filesystem::remove(raw + "edge_feat.csv.gz");
  write_gz(raw + "node_year.csv.gz", "1\n2\n3\n4\n5\n");
  expect_load_error<FormatError>(ogb.path(), raw + "node_year.csv.gz",
                                 {"line 5: more than 4 lines", "says 4 nodes (one line per node)"});
}

}  // namespace
}  // namespace partita::data
