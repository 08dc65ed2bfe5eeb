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
    for (size_t i = c; i < a.edges.size(); i += 2)
      index.push_back(static_cast<int32_t>(a.edges[i]));
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
  const auto chunks = [&](const std::string& stem, const auto& values, int64_t width, auto tag) {
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
        {r.head, r.name, r.tail, chunks("edges_" + r.name, r.pairs, 2, int64_t{}), {}});
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

TEST(ShardReader, OgbConvertedToChunkedIsTheInput) {
  TempDir tmp;
  testing::write_ogb(tmp / "ogb", testing::OgbText{});
  ChunkedWriteOptions c;
  c.chunk_rows = 2;  // 5 edges: chunks of 2, 2, 1
  c.node_chunk_rows = 3;
  const GenerateStats stats = convert_ogb_to_chunked(tmp / "ogb", tmp / "chunked", c);
  EXPECT_EQ(stats.edges, 5);
  ShardUnion want;  // OgbText's files as listed (a self loop and a duplicate included)
  want.edges = {{0, 1, 0}, {0, 1, 0}, {1, 2, 0}, {2, 2, 0}, {3, 0, 0}};
  want.labels = {0, 1, 2, 1};
  want.train = {0, 3};
  want.valid = {1};
  want.test = {2};
  const std::vector<float> feats = {0.5f, 1, 2, -2.5f, 1e-3f, 0, 3, 4, 5, 6, 7, 8};
  want.features.resize(feats.size() * 4);
  std::memcpy(want.features.data(), feats.data(), want.features.size());
  want.num_nodes = 4;
  want.num_classes = 3;
  want.input_edges_total = 5;
  want.feature_dim = 3;
  for (int ranks = 1; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    expect_same_union(union_of_shares(tmp / "chunked", ranks), want);
  }
  // A bad id is met while converting, naming the line.
  testing::OgbText bad;
  bad.edges = "0,1\n1,4\n2,2\n0,1\n3,0\n";
  testing::write_ogb(tmp / "bad", bad);
  expect_error<FormatError>([&] { convert_ogb_to_chunked(tmp / "bad", tmp / "bad_out", c); },
                            tmp / "bad/raw/edge.csv.gz", {"line 2", "(1, 4)"});
}

std::vector<float> all_rows(const FeatureMatrix& f) {
  return {f.data(), f.data() + f.rows() * f.cols()};
}

void expect_same_dataset(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.in_edges.indptr, b.in_edges.indptr);
  EXPECT_EQ(a.in_edges.indices, b.in_edges.indices);
  EXPECT_EQ(a.edge_relation, b.edge_relation);
  EXPECT_EQ(a.input_edges, b.input_edges);
  EXPECT_EQ(a.self_loops_dropped, b.self_loops_dropped);
  EXPECT_EQ(a.duplicates_dropped, b.duplicates_dropped);
  EXPECT_EQ(all_rows(a.features), all_rows(b.features));
  EXPECT_EQ(a.feat_dim(), b.feat_dim());
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.train_idx, b.train_idx);
  EXPECT_EQ(a.valid_idx, b.valid_idx);
  EXPECT_EQ(a.test_idx, b.test_idx);
  ASSERT_EQ(a.hetero.has_value(), b.hetero.has_value());
  if (!a.hetero) return;
  ASSERT_EQ(a.hetero->num_types(), b.hetero->num_types());
  for (int t = 0; t < a.hetero->num_types(); ++t)
    EXPECT_EQ(all_rows(a.hetero->node_types[t].features),
              all_rows(b.hetero->node_types[t].features));
  ASSERT_EQ(a.hetero->num_relations(), b.hetero->num_relations());
  for (int r = 0; r < a.hetero->num_relations(); ++r) {
    EXPECT_EQ(a.hetero->triplet(r), b.hetero->triplet(r));
    EXPECT_EQ(a.hetero->relations[r].num_edges, b.hetero->relations[r].num_edges);
  }
}

TEST(ShardReader, LoadDatasetReadsChunkedAsNumpy) {
  TempDir tmp;
  GenerateOptions o = small_graph(tmp / "numpy");
  generate_synthetic(o);
  o.out_dir = tmp / "chunked";
  ChunkedWriteOptions c;
  c.chunk_rows = c.node_chunk_rows = 333;
  generate_chunked(o, c, 2);
  for (bool undirected : {false, true}) {
    LoadOptions options;
    options.undirected = undirected;
    const Dataset chunked = load_dataset(tmp / "chunked", options);
    EXPECT_EQ(chunked.layout, "chunked");
    expect_same_dataset(chunked, load_dataset(tmp / "numpy", options));
  }
  // bfloat16 chunks load widened to float32.
  o.out_dir = tmp / "bf16";
  c.feature_dtype = DType::kBFloat16;
  generate_chunked(o, c, 1);
  const Dataset bf16 = load_dataset(o.out_dir, {});
  const std::vector<float> feat = read_npy_vector<float>(tmp / "numpy/feat.npy", 2);
  std::vector<uint16_t> narrow(feat.size());
  std::vector<float> want(feat.size());
  narrow_floats(feat.data(), static_cast<int64_t>(feat.size()), DType::kBFloat16, narrow.data());
  widen_to_floats(narrow.data(), static_cast<int64_t>(feat.size()), DType::kBFloat16, want.data());
  EXPECT_EQ(all_rows(bf16.features), want);

  TempDir typed;
  const testing::HeteroSpec spec = testing::tiny_hetero();
  testing::write_numpy_hetero(typed / "numpy", spec);
  write_chunked_hetero(typed / "chunked", spec);
  expect_same_dataset(load_dataset(typed / "chunked", {}), load_dataset(typed / "numpy", {}));
  LoadOptions no_reverse;
  no_reverse.reverse_relations = false;
  expect_same_dataset(load_dataset(typed / "chunked", no_reverse),
                      load_dataset(typed / "numpy", no_reverse));
}

// A .npy file of `shape` whose data is a hole (zeros, no disk space): huge arrays for the
// 64-bit test below.
void write_sparse_npy(const std::string& path, DType dtype, const std::vector<int64_t>& shape) {
  const std::string header = make_npy_header(dtype, shape);
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  partita::testing::write_file(path, header);
  fs::resize_file(path, header.size() + static_cast<uint64_t>(elements) * dtype_size(dtype));
}

TEST(ShardReader, IdsPast32BitsFlowThrough) {
  TempDir tmp;
  const std::string d = tmp / "big";
  const int64_t n = (int64_t{1} << 32) + 10;  // labels 32 GiB and features 8 GiB, all holes
  fs::create_directories(d + "/c");
  ChunkedManifest m;
  m.num_nodes = n;
  m.num_classes = 2;
  const std::vector<int64_t> pairs = {0, n - 1, n - 2, (int64_t{1} << 31) + 7, n - 1, 3};
  write_npy<int64_t>(d + "/c/e.npy", ArrayView<const int64_t>(pairs), {3, 2});
  m.edges = {{"c/e.npy", 3}};
  write_sparse_npy(d + "/c/f.npy", DType::kFloat16, {n, 1});
  m.features.emplace();
  m.features->dtype = DType::kFloat16;
  m.features->dim = 1;
  m.features->chunks = {{"c/f.npy", n}};
  write_sparse_npy(d + "/c/l.npy", DType::kInt64, {n});
  m.labels = {{"c/l.npy", n}};
  write_npy<int64_t>(d + "/train_idx.npy", std::vector<int64_t>{5, n - 3, n - 1});
  write_npy<int64_t>(d + "/valid_idx.npy", std::vector<int64_t>{});
  constexpr int kRanks = 1024;  // a block of 4 M nodes: 32 MiB of labels per rank
  const int64_t mid_id = node_block(n, kRanks / 2, kRanks).first + 1;  // past 2^31
  write_npy<int64_t>(d + "/test_idx.npy", std::vector<int64_t>{mid_id});
  write_chunked_manifest(d, m);

  // The one edge chunk goes to the first rank whose rows [3r/R, 3(r+1)/R) are not empty.
  const DatasetShard first = read_dataset_shard(d, 341, kRanks);
  EXPECT_EQ(first.num_nodes, n);
  EXPECT_EQ(first.src, (std::vector<int64_t>{0, n - 2, n - 1}));
  EXPECT_EQ(first.dst, (std::vector<int64_t>{n - 1, (int64_t{1} << 31) + 7, 3}));
  EXPECT_TRUE(read_dataset_shard(d, 340, kRanks).src.empty());
  EXPECT_EQ(read_dataset_shard(d, 0, kRanks).train_idx, std::vector<int64_t>{5});
  const DatasetShard last = read_dataset_shard(d, kRanks - 1, kRanks);
  EXPECT_EQ(last.node_end, n);
  EXPECT_GT(last.node_begin, int64_t{1} << 31);
  EXPECT_TRUE(last.src.empty());
  EXPECT_EQ(last.train_idx, (std::vector<int64_t>{n - 3, n - 1}));
  EXPECT_EQ(last.labels.size(), static_cast<size_t>(n - last.node_begin));
  uint16_t row[2] = {1, 1};
  last.features.read(n - 2, n, row);  // rows past 2^32, read from the hole
  EXPECT_EQ(row[0], 0);
  EXPECT_EQ(row[1], 0);
  const DatasetShard mid = read_dataset_shard(d, kRanks / 2, kRanks);
  EXPECT_GT(mid_id, int64_t{1} << 31);
  EXPECT_EQ(mid.test_idx, std::vector<int64_t>{mid_id});
}

}  // namespace
}  // namespace partita::data
