// Stage 3 of the pipeline (write_partition) with threads as ranks: for a fixed assignment
// its directory equals one process's (partition_dataset_assigned) byte for byte (every .npy;
// partita.json apart from timing and peak-memory fields), for 1 to 4 ranks, part counts
// above and below the rank count, homogeneous and typed, float32 and bfloat16; then its
// refusals, agreed by every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "helpers/inproc_dist_comm.h"
#include "helpers/on_threads.h"
#include "helpers/quiet_logs.h"
#include "helpers/test_paths.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/data/generate_chunked.h"
#include "partita/data/shard.h"
#include "partita/partition/format.h"
#include "partita/partition/partition_assigned.h"
#include "partita/partition/pipeline.h"
#include "partition_dirs.h"
#include "partition_meta.h"  // src/partition: how ranks send rank 0 their files
#include "test_datasets.h"
#include "writer.h"  // src/partition: the round bounds

namespace partita::partition {
namespace {

namespace fs = std::filesystem;
using testing::expect_same_directory;
using testing::read_file;
using testing::TempDir;

// Streams rows [begin, end) of `f` (float32) as a shard's reader does.
data::ShardFeatures shard_features(const data::FeatureMatrix& f) {
  data::ShardFeatures out;
  out.dim = f.cols();
  out.dtype = DType::kFloat32;
  out.read = [&f](int64_t begin, int64_t end, void* dst) {
    if (end > begin && f.cols() > 0)
      std::memcpy(dst, f.row(begin), static_cast<size_t>((end - begin) * f.cols()) * sizeof(float));
  };
  return out;
}

// Rank r of R's share of an in-memory dataset, as read_dataset_shard and build_shard_graph
// would give it: the block's labels, split ids and in-edge rows (original ids).
PartitionInput rank_input(const data::Dataset& ds, int r, int R) {
  PartitionInput in;
  data::DatasetShard& s = in.shard;
  s.path = ds.path;
  s.layout = "numpy";
  s.rank = r;
  s.ranks = R;
  s.num_nodes = ds.num_nodes;
  s.num_classes = ds.num_classes;
  std::tie(s.node_begin, s.node_end) = data::node_block(ds.num_nodes, r, R);
  s.labels.assign(ds.labels.begin() + s.node_begin, ds.labels.begin() + s.node_end);
  auto in_block = [&](const std::vector<int64_t>& ids) {
    std::vector<int64_t> out;
    for (int64_t v : ids)
      if (v >= s.node_begin && v < s.node_end) out.push_back(v);
    return out;
  };
  s.train_idx = in_block(ds.train_idx);
  s.valid_idx = in_block(ds.valid_idx);
  s.test_idx = in_block(ds.test_idx);
  if (ds.hetero) {
    data::HeteroSchema h;
    for (const data::NodeType& t : ds.hetero->node_types) {
      h.node_types.emplace_back();
      h.node_types.back().name = t.name;
      h.node_types.back().count = t.count;
      h.node_types.back().offset = t.offset;
      s.type_features.push_back(shard_features(t.features));
    }
    h.relations = ds.hetero->relations;  // as stored, reverses included
    h.target_type = ds.hetero->target_type;
    s.hetero = std::move(h);
  } else {
    s.features = shard_features(ds.features);
  }
  ShardGraph& g = in.graph;
  g.num_nodes = ds.num_nodes;
  g.node_begin = s.node_begin;
  g.node_end = s.node_end;
  const graph::Csr& all = ds.in_edges;
  const int64_t first = all.indptr[s.node_begin], last = all.indptr[s.node_end];
  for (int64_t v = s.node_begin; v <= s.node_end; ++v)
    g.in_edges.indptr.push_back(all.indptr[v] - first);
  g.in_edges.indices.assign(all.indices.begin() + first, all.indices.begin() + last);
  if (ds.hetero)
    g.edge_relation.assign(ds.edge_relation.begin() + first, ds.edge_relation.begin() + last);
  g.num_edges_total = all.num_entries();
  return in;
}

// Writes `ds` with assignment `part` on R threads as ranks into `out`; returns rank 0's
// summary (every rank must return the same figures).
// Tiny rounds (`small_rounds`) make every rank send in many rounds, unequal in number.
PartitionSummary write_distributed(const data::Dataset& ds, const std::vector<int32_t>& part,
                                   PartitionOptions o, int R, const std::string& out,
                                   bool small_rounds = false) {
  o.out_dir = out;
  testing::InProcessDistComms comms(R);
  std::vector<PartitionSummary> summaries(static_cast<size_t>(R));
  const std::vector<std::string> failures = testing::on_threads(R, [&](int r) {
    PartitionInput in = rank_input(ds, r, R);
    std::vector<int32_t> mine(part.begin() + in.shard.node_begin, part.begin() + in.shard.node_end);
    WriteContext context;
    if (small_rounds) {
      context.round_entries = 7;
      context.round_feature_bytes = 40;
    }
    summaries[r] = write_partition(in, mine, o, comms.member(r), std::move(context));
  });
  for (int r = 0; r < R; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
  for (int r = 1; r < R; ++r) {
    EXPECT_EQ(summaries[r].edge_cut, summaries[0].edge_cut);
    EXPECT_EQ(summaries[r].rank_peak_rss_bytes, summaries[0].rank_peak_rss_bytes);
  }
  // Every rank's peak on several ranks; one rank's run is one process's.
  EXPECT_EQ(static_cast<int>(summaries[0].rank_peak_rss_bytes.size()), R > 1 ? R : 0);
  return summaries[0];
}

// The in-process part_graph's assignment (contiguous blocks) and a scattered one.
std::vector<int32_t> blocks(int64_t n, int P) {
  std::vector<int32_t> part(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) part[v] = static_cast<int32_t>(v * P / n);
  return part;
}
std::vector<int32_t> scattered(int64_t n, int P) {
  std::vector<int32_t> part(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) part[v] = static_cast<int32_t>((v * 7 + v / 5) % P);
  return part;
}

class DistWriterTest : public ::testing::Test {};

void check_equal_to_single(const data::Dataset& ds, const std::vector<int32_t>& part, int P, int R,
                           DType dtype, bool small_rounds = false) {
  SCOPED_TRACE(::testing::Message()
               << "parts " << P << ", ranks " << R << ", dtype " << dtype_name(dtype));
  TempDir tmp;
  PartitionOptions o;
  o.num_parts = P;
  o.seed = 5;
  o.threads = 2;
  o.feature_dtype = dtype;
  o.out_dir = tmp / "single";
  const PartitionSummary single = partition_dataset_assigned(ds, o, part);
  const PartitionSummary dist = write_distributed(ds, part, o, R, tmp / "dist", small_rounds);
  EXPECT_EQ(dist.edge_cut, single.edge_cut);
  EXPECT_EQ(dist.node_imbalance, single.node_imbalance);
  expect_same_directory(tmp / "single", tmp / "dist");
  EXPECT_NO_THROW(verify_partition(tmp / "dist", 2));
}

TEST_F(DistWriterTest, HomogeneousEqualsSingleProcessForOneToFourRanks) {
  testing::PlantedOptions po;
  po.num_nodes = 503;  // blocks of unequal sizes
  const data::Dataset ds = testing::planted_dataset(po);
  for (int R = 1; R <= 4; ++R) {
    check_equal_to_single(ds, blocks(ds.num_nodes, R), R, R, DType::kFloat32);
    check_equal_to_single(ds, scattered(ds.num_nodes, 3), 3, R, DType::kFloat32);
  }
  // P != R both ways, narrowed features.
  check_equal_to_single(ds, scattered(ds.num_nodes, 5), 5, 2, DType::kBFloat16);
  check_equal_to_single(ds, blocks(ds.num_nodes, 2), 2, 4, DType::kFloat16);
  check_equal_to_single(ds, scattered(ds.num_nodes, 1), 1, 3, DType::kFloat32);
}

TEST_F(DistWriterTest, ManySmallRoundsGiveTheSameBytes) {
  const data::Dataset ds = testing::planted_dataset({});
  check_equal_to_single(ds, scattered(ds.num_nodes, 3), 3, 3, DType::kFloat32,
                        /*small_rounds=*/true);
  check_equal_to_single(ds, scattered(ds.num_nodes, 5), 5, 2, DType::kBFloat16,
                        /*small_rounds=*/true);
  const data::Dataset typed = testing::typed_dataset({});
  check_equal_to_single(typed, scattered(typed.num_nodes, 3), 3, 4, DType::kFloat32,
                        /*small_rounds=*/true);
}

TEST_F(DistWriterTest, EmptyPartsAndRanksWithoutParts) {
  const data::Dataset ds = testing::planted_dataset({});
  std::vector<int32_t> part = scattered(ds.num_nodes, 3);
  for (int32_t& p : part) p = p == 1 ? 3 : p;  // part 1 empty of 4
  check_equal_to_single(ds, part, 4, 3, DType::kFloat32);
}

TEST_F(DistWriterTest, TypedEqualsSingleProcess) {
  const data::Dataset ds = testing::typed_dataset({});
  for (int R = 1; R <= 4; ++R)
    check_equal_to_single(ds, scattered(ds.num_nodes, 3), 3, R, DType::kFloat32);
  check_equal_to_single(ds, blocks(ds.num_nodes, 4), 4, 3, DType::kBFloat16);
  testing::TypedOptions no_reverse;
  no_reverse.reverse = false;
  const data::Dataset plain = testing::typed_dataset(no_reverse);
  check_equal_to_single(plain, scattered(plain.num_nodes, 2), 2, 3, DType::kFloat32);
}

TEST_F(DistWriterTest, SameRunTwiceIsByteIdentical) {
  const data::Dataset ds = testing::planted_dataset({});
  TempDir tmp;
  PartitionOptions o;
  o.num_parts = 3;
  write_distributed(ds, scattered(ds.num_nodes, 3), o, 2, tmp / "a");
  write_distributed(ds, scattered(ds.num_nodes, 3), o, 2, tmp / "b");
  expect_same_directory(tmp / "a", tmp / "b");
}

// Extra columns (pipeline.h Column) follow their nodes and entries into every part, for 1
// and 3 ranks in many small rounds: a node column holding each node's original id equals the
// part's slice of node_map, an edge column holding each entry's original source equals
// node_map of the part's indices; both files are listed in partita.json.
TEST_F(DistWriterTest, ColumnsFollowTheirNodesAndEntries) {
  const data::Dataset ds = testing::planted_dataset({});
  const std::vector<int32_t> part = scattered(ds.num_nodes, 3);
  auto bytes_of = [](const std::vector<int64_t>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(int64_t));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  for (int R : {1, 3}) {
    SCOPED_TRACE(::testing::Message() << "ranks " << R);
    TempDir tmp;
    PartitionOptions o;
    o.num_parts = 3;
    o.out_dir = tmp / "out";
    testing::InProcessDistComms comms(R);
    const std::vector<std::string> failures = testing::on_threads(R, [&](int r) {
      PartitionInput in = rank_input(ds, r, R);
      std::vector<int64_t> ids, sources = in.graph.in_edges.indices;
      for (int64_t v = in.shard.node_begin; v < in.shard.node_end; ++v) ids.push_back(v);
      in.node_columns.push_back({"orig", DType::kInt64, bytes_of(ids)});
      in.graph.edge_columns.push_back({"src", DType::kInt64, bytes_of(sources)});
      std::vector<int32_t> mine(part.begin() + in.shard.node_begin,
                                part.begin() + in.shard.node_end);
      WriteContext context;
      context.round_entries = 7;
      write_partition(in, mine, o, comms.member(r), std::move(context));
    });
    for (int r = 0; r < R; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
    const std::vector<int64_t> node_map = read_npy_vector<int64_t>(tmp / "out/node_map.npy");
    const PartitionMeta meta = read_meta(tmp / "out");
    for (int p = 0; p < 3; ++p) {
      const std::string dir = tmp / ("out/part" + std::to_string(p));
      const std::vector<int64_t> orig = read_npy_vector<int64_t>(dir + "/orig.npy");
      EXPECT_EQ(orig, std::vector<int64_t>(node_map.begin() + meta.ranges[p],
                                           node_map.begin() + meta.ranges[p + 1]));
      const std::vector<int64_t> indices = read_npy_vector<int64_t>(dir + "/indices.npy");
      std::vector<int64_t> want;
      for (int64_t s : indices) want.push_back(node_map[s]);
      EXPECT_EQ(read_npy_vector<int64_t>(dir + "/src.npy"), want);
      EXPECT_NO_THROW(meta.file(part_file(p, "orig")));
      EXPECT_NO_THROW(meta.file(part_file(p, "src")));
    }
  }
}

// Several sources out of range in one round of one rank: the error names the first in
// entry order, whatever the threads did.
TEST_F(DistWriterTest, TheFirstSourceOutOfRangeIsNamed) {
  const data::Dataset ds = testing::planted_dataset({});
  TempDir tmp;
  PartitionOptions o;
  o.num_parts = 3;
  o.out_dir = tmp / "x";
  testing::InProcessDistComms comms(3);
  const std::vector<int32_t> part = blocks(ds.num_nodes, 3);
  const std::vector<std::string> f = testing::on_threads(3, [&](int r) {
    PartitionInput in = rank_input(ds, r, 3);
    std::vector<int64_t>& sources = in.graph.in_edges.indices;
    if (r == 2) {
      sources.front() = 605;
      sources.back() = -3;
    }
    std::vector<int32_t> mine(part.begin() + in.shard.node_begin, part.begin() + in.shard.node_end);
    write_partition(in, mine, o, comms.member(r));  // one round: both mapped together
  });
  EXPECT_NE(f[2].find("source id 605 is outside [0, 600)"), std::string::npos) << f[2];
  EXPECT_EQ(f[0], "rank 2: " + f[2]);
}

// One rank's bad input fails every rank with the same error (lowest failing rank's text),
// and nothing waits forever.
TEST_F(DistWriterTest, RefusalsAreAgreedByEveryRank) {
  const data::Dataset ds = testing::planted_dataset({});
  TempDir tmp;
  auto run = [&](PartitionOptions o, int bad_rank, int32_t bad_part) {
    o.out_dir = tmp / "x";
    testing::InProcessDistComms comms(3);
    std::vector<int32_t> part = blocks(ds.num_nodes, o.num_parts);
    return testing::on_threads(3, [&](int r) {
      PartitionInput in = rank_input(ds, r, 3);
      std::vector<int32_t> mine(part.begin() + in.shard.node_begin,
                                part.begin() + in.shard.node_end);
      if (r == bad_rank) mine[0] = bad_part;
      write_partition(in, mine, o, comms.member(r));
    });
  };
  PartitionOptions o;
  o.num_parts = 3;
  std::vector<std::string> f = run(o, 1, 7);
  EXPECT_NE(f[1].find("node 200 is assigned to part 7, outside [0, 3)"), std::string::npos) << f[1];
  EXPECT_EQ(f[0], "rank 1: " + f[1]);
  EXPECT_EQ(f[2], "rank 1: " + f[1]);
  EXPECT_FALSE(fs::exists(tmp / "x/partita.json"));

  // A source id out of range on one rank (above, or negative): found while mapping, agreed
  // after the exchange.
  for (const auto& [bad_id, message] : {std::pair<int64_t, std::string>{605, "source id 605"},
                                        std::pair<int64_t, std::string>{-3, "source id -3"}}) {
    PartitionOptions bad = o;
    bad.out_dir = tmp / "y";
    testing::InProcessDistComms comms(3);
    const std::vector<int32_t> part = blocks(ds.num_nodes, 3);
    const std::vector<std::string> g = testing::on_threads(3, [&](int r) {
      PartitionInput in = rank_input(ds, r, 3);
      if (r == 2) in.graph.in_edges.indices.back() = bad_id;
      std::vector<int32_t> mine(part.begin() + in.shard.node_begin,
                                part.begin() + in.shard.node_end);
      WriteContext context;
      context.round_entries = 50;  // several rounds: the others go on after rank 2 fails
      write_partition(in, mine, bad, comms.member(r), std::move(context));
    });
    EXPECT_NE(g[2].find(message + " is outside [0, 600)"), std::string::npos) << g[2];
    EXPECT_EQ(g[0], "rank 2: " + g[2]);
    EXPECT_EQ(g[1], "rank 2: " + g[2]);
    EXPECT_FALSE(fs::exists(tmp / "y/partita.json"));
  }

  o.edge_split.valid_fraction = 0.1;
  o.edge_split.test_fraction = 0.1;
  f = run(o, -1, 0);
  EXPECT_NE(f[0].find("edge_split"), std::string::npos) << f[0];
  EXPECT_NE(f[0].find("made before assignment"), std::string::npos) << f[0];
}

// The whole pipeline (read_dataset_shard, stages 1-3) on R thread ranks, whose in-process
// part_graph gives contiguous blocks, against load_dataset + partition_dataset_assigned with
// the same blocks: the same directory, for generated numpy, chunked and typed datasets.
// `single_dataset` (default: the same) is what the single process reads, with
// `feature_dtype`: the chunked layout's twin in the numpy layout.
void check_pipeline(const std::string& dataset, const data::LoadOptions& load, int P, int R,
                    Method method = Method::kMetis, std::string single_dataset = "",
                    DType feature_dtype = DType::kFloat32) {
  SCOPED_TRACE(::testing::Message() << dataset << ": parts " << P << ", ranks " << R);
  TempDir tmp;
  PartitionOptions o;
  o.num_parts = P;
  o.seed = 3;
  o.threads = 1;
  o.method = method;
  o.dist_partitioner = DistPartitioner::kPtScotch;  // the stand-in part_graph: known blocks
  o.feature_dtype = feature_dtype;
  testing::InProcessDistComms comms(R);
  std::vector<PartitionSummary> summaries(static_cast<size_t>(R));
  PartitionOptions od = o;
  od.out_dir = tmp / "dist";
  std::vector<std::string> failures = testing::on_threads(
      R, [&](int r) { summaries[r] = run_partition(dataset, load, od, comms.member(r)); });
  for (int r = 0; r < R; ++r) ASSERT_EQ(failures[r], "") << "rank " << r;
  if (method != Method::kMetis) {  // no single-process twin: the same run again
    PartitionOptions again = od;
    again.out_dir = tmp / "again";
    failures = testing::on_threads(
        R, [&](int r) { run_partition(dataset, load, again, comms.member(r)); });
    for (int r = 0; r < R; ++r) ASSERT_EQ(failures[r], "") << "rank " << r;
    expect_same_directory(tmp / "dist", tmp / "again");
  }
  EXPECT_NO_THROW(verify_partition(tmp / "dist", 1));
  const std::vector<std::string> phases = {"read",        "build_graph",     "assign",
                                           "renumber",    "write_structure", "write_features",
                                           "write_splits"};
  ASSERT_EQ(summaries[0].phase_seconds.size(), phases.size());
  for (size_t i = 0; i < phases.size(); ++i)
    EXPECT_EQ(summaries[0].phase_seconds[i].first, phases[i]);
  if (method != Method::kMetis) return;
  if (single_dataset.empty()) single_dataset = dataset;
  data::Dataset ds = data::load_dataset(single_dataset, load);
  ds.path = dataset;  // partita.json names the dataset
  o.out_dir = tmp / "single";
  o.undirected = load.undirected;
  partition_dataset_assigned(ds, o, blocks(ds.num_nodes, P));
  expect_same_directory(tmp / "single", tmp / "dist");
}

class DistPipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    data::GenerateOptions g;
    g.nodes = 700;
    g.avg_degree = 5;
    g.feat_dim = 6;
    g.classes = 4;
    g.seed = 2;
    g.threads = 1;
    g.out_dir = *dir_ / "numpy";
    data::generate_synthetic(g);
    data::GenerateOptions a = g;  // with every edge and node array
    a.edge_time = a.edge_weight = a.node_time = true;
    a.edge_feat_dim = 3;
    a.out_dir = *dir_ / "arrays";
    data::generate_synthetic(a);
    {  // the chunked twin of "arrays", the arrays cut as the edges and labels are
      data::ChunkedWriteOptions c;
      c.chunk_rows = 170;
      c.node_chunk_rows = 90;
      a.out_dir = *dir_ / "chunked_arrays";
      for (int r = 0; r < 2; ++r) data::generate_chunked_share(a, c, r, 2);
      data::write_chunked_manifest(a.out_dir, data::chunked_generate_manifest(a, c));
    }
    a.edge_time = false;
    a.out_dir = *dir_ / "untimed";
    data::generate_synthetic(a);
    g.out_dir = *dir_ / "chunked";
    data::ChunkedWriteOptions c;
    c.chunk_rows = 150;  // several chunks per rank
    c.feature_dtype = DType::kBFloat16;
    for (int r = 0; r < 3; ++r) data::generate_chunked_share(g, c, r, 3);
    data::write_chunked_manifest(g.out_dir, data::chunked_generate_manifest(g, c));
    data::HeteroGenerateOptions h;
    h.nodes = 400;
    h.feat_dim = 5;
    h.classes = 3;
    h.seed = 4;
    h.threads = 1;
    h.out_dir = *dir_ / "typed";
    data::generate_hetero(h);
    h.edge_time = h.edge_weight = h.node_time = true;  // per-relation and per-type arrays
    h.edge_feat_dim = 2;
    h.out_dir = *dir_ / "typed_arrays";
    data::generate_hetero(h);
    h.edge_time = false;
    h.out_dir = *dir_ / "typed_untimed";
    data::generate_hetero(h);
    typed_to_chunked(path("typed_arrays"), path("typed_chunked"), 200);
  }
  static void TearDownTestSuite() { delete dir_; }

  // The chunked layout of the typed numpy dataset `from` (float32 features and arrays), every
  // relation's edges and edge arrays cut into chunks of `rows` rows, node files whole.
  static void typed_to_chunked(const std::string& from, const std::string& to, int64_t rows) {
    data::LoadOptions load;
    load.reverse_relations = false;
    const data::Dataset ds = data::load_dataset(from, load);
    const data::HeteroSchema& h = *ds.hetero;
    std::filesystem::create_directories(to + "/c");
    data::ChunkedManifest m;
    m.num_classes = ds.num_classes;
    auto copy = [&](const std::string& file, const std::string& name) {
      std::filesystem::copy_file(from + "/" + file, to + "/c/" + name);
      return data::ChunkFile{"c/" + name, NpyArray::open(from + "/" + file).dim(0)};
    };
    for (const data::NodeType& t : h.node_types) {
      data::ChunkedNodeType type;
      type.name = t.name;
      type.count = t.count;
      if (t.feat_dim() > 0)
        type.features =
            data::ChunkedFeatures{DType::kFloat32,
                                  t.feat_dim(),
                                  {copy("feat/" + t.name + ".npy", "feat_" + t.name + ".npy")}};
      type.node_arrays.push_back({"node_time",
                                  DType::kInt64,
                                  0,
                                  {copy("node_time/" + t.name + ".npy", "nt_" + t.name + ".npy")}});
      m.node_types.push_back(std::move(type));
    }
    int64_t chunk = 0;
    for (int r = 0; r < h.num_relations(); ++r) {
      const data::Relation& rel = h.relations[r];
      data::ChunkedRelation cr;
      cr.src_type = h.node_types[rel.src_type].name;
      cr.name = rel.name;
      cr.dst_type = h.node_types[rel.dst_type].name;
      const std::string file = "/" + h.triplet(r) + ".npy";
      const auto pairs = read_npy_vector<int64_t>(from + "/edges" + file, 2);
      const auto time = read_npy_vector<int64_t>(from + "/edge_time" + file);
      const auto weight = read_npy_vector<float>(from + "/edge_weight" + file);
      const auto feat = read_npy_vector<float>(from + "/edge_feat" + file, 2);
      const int64_t e = static_cast<int64_t>(time.size()), d = 2;
      cr.edge_arrays = {{"edge_time", DType::kInt64, 0, {}},
                        {"edge_weight", DType::kFloat32, 0, {}},
                        {"edge_feat", DType::kFloat32, d, {}}};
      for (int64_t b = 0; b < e; b += rows, ++chunk) {
        const int64_t n = std::min(rows, e - b);
        auto name = [&](const char* kind) { return fmt::format("c/{}-{}.npy", kind, chunk); };
        write_npy<int64_t>(to + "/" + name("edges"),
                           ArrayView<const int64_t>(pairs.data() + 2 * b, 2 * n), {n, 2});
        write_npy<int64_t>(to + "/" + name("time"), ArrayView<const int64_t>(time.data() + b, n),
                           {n});
        write_npy<float>(to + "/" + name("weight"), ArrayView<const float>(weight.data() + b, n),
                         {n});
        write_npy<float>(to + "/" + name("feat"),
                         ArrayView<const float>(feat.data() + d * b, d * n), {n, d});
        cr.edges.push_back({name("edges"), n});
        cr.edge_arrays[0].chunks.push_back({name("time"), n});
        cr.edge_arrays[1].chunks.push_back({name("weight"), n});
        cr.edge_arrays[2].chunks.push_back({name("feat"), n});
      }
      m.relations.push_back(std::move(cr));
    }
    m.target = h.node_types[h.target_type].name;
    m.labels = {copy("label.npy", "label.npy")};
    const int64_t offset = h.node_types[h.target_type].offset;  // sorted, target-local ids
    for (const auto& [ids, split] :
         {std::pair{&ds.train_idx, "train_idx.npy"}, std::pair{&ds.valid_idx, "valid_idx.npy"},
          std::pair{&ds.test_idx, "test_idx.npy"}}) {
      std::vector<int64_t> local;
      for (int64_t v : *ids) local.push_back(v - offset);
      write_npy<int64_t>(to + "/" + split, local);
    }
    data::write_chunked_manifest(to, m);
  }
  static std::string path(const std::string& name) { return *dir_ / name; }
  static TempDir* dir_;
};
TempDir* DistPipelineTest::dir_ = nullptr;

// (On one rank the pipeline is one process's: it loads the dataset and runs METIS.)
TEST_F(DistPipelineTest, NumpyEqualsSingleProcess) {
  data::LoadOptions load;
  for (int R = 2; R <= 4; ++R) check_pipeline(path("numpy"), load, R, R);
  load.undirected = true;
  check_pipeline(path("numpy"), load, 3, 2);
  check_pipeline(path("numpy"), load, 2, 3);
}

// Edge and node arrays travel with their edges across ranks (shard_graph.cc): the same
// bytes as one process for 2 and 3 ranks, directed and undirected, with and without
// edge_time (repeats kept, or dropped keeping the first).
TEST_F(DistPipelineTest, EdgeArraysEqualSingleProcess) {
  data::LoadOptions load;
  check_pipeline(path("arrays"), load, 2, 2);
  check_pipeline(path("arrays"), load, 3, 3);
  check_pipeline(path("untimed"), load, 3, 2);
  load.undirected = true;
  check_pipeline(path("arrays"), load, 3, 2);
  check_pipeline(path("arrays"), load, 2, 3);
  check_pipeline(path("untimed"), load, 2, 3);
}

// The chunked twin of the numpy dataset (bfloat16 features) equals the numpy one written
// with bfloat16 features.
TEST_F(DistPipelineTest, ChunkedEqualsSingleProcessOnItsNumpyTwin) {
  data::LoadOptions load;
  load.undirected = true;
  check_pipeline(path("chunked"), load, 4, 3, Method::kMetis, path("numpy"), DType::kBFloat16);
}

TEST_F(DistPipelineTest, TypedEqualsSingleProcess) {
  data::LoadOptions load;
  check_pipeline(path("typed"), load, 3, 2);
  load.reverse_relations = false;
  check_pipeline(path("typed"), load, 2, 3);
}

// The chunked layout carries the arrays chunk for chunk: a chunked dataset partitions to the
// bytes of its numpy twin in one process, homogeneous (generated both ways) and typed.
TEST_F(DistPipelineTest, ChunkedEdgeArraysEqualTheirNumpyTwin) {
  data::LoadOptions load;
  check_pipeline(path("chunked_arrays"), load, 3, 2, Method::kMetis, path("arrays"));
  load.undirected = true;
  check_pipeline(path("chunked_arrays"), load, 2, 3, Method::kMetis, path("arrays"));
  check_pipeline(path("typed_chunked"), {}, 3, 3, Method::kMetis, path("typed_arrays"));
}

// A typed dataset's per-relation arrays travel with their edges as the homogeneous ones do:
// the same bytes as one process, with and without reverse relations and edge_time.
TEST_F(DistPipelineTest, TypedEdgeArraysEqualSingleProcess) {
  data::LoadOptions load;
  check_pipeline(path("typed_arrays"), load, 3, 2);
  check_pipeline(path("typed_untimed"), load, 2, 3);
  load.reverse_relations = false;
  check_pipeline(path("typed_arrays"), load, 2, 3);
}

// Stage 1 packs and places edges with arrays on the pipeline's threads (shard_graph.cc): the
// same directory on 1 and 4 threads per rank, homogeneous with reverse edges and typed.
TEST_F(DistPipelineTest, EdgeArraysDoNotDependOnTheThreadCount) {
  data::LoadOptions undirected;
  undirected.undirected = true;
  for (const auto& [name, load] :
       {std::pair{"arrays", undirected}, std::pair{"typed_arrays", data::LoadOptions{}}}) {
    SCOPED_TRACE(name);
    TempDir tmp;
    testing::InProcessDistComms comms(3);
    for (int threads : {1, 4}) {
      PartitionOptions o;
      o.num_parts = 2;
      o.threads = threads;
      o.dist_partitioner = DistPartitioner::kPtScotch;  // the stand-in part_graph: known blocks
      o.out_dir = tmp / std::to_string(threads);
      const std::vector<std::string> failures = testing::on_threads(
          3, [&](int r) { run_partition(path(name), load, o, comms.member(r)); });
      for (int r = 0; r < 3; ++r) ASSERT_EQ(failures[r], "") << "rank " << r;
    }
    expect_same_directory(tmp / "1", tmp / "4");
  }
}

TEST_F(DistPipelineTest, RandomIsDeterministicForARankCount) {
  data::LoadOptions load;
  check_pipeline(path("numpy"), load, 3, 2, Method::kRandom);
}

// The "files" object a rank sends rank 0: round trip, and text that is not such an object
// (invalid JSON, a number too large, an array) is a FormatError naming the source.
TEST(FilesJson, RoundTripsAndRejectsWhatIsNotAnObject) {
  const std::vector<FileEntry> files = {{"part0/label.npy", DType::kInt64, {5}, 7},
                                        {"part0/feat.npy", DType::kFloat32, {5, 2}, 0xffffffffu}};
  const std::vector<FileEntry> back = files_from_json(files_to_json(files), "rank 1");
  ASSERT_EQ(back.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back[i].path, files[i].path);
    EXPECT_EQ(back[i].dtype, files[i].dtype);
    EXPECT_EQ(back[i].shape, files[i].shape);
    EXPECT_EQ(back[i].crc32, files[i].crc32);
  }
  for (const char* text : {"{\"part0/label.npy\": ", "{\"a\": 1e400}", "[1, 2]", "3"}) {
    try {
      files_from_json(text, "rank 1");
      ADD_FAILURE() << "accepted " << text;
    } catch (const FormatError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("rank 1: invalid JSON", 0), 0u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << text << ": not a FormatError: " << e.what();
    }
  }
}

}  // namespace
}  // namespace partita::partition
