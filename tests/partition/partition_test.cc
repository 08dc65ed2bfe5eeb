// The partition pipeline: ownership, renumbering, round trip of every array, determinism,
// option errors, METIS quality on Cora.
#include "partita/partition/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "helpers/quiet_logs.h"
#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/log_rewrite.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/data/generate.h"
#include "partita/partition/assign.h"
#include "partita/partition/format.h"
#include "partition_dirs.h"
#include "test_datasets.h"

namespace partita::partition {
namespace {

using testing::stable_meta;
using testing::TempDir;

PartitionOptions options_for(const std::string& out, int parts, Method method, uint64_t seed = 0) {
  PartitionOptions o;
  o.out_dir = out;
  o.num_parts = parts;
  o.method = method;
  o.seed = seed;
  o.threads = 2;
  return o;
}

template <class T>
std::vector<T> values(const NpyArray& a) {
  auto v = a.view<T>();
  return {v.begin(), v.end()};
}

std::vector<int64_t> row(const graph::Csr& c, int64_t v) {
  return {c.indices.begin() + c.indptr[v], c.indices.begin() + c.indptr[v + 1]};
}

// Reads the partition in `dir` back and checks it against `ds`: every node owned once, the
// per-part CSCs mapped back give the input CSC, features/labels/splits follow their nodes.
void expect_round_trip(const data::Dataset& ds, const std::string& dir) {
  const PartitionMeta meta = read_meta(dir);
  const int64_t n = ds.num_nodes;
  ASSERT_EQ(meta.num_nodes, n);
  ASSERT_EQ(meta.num_edges, ds.in_edges.num_entries());
  ASSERT_EQ(meta.feat_dim, ds.features.cols());
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(dir + "/node_map.npy");
  ASSERT_EQ(static_cast<int64_t>(node_map.size()), n);
  std::vector<int64_t> sorted = node_map;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << "node_map is not a permutation";

  std::set<int64_t> train, valid, test;
  for (int p = 0; p < meta.num_parts; ++p) {
    const int64_t lo = meta.ranges[p], hi = meta.ranges[p + 1];
    const PartFiles f = open_part(dir, meta, p);
    const auto indptr = values<int64_t>(f.indptr);
    const auto indices = values<int64_t>(f.indices);
    const auto feat = values<float>(f.feat);
    const auto label = values<int64_t>(f.label);
    for (int64_t i = 0; i < hi - lo; ++i) {
      const int64_t old = node_map[lo + i];
      if (i > 0) {
        ASSERT_GT(old, node_map[lo + i - 1]) << "original order not kept in part " << p;
      }
      // The row is the input row, in the same (original id) order, in new ids.
      std::vector<int64_t> sources;
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) sources.push_back(node_map[indices[k]]);
      ASSERT_EQ(sources, row(ds.in_edges, old)) << "in-edges of node " << old;
      for (int64_t c = 0; c < meta.feat_dim; ++c)
        ASSERT_EQ(feat[i * meta.feat_dim + c], ds.features.row(old)[c]);
      ASSERT_EQ(label[i], ds.labels[old]);
    }
    for (auto [array, set] :
         {std::pair{&f.train_idx, &train}, {&f.valid_idx, &valid}, {&f.test_idx, &test}}) {
      const auto ids = values<int64_t>(*array);
      ASSERT_TRUE(std::is_sorted(ids.begin(), ids.end()));
      for (int64_t id : ids) {
        ASSERT_GE(id, lo);
        ASSERT_LT(id, hi);
        set->insert(node_map[id]);
      }
    }
  }
  EXPECT_EQ(train, std::set<int64_t>(ds.train_idx.begin(), ds.train_idx.end()));
  EXPECT_EQ(valid, std::set<int64_t>(ds.valid_idx.begin(), ds.valid_idx.end()));
  EXPECT_EQ(test, std::set<int64_t>(ds.test_idx.begin(), ds.test_idx.end()));
}

// Every .npy byte-identical, partita.json identical but for timing and memory figures.
void expect_identical(const std::string& a, const std::string& b) {
  ASSERT_EQ(stable_meta(a), stable_meta(b));
  const PartitionMeta meta = read_meta(a);
  for (const FileEntry& f : meta.files)
    EXPECT_EQ(testing::read_file(a + "/" + f.path), testing::read_file(b + "/" + f.path)) << f.path;
}

TEST(Partition, MetisRoundTripsEveryArray) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  for (int parts : {1, 2, 3, 4}) {
    const std::string out = dir / ("metis" + std::to_string(parts));
    PartitionSummary s = partition_dataset(ds, options_for(out, parts, Method::kMetis));
    ASSERT_EQ(static_cast<int>(s.parts.size()), parts);
    expect_round_trip(ds, out);
    EXPECT_EQ(verify_partition(out).files, 1 + 7 * parts);
  }
}

TEST(Partition, RandomRoundTripsEveryArrayAndBalancesNodes) {
  TempDir dir;
  testing::PlantedOptions po;
  po.num_nodes = 1001;
  data::Dataset ds = testing::planted_dataset(po);
  PartitionSummary s = partition_dataset(ds, options_for(dir.path(), 4, Method::kRandom, 9));
  expect_round_trip(ds, dir.path());
  for (const PartStats& p : s.parts) EXPECT_TRUE(p.nodes == 250 || p.nodes == 251);
  EXPECT_LE(s.node_imbalance, 251.0 * 4 / 1001 + 1e-12);
}

TEST(Partition, SummaryFiguresMatchTheGraph) {
  TempDir dir;
  testing::PlantedOptions po;
  po.undirected = true;
  data::Dataset ds = testing::planted_dataset(po);
  PartitionSummary s = partition_dataset(ds, options_for(dir.path(), 3, Method::kMetis));
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(dir / "node_map.npy");
  const PartitionMeta meta = read_meta(dir.path());
  std::vector<int> owner(static_cast<size_t>(ds.num_nodes));
  for (int64_t gid = 0; gid < ds.num_nodes; ++gid) owner[node_map[gid]] = meta.owner(gid);
  int64_t cut = 0, edges = 0;
  for (int64_t v = 0; v < ds.num_nodes; ++v)
    for (int64_t k = ds.in_edges.indptr[v]; k < ds.in_edges.indptr[v + 1]; ++k, ++edges)
      cut += owner[ds.in_edges.indices[k]] != owner[v];
  EXPECT_EQ(s.edge_cut, cut);
  EXPECT_EQ(s.num_edges, edges);
  EXPECT_DOUBLE_EQ(s.edge_cut_fraction, static_cast<double>(cut) / edges);
  int64_t train = 0;
  for (const PartStats& p : s.parts) train += p.train_nodes;
  EXPECT_EQ(train, static_cast<int64_t>(ds.train_idx.size()));
  EXPECT_GT(s.peak_rss_bytes, 0);
  std::vector<std::string> phases;
  for (const auto& ph : s.phase_seconds) phases.push_back(ph.first);
  EXPECT_EQ(phases, (std::vector<std::string>{"symmetrize", "metis", "renumber", "write_structure",
                                              "write_features", "write_splits"}));
  // METIS finds the planted clusters: far fewer cut edges than random assignment.
  PartitionSummary r = partition_dataset(ds, options_for(dir / "random", 3, Method::kRandom, 1));
  EXPECT_LT(s.edge_cut, r.edge_cut / 2);
  const std::string text = format_summary(s);
  EXPECT_NE(text.find("edge cut: " + std::to_string(cut)), std::string::npos) << text;
  EXPECT_NE(text.find("imbalance"), std::string::npos);
  EXPECT_NE(text.find("peak memory"), std::string::npos);
}

TEST(Partition, SameSeedGivesIdenticalBytes) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  for (Method m : {Method::kMetis, Method::kRandom}) {
    for (int threads : {1, 2}) {
      PartitionOptions o = options_for(dir / (std::string(method_name(m)) + "_a"), 3, m, 42);
      partition_dataset(ds, o);
      o.out_dir = dir / (std::string(method_name(m)) + "_b" + std::to_string(threads));
      o.threads = threads;
      partition_dataset(ds, o);
      expect_identical(dir / (std::string(method_name(m)) + "_a"), o.out_dir);
    }
  }
}

TEST(Partition, RerunIntoSameDirectoryReplacesIt) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  partition_dataset(ds, options_for(dir / "x", 4, Method::kRandom, 1));
  partition_dataset(ds, options_for(dir / "x", 2, Method::kMetis, 1));
  partition_dataset(ds, options_for(dir / "y", 2, Method::kMetis, 1));
  expect_identical(dir / "x", dir / "y");
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "x"))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

TEST(Partition, DifferentSeedsGiveDifferentRandomAssignments) {
  const auto a = assign_random(1000, 4, 1);
  const auto b = assign_random(1000, 4, 2);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, assign_random(1000, 4, 1));
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  partition_dataset(ds, options_for(dir / "a", 3, Method::kRandom, 1));
  partition_dataset(ds, options_for(dir / "b", 3, Method::kRandom, 2));
  EXPECT_NE(testing::read_file(dir / "a/node_map.npy"), testing::read_file(dir / "b/node_map.npy"));
}

TEST(Partition, NumPartsOutOfRangeIsParameterErrorNamingIt) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  for (int parts : {0, -1, 601}) {
    try {
      partition_dataset(ds, options_for(dir.path(), parts, Method::kMetis));
      ADD_FAILURE() << "no error for " << parts << " parts";
    } catch (const ParameterError& e) {
      EXPECT_EQ(e.parameter(), "num_parts") << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("num_parts: ", 0), 0u) << e.what();
    }
  }
  EXPECT_NO_THROW(partition_dataset(ds, options_for(dir.path(), 600, Method::kRandom)));
  EXPECT_FALSE(std::filesystem::exists(dir / "partita.json.tmp"));
}

TEST(Partition, EmptyOutDirIsParameterError) {
  data::Dataset ds = testing::planted_dataset({});
  PartitionOptions o = options_for("", 2, Method::kRandom);
  o.out_dir.clear();
  try {
    partition_dataset(ds, o);
    ADD_FAILURE() << "no error for an empty out_dir";
  } catch (const ParameterError& e) {
    EXPECT_EQ(std::string(e.what()), "out_dir: an output directory is required");
  }
}

// METIS leaves parts empty on such graphs (dozens of times over this loop before the
// repair); every part must end up owning a node and the result must stay a valid partition.
TEST(Partition, TinyGraphsWithManyPartsLeaveNoPartEmpty) {
  TempDir dir;
  int filled = 0;
  for (int64_t n : {2, 3, 5, 8, 13}) {
    std::vector<int64_t> pairs;
    for (int64_t v = 0; v + 1 < n; ++v) pairs.insert(pairs.end(), {v, v + 1, v + 1, v});
    data::Dataset ds = testing::dataset_from_pairs(n, pairs);
    for (int parts = 1; parts <= n; ++parts) {
      PartitionOptions o = options_for(dir / "t", parts, Method::kMetis, 3);
      o.balance_train = true;
      o.balance_edges = true;
      PartitionSummary s = partition_dataset(ds, o);
      ASSERT_EQ(static_cast<int>(s.parts.size()), parts);
      EXPECT_EQ(s.empty_parts(), 0) << format_summary(s);
      expect_round_trip(ds, dir / "t");
      verify_partition(dir / "t");
      MetisAssignOptions mo;
      mo.num_parts = parts;
      mo.seed = 3;
      MetisAssignStats stats;
      MetisGraph g = metis_graph(ds.in_edges, 1);
      assign_metis(g.adj, ds.in_edges.indptr, ds.train_idx, mo, &stats);
      filled += stats.filled_empty_parts;
    }
  }
  EXPECT_GT(filled, 0) << "the repair of empty parts was never exercised";
}

// Library warnings name parameters as its errors do, between backquotes, for a front end to
// word (core/log_rewrite.h: the CLI shows --balance-train).
TEST(Partition, WarningsNameParametersInBackquotes) {
  std::vector<std::string> lines;
  std::mutex mu;
  set_log_rewriter([&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
    return line;
  });
  set_log_level(LogLevel::kInfo);
  TempDir dir;
  PartitionOptions o = options_for(dir / "r", 2, Method::kRandom);
  o.balance_train = true;
  partition_dataset(testing::planted_dataset({}), o);
  // Constraints of zero weight: no training node (none given), no edge.
  const data::Dataset bare = testing::dataset_from_pairs(6, {});
  const std::vector<int64_t> no_train;
  MetisAssignOptions mo;
  mo.num_parts = 2;
  mo.balance_train = true;
  mo.balance_edges = true;
  const MetisGraph g = metis_graph(bare.in_edges, 1);
  assign_metis(g.adj, bare.in_edges.indptr, no_train, mo, nullptr);
  set_log_level(LogLevel::kQuiet);
  set_log_rewriter(nullptr);
  const auto logged = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  EXPECT_TRUE(
      logged("warning: `balance_train`/`balance_edges` apply to METIS only; ignored by "
             "random"));
  EXPECT_TRUE(
      logged("warning: `balance_train`: the dataset has no training nodes; constraint "
             "ignored"));
  EXPECT_TRUE(logged("warning: `balance_edges`: the graph has no edges; constraint ignored"));
}

TEST(Partition, SummaryMarksEmptyParts) {
  PartitionSummary s;
  s.parts.resize(3);
  s.parts[0].nodes = 4;
  s.parts[2].nodes = 1;
  EXPECT_EQ(s.empty_parts(), 1);
  const std::string text = format_summary(s);
  EXPECT_NE(text.find("(empty)"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: 1 empty part(s)"), std::string::npos) << text;
}

TEST(Partition, GraphWithoutEdgesOrTrainingNodes) {
  TempDir dir;
  data::Dataset ds = testing::dataset_from_pairs(20, {}, /*feat_dim=*/0);
  ds.train_idx.clear();
  PartitionOptions o = options_for(dir.path(), 3, Method::kMetis);
  o.balance_train = true;
  o.balance_edges = true;
  PartitionSummary s = partition_dataset(ds, o);
  EXPECT_EQ(s.num_edges, 0);
  EXPECT_EQ(s.edge_cut_fraction, 0.0);
  expect_round_trip(ds, dir.path());
  verify_partition(dir.path());
}

// Label -1 (an unlabelled node) is partitioned like any label when the node is in no split,
// and refused when a split holds the node.
TEST(Partition, UnlabelledNodesOnlyOutsideTheSplits) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  std::set<int64_t> in_split(ds.train_idx.begin(), ds.train_idx.end());
  in_split.insert(ds.valid_idx.begin(), ds.valid_idx.end());
  const int64_t test_node = ds.test_idx.back();
  ds.test_idx.pop_back();  // now in no split (unless valid or train also hold it)
  in_split.insert(ds.test_idx.begin(), ds.test_idx.end());
  ASSERT_EQ(in_split.count(test_node), 0u);
  ds.labels[test_node] = -1;
  partition_dataset(ds, options_for(dir / "ok", 2, Method::kMetis));
  expect_round_trip(ds, dir / "ok");
  verify_partition(dir / "ok");

  const int64_t train_node = ds.train_idx[0];
  ds.labels[train_node] = -1;
  try {
    partition_dataset(ds, options_for(dir / "bad", 2, Method::kMetis));
    ADD_FAILURE() << "a train node with label -1 was partitioned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "node {} is in the train split but has label -1 (unlabelled)", train_node)),
              std::string::npos)
        << e.what();
  }
}

TEST(MetisGraph, SymmetricInputIsUsedAsIsOtherInputIsSymmetrized) {
  for (bool undirected : {false, true}) {
    testing::PlantedOptions po;
    po.undirected = undirected;
    po.num_nodes = 500;
    data::Dataset ds = testing::planted_dataset(po);
    EXPECT_EQ(is_symmetric(ds.in_edges, 2), undirected);
    MetisGraph g = metis_graph(ds.in_edges, 2);
    EXPECT_EQ(g.equals_input, undirected);
    graph::CsrOf<int32_t> expected = graph::symmetrize_int32(ds.in_edges, 1);
    EXPECT_EQ(g.adj.indptr, expected.indptr);
    EXPECT_EQ(g.adj.indices, expected.indices);
  }
  // One missing reverse edge, or a self loop, makes a graph asymmetric.
  std::vector<int64_t> pairs{0, 1, 1, 0, 1, 2, 2, 1, 2, 3, 3, 2};
  EXPECT_TRUE(is_symmetric(testing::dataset_from_pairs(4, pairs).in_edges, 2));
  pairs.resize(pairs.size() - 2);
  EXPECT_FALSE(is_symmetric(testing::dataset_from_pairs(4, pairs).in_edges, 2));
  graph::Csr loop;
  loop.indptr = {0, 1, 2};
  loop.indices = {0, 1};
  EXPECT_FALSE(is_symmetric(loop, 1));
}

// Typed rows go by (relation, source), so a row may list a source twice, apart, or after a
// larger one. METIS gets every row sorted and without repeats, in a copy, even when the rows
// as listed are symmetric.
TEST(MetisGraph, RowsNotStrictlyAscendingAreSortedIntoACopy) {
  graph::Csr in;  // the triangle 0 - 1 - 2 as rows (1, 2, 1), (0, 2, 0), (1, 0)
  in.indptr = {0, 3, 6, 8};
  in.indices = {1, 2, 1, 0, 2, 0, 1, 0};
  ASSERT_TRUE(is_symmetric(in, 1));
  const MetisGraph g = metis_graph(in, 1);
  EXPECT_FALSE(g.equals_input);
  EXPECT_EQ(g.adj.indptr, (std::vector<int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(g.adj.indices, (std::vector<int32_t>{1, 2, 0, 2, 0, 1}));
}

// graph::symmetrize_int32 was rewritten for speed (transpose + merge): check it against a
// brute-force set union, whatever the thread count.
TEST(MetisGraph, SymmetrizeMatchesBruteForce) {
  const int64_t n = 2000;
  Rng rng(stream_key(11));
  std::vector<int64_t> pairs;
  std::vector<std::set<int32_t>> expected(n);
  for (int i = 0; i < 30000; ++i) {
    const int64_t s = static_cast<int64_t>(rng.below(n)),
                  d = static_cast<int64_t>(rng.below(n / 3));
    pairs.insert(pairs.end(), {s, d});
    if (s != d) {
      expected[s].insert(static_cast<int32_t>(d));
      expected[d].insert(static_cast<int32_t>(s));
    }
  }
  data::Dataset ds = testing::dataset_from_pairs(n, pairs);
  for (int threads : {1, 2, 3, 8}) {
    graph::CsrOf<int32_t> adj = graph::symmetrize_int32(ds.in_edges, threads);
    ASSERT_EQ(adj.num_rows(), n);
    for (int64_t v = 0; v < n; ++v) {
      ASSERT_EQ(std::vector<int32_t>(adj.indices.begin() + adj.indptr[v],
                                     adj.indices.begin() + adj.indptr[v + 1]),
                std::vector<int32_t>(expected[v].begin(), expected[v].end()))
          << "row " << v << " with " << threads << " threads";
    }
  }
}

// run_partition owns the dataset and drops its in-edge indices while METIS runs when the
// graph is symmetric, writing from METIS's adjacency instead: same bytes either way.
TEST(Partition, RunPartitionMatchesPartitionDatasetOnDisk) {
  TempDir dir;
  data::GenerateOptions go;
  go.nodes = 3000;
  go.avg_degree = 6;
  go.feat_dim = 4;
  go.classes = 4;
  go.out_dir = dir / "data";
  go.threads = 2;
  data::generate_synthetic(go);
  for (bool undirected : {true, false}) {
    data::LoadOptions load;
    load.undirected = undirected;
    load.threads = 2;
    PartitionOptions o = options_for(dir / "run", 3, Method::kMetis, 7);
    PartitionSummary s = run_partition(dir / "data", load, o);
    EXPECT_EQ(s.phase_seconds.front().first, "load");
    data::Dataset ds = data::load_dataset(dir / "data", load);
    o.out_dir = dir / "direct";
    o.undirected = undirected;
    partition_dataset(ds, o);
    expect_identical(dir / "run", dir / "direct");
    expect_round_trip(ds, dir / "run");
    EXPECT_EQ(read_meta(dir / "run").undirected, undirected);
  }
}

// Cora through the OGB reader: METIS cuts far fewer edges than random assignment, and
// --balance-train keeps the 140 training nodes spread evenly.
TEST(PartitionCora, MetisBeatsRandomAndBalanceTrainBalancesTrainingNodes) {
  const std::string cora = testing::shared_datasets_dir() + "/ogb-layout/cora";
  data::LoadOptions load;
  load.threads = 2;
  data::Dataset ds = data::load_dataset(cora, load);
  ASSERT_EQ(ds.num_nodes, 2708);
  TempDir dir;
  PartitionSummary metis = partition_dataset(ds, options_for(dir / "m", 4, Method::kMetis, 1));
  PartitionSummary random = partition_dataset(ds, options_for(dir / "r", 4, Method::kRandom, 1));
  EXPECT_LT(metis.edge_cut_fraction, 0.5 * random.edge_cut_fraction)
      << "metis " << metis.edge_cut_fraction << " random " << random.edge_cut_fraction;
  PartitionOptions bt = options_for(dir / "bt", 4, Method::kMetis, 1);
  bt.balance_train = true;
  PartitionSummary balanced = partition_dataset(ds, bt);
  EXPECT_LT(balanced.train_imbalance, 1.15) << format_summary(balanced);
  EXPECT_LE(balanced.train_imbalance, metis.train_imbalance);
  EXPECT_LT(balanced.edge_cut_fraction, 0.5 * random.edge_cut_fraction);
  expect_round_trip(ds, dir / "bt");
  EXPECT_EQ(verify_partition(dir / "bt").files, 29);
  const PartitionMeta meta = read_meta(dir / "bt");
  EXPECT_TRUE(meta.balance_train);
  EXPECT_EQ(meta.dataset, ds.path);
}

}  // namespace
}  // namespace partita::partition
