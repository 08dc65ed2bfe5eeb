// Hostile input to read_dataset_shard (data/shard.h): every case gets an IoError or
// FormatError whose message starts with the offending file, on the rank that meets it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "data_test_util.h"
#include "partita/core/half.h"
#include "partita/core/parameter_error.h"
#include "partita/data/chunked_layout.h"
#include "partita/data/generate.h"
#include "partita/data/generate_chunked.h"
#include "partita/data/shard.h"
#include "shard_files.h"
#include "shard_test_util.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;
using partita::testing::read_file;
using partita::testing::write_file;
using testing::expect_error;
using testing::TempDir;

// A 200-node chunked dataset: 1,800 edges in 15 chunks of 120 rows, node chunks of 120 and 80.
std::string make_chunked(const TempDir& tmp) {
  GenerateOptions o;
  o.nodes = 200;
  o.avg_degree = 9;
  o.feat_dim = 3;
  o.classes = 4;
  o.out_dir = tmp / "d";
  o.threads = 1;
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 120;
  generate_chunked_share(o, c, 0, 1);
  write_chunked_manifest(o.out_dir, chunked_generate_manifest(o, c));
  return o.out_dir;
}

// Reads every rank's share of `dir` (the error may be met by any rank).
void read_all(const std::string& dir, int ranks = 2) {
  for (int r = 0; r < ranks; ++r) read_dataset_shard(dir, r, ranks);
}

// Replaces manifest.json's text `from` with `to`.
void edit_manifest(const std::string& dir, const std::string& from, const std::string& to) {
  std::string text = read_file(dir + "/manifest.json");
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  write_file(dir + "/manifest.json", text);
}

TEST(ShardHostile, ChunkFileMissing) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  fs::remove(d + "/edges/edges-00003.npy");
  expect_error<IoError>([&] { read_all(d); }, d + "/edges/edges-00003.npy", {});
  fs::remove(d + "/nodes/feat-00000.npy");
  expect_error<IoError>([&] { read_all(d); }, d + "/nodes/feat-00000.npy", {});
}

TEST(ShardHostile, ChunkFileTruncated) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  const std::string path = d + "/edges/edges-00001.npy";
  std::string bytes = read_file(path);
  write_file(path, bytes.substr(0, bytes.size() - 8));
  expect_error<FormatError>([&] { read_all(d); }, path, {"truncated", "(120, 2)"});
  write_file(path, "");
  expect_error<FormatError>([&] { read_all(d); }, path, {"empty"});
}

TEST(ShardHostile, ChunkShapeOrDtypeDisagreesWithManifest) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  const std::string edges = d + "/edges/edges-00000.npy";
  write_npy<int64_t>(edges, std::vector<int64_t>(10, 1));  // 1-D
  expect_error<FormatError>([&] { read_all(d); }, edges, {"dimension"});
  std::vector<int64_t> pairs(2 * 119, 1);
  write_npy<int64_t>(edges, ArrayView<const int64_t>(pairs), {119, 2});
  expect_error<FormatError>([&] { read_all(d); }, edges, {"(119, 2)", "(120, 2)"});
  std::vector<int32_t> narrow(2 * 120, 1);
  write_npy<int32_t>(edges, ArrayView<const int32_t>(narrow), {120, 2});
  expect_error<FormatError>([&] { read_all(d); }, edges, {"int64", "int32"});

  TempDir tmp2;
  const std::string d2 = make_chunked(tmp2);
  const std::string feat = d2 + "/nodes/feat-00000.npy";
  std::vector<float> values(120 * 4, 1.0f);
  write_npy<float>(feat, ArrayView<const float>(values), {120, 4});
  expect_error<FormatError>([&] { read_all(d2); }, feat, {"4 feature columns", "says 3"});
  std::vector<double> wide(120 * 3, 1.0);
  write_npy<double>(feat, ArrayView<const double>(wide), {120, 3});
  expect_error<FormatError>([&] { read_all(d2); }, feat, {"float32", "float64"});
  const std::string label = d2 + "/nodes/label-00000.npy";
  write_npy<float>(feat, ArrayView<const float>(values.data(), 360), {120, 3});
  write_npy<int64_t>(label, std::vector<int64_t>(100, 0));
  expect_error<FormatError>([&] { read_all(d2); }, label, {"100 labels", "says 120"});
}

TEST(ShardHostile, ValuesOutOfRange) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  const std::string edges = d + "/edges/edges-00002.npy";
  std::vector<int64_t> pairs(2 * 120, 7);
  pairs[2 * 33 + 1] = 200;
  write_npy<int64_t>(edges, ArrayView<const int64_t>(pairs), {120, 2});
  expect_error<FormatError>([&] { read_all(d); }, edges, {"edge 33 (7, 200)", "outside [0, 200)"});
  pairs[2 * 33 + 1] = -1;
  write_npy<int64_t>(edges, ArrayView<const int64_t>(pairs), {120, 2});
  expect_error<FormatError>([&] { read_all(d); }, edges, {"edge 33 (7, -1)"});
  pairs[2 * 33 + 1] = 6;
  write_npy<int64_t>(edges, ArrayView<const int64_t>(pairs), {120, 2});
  read_all(d);

  const std::string label = d + "/nodes/label-00000.npy";
  std::vector<int64_t> labels = read_npy_vector<int64_t>(label);
  labels[100] = 4;  // num_classes is 4
  write_npy<int64_t>(label, labels);
  expect_error<FormatError>([&] { read_all(d); }, label, {"row 100", "label 4", "[-1, 4)"});
  labels[100] = -2;
  write_npy<int64_t>(label, labels);
  expect_error<FormatError>([&] { read_all(d); }, label, {"label -2"});
  // -1 is allowed, but not for a node in a split.
  const std::vector<int64_t> train = read_npy_vector<int64_t>(d + "/train_idx.npy");
  labels.assign(labels.size(), 0);
  ASSERT_LT(train[0], 120);
  labels[train[0]] = -1;
  write_npy<int64_t>(label, labels);
  expect_error<FormatError>([&] { read_all(d); }, label, {"label -1", "train_idx.npy"});
  // In the second label chunk: the message names that chunk.
  labels[train[0]] = 0;
  write_npy<int64_t>(label, labels);
  const std::string label1 = d + "/nodes/label-00001.npy";
  std::vector<int64_t> labels1 = read_npy_vector<int64_t>(label1);
  ASSERT_GE(train.back(), 120);
  labels1[train.back() - 120] = -1;
  write_npy<int64_t>(label1, labels1);
  expect_error<FormatError>([&] { read_all(d); }, label1,
                            {"node " + std::to_string(train.back()), "label -1"});
}

TEST(ShardHostile, SplitsNotAscendingOrOutOfRange) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  const std::string train = d + "/train_idx.npy";
  write_npy<int64_t>(train, std::vector<int64_t>{3, 9, 9});
  expect_error<FormatError>([&] { read_all(d); }, train, {"entry 2", "strictly ascending"});
  write_npy<int64_t>(train, std::vector<int64_t>{3, 1});
  expect_error<FormatError>([&] { read_all(d); }, train, {"entry 1"});
  write_npy<int64_t>(train, std::vector<int64_t>{3, 200});
  expect_error<FormatError>([&] { read_all(d); }, train, {"entry 1", "outside [0, 200)"});
  fs::remove(train);
  expect_error<IoError>([&] { read_all(d); }, train, {});
}

TEST(ShardHostile, ManifestInconsistent) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  const std::string m = d + "/manifest.json";
  const std::string good = read_file(m);
  const auto restore = [&] { write_file(m, good); };
  edit_manifest(d, "\"version\": 1", "\"version\": 3");
  expect_error<FormatError>([&] { read_all(d); }, m, {"version 3"});
  restore();
  edit_manifest(d, "\"rows\": 120", "\"rows\": 121");  // the first edge chunk
  expect_error<FormatError>([&] { read_all(d); }, d + "/edges/edges-00000.npy", {"(121, 2)"});
  restore();
  edit_manifest(d, "\"rows\": 80", "\"rows\": 81");  // features then cover 201 rows
  expect_error<FormatError>([&] { read_all(d); }, m, {"201 rows", "200 nodes"});
  restore();
  edit_manifest(d, "edges/edges-00000.npy", "../edges-00000.npy");
  expect_error<FormatError>([&] { read_all(d); }, m, {"'../edges-00000.npy'"});
  restore();
  edit_manifest(d, "\"num_classes\": 4", "\"num_classes\": \"4\"");
  expect_error<FormatError>([&] { read_all(d); }, m, {"num_classes"});
  restore();
  write_file(m, "{\"format\": ");
  expect_error<FormatError>([&] { read_all(d); }, m, {"invalid JSON"});
  write_file(m, good);
  edit_manifest(d, "\"dtype\": \"float32\"", "\"dtype\": \"int64\"");
  expect_error<FormatError>([&] { read_all(d); }, m, {"int64"});
}

// The check covers the half-precision dtypes too: a float16 or bfloat16 infinity or NaN is
// refused with its row, column and value; the finite rows before it read.
TEST(ShardHostile, NonFiniteHalfFeaturesOnRead) {
  TempDir tmp;
  const std::string path = tmp / "feat.npy";
  const float inf = std::numeric_limits<float>::infinity();
  const std::pair<float, std::string> bad[] = {
      {inf, "value inf is"}, {-inf, "value -inf is"}, {std::nanf(""), "value nan is"}};
  for (const DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const auto stored = [&](float x) {
      return dtype == DType::kFloat16 ? float_to_half(x) : float_to_bf16(x);
    };
    for (const auto& [value, shown] : bad) {
      std::vector<uint16_t> values(10 * 4, stored(0.5f));
      values[6 * 4 + 1] = stored(value);
      NpyWriter out(path, dtype, {10, 4});
      out.write(values.data(), values.size() * sizeof(uint16_t));
      out.finish();
      const FeatureRowReader read = open_features({{path, 10}}, dtype, 4, "the test").read;
      std::vector<uint16_t> rows(values.size());
      read(0, 6, rows.data());
      expect_error<FormatError>([&] { read(4, 10, rows.data()); }, path,
                                {"row 6 column 1", shown + " not finite"});
    }
  }
}

TEST(ShardHostile, NonFiniteFeaturesOnRead) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);
  const std::string feat = d + "/nodes/feat-00001.npy";
  std::vector<float> values(80 * 3, 0.5f);
  values[7 * 3 + 2] = std::numeric_limits<float>::quiet_NaN();
  write_npy<float>(feat, ArrayView<const float>(values), {80, 3});
  const DatasetShard s = read_dataset_shard(d, 0, 1);
  std::vector<float> rows(200 * 3);
  s.features.read(0, 120, rows.data());  // the first chunk is fine
  expect_error<FormatError>([&] { s.features.read(100, 200, rows.data()); }, feat,
                            {"row 7 column 2", "not finite"});
}

// A block's labels span two label chunks: each lands at its node's row, and a label outside
// [-1, num_classes) is refused naming its chunk, row and node.
TEST(ShardHostile, ChunkedLabelsAcrossChunks) {
  TempDir tmp;
  const std::string d = make_chunked(tmp);  // label chunks of 120 and 80 rows
  const std::string second_path = d + "/nodes/label-00001.npy";
  std::vector<int64_t> all = read_npy_vector<int64_t>(d + "/nodes/label-00000.npy");
  std::vector<int64_t> second = read_npy_vector<int64_t>(second_path);
  all.insert(all.end(), second.begin(), second.end());
  const DatasetShard s = read_dataset_shard(d, 1, 2);
  ASSERT_LT(s.node_begin, 120);
  EXPECT_EQ(s.labels, std::vector<int64_t>(all.begin() + s.node_begin, all.begin() + s.node_end));
  second[5] = 4;
  write_npy<int64_t>(second_path, second);
  expect_error<FormatError>([&] { read_dataset_shard(d, 1, 2); }, second_path,
                            {"row 5 (node 125): label 4 is outside [-1, 4)"});
}

TEST(ShardHostile, NumpyLayoutValues) {
  TempDir tmp;
  testing::NumpyArrays a;
  a.labels = {0, 1, -3, 1};
  testing::write_numpy(tmp.path(), a);
  expect_error<FormatError>([&] { read_all(tmp.path(), 3); }, tmp / "label.npy",
                            {"node 2 has label -3"});
  a.labels = {0, 1, 2, 1};
  a.edges[5] = 4;  // edge 2 = (2, 4)
  testing::write_numpy(tmp.path(), a);
  expect_error<FormatError>([&] { read_all(tmp.path(), 3); }, tmp / "edges.npy",
                            {"edge 2 (2, 4)", "outside [0, 4)"});
  a.edges[5] = 2;
  a.train = {3, 4};
  testing::write_numpy(tmp.path(), a);
  expect_error<FormatError>([&] { read_all(tmp.path(), 3); }, tmp / "train_idx.npy",
                            {"node id 4 is outside [0, 4)"});
}

TEST(ShardHostile, OgbLayoutIsRefusedWithAWayOut) {
  TempDir tmp;
  testing::write_ogb(tmp.path(), testing::OgbText{});
  expect_error<FormatError>([&] { read_dataset_shard(tmp.path(), 0, 2); }, tmp.path(),
                            {"cannot be read in shares", "convert"});
}

// ---- Edge and node arrays of the chunked layout (chunked_layout.h, ChunkedArray). ----

// make_chunked's dataset with edge_time, edge_weight, edge_feat (2 columns) and node_time.
std::string make_chunked_arrays(const TempDir& tmp) {
  GenerateOptions o;
  o.nodes = 200;
  o.avg_degree = 9;
  o.feat_dim = 3;
  o.classes = 4;
  o.out_dir = tmp / "d";
  o.threads = 1;
  o.edge_time = o.edge_weight = o.node_time = true;
  o.edge_feat_dim = 2;
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 120;
  generate_chunked_share(o, c, 0, 1);
  write_chunked_manifest(o.out_dir, chunked_generate_manifest(o, c));
  return o.out_dir;
}

// Rewrites the manifest of `dir` through `edit` (the writer checks nothing).
template <class Edit>
void rewrite_manifest(const std::string& dir, Edit edit) {
  ChunkedManifest m = read_chunked_manifest(dir);
  edit(m);
  write_chunked_manifest(dir, m);
}

TEST(ShardHostile, ChunkedArraysAreReadInShares) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  int64_t edges = 0, nodes = 0;
  for (int r = 0; r < 3; ++r) {
    const DatasetShard s = read_dataset_shard(d, r, 3);
    EXPECT_EQ(s.first_edge, edges);
    ASSERT_EQ(s.edge_arrays.size(), 3u);
    for (const ExtraArray& a : s.edge_arrays)
      EXPECT_EQ(a.rows(), static_cast<int64_t>(s.src.size())) << a.name;
    ASSERT_EQ(s.node_arrays.size(), 1u);
    EXPECT_EQ(s.node_arrays[0].rows(), s.node_end - s.node_begin);
    edges += static_cast<int64_t>(s.src.size());
    nodes += s.node_arrays[0].rows();
  }
  EXPECT_EQ(edges, 1800);
  EXPECT_EQ(nodes, 200);
}

TEST(ShardHostile, ChunkedArrayRowsDifferFromTheirEdgeChunk) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  rewrite_manifest(d, [](ChunkedManifest& m) { m.edge_arrays[1].chunks[2].rows = 5; });
  expect_error<FormatError>([&] { read_all(d); }, d + "/manifest.json",
                            {"edge_arrays.edge_weight.chunks[2] holds 5 rows, but its edge chunk "
                             "edges/edges-00002.npy holds 120"});
}

TEST(ShardHostile, ChunkedArrayChunkCountDiffers) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  rewrite_manifest(d, [](ChunkedManifest& m) { m.edge_arrays[0].chunks.pop_back(); });
  expect_error<FormatError>(
      [&] { read_all(d); }, d + "/manifest.json",
      {"edge_arrays.edge_time.chunks lists 14 chunks, but there are 15 edge chunks"});
}

TEST(ShardHostile, ChunkedArrayDtypes) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  const ChunkedManifest good = read_chunked_manifest(d);
  ChunkedManifest m = good;
  m.edge_arrays[1].dtype = DType::kInt64;
  write_chunked_manifest(d, m);
  expect_error<FormatError>([&] { read_all(d); }, d + "/manifest.json",
                            {"edge_arrays.edge_weight.dtype is int64; edge_weight is float32"});
  m = good;
  m.edge_arrays[2].dtype = DType::kInt64;
  write_chunked_manifest(d, m);
  expect_error<FormatError>(
      [&] { read_all(d); }, d + "/manifest.json",
      {"edge_arrays.edge_feat.dtype is int64; edge_feat is float32, float16 or bfloat16"});
}

TEST(ShardHostile, ChunkedNodeArrayRowsSumWrong) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  rewrite_manifest(d, [](ChunkedManifest& m) { m.node_arrays[0].chunks[1].rows = 79; });
  expect_error<FormatError>(
      [&] { read_all(d); }, d + "/manifest.json",
      {"node_arrays.node_time.chunks hold 199 rows, but there are 200 nodes"});
}

TEST(ShardHostile, ChunkedArrayUnknownName) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  edit_manifest(d, "\"edge_weight\"", "\"edge_weights\"");
  expect_error<FormatError>([&] { read_all(d); }, d + "/manifest.json",
                            {"edge_arrays: unknown array \"edge_weights\""});
}

TEST(ShardHostile, ChunkedArrayChunkFiles) {
  TempDir tmp;
  const std::string d = make_chunked_arrays(tmp);
  const std::string time = d + "/edges/edge_time-00003.npy";
  write_npy<int64_t>(time, std::vector<int64_t>(119, 1));
  expect_error<FormatError>([&] { read_all(d); }, time, {"119 rows, but the manifest says 120"});
  write_npy<int64_t>(time, std::vector<int64_t>(120, 1));
  const std::string weight = d + "/edges/edge_weight-00014.npy";
  std::vector<float> w(120, 1.0f);
  w[7] = std::numeric_limits<float>::quiet_NaN();
  write_npy<float>(weight, w);
  // Only the rank reading the last chunk meets it.
  expect_error<FormatError>([&] { read_dataset_shard(d, 1, 2); }, weight,
                            {"entry 7 is nan; a weight must be finite and > 0"});
  EXPECT_NO_THROW(read_dataset_shard(d, 0, 2));
}

}  // namespace
}  // namespace partita::data
