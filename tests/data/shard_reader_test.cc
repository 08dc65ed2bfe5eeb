// read_dataset_shard (data/shard.h): for 1 to 4 ranks the shares together are exactly the
// dataset's input (numpy, typed numpy and chunked layouts), the chunked layout equals the
// numpy one for the same generated graph, and hostile input gets an error naming the file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "data_test_util.h"
#include "hetero_test_util.h"
#include "partita/core/half.h"
#include "partita/core/parameter_error.h"
#include "partita/data/chunked_layout.h"
#include "partita/data/generate.h"
#include "partita/data/generate_chunked.h"
#include "partita/data/shard.h"
#include "shard_test_util.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::expect_same_union;
using testing::ShardUnion;
using testing::TempDir;
using testing::union_of_shares;

GenerateOptions small_graph(const std::string& out) {
  GenerateOptions o;
  o.nodes = 1000;
  o.avg_degree = 7;
  o.feat_dim = 5;
  o.classes = 6;
  o.seed = 11;
  o.train_fraction = 0.3;
  o.valid_fraction = 0.1;
  o.test_fraction = 0.1;
  o.out_dir = out;
  o.threads = 2;
  return o;
}

// Writes the chunked layout of `o` as `ranks` ranks would, then the manifest.
void generate_chunked(const GenerateOptions& o, const ChunkedWriteOptions& c, int ranks) {
  for (int r = 0; r < ranks; ++r) generate_chunked_share(o, c, r, ranks);
  write_chunked_manifest(o.out_dir, chunked_generate_manifest(o, c));
}

// The numpy layout's arrays, read whole: what load_dataset reads.
ShardUnion numpy_reference(const std::string& dir) {
  ShardUnion u;
  const std::vector<int64_t> edges = read_npy_vector<int64_t>(dir + "/edges.npy", 2);
  for (size_t i = 0; i < edges.size(); i += 2) u.edges.emplace_back(edges[i], edges[i + 1], 0);
  std::sort(u.edges.begin(), u.edges.end());
  u.labels = read_npy_vector<int64_t>(dir + "/label.npy");
  u.train = read_npy_vector<int64_t>(dir + "/train_idx.npy");
  u.valid = read_npy_vector<int64_t>(dir + "/valid_idx.npy");
  u.test = read_npy_vector<int64_t>(dir + "/test_idx.npy");
  for (auto* split : {&u.train, &u.valid, &u.test}) std::sort(split->begin(), split->end());
  const std::vector<float> feat = read_npy_vector<float>(dir + "/feat.npy", 2);
  u.features.resize(feat.size() * sizeof(float));
  std::memcpy(u.features.data(), feat.data(), u.features.size());
  u.num_nodes = static_cast<int64_t>(u.labels.size());
  u.num_classes = *std::max_element(u.labels.begin(), u.labels.end()) + 1;
  u.input_edges_total = static_cast<int64_t>(edges.size() / 2);
  u.feature_dim = static_cast<int64_t>(feat.size()) / u.num_nodes;
  return u;
}

TEST(ShardReader, NumpySharesAreTheInput) {
  TempDir tmp;
  const GenerateOptions o = small_graph(tmp / "numpy");
  generate_synthetic(o);
  const ShardUnion reference = numpy_reference(o.out_dir);
  ASSERT_EQ(reference.input_edges_total, 7000);
  for (int ranks = 1; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    const ShardUnion u = union_of_shares(o.out_dir, ranks);
    expect_same_union(u, reference);
    EXPECT_EQ(u.feature_dtype, DType::kFloat32);
  }
}

TEST(ShardReader, NumpyEdgeIndexInt32AndEdgeSplit) {
  TempDir tmp;
  testing::NumpyArrays a;
  testing::write_numpy(tmp.path(), a);
  const ShardUnion reference = numpy_reference(tmp.path());
  // The same edges as an int32 edge_index.npy [2, E].
  fs::remove(tmp / "edges.npy");
  std::vector<int32_t> index;
  for (int c = 0; c < 2; ++c)
    for (size_t i = c; i < a.edges.size(); i += 2) index.push_back(static_cast<int32_t>(a.edges[i]));
  write_npy<int32_t>(tmp / "edge_index.npy", ArrayView<const int32_t>(index),
                     {2, static_cast<int64_t>(a.edges.size() / 2)});
  const std::vector<int64_t> pairs = {0, 1, 1, 2, 3, 0, 2, 3, 1, 3};
  for (const char* name : {"train_edges", "valid_edges", "test_edges", "valid_neg", "test_neg"})
    write_npy<int64_t>(tmp / (std::string(name) + ".npy"), ArrayView<const int64_t>(pairs), {5, 2});
  for (int ranks = 1; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    const ShardUnion u = union_of_shares(tmp.path(), ranks);
    expect_same_union(u, reference);
    EXPECT_EQ(u.edge_split_train, pairs);
  }
}

TEST(ShardReader, ChunkedEqualsNumpyForTheSameGraph) {
  TempDir tmp;
  GenerateOptions o = small_graph(tmp / "numpy");
  generate_synthetic(o);
  o.out_dir = tmp / "chunked";
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 777;  // cuts across the generator's streams
  generate_chunked(o, c, /*ranks=*/3);
  ASSERT_TRUE(looks_like_chunked_layout(o.out_dir));
  const ShardUnion reference = numpy_reference(tmp / "numpy");
  for (int ranks = 1; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    const ShardUnion u = union_of_shares(o.out_dir, ranks);
    expect_same_union(u, reference);
    EXPECT_EQ(read_dataset_shard(o.out_dir, 0, ranks).layout, "chunked");
  }
}

TEST(ShardReader, ChunkedBfloat16FeaturesAreTheRoundedOnes) {
  TempDir tmp;
  GenerateOptions o = small_graph(tmp / "numpy");
  generate_synthetic(o);
  o.out_dir = tmp / "chunked";
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 300;
  c.feature_dtype = DType::kBFloat16;
  generate_chunked(o, c, /*ranks=*/2);
  const std::vector<float> feat = read_npy_vector<float>(tmp / "numpy/feat.npy", 2);
  std::vector<uint16_t> want(feat.size());
  narrow_floats(feat.data(), static_cast<int64_t>(feat.size()), DType::kBFloat16, want.data());
  const ShardUnion u = union_of_shares(o.out_dir, 3);
  EXPECT_EQ(u.feature_dtype, DType::kBFloat16);
  ASSERT_EQ(u.features.size(), want.size() * 2);
  EXPECT_EQ(std::memcmp(u.features.data(), want.data(), u.features.size()), 0);
  // A row range across chunk boundaries, read alone.
  const DatasetShard s = read_dataset_shard(o.out_dir, 1, 3);
  std::vector<uint16_t> rows(static_cast<size_t>(400 * o.feat_dim));
  s.features.read(250, 650, rows.data());
  EXPECT_EQ(std::memcmp(rows.data(), want.data() + 250 * o.feat_dim, rows.size() * 2), 0);
}

TEST(ShardReader, GeneratedChunksDoNotDependOnRanks) {
  TempDir tmp;
  GenerateOptions o = small_graph(tmp / "one");
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 500;
  generate_chunked(o, c, 1);
  o.out_dir = tmp / "four";
  generate_chunked(o, c, 4);
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tmp / "one")) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), tmp / "one").string();
    EXPECT_EQ(partita::testing::read_file(entry.path().string()),
              partita::testing::read_file(tmp / ("four/" + rel)))
        << rel;
    ++files;
  }
  EXPECT_EQ(files, 1u + 14 + 2 * 2 + 3);  // manifest, edge chunks, node chunks, splits
}

// tiny_hetero's edges homogenised, with relation ids: what the typed readers must give.
ShardUnion hetero_reference(const testing::HeteroSpec& spec) {
  ShardUnion u;
  std::vector<int64_t> offset;
  int64_t n = 0;
  for (const auto& t : spec.types) {
    offset.push_back(n);
    n += t.count;
  }
  const auto type = [&](const std::string& name) {
    for (size_t i = 0; i < spec.types.size(); ++i)
      if (spec.types[i].name == name) return i;
    return size_t{0};
  };
  for (size_t r = 0; r < spec.relations.size(); ++r) {
    const auto& rel = spec.relations[r];
    for (size_t i = 0; i < rel.pairs.size(); i += 2)
      u.edges.emplace_back(rel.pairs[i] + offset[type(rel.head)],
                           rel.pairs[i + 1] + offset[type(rel.tail)], static_cast<int32_t>(r));
  }
  std::sort(u.edges.begin(), u.edges.end());
  const size_t target = type(spec.target);
  u.labels.assign(static_cast<size_t>(n), -1);
  for (size_t i = 0; i < spec.labels.size(); ++i) u.labels[offset[target] + i] = spec.labels[i];
  for (int64_t v : spec.train) u.train.push_back(v + offset[target]);
  for (int64_t v : spec.valid) u.valid.push_back(v + offset[target]);
  for (int64_t v : spec.test) u.test.push_back(v + offset[target]);
  for (const auto& t : spec.types) {
    std::vector<unsigned char> bytes(t.feats.size() * sizeof(float));
    std::memcpy(bytes.data(), t.feats.data(), bytes.size());
    u.type_features.push_back(bytes);
  }
  u.num_nodes = n;
  u.num_classes = *std::max_element(spec.labels.begin(), spec.labels.end()) + 1;
  u.input_edges_total = static_cast<int64_t>(u.edges.size());
  return u;
}

// tiny_hetero in the chunked layout: edges and feature rows in chunks of two rows.
void write_chunked_hetero(const std::string& dir, const testing::HeteroSpec& spec) {
  fs::create_directories(dir + "/c");
  ChunkedManifest m;
  const auto chunks = [&](const std::string& stem, const auto& values, int64_t width,
                          auto tag) {
    using T = decltype(tag);
    std::vector<ChunkFile> out;
    const int64_t rows = static_cast<int64_t>(values.size()) / width;
    for (int64_t b = 0, k = 0; b < rows; b += 2, ++k) {
      const int64_t n = std::min<int64_t>(2, rows - b);
      const std::string file = "c/" + stem + "-" + std::to_string(k) + ".npy";
      std::vector<int64_t> shape = {n};
      if (width > 1 || stem.rfind("feat", 0) == 0) shape.push_back(width);
      write_npy<T>(dir + "/" + file, ArrayView<const T>(values.data() + b * width, n * width),
                   shape);
      out.push_back({file, n});
    }
    return out;
  };
  for (const auto& t : spec.types) {
    ChunkedNodeType type;
    type.name = t.name;
    type.count = t.count;
    if (t.feat_dim > 0) {
      type.features.emplace();
      type.features->dim = t.feat_dim;
      type.features->chunks = chunks("feat_" + t.name, t.feats, t.feat_dim, float{});
    }
    m.node_types.push_back(type);
  }
  for (const auto& r : spec.relations)
    m.relations.push_back(
        {r.head, r.name, r.tail, chunks("edges_" + r.name, r.pairs, 2, int64_t{})});
  m.target = spec.target;
  m.num_classes = *std::max_element(spec.labels.begin(), spec.labels.end()) + 1;
  m.labels = chunks("label", spec.labels, 1, int64_t{});
  write_npy<int64_t>(dir + "/train_idx.npy", spec.train);
  write_npy<int64_t>(dir + "/valid_idx.npy", spec.valid);
  write_npy<int64_t>(dir + "/test_idx.npy", spec.test);
  write_chunked_manifest(dir, m);
}

TEST(ShardReader, TypedSharesAreTheInputInBothLayouts) {
  TempDir tmp;
  const testing::HeteroSpec spec = testing::tiny_hetero();
  testing::write_numpy_hetero(tmp / "numpy", spec);
  write_chunked_hetero(tmp / "chunked", spec);
  const ShardUnion reference = hetero_reference(spec);
  for (const char* layout : {"numpy", "chunked"}) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      SCOPED_TRACE(std::string(layout) + " " + std::to_string(ranks));
      expect_same_union(union_of_shares(tmp / layout, ranks), reference);
    }
    const DatasetShard s = read_dataset_shard(tmp / layout, 0, 2);
    ASSERT_TRUE(s.hetero.has_value());
    EXPECT_EQ(s.hetero->num_relations(), 3);
    EXPECT_EQ(s.hetero->node_types[s.hetero->target_type].name, "paper");
    EXPECT_EQ(s.type_features[1].dim, 0);  // author: featureless
  }
}

TEST(ShardReader, Papers100mShapeAtTinyScale) {
  const GenerateOptions full = papers100m_options(1.0);
  EXPECT_EQ(full.nodes, Papers100mShape::kNodes);
  EXPECT_EQ(std::llround(static_cast<double>(full.nodes) * full.avg_degree),
            Papers100mShape::kEdges);
  const SplitSizes full_split = split_sizes(full);
  EXPECT_EQ(full_split.train, Papers100mShape::kTrain);
  EXPECT_EQ(full_split.valid, Papers100mShape::kValid);
  EXPECT_EQ(full_split.test, Papers100mShape::kTest);

  TempDir tmp;
  GenerateOptions o = papers100m_options(2e-5);  // 2,221 nodes, 32,314 edges
  o.out_dir = tmp / "p";
  o.threads = 2;
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 4096;
  c.feature_dtype = DType::kBFloat16;
  generate_chunked(o, c, 2);
  const ShardUnion u = union_of_shares(o.out_dir, 2);
  EXPECT_EQ(u.num_nodes, 2221);
  EXPECT_EQ(u.input_edges_total, 32314);
  EXPECT_EQ(u.feature_dim, 128);
  EXPECT_EQ(u.feature_dtype, DType::kBFloat16);
  EXPECT_LE(u.num_classes, 172);
  EXPECT_GE(u.num_classes, 160);
  EXPECT_EQ(u.train.size(), 24u);  // floor(2221 x 1,207,179 / 111,059,956)
  EXPECT_EQ(u.valid.size(), 2u);
  EXPECT_EQ(u.test.size(), 4u);
  EXPECT_THROW(papers100m_options(0), ParameterError);
  EXPECT_THROW(papers100m_options(1.5), ParameterError);
}

}  // namespace
}  // namespace partita::data
