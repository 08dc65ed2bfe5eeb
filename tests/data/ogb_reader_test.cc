// The OGB raw layout: exact results on a hand-written dataset, and one test per kind of
// bad input asserting that the message names the file and the problem.
#include <gtest/gtest.h>

#include "data_test_util.h"
#include "gz_reader.h"
#include "helpers/test_paths.h"
#include "readers.h"

namespace partita::data::testing {
namespace {

using partita::testing::read_file;

TEST(OgbReader, TinyDatasetExact) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  LoadStats stats;
  Dataset ds = load_dataset(dir.path(), {}, &stats);
  EXPECT_EQ(ds.layout, "ogb");
  EXPECT_EQ(ds.split, "only");
  EXPECT_EQ(ds.num_nodes, 4);
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{3, 0, 1}));
  EXPECT_EQ(ds.input_edges, 5);
  EXPECT_EQ(ds.self_loops_dropped, 1);
  EXPECT_EQ(ds.duplicates_dropped, 1);
  ASSERT_EQ(ds.features.rows(), 4);
  ASSERT_EQ(ds.features.cols(), 3);
  const std::vector<float> want = {0.5f, 1, 2, -2.5f, 1e-3f, 0, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(std::vector<float>(ds.features.data(), ds.features.data() + 12), want);
  EXPECT_EQ(ds.labels, (std::vector<int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train_idx, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ds.valid_idx, (std::vector<int64_t>{1}));
  EXPECT_EQ(ds.test_idx, (std::vector<int64_t>{2}));
  EXPECT_GT(stats.text_bytes, 0);
  EXPECT_GT(stats.compressed_bytes, 0);
}

TEST(OgbReader, UndirectedAddsReverseEdges) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  LoadOptions options;
  options.undirected = true;
  Dataset ds = load_dataset(dir.path(), options);
  EXPECT_EQ(ds.in_edges.indptr, (std::vector<int64_t>{0, 2, 4, 5, 6}));
  EXPECT_EQ(ds.in_edges.indices, (std::vector<int64_t>{1, 3, 0, 2, 1, 0}));
  EXPECT_EQ(ds.self_loops_dropped, 1);
  EXPECT_EQ(ds.duplicates_dropped, 2);
}

TEST(OgbReader, SeveralSplitsNeedAChoice) {
  TempDir dir;
  OgbText t;
  t.splits["other"] = {"1\n", "2\n", "3\n"};
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "split", {"several splits", "only, other"});
  LoadOptions options;
  options.split = "other";
  Dataset ds = load_dataset(dir.path(), options);
  EXPECT_EQ(ds.split, "other");
  EXPECT_EQ(ds.train_idx, (std::vector<int64_t>{1}));
  options.split = "nope";
  expect_load_error<IoError>(dir.path(), dir / "split/nope", {"no such split", "only, other"},
                             options);
}

TEST(OgbReader, MissingFile) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  std::remove((dir / "raw/node-label.csv.gz").c_str());
  expect_load_error<IoError>(dir.path(), dir / "raw/node-label.csv.gz", {"cannot open"});
}

TEST(OgbReader, MissingDirectoryOrLayout) {
  TempDir dir;
  expect_load_error<IoError>(dir / "absent", dir / "absent", {"no such dataset directory"});
  expect_load_error<IoError>(dir.path(), dir.path(),
                             {"not a dataset directory", "edges.npy", "raw/edge.csv.gz"});
}

TEST(OgbReader, HeterogeneousLayoutIsNamed) {
  TempDir dir;
  write_gz(dir / "raw/relations/paper___cites___paper/edge.csv.gz", "0,1\n");
  expect_load_error<FormatError>(dir.path(), dir / "raw", {"heterogeneous", "num-node-dict"});
}

TEST(OgbReader, EmptyEdgeList) {
  TempDir dir;
  OgbText t;
  t.edges = "";
  t.num_edges = "0\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz", {"edge list is empty"});
}

TEST(OgbReader, TruncatedGzip) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  const std::string path = dir / "raw/node-feat.csv.gz";
  std::string bytes = read_file(path);
  write_file(path, bytes.substr(0, bytes.size() - 6));  // cut into the CRC/size trailer
  expect_load_error<FormatError>(dir.path(), path, {"truncated gzip"});
}

TEST(OgbReader, CorruptGzip) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  const std::string path = dir / "raw/edge.csv.gz";
  std::string bytes = read_file(path);
  for (size_t i = 12; i < bytes.size() - 8; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x55);
  write_file(path, bytes);
  expect_load_error<FormatError>(dir.path(), path, {"corrupt gzip data"});
}

TEST(OgbReader, NotGzipAtAll) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  write_file(dir / "raw/node-label.csv.gz", "0\n1\n2\n1\n");
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz", {"not a gzip file"});
}

TEST(OgbReader, TrailingGarbageAfterGzip) {
  TempDir dir;
  write_ogb(dir.path(), OgbText{});
  const std::string path = dir / "raw/node-label.csv.gz";
  write_file(path, read_file(path) + "junk");
  expect_load_error<FormatError>(dir.path(), path, {"trailing garbage"});
}

TEST(OgbReader, NonNumericFeature) {
  TempDir dir;
  OgbText t;
  t.feats = "1,2,3\n4,abc,6\n7,8,9\n1,1,1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"line 2", "field 2", "'abc' is not a number"});
}

TEST(OgbReader, NonFiniteFeature) {
  TempDir dir;
  OgbText t;
  t.feats = "1,2,3\n4,5,6\n7,nan,9\n1,1,1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"line 3", "not a finite"});
  t.feats = "1,2,3\n4,5,6\n7,8,9\n1,1,1e39\n";  // overflows float32
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"line 4", "field 3", "not a finite"});
}

TEST(OgbReader, WrongColumnCount) {
  TempDir dir;
  OgbText t;
  t.feats = "1,2,3\n4,5,6\n7,8\n1,1,1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"line 3", "expected 3 values, found 2"});
  t.feats = "1,2,3\n4,5,6,7\n7,8,9\n1,1,1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"line 2", "expected 3 values, found 4"});
  t = OgbText{};
  t.edges = "0,1\n1,2,3\n2,2\n0,1\n3,0\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz",
                                 {"line 2", "expected 2 values (src,dst), found 3"});
  t.edges = "0,1\n1,x\n2,2\n0,1\n3,0\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz",
                                 {"line 2", "'x' is not an integer"});
}

TEST(OgbReader, BlankLineInsideFile) {
  TempDir dir;
  OgbText t;
  t.edges = "0,1\n\n1,2\n2,2\n0,1\n3,0\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz", {"line 2", "empty line"});
}

TEST(OgbReader, BadLabels) {
  TempDir dir;
  OgbText t;
  t.labels = "0\n-1\n2\n1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz",
                                 {"line 2", "label -1 is outside"});
  t.labels = "0\n1\n2.5\n1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz",
                                 {"line 3", "'2.5' is not an integer"});
  t.labels = "0\n1\nnan\n1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz",
                                 {"line 3", "'nan' is not an integer"});
  t.labels = "0\n1\n-3.0\n1\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz",
                                 {"line 3", "label -3 is outside"});
}

TEST(OgbReader, BadSplitIds) {
  TempDir dir;
  OgbText t;
  t.splits["only"] = {"3\n0\n", "1\n4\n", "2\n"};
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "split/only/valid.csv.gz",
                                 {"line 2", "node id 4 is outside [0, 4)"});
  t.splits["only"] = {"3\n0\n3\n", "1\n", "2\n"};
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "split/only/train.csv.gz",
                                 {"node id 3 is listed more than once"});
}

TEST(OgbReader, RowCountsDisagree) {
  TempDir dir;
  OgbText t;
  t.labels = "0\n1\n2\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz",
                                 {"3 labels", "num-node-list.csv.gz says 4 nodes"});
  t = OgbText{};
  t.feats = "1,2,3\n4,5,6\n7,8,9\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"3 feature rows", "num-node-list.csv.gz has 4 nodes"});
  t.feats = "1,2,3\n4,5,6\n7,8,9\n1,1,1\n2,2,2\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"line 5", "more than 4 feature rows"});
  t = OgbText{};
  t.num_edges = "6\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz",
                                 {"5 edge lines", "num-edge-list.csv.gz says 6"});
}

TEST(OgbReader, LyingCountsDoNotAllocate) {
  TempDir dir;
  OgbText t;
  t.num_nodes = "1000000000000000\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-label.csv.gz",
                                 {"4 labels", "says 1000000000000000 nodes"});
  t = OgbText{};
  t.num_edges = "1000000000000000\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz", {"says 1000000000000000"});
  // A plausible node count (backed by the labels) but a first feature row far too wide
  // for the compressed file: rejected before sizing the feature buffer.
  t = OgbText{};
  t.num_nodes = "2000000\n";
  t.labels = std::string(2000000 * 2, '0');
  for (size_t i = 1; i < t.labels.size(); i += 2) t.labels[i] = '\n';
  t.feats = std::string(200000, '0');
  for (size_t i = 1; i < t.feats.size(); i += 2) t.feats[i] = ',';
  t.feats.back() = '\n';
  t.edges = "0,1\n";
  t.num_edges = "1\n";
  t.splits["only"] = {"0\n", "1\n", "2\n"};
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/node-feat.csv.gz",
                                 {"2000000 rows of 100000 values", "cannot fit"});
}

TEST(OgbReader, EdgeIdOutOfRange) {
  TempDir dir;
  OgbText t;
  t.edges = "0,1\n1,2\n2,9\n0,1\n3,0\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz",
                                 {"edge 2 (2, 9)", "outside [0, 4)"});
  t.edges = "0,1\n1,2\n-1,2\n0,1\n3,0\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/edge.csv.gz", {"(-1, 2)", "outside"});
}

TEST(OgbReader, BadCountFile) {
  TempDir dir;
  OgbText t;
  t.num_nodes = "4\n5\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/num-node-list.csv.gz",
                                 {"line 2", "single count"});
  t.num_nodes = "four\n";
  write_ogb(dir.path(), t);
  expect_load_error<FormatError>(dir.path(), dir / "raw/num-node-list.csv.gz",
                                 {"line 1", "'four' is not an integer"});
}

// The parsers themselves, on text in memory (as fuzz/ogb_csv_fuzz.cc drives them).
TEST(OgbReader, ParsersReadTextInMemory) {
  auto text = [](const std::string& s) { return MemoryLineReader("t.csv", s.data(), s.size(), 3); };
  const std::string count = "42\r\n\n", labels = "0\n1.0\n3e0\n", edges = "0,1\n2,3";
  const std::string feats = "0.5,1\n-2,1e-3\n", ids = "3\n0\n";
  auto r = text(count);
  EXPECT_EQ(parse_ogb_count(r), 42);
  r = text(labels);
  EXPECT_EQ(parse_ogb_labels(r), (std::vector<int64_t>{0, 1, 3}));
  r = text(edges);
  EXPECT_EQ(parse_ogb_edges(r, /*claimed_edges=*/1000000000), (std::vector<int64_t>{0, 1, 2, 3}));
  r = text(feats);
  FeatureMatrix f = parse_ogb_features(r, 2, "n.csv");
  EXPECT_EQ(std::vector<float>(f.data(), f.data() + 4), (std::vector<float>{0.5f, 1, -2, 1e-3f}));
  r = text(ids);
  EXPECT_EQ(parse_ogb_ids(r, 4), (std::vector<int64_t>{0, 3}));
  // Counts are checked against what the text can hold, named in the message.
  r = text(feats);
  try {
    parse_ogb_features(r, 100, "n.csv");
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv: 100 rows of 2 values (row count from n.csv) "
                                         "cannot fit in 14 bytes of text"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace partita::data::testing
