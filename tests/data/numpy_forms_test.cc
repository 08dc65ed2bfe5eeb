// The forms PyG and DGL users save the numpy layout in (edge_index.npy [2, E], int32 edges,
// Fortran-order arrays, boolean masks, val_idx.npy, x.npy / y.npy, label -1 for nodes in no
// split): each reads to exactly the Dataset of the canonical form, and each misuse is one
// error naming the files.
#include <gtest/gtest.h>

#include <cstdio>

#include "data_test_util.h"

namespace partita::data::testing {
namespace {

// A version-1.0 .npy file with any header, as numpy writes it (data 64-byte aligned).
void write_raw_npy(const std::string& path, const std::string& descr, bool fortran,
                   const std::string& shape, const void* data, size_t bytes) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const size_t total = 10 + dict.size() + 1;
  dict.append((total + 63) / 64 * 64 - total, ' ');
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(static_cast<const char*>(data), bytes);
  write_file(path, out);
}

template <class T>
void write_raw_npy(const std::string& path, const std::string& descr, bool fortran,
                   const std::string& shape, const std::vector<T>& values) {
  write_raw_npy(path, descr, fortran, shape, values.data(), values.size() * sizeof(T));
}

// The canonical (src, dst) pairs of NumpyArrays as two rows: sources, then destinations.
template <class T>
std::vector<T> edge_rows(const NumpyArrays& a) {
  const size_t e = a.edges.size() / 2;
  std::vector<T> rows(2 * e);
  for (size_t i = 0; i < e; ++i) {
    rows[i] = static_cast<T>(a.edges[2 * i]);
    rows[e + i] = static_cast<T>(a.edges[2 * i + 1]);
  }
  return rows;
}

void expect_same_dataset(const Dataset& got, const Dataset& want) {
  EXPECT_EQ(got.num_nodes, want.num_nodes);
  EXPECT_EQ(got.in_edges.indptr, want.in_edges.indptr);
  EXPECT_EQ(got.in_edges.indices, want.in_edges.indices);
  EXPECT_EQ(got.input_edges, want.input_edges);
  EXPECT_EQ(got.self_loops_dropped, want.self_loops_dropped);
  EXPECT_EQ(got.duplicates_dropped, want.duplicates_dropped);
  ASSERT_EQ(got.features.rows(), want.features.rows());
  ASSERT_EQ(got.features.cols(), want.features.cols());
  const int64_t values = got.features.rows() * got.features.cols();
  EXPECT_EQ(std::vector<float>(got.features.data(), got.features.data() + values),
            std::vector<float>(want.features.data(), want.features.data() + values));
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.num_classes, want.num_classes);
  EXPECT_EQ(got.train_idx, want.train_idx);
  EXPECT_EQ(got.valid_idx, want.valid_idx);
  EXPECT_EQ(got.test_idx, want.test_idx);
}

class NumpyForms : public ::testing::Test {
 protected:
  void SetUp() override {
    write_numpy(canonical_.path(), a_);
    want_ = load_dataset(canonical_.path(), {});
    write_numpy(dir_.path(), a_);
  }
  void remove(const std::string& name) { ASSERT_EQ(std::remove((dir_ / name).c_str()), 0); }
  Dataset load() { return load_dataset(dir_.path(), {}); }

  NumpyArrays a_;
  TempDir canonical_, dir_;
  Dataset want_;
};

TEST_F(NumpyForms, EdgeIndexInt64AndInt32) {
  remove("edges.npy");
  write_raw_npy(dir_ / "edge_index.npy", "<i8", false, "(2, 5)", edge_rows<int64_t>(a_));
  expect_same_dataset(load(), want_);
  write_raw_npy(dir_ / "edge_index.npy", "<i4", false, "(2, 5)", edge_rows<int32_t>(a_));
  expect_same_dataset(load(), want_);
}

TEST_F(NumpyForms, Int32EdgesAreWidened) {
  std::vector<int32_t> pairs(a_.edges.begin(), a_.edges.end());
  write_raw_npy(dir_ / "edges.npy", "<i4", false, "(5, 2)", pairs);
  expect_same_dataset(load(), want_);
}

// np.save("edges.npy", edge_index.T): shape (E, 2) in Fortran order, i.e. the bytes of the
// C-order [2, E]; and the other way round for edge_index.npy; and a Fortran feat.npy.
TEST_F(NumpyForms, FortranOrderArraysReadInCOrder) {
  write_raw_npy(dir_ / "edges.npy", "<i8", true, "(5, 2)", edge_rows<int64_t>(a_));
  expect_same_dataset(load(), want_);

  remove("edges.npy");
  write_raw_npy(dir_ / "edge_index.npy", "<i8", true, "(2, 5)", a_.edges);
  std::vector<float> columns(12);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) columns[c * 4 + r] = a_.feats[r * 3 + c];
  write_raw_npy(dir_ / "feat.npy", "<f4", true, "(4, 3)", columns);
  expect_same_dataset(load(), want_);
}

TEST_F(NumpyForms, MasksAliasesAndPygNames) {
  for (const char* name :
       {"train_idx.npy", "valid_idx.npy", "test_idx.npy", "feat.npy", "label.npy"})
    remove(name);
  write_raw_npy(dir_ / "train_mask.npy", "|b1", false, "(4,)", std::vector<uint8_t>{1, 0, 0, 1});
  write_raw_npy(dir_ / "val_mask.npy", "|u1", false, "(4,)", std::vector<uint8_t>{0, 1, 0, 0});
  write_raw_npy(dir_ / "test_mask.npy", "|b1", true, "(4,)", std::vector<uint8_t>{0, 0, 1, 0});
  write_npy<float>(dir_ / "x.npy", ArrayView<const float>(a_.feats), {4, 3});
  write_npy<int64_t>(dir_ / "y.npy", a_.labels);
  expect_same_dataset(load(), want_);

  remove("val_mask.npy");
  write_npy<int64_t>(dir_ / "val_idx.npy", a_.valid);
  expect_same_dataset(load(), want_);
}

TEST_F(NumpyForms, UnlabelledNodesOutsideTheSplits) {
  // Node 3 leaves the train split and loses its label; node 2 (test) keeps class 2.
  a_.train = {0};
  a_.labels = {0, 1, 2, -1};
  write_numpy(dir_.path(), a_);
  Dataset ds = load();
  EXPECT_EQ(ds.labels, (std::vector<int64_t>{0, 1, 2, -1}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train_idx, (std::vector<int64_t>{0}));

  a_.labels = {0, 1, -1, -1};  // node 2 is in the test split
  write_numpy(dir_.path(), a_);
  expect_load_error<FormatError>(
      dir_.path(), dir_ / "label.npy",
      {"node 2 has label -1 (unlabelled) but is in the test split", dir_ / "test_idx.npy"});
  a_.labels = {0, 1, 2, -2};
  write_numpy(dir_.path(), a_);
  expect_load_error<FormatError>(dir_.path(), dir_ / "label.npy",
                                 {"node 3 has label -2", "or -1: unlabelled"});
  a_.train = {};
  a_.valid = {};
  a_.test = {};
  a_.labels = {-1, -1, -1, -1};
  write_numpy(dir_.path(), a_);
  expect_load_error<FormatError>(dir_.path(), dir_ / "label.npy", {"every node has label -1"});
}

TEST_F(NumpyForms, TwoFormsOfOneFileAreAnError) {
  write_raw_npy(dir_ / "edge_index.npy", "<i8", false, "(2, 5)", edge_rows<int64_t>(a_));
  expect_load_error<FormatError>(dir_.path(), dir_.path(),
                                 {"both edges.npy and edge_index.npy are present"});
  remove("edge_index.npy");
  write_raw_npy(dir_ / "train_mask.npy", "|b1", false, "(4,)", std::vector<uint8_t>{1, 0, 0, 1});
  expect_load_error<FormatError>(dir_.path(), dir_.path(),
                                 {"both train_idx.npy and train_mask.npy are present"});
  remove("train_mask.npy");
  write_npy<int64_t>(dir_ / "val_idx.npy", a_.valid);
  expect_load_error<FormatError>(dir_.path(), dir_.path(),
                                 {"both valid_idx.npy and val_idx.npy are present"});
  remove("val_idx.npy");
  write_npy<float>(dir_ / "x.npy", ArrayView<const float>(a_.feats), {4, 3});
  expect_load_error<FormatError>(dir_.path(), dir_.path(), {"both feat.npy and x.npy are present"});
}

TEST_F(NumpyForms, AllMissingFilesInOneMessage) {
  remove("label.npy");
  remove("train_idx.npy");
  remove("test_idx.npy");
  expect_load_error<IoError>(dir_.path(), dir_.path(),
                             {"missing label.npy (or y.npy), train_idx.npy (or train_mask.npy), "
                              "test_idx.npy (or test_mask.npy) (the numpy layout: "
                              "docs/dataset-format.md)"});
}

TEST_F(NumpyForms, BadMasks) {
  remove("train_idx.npy");
  write_raw_npy(dir_ / "train_mask.npy", "|b1", false, "(3,)", std::vector<uint8_t>{1, 0, 0});
  expect_load_error<FormatError>(dir_.path(), dir_ / "train_mask.npy",
                                 {"a mask of 3 entries", dir_ / "feat.npy", "4 rows"});
  write_raw_npy(dir_ / "train_mask.npy", "|u1", false, "(4,)", std::vector<uint8_t>{1, 0, 2, 0});
  expect_load_error<FormatError>(dir_.path(), dir_ / "train_mask.npy",
                                 {"entry 2 is 2; a mask holds 0 or 1"});
  write_npy<int64_t>(dir_ / "train_mask.npy", std::vector<int64_t>{1, 0, 0, 1});
  expect_load_error<FormatError>(dir_.path(), dir_ / "train_mask.npy",
                                 {"expected dtype bool (or uint8 0/1)", "found int64"});
  write_raw_npy(dir_ / "train_mask.npy", "|b1", false, "(2, 2)", std::vector<uint8_t>{1, 0, 0, 1});
  expect_load_error<FormatError>(dir_.path(), dir_ / "train_mask.npy",
                                 {"expected 1 dimension(s), found shape (2, 2)"});
}

TEST_F(NumpyForms, BadEdgeShapesAndDtypes) {
  // A [2, E] array under the [E, 2] name gets a pointer to edge_index.npy.
  write_raw_npy(dir_ / "edges.npy", "<i8", false, "(2, 5)", edge_rows<int64_t>(a_));
  expect_load_error<FormatError>(dir_.path(), dir_ / "edges.npy",
                                 {"expected shape (E, 2), found (2, 5)", "edge_index.npy"});
  remove("edges.npy");
  write_raw_npy(dir_ / "edge_index.npy", "<i8", false, "(5, 2)", a_.edges);
  expect_load_error<FormatError>(dir_.path(), dir_ / "edge_index.npy",
                                 {"expected shape (2, E)", "found (5, 2)"});
  write_raw_npy(dir_ / "edge_index.npy", "<f8", false, "(2, 5)", std::vector<double>(10, 1.0));
  expect_load_error<FormatError>(dir_.path(), dir_ / "edge_index.npy",
                                 {"expected dtype int64 (or int32), found float64"});
  write_raw_npy(dir_ / "edge_index.npy", "<i4", false, "(2, 2)", std::vector<int32_t>{0, 1, 4, 0});
  expect_load_error<FormatError>(dir_.path(), dir_ / "edge_index.npy",
                                 {"has a node id outside [0, 4)"});
}

TEST(NumpyFormsLarge, Int32EdgeIndexStreamsInChunks) {
  // More than one 1M-pair chunk through the conversion buffer.
  TempDir dir;
  NumpyArrays a;
  const int64_t n = 1000, e = (int64_t{1} << 20) + 777;
  std::vector<int32_t> rows(static_cast<size_t>(2 * e));
  a.edges.resize(static_cast<size_t>(2 * e));
  for (int64_t i = 0; i < e; ++i) {
    rows[i] = a.edges[2 * i] = i % n;
    rows[e + i] = a.edges[2 * i + 1] = (i * 7 + 1) % n;
  }
  a.feats.assign(n, 1.0f);
  a.feat_dim = 1;
  a.labels.assign(n, 0);
  TempDir canonical;
  write_numpy(canonical.path(), a);
  write_numpy(dir.path(), a);
  ASSERT_EQ(std::remove((dir / "edges.npy").c_str()), 0);
  write_raw_npy(dir / "edge_index.npy", "<i4", false, "(2, " + std::to_string(e) + ")", rows);
  Dataset got = load_dataset(dir.path(), {});
  Dataset want = load_dataset(canonical.path(), {});
  EXPECT_EQ(got.input_edges, e);
  EXPECT_EQ(got.in_edges.indptr, want.in_edges.indptr);
  EXPECT_EQ(got.in_edges.indices, want.in_edges.indices);
}

}  // namespace
}  // namespace partita::data::testing
