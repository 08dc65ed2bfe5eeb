// The Partita numpy layout: exact results on a hand-written dataset, and one test per kind
// of bad input asserting that the message names the file and the problem.
#include <gtest/gtest.h>

#include <cmath>

#include "data_test_util.h"
#include "helpers/test_paths.h"

namespace partita::data::testing {
namespace {

using partita::testing::read_file;

TEST(NumpyReader, TinyDatasetExact) {
  TempDir dir;
  write_numpy(dir.path(), NumpyArrays{});
  Dataset ds = load_dataset(dir.path(), {});
  EXPECT_EQ(ds.layout, "numpy");
  EXPECT_EQ(ds.num_nodes, 4);
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{3, 0, 1}));
  EXPECT_EQ(ds.input_edges, 5);
  EXPECT_EQ(ds.self_loops_dropped, 1);
  EXPECT_EQ(ds.duplicates_dropped, 1);
  ASSERT_EQ(ds.features.rows(), 4);
  ASSERT_EQ(ds.features.cols(), 3);
  EXPECT_EQ(std::vector<float>(ds.features.data(), ds.features.data() + 12), NumpyArrays{}.feats);
  EXPECT_EQ(ds.features.row(3)[1], 7.0f);
  EXPECT_EQ(ds.labels, (std::vector<int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train_idx, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ds.valid_idx, (std::vector<int64_t>{1}));
  EXPECT_EQ(ds.test_idx, (std::vector<int64_t>{2}));

  // Mapped features survive moving the dataset.
  Dataset moved = std::move(ds);
  EXPECT_EQ(moved.features.row(1)[0], -2.5f);
}

TEST(NumpyReader, UndirectedAddsReverseEdges) {
  TempDir dir;
  write_numpy(dir.path(), NumpyArrays{});
  LoadOptions options;
  options.undirected = true;
  options.threads = 2;
  Dataset ds = load_dataset(dir.path(), options);
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 2, 4, 5, 6}));
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{1, 3, 0, 2, 1, 0}));
  EXPECT_EQ(ds.duplicates_dropped, 2);
}

TEST(NumpyReader, MissingFile) {
  TempDir dir;
  write_numpy(dir.path(), NumpyArrays{});
  std::remove((dir / "valid_idx.npy").c_str());
  expect_load_error<IoError>(
      dir.path(), dir.path(),
      {"missing valid_idx.npy (or val_idx.npy, val_mask.npy, valid_mask.npy) (the numpy "
       "layout: docs/dataset-format.md)"});
}

TEST(NumpyReader, EmptyEdgeList) {
  TempDir dir;
  NumpyArrays a;
  a.edges.clear();
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "edges.npy", {"edge list is empty"});
}

TEST(NumpyReader, WrongDtype) {
  TempDir dir;
  write_numpy(dir.path(), NumpyArrays{});
  write_npy<int32_t>(dir / "label.npy", std::vector<int32_t>{0, 1, 2, 1});
  expect_load_error<FormatError>(dir.path(), dir / "label.npy",
                                 {"expected dtype int64, found int32"});
  write_numpy(dir.path(), NumpyArrays{});
  write_npy<double>(dir / "feat.npy", ArrayView<const double>(std::vector<double>(12, 1.0)),
                    {4, 3});
  expect_load_error<FormatError>(dir.path(), dir / "feat.npy",
                                 {"expected dtype float32, found float64"});
}

TEST(NumpyReader, WrongShape) {
  TempDir dir;
  NumpyArrays a;
  write_numpy(dir.path(), a);
  write_npy<int64_t>(dir / "edges.npy", ArrayView<const int64_t>(a.edges), {2, 5});
  expect_load_error<FormatError>(dir.path(), dir / "edges.npy",
                                 {"expected shape (E, 2), found (2, 5)"});
  write_npy<int64_t>(dir / "edges.npy", a.edges);
  expect_load_error<FormatError>(dir.path(), dir / "edges.npy", {"expected 2 dimension(s)"});
  write_numpy(dir.path(), a);
  write_npy<float>(dir / "feat.npy", a.feats);
  expect_load_error<FormatError>(dir.path(), dir / "feat.npy", {"expected 2 dimension(s)"});
}

TEST(NumpyReader, TruncatedNpy) {
  TempDir dir;
  write_numpy(dir.path(), NumpyArrays{});
  const std::string bytes = read_file(dir / "edges.npy");
  write_file(dir / "edges.npy", bytes.substr(0, bytes.size() - 8));
  expect_load_error<FormatError>(dir.path(), dir / "edges.npy", {"truncated"});
}

TEST(NumpyReader, LyingHugeShape) {
  TempDir dir;
  NumpyArrays a;
  write_numpy(dir.path(), a);
  // A header claiming 10^15 rows in front of 4 rows of data.
  std::string header = make_npy_header(DType::kFloat32, {1000000000000000, 3});
  write_file(dir / "feat.npy",
             header + std::string(reinterpret_cast<const char*>(a.feats.data()), 48));
  expect_load_error<FormatError>(dir.path(), dir / "feat.npy", {"truncated", "claims shape"});
  // A shape whose byte count overflows 64 bits.
  header = make_npy_header(DType::kInt64, {int64_t{1} << 62, 2});
  write_file(dir / "edges.npy", header);
  write_numpy(dir.path(), a);
  write_file(dir / "edges.npy", header);
  expect_load_error<FormatError>(dir.path(), dir / "edges.npy", {"too large"});
}

TEST(NumpyReader, RowCountsDisagree) {
  TempDir dir;
  NumpyArrays a;
  a.labels = {0, 1, 2};
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "label.npy",
                                 {"3 labels", dir / "feat.npy", "4 rows"});
}

TEST(NumpyReader, BadLabels) {
  TempDir dir;
  NumpyArrays a;
  a.labels = {0, 1, -2, 1};
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "label.npy", {"node 2 has label -2"});
  a.labels = {0, 1, int64_t{1} << 40, 1};
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "label.npy", {"node 2 has label"});
}

TEST(NumpyReader, BadSplitIds) {
  TempDir dir;
  NumpyArrays a;
  a.test = {2, 4};
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "test_idx.npy",
                                 {"entry 1", "node id 4 is outside [0, 4)"});
  a.test = {2, 2};
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "test_idx.npy",
                                 {"node id 2 is listed more than once"});
}

TEST(NumpyReader, EdgeIdOutOfRange) {
  TempDir dir;
  NumpyArrays a;
  a.edges[5] = 4;
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "edges.npy", {"edge 2 (2, 4)", "outside"});
}

TEST(NumpyReader, NonFiniteFeature) {
  TempDir dir;
  NumpyArrays a;
  a.feats[5] = std::nanf("");
  a.feats[10] = INFINITY;
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir / "feat.npy", {"row 1 column 2", "not finite"});
}

TEST(NumpyReader, LargerEdgeFileStreamsInChunks) {
  // More than one 1M-pair chunk, so the streaming and page release run across chunks.
  TempDir dir;
  NumpyArrays a;
  const int64_t n = 1000, e = (int64_t{1} << 20) + 12345;
  a.edges.resize(static_cast<size_t>(2 * e));
  for (int64_t i = 0; i < e; ++i) {
    a.edges[2 * i] = i % n;
    a.edges[2 * i + 1] = (i * 7 + 1) % n;
  }
  a.feats.assign(n, 1.0f);
  a.feat_dim = 1;
  a.labels.assign(n, 0);
  write_numpy(dir.path(), a);
  Dataset ds = load_dataset(dir.path(), {});
  EXPECT_EQ(ds.input_edges, e);
  EXPECT_EQ(ds.num_edges() + ds.self_loops_dropped + ds.duplicates_dropped, e);
  // (i % n, (7i + 1) % n) repeats with period n: n distinct pairs, none a self loop
  // unless 6i + 1 = 0 mod n, which has no solution for n = 1000.
  EXPECT_EQ(ds.num_edges(), n);
  EXPECT_EQ(ds.num_classes, 1);
}

}  // namespace
}  // namespace partita::data::testing
