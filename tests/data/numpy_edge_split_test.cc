// The numpy layout's own link-prediction split (train_edges.npy ...): read exactly, and
// every kind of bad file named with its problem.
#include <gtest/gtest.h>

#include "data_test_util.h"

namespace partita::data::testing {
namespace {

// The 4-node numpy dataset with a complete edge split.
void write_split(const std::string& dir) {
  write_numpy(dir, NumpyArrays{});
  auto pairs = [&](const std::string& name, const std::vector<int64_t>& v) {
    write_npy<int64_t>(dir + "/" + name, ArrayView<const int64_t>(v),
                       {static_cast<int64_t>(v.size() / 2), 2});
  };
  pairs("train_edges.npy", {0, 1, 3, 0});
  pairs("valid_edges.npy", {1, 2});
  pairs("test_edges.npy", {2, 3});
  pairs("valid_neg.npy", {0, 2});
  pairs("test_neg.npy", {1, 3});
}

TEST(NumpyEdgeSplit, ReadExactly) {
  TempDir dir;
  write_split(dir.path());
  const Dataset ds = load_dataset(dir.path(), {});
  ASSERT_TRUE(ds.edge_split);
  EXPECT_EQ(ds.edge_split->train, (std::vector<int64_t>{0, 1, 3, 0}));
  EXPECT_EQ(ds.edge_split->valid, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ds.edge_split->test, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ds.edge_split->valid_neg, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(ds.edge_split->test_neg, (std::vector<int64_t>{1, 3}));
}

TEST(NumpyEdgeSplit, AbsentWhenNoFileIsThere) {
  TempDir dir;
  write_numpy(dir.path(), NumpyArrays{});
  EXPECT_FALSE(load_dataset(dir.path(), {}).edge_split);
}

TEST(NumpyEdgeSplit, SomeFilesMissing) {
  TempDir dir;
  write_split(dir.path());
  std::remove((dir / "test_neg.npy").c_str());
  expect_load_error<FormatError>(dir.path(), dir / "test_neg.npy", {"missing", "valid_neg.npy"});
}

TEST(NumpyEdgeSplit, WrongShape) {
  TempDir dir;
  write_split(dir.path());
  write_npy<int64_t>(dir / "valid_edges.npy", std::vector<int64_t>{1, 2});
  expect_load_error<FormatError>(dir.path(), dir / "valid_edges.npy", {"2 dimension"});
  const std::vector<int64_t> three = {0, 1, 2};
  write_npy<int64_t>(dir / "valid_edges.npy", ArrayView<const int64_t>(three), {1, 3});
  expect_load_error<FormatError>(dir.path(), dir / "valid_edges.npy",
                                 {"expected shape (k, 2), found (1, 3)"});
}

TEST(NumpyEdgeSplit, IdOutOfRangeOrSelfLoop) {
  TempDir dir;
  write_split(dir.path());
  const std::vector<int64_t> far = {0, 4};
  write_npy<int64_t>(dir / "train_edges.npy", ArrayView<const int64_t>(far), {1, 2});
  expect_load_error<FormatError>(dir.path(), dir / "train_edges.npy",
                                 {"row 0: node id 4 is outside [0, 4)"});
  const std::vector<int64_t> negative = {0, 1, -1, 2};
  write_npy<int64_t>(dir / "train_edges.npy", ArrayView<const int64_t>(negative), {2, 2});
  expect_load_error<FormatError>(dir.path(), dir / "train_edges.npy",
                                 {"row 1: node id -1 is outside"});
  write_split(dir.path());
  const std::vector<int64_t> loop = {2, 2};
  write_npy<int64_t>(dir / "test_neg.npy", ArrayView<const int64_t>(loop), {1, 2});
  expect_load_error<FormatError>(dir.path(), dir / "test_neg.npy", {"row 0: self loop (2, 2)"});
}

TEST(NumpyEdgeSplit, EmptyHeldOutSet) {
  TempDir dir;
  write_split(dir.path());
  write_npy<int64_t>(dir / "test_edges.npy", ArrayView<const int64_t>(), {0, 2});
  expect_load_error<FormatError>(dir.path(), dir / "test_edges.npy", {"no rows"});
}

}  // namespace
}  // namespace partita::data::testing
