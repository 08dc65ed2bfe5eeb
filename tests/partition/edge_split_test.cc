// Link-prediction edge splits (partition/edge_split.h): exact counts, held-out edges out of
// every part's graph and in the stored split, reverse pairs together, negatives, per-part
// training edges, determinism, hostile options, and what info --verify catches.
#include "partita/partition/edge_split.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "helpers/quiet_logs.h"
#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/data/generate.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"
#include "partition_dirs.h"
#include "partition_edits.h"
#include "test_datasets.h"

namespace partita::partition {
namespace {

using testing::stable_meta;
using testing::TempDir;
using Pair = std::pair<int64_t, int64_t>;

PartitionOptions split_options(const std::string& out, int parts, double valid, double test,
                               uint64_t seed = 1, int threads = 2) {
  PartitionOptions o;
  o.out_dir = out;
  o.num_parts = parts;
  o.method = Method::kMetis;
  o.seed = seed;
  o.threads = threads;
  o.edge_split.valid_fraction = valid;
  o.edge_split.test_fraction = test;
  return o;
}

Pair unordered(int64_t a, int64_t b) { return {std::min(a, b), std::max(a, b)}; }

// Directed edges (src, dst) of a CSC.
std::set<Pair> edges_of(const graph::Csr& g) {
  std::set<Pair> out;
  for (int64_t d = 0; d < g.num_rows(); ++d)
    for (int64_t k = g.indptr[d]; k < g.indptr[d + 1]; ++k) out.insert({g.indices[k], d});
  return out;
}

// A partition directory read back in ORIGINAL ids.
struct StoredSplit {
  std::set<Pair> graph;  // stored directed edges, all parts
  std::vector<Pair> valid, valid_neg, test, test_neg, train;
  std::vector<int64_t> train_per_part;
};

// The elements of an int64 array of any shape.
std::vector<int64_t> flat(const std::string& path) {
  const NpyArray a = NpyArray::open(path);
  auto v = a.view<int64_t>();
  return {v.begin(), v.end()};
}

std::vector<Pair> pairs_in(const std::string& path, const std::vector<int64_t>& node_map) {
  const std::vector<int64_t> v = flat(path);
  std::vector<Pair> out;
  for (size_t i = 0; i < v.size(); i += 2) out.emplace_back(node_map[v[i]], node_map[v[i + 1]]);
  return out;
}

StoredSplit read_back(const std::string& dir) {
  const PartitionMeta m = read_meta(dir);
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(dir + "/node_map.npy");
  StoredSplit s;
  for (int p = 0; p < m.num_parts; ++p) {
    const auto indptr = read_npy_vector<int64_t>(dir + "/" + part_file(p, "indptr"));
    const auto indices = read_npy_vector<int64_t>(dir + "/" + part_file(p, "indices"));
    for (int64_t i = 0; i + 1 < static_cast<int64_t>(indptr.size()); ++i)
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
        s.graph.insert({node_map[indices[k]], node_map[m.ranges[p] + i]});
    const std::vector<Pair> train = pairs_in(dir + "/" + part_file(p, kTrainEdgesName), node_map);
    for (const Pair& e : train) {
      const int64_t d = std::find(node_map.begin(), node_map.end(), e.second) - node_map.begin();
      EXPECT_EQ(m.owner(d), p) << "training edge stored by a part that does not own its dst";
    }
    s.train.insert(s.train.end(), train.begin(), train.end());
    s.train_per_part.push_back(static_cast<int64_t>(train.size()));
  }
  s.valid = pairs_in(dir + "/" + kEdgeSplitFiles[0], node_map);
  s.valid_neg = pairs_in(dir + "/" + kEdgeSplitFiles[1], node_map);
  s.test = pairs_in(dir + "/" + kEdgeSplitFiles[2], node_map);
  s.test_neg = pairs_in(dir + "/" + kEdgeSplitFiles[3], node_map);
  return s;
}

// Everything the split promises, against the dataset's full graph.
void expect_valid_split(const data::Dataset& ds, const std::string& dir, double valid_fraction,
                        double test_fraction) {
  const std::set<Pair> full = edges_of(ds.in_edges);
  std::set<Pair> units;  // the rule of edge_split.h
  for (const Pair& e : full)
    if (e.first < e.second || !full.count({e.second, e.first})) units.insert(e);
  const int64_t u = static_cast<int64_t>(units.size());
  const StoredSplit s = read_back(dir);
  const int64_t valid = std::max<int64_t>(1, std::llround(valid_fraction * u));
  const int64_t test = std::max<int64_t>(1, std::llround(test_fraction * u));
  ASSERT_EQ(static_cast<int64_t>(s.valid.size()), valid);
  ASSERT_EQ(static_cast<int64_t>(s.test.size()), test);
  ASSERT_EQ(s.valid_neg.size(), s.valid.size());
  ASSERT_EQ(s.test_neg.size(), s.test.size());
  ASSERT_EQ(static_cast<int64_t>(s.train.size()), u - valid - test);

  // Units partition into train / valid / test; the stored graph is the full graph without
  // the held-out pairs in both directions.
  std::set<Pair> seen;
  for (const auto* set : {&s.train, &s.valid, &s.test})
    for (const Pair& e : *set) {
      EXPECT_TRUE(units.count(e)) << e.first << "->" << e.second << " is not a unit";
      EXPECT_TRUE(seen.insert(e).second) << "unit listed twice";
    }
  std::set<Pair> expected_graph = full;
  for (const auto* set : {&s.valid, &s.test})
    for (const Pair& e : *set) {
      expected_graph.erase(e);
      expected_graph.erase({e.second, e.first});
      EXPECT_FALSE(s.graph.count(e));
      EXPECT_FALSE(s.graph.count({e.second, e.first})) << "reverse of a held-out edge kept";
    }
  EXPECT_EQ(s.graph, expected_graph);
  for (const Pair& e : s.train) EXPECT_TRUE(s.graph.count(e));

  std::set<Pair> negatives;
  for (const auto* set : {&s.valid_neg, &s.test_neg})
    for (const Pair& e : *set) {
      EXPECT_NE(e.first, e.second) << "self loop";
      EXPECT_FALSE(full.count(e) || full.count({e.second, e.first})) << "negative is an edge";
      EXPECT_TRUE(negatives.insert(unordered(e.first, e.second)).second) << "repeated negative";
    }
  // Stored edges: every entry of a pair not held out (a pair repeated at different times
  // is several entries, all kept or all held out).
  std::set<Pair> held;
  for (const auto* set : {&s.valid, &s.test})
    for (const Pair& e : *set) held.insert(unordered(e.first, e.second));
  int64_t kept = 0;
  for (int64_t d = 0; d < ds.in_edges.num_rows(); ++d)
    for (int64_t k = ds.in_edges.indptr[d]; k < ds.in_edges.indptr[d + 1]; ++k)
      kept += held.count(unordered(ds.in_edges.indices[k], d)) ? 0 : 1;
  const PartitionMeta m = read_meta(dir);
  ASSERT_TRUE(m.summary.edge_split);
  EXPECT_EQ(m.summary.edge_split->train_per_part, s.train_per_part);
  EXPECT_EQ(m.num_edges, kept);
  EXPECT_NO_THROW(verify_partition(dir));
}

TEST(EdgeSplit, UndirectedGraphHoldsOutPairsWithTheirReverse) {
  TempDir dir;
  testing::PlantedOptions po;
  po.undirected = true;
  data::Dataset ds = testing::planted_dataset(po);
  ASSERT_EQ(ds.in_edges.num_entries() % 2, 0);
  for (int parts : {1, 2, 3}) {
    const std::string out = dir / std::to_string(parts);
    PartitionSummary s = partition_dataset(ds, split_options(out, parts, 0.05, 0.10));
    expect_valid_split(ds, out, 0.05, 0.10);
    // Every unit is an edge and its reverse: the stored graph lost exactly 2 per held out.
    ASSERT_TRUE(s.edge_split);
    EXPECT_EQ(s.num_edges,
              ds.in_edges.num_entries() - 2 * (s.edge_split->valid + s.edge_split->test));
    EXPECT_EQ(s.edge_split->train() + s.edge_split->valid + s.edge_split->test,
              ds.in_edges.num_entries() / 2);
  }
}

TEST(EdgeSplit, DirectedGraphHoldsOutEachEdgeAndReciprocalPairsOnce) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});  // directed, some pairs both ways
  const std::set<Pair> full = edges_of(ds.in_edges);
  int64_t both_ways = 0;
  for (const Pair& e : full) both_ways += e.first < e.second && full.count({e.second, e.first});
  ASSERT_GT(both_ways, 0) << "the test needs reciprocal pairs";
  PartitionSummary s = partition_dataset(ds, split_options(dir.path(), 2, 0.2, 0.3));
  expect_valid_split(ds, dir.path(), 0.2, 0.3);
  EXPECT_EQ(s.edge_split->train() + s.edge_split->valid + s.edge_split->test,
            static_cast<int64_t>(full.size()) - both_ways);
}

TEST(EdgeSplit, ExactCountsOnASmallGraph) {
  TempDir dir;
  // 10 directed edges on 12 nodes, no reciprocal pair: 10 units.
  std::vector<int64_t> pairs;
  for (int64_t v = 0; v < 10; ++v) pairs.insert(pairs.end(), {v, v + 1});
  data::Dataset ds = testing::dataset_from_pairs(12, pairs);
  PartitionSummary s = partition_dataset(ds, split_options(dir.path(), 2, 0.1, 0.25));
  ASSERT_TRUE(s.edge_split);
  EXPECT_EQ(s.edge_split->valid, 1);
  EXPECT_EQ(s.edge_split->test, 3);  // round(2.5) = 3 (half away from zero)
  EXPECT_EQ(s.edge_split->valid_neg, 1);
  EXPECT_EQ(s.edge_split->test_neg, 3);
  EXPECT_EQ(s.edge_split->train(), 6);
  EXPECT_EQ(s.num_edges, 6);
  expect_valid_split(ds, dir.path(), 0.1, 0.25);
}

TEST(EdgeSplit, IsolatingANodeIsAllowed) {
  TempDir dir;
  // A star: holding out any edge leaves a leaf without edges.
  std::vector<int64_t> pairs;
  for (int64_t v = 1; v < 9; ++v) pairs.insert(pairs.end(), {0, v, v, 0});
  data::Dataset ds = testing::dataset_from_pairs(9, pairs);
  partition_dataset(ds, split_options(dir.path(), 2, 0.25, 0.25));
  expect_valid_split(ds, dir.path(), 0.25, 0.25);
}

TEST(EdgeSplit, DenseSmallGraphTakesTheLastFreePairs) {
  TempDir dir;
  // K6 minus two pairs: 13 units, 2 free pairs, 1 + 1 held out takes both as negatives.
  std::vector<int64_t> pairs;
  for (int64_t a = 0; a < 6; ++a)
    for (int64_t b = a + 1; b < 6; ++b)
      if (!(a == 0 && b == 1) && !(a == 2 && b == 3)) pairs.insert(pairs.end(), {a, b});
  data::Dataset ds = testing::dataset_from_pairs(6, pairs);
  partition_dataset(ds, split_options(dir.path(), 1, 0.05, 0.05));
  expect_valid_split(ds, dir.path(), 0.05, 0.05);
  const StoredSplit s = read_back(dir.path());
  std::set<Pair> negatives{unordered(s.valid_neg[0].first, s.valid_neg[0].second),
                           unordered(s.test_neg[0].first, s.test_neg[0].second)};
  EXPECT_EQ(negatives, (std::set<Pair>{{0, 1}, {2, 3}}));
}

TEST(EdgeSplit, SameSeedGivesIdenticalBytesForAnyThreadCount) {
  TempDir dir;
  testing::PlantedOptions po;
  po.undirected = true;
  po.num_nodes = 3000;  // sparse: negatives drawn by rejection
  data::Dataset ds = testing::planted_dataset(po);
  partition_dataset(ds, split_options(dir / "a", 2, 0.05, 0.1, 7, 1));
  partition_dataset(ds, split_options(dir / "b", 2, 0.05, 0.1, 7, 2));
  partition_dataset(ds, split_options(dir / "c", 2, 0.05, 0.1, 7, 2));
  const PartitionMeta m = read_meta(dir / "a");
  for (const char* other : {"b", "c"}) {
    ASSERT_EQ(stable_meta(dir / "a"), stable_meta(dir / other));
    for (const FileEntry& f : m.files)
      EXPECT_EQ(testing::read_file(dir / ("a/" + f.path)),
                testing::read_file(dir / (other + ("/" + f.path))))
          << f.path;
  }
  partition_dataset(ds, split_options(dir / "d", 2, 0.05, 0.1, 8, 2));
  EXPECT_NE(testing::read_file(dir / (std::string("a/") + kEdgeSplitFiles[0])),
            testing::read_file(dir / (std::string("d/") + kEdgeSplitFiles[0])));
  expect_valid_split(ds, dir / "a", 0.05, 0.1);
}

template <class Fn>
std::string usage_error(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(EdgeSplit, ParseRefusesMalformedListsAndFractions) {
  const EdgeSplitOptions o = parse_edge_split("0.05,0.10");
  EXPECT_DOUBLE_EQ(o.valid_fraction, 0.05);
  EXPECT_DOUBLE_EQ(o.test_fraction, 0.10);
  for (const char* bad : {"", "0.1", "0.1,", ",0.1", "0.1,0.2,0.3", "a,0.1", "0.1,0.2x", "0.1;0.2",
                          "nan,0.1", "0.1,inf", " 0.1,0.2"}) {
    const std::string what = usage_error([&] { parse_edge_split(bad); });
    EXPECT_EQ(what.rfind("edge_split: ", 0), 0u) << bad << ": " << what;
  }
  for (const char* bad : {"0,0.1", "0.1,0", "-0.1,0.2", "1,0.1", "0.2,1.5"})
    EXPECT_NE(usage_error([&] { parse_edge_split(bad); }).find("outside (0, 1)"), std::string::npos)
        << bad;
  for (const char* bad : {"0.5,0.5", "0.6,0.7"})
    EXPECT_NE(usage_error([&] { parse_edge_split(bad); }).find("sum to 1 or more"),
              std::string::npos)
        << bad;
}

TEST(EdgeSplit, TooFewEdgesOrNonEdgesIsAUsageError) {
  TempDir dir;
  // 2 units: 1 + 1 held out (each at least one) leaves none.
  data::Dataset path = testing::dataset_from_pairs(3, {0, 1, 1, 2});
  EXPECT_NE(usage_error([&] {
              partition_dataset(path, split_options(dir / "a", 1, 0.4, 0.4));
            }).find("leaves none to train on"),
            std::string::npos);
  // K5 minus one pair: 9 units, 1 non-edge, 2 negatives needed.
  std::vector<int64_t> pairs;
  for (int64_t a = 0; a < 5; ++a)
    for (int64_t b = a + 1; b < 5; ++b)
      if (!(a == 0 && b == 1)) pairs.insert(pairs.end(), {a, b});
  data::Dataset dense = testing::dataset_from_pairs(5, pairs);
  EXPECT_NE(usage_error([&] {
              partition_dataset(dense, split_options(dir / "b", 1, 0.1, 0.1));
            }).find("2 negatives needed but the graph has only 1 node pairs that are not edges"),
            std::string::npos);
}

TEST(EdgeSplit, TypedDatasetIsAUsageError) {
  TempDir dir;
  data::Dataset ds = testing::typed_dataset({});
  const std::string what =
      usage_error([&] { partition_dataset(ds, split_options(dir.path(), 1, 0.1, 0.1)); });
  EXPECT_EQ(what.rfind("edge_split: ", 0), 0u) << what;
  EXPECT_NE(what.find("homogeneous"), std::string::npos) << what;
}

TEST(EdgeSplit, DatasetSplitIsWrittenAsGiven) {
  TempDir dir;
  std::vector<int64_t> pairs;
  for (int64_t v = 0; v < 9; ++v) pairs.insert(pairs.end(), {v, v + 1, v + 1, v});
  data::Dataset ds = testing::dataset_from_pairs(10, pairs);
  data::EdgeSplitArrays split;
  split.train = {0, 1, 1, 2, 3, 4, 3, 4};  // a repeat: stored once
  split.valid = {2, 3, 0, 5};              // (0, 5) is no edge: nothing to remove
  split.test = {6, 5};
  split.valid_neg = {0, 9, 1, 8};
  split.test_neg = {2, 7};
  ds.edge_split = split;
  PartitionSummary s = partition_dataset(ds, split_options(dir.path(), 2, 0, 0));
  ASSERT_TRUE(s.edge_split);
  EXPECT_EQ(s.edge_split->source, "dataset");
  EXPECT_EQ(s.edge_split->train(), 3);
  EXPECT_EQ(s.num_edges, 18 - 4);
  const StoredSplit st = read_back(dir.path());
  EXPECT_EQ(st.valid, (std::vector<Pair>{{2, 3}, {0, 5}}));
  EXPECT_EQ(st.valid_neg, (std::vector<Pair>{{0, 9}, {1, 8}}));
  EXPECT_EQ(st.test, (std::vector<Pair>{{6, 5}}));
  for (const Pair& e : {Pair{2, 3}, Pair{3, 2}, Pair{5, 6}, Pair{6, 5}})
    EXPECT_FALSE(st.graph.count(e));
  EXPECT_NO_THROW(verify_partition(dir.path()));

  // With --edge-split too: one usage error.
  EXPECT_NE(usage_error([&] {
              partition_dataset(ds, split_options(dir / "x", 1, 0.1, 0.1));
            }).find("has its own edge split"),
            std::string::npos);
  // A negative that is an edge of the graph.
  ds.edge_split->test_neg = {4, 5};
  try {
    partition_dataset(ds, split_options(dir / "y", 1, 0, 0));
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("test_neg.npy: row 0: (4, 5) is an edge"),
              std::string::npos)
        << e.what();
  }
  // A negative repeated (reversed) in the other file.
  ds.edge_split->test_neg = {9, 0};
  try {
    partition_dataset(ds, split_options(dir / "z", 1, 0, 0));
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("test_neg.npy: row 0: (9, 0) repeats an earlier"),
              std::string::npos)
        << e.what();
  }
}

// Rewrites file `rel` of partition `dir` with `values` and records its shape and CRC-32 in
// `m` (written back by the caller), so that verify gets past the checksums to the contents.
void replace_array(const std::string& dir, PartitionMeta& m, const std::string& rel,
                   const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  const uint32_t crc = write_npy<int64_t>(dir + "/" + rel, ArrayView<const int64_t>(values), shape);
  for (FileEntry& f : m.files)
    if (f.path == rel) {
      f.crc32 = crc;
      f.shape = shape;
    }
}

std::string verify_error(const std::string& dir) {
  try {
    verify_partition(dir);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no FormatError)";
}

TEST(EdgeSplit, VerifyCatchesAHeldOutEdgePutBackIntoTheGraph) {
  TempDir dir;
  testing::PlantedOptions po;
  po.undirected = true;
  data::Dataset ds = testing::planted_dataset(po);
  partition_dataset(ds, split_options(dir.path(), 2, 0.05, 0.1));
  PartitionMeta m = read_meta(dir.path());
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(dir / "node_map.npy");
  const std::vector<int64_t> test = flat(dir / kEdgeSplitFiles[2]);
  const int64_t s = test[0], d = test[1];
  const int p = m.owner(d);
  std::vector<int64_t> indptr = read_npy_vector<int64_t>(dir / part_file(p, "indptr"));
  std::vector<int64_t> indices = read_npy_vector<int64_t>(dir / part_file(p, "indices"));
  // Insert s into row d where its original id belongs.
  const int64_t row = d - m.ranges[p];
  auto at = indices.begin() + indptr[row];
  while (at != indices.begin() + indptr[row + 1] && node_map[*at] < node_map[s]) ++at;
  indices.insert(at, s);
  for (size_t i = static_cast<size_t>(row) + 1; i < indptr.size(); ++i) ++indptr[i];
  replace_array(dir.path(), m, part_file(p, "indptr"), indptr,
                {static_cast<int64_t>(indptr.size())});
  replace_array(dir.path(), m, part_file(p, "indices"), indices,
                {static_cast<int64_t>(indices.size())});
  ++m.summary.parts[p].edges;
  ++m.num_edges;
  write_meta(dir.path(), m);
  const std::string what = verify_error(dir.path());
  EXPECT_NE(what.find(std::string(kEdgeSplitFiles[2]) + ": row 0: (" + std::to_string(s) + ", " +
                      std::to_string(d) + ") is an edge of the stored graph"),
            std::string::npos)
      << what;
}

TEST(EdgeSplit, VerifyCatchesANegativeThatIsAnEdge) {
  TempDir dir;
  testing::PlantedOptions po;
  po.undirected = true;
  data::Dataset ds = testing::planted_dataset(po);
  partition_dataset(ds, split_options(dir.path(), 2, 0.05, 0.1));
  std::vector<int64_t> neg = flat(dir / kEdgeSplitFiles[1]);
  const std::vector<int64_t> train = flat(dir / part_file(1, kTrainEdgesName));
  neg[2] = train[0];
  neg[3] = train[1];
  PartitionMeta m = read_meta(dir.path());
  replace_array(dir.path(), m, kEdgeSplitFiles[1], neg, {static_cast<int64_t>(neg.size() / 2), 2});
  write_meta(dir.path(), m);
  const std::string what = verify_error(dir.path());
  EXPECT_NE(what.find(std::string(kEdgeSplitFiles[1]) + ": row 1: "), std::string::npos) << what;
  EXPECT_NE(what.find("is an edge of the stored graph; a negative must not be"), std::string::npos)
      << what;
}

// info --verify refuses a part's training pairs out of (dst, src) order: a repeated pair.
TEST(EdgeSplit, VerifyCatchesTrainingPairsOutOfOrder) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  partition_dataset(ds, split_options(dir.path(), 2, 0.05, 0.1));
  const std::string rel = part_file(1, kTrainEdgesName);
  std::vector<int64_t> train = flat(dir / rel);
  ASSERT_GE(train.size(), 4u);
  std::copy(train.begin(), train.begin() + 2, train.begin() + 2);
  PartitionMeta m = read_meta(dir.path());
  replace_array(dir.path(), m, rel, train, {static_cast<int64_t>(train.size() / 2), 2});
  write_meta(dir.path(), m);
  const std::string what = verify_error(dir.path());
  EXPECT_NE(what.find(rel + ": row 1: not strictly ascending by (dst, src)"), std::string::npos)
      << what;
}

TEST(EdgeSplit, MetaWithoutTheSplitFilesIsRefused) {
  TempDir dir;
  data::Dataset ds = testing::planted_dataset({});
  partition_dataset(ds, split_options(dir.path(), 2, 0.05, 0.1));
  PartitionMeta m = read_meta(dir.path());
  m.files.erase(std::remove_if(m.files.begin(), m.files.end(),
                               [](const FileEntry& f) { return f.path == kEdgeSplitFiles[3]; }),
                m.files.end());
  write_meta(dir.path(), m);
  try {
    read_meta(dir.path());
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("files: 'edges/test_neg.npy' is not listed"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace partita::partition

namespace partita::partition {
namespace {

using Timed = std::tuple<int64_t, int64_t, int64_t>;  // (src, dst, time), original ids

std::vector<Timed> timed_in(const std::string& dir, const std::string& pairs_file,
                            const std::string& times_file, const std::vector<int64_t>& node_map) {
  const std::vector<Pair> pairs = pairs_in(dir + "/" + pairs_file, node_map);
  const std::vector<int64_t> times = flat(dir + "/" + times_file);
  EXPECT_EQ(pairs.size(), times.size()) << times_file;
  std::vector<Timed> out;
  for (size_t i = 0; i < pairs.size() && i < times.size(); ++i)
    out.emplace_back(pairs[i].first, pairs[i].second, times[i]);
  return out;
}

// A split by time against a brute force over the loaded dataset's units (edge_split.h): the
// latest units held out, test the latest, negatives at the held-out times, every other unit
// a training pair with its time unless an earlier copy of a held-out pair.
void expect_time_split(const data::Dataset& ds, const std::string& dir, double valid_fraction,
                       double test_fraction) {
  const graph::Csr& g = ds.in_edges;
  const data::ExtraArray* time_array = data::find_array(ds.edge_arrays, "edge_time");
  ASSERT_NE(time_array, nullptr);
  std::vector<int64_t> time(static_cast<size_t>(time_array->rows()));
  std::memcpy(time.data(), time_array->values.data(), time_array->values.size());
  const std::set<Pair> full = edges_of(g);
  std::vector<Timed> units;
  for (int64_t d = 0; d < g.num_rows(); ++d)
    for (int64_t k = g.indptr[d]; k < g.indptr[d + 1]; ++k) {
      const int64_t s = g.indices[k];
      if (s < d || !full.count({d, s})) units.emplace_back(s, d, time[k]);
    }
  const int64_t u = static_cast<int64_t>(units.size());
  const int64_t valid = std::max<int64_t>(1, std::llround(valid_fraction * u));
  const int64_t test = std::max<int64_t>(1, std::llround(test_fraction * u));

  const PartitionMeta m = read_meta(dir);
  ASSERT_TRUE(m.summary.edge_split && m.summary.edge_split->by_time);
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(dir + "/node_map.npy");
  std::vector<std::vector<Timed>> held;  // valid, valid_neg, test, test_neg
  for (size_t f = 0; f < 4; ++f)
    held.push_back(timed_in(dir, kEdgeSplitFiles[f], kEdgeSplitTimeFiles[f], node_map));
  std::vector<Timed> train;
  for (int p = 0; p < m.num_parts; ++p) {
    const std::vector<Timed> part =
        timed_in(dir, part_file(p, kTrainEdgesName), part_file(p, kTrainEdgeTimeName), node_map);
    train.insert(train.end(), part.begin(), part.end());
  }
  ASSERT_EQ(static_cast<int64_t>(held[0].size()), valid);
  ASSERT_EQ(static_cast<int64_t>(held[2].size()), test);
  const auto time_of = [](const Timed& e) { return std::get<2>(e); };
  // The held-out units are the latest: none kept back is later than one held out, and none
  // validation is later than one for test.
  std::multiset<Timed> rest(units.begin(), units.end());
  std::set<Pair> held_pairs;
  int64_t earliest_held = std::numeric_limits<int64_t>::max(), latest_valid = -1;
  for (size_t f : {size_t{0}, size_t{2}})
    for (const Timed& e : held[f]) {
      auto it = rest.find(e);
      ASSERT_NE(it, rest.end()) << "held-out pair is not a unit";
      rest.erase(it);
      held_pairs.insert(unordered(std::get<0>(e), std::get<1>(e)));
      earliest_held = std::min(earliest_held, time_of(e));
      if (f == 0) latest_valid = std::max(latest_valid, time_of(e));
    }
  for (const Timed& e : held[2]) EXPECT_GE(time_of(e), latest_valid);
  for (const Timed& e : rest) EXPECT_LE(time_of(e), earliest_held);
  // Negatives: as many, at the held-out times (the same multiset of times).
  for (size_t f : {size_t{0}, size_t{2}}) {
    std::multiset<int64_t> pos, neg;
    for (const Timed& e : held[f]) pos.insert(time_of(e));
    for (const Timed& e : held[f + 1]) {
      neg.insert(time_of(e));
      EXPECT_FALSE(full.count({std::get<0>(e), std::get<1>(e)}) ||
                   full.count({std::get<1>(e), std::get<0>(e)}))
          << "negative is an edge";
    }
    EXPECT_EQ(pos, neg);
  }
  // Training: the rest, without copies of held-out pairs.
  std::multiset<Timed> expected_train;
  for (const Timed& e : rest)
    if (!held_pairs.count(unordered(std::get<0>(e), std::get<1>(e)))) expected_train.insert(e);
  EXPECT_EQ(std::multiset<Timed>(train.begin(), train.end()), expected_train);
  EXPECT_NO_THROW(verify_partition(dir));
}

data::Dataset timed_dataset(const std::string& dir, bool undirected, int64_t nodes = 200,
                            double avg_degree = 5, uint64_t seed = 11) {
  data::GenerateOptions g;
  g.nodes = nodes;
  g.avg_degree = avg_degree;
  g.feat_dim = 2;
  g.classes = 2;
  g.seed = seed;
  g.threads = 1;
  g.edge_time = true;
  g.out_dir = dir;
  data::generate_synthetic(g);
  data::LoadOptions load;
  load.undirected = undirected;
  return data::load_dataset(dir, load);
}

// A directed timed dataset in tmp/d, split by time (0.1, 0.1) into one part in tmp/p; the
// options that made it.
PartitionOptions partition_by_time(const TempDir& tmp) {
  data::Dataset ds = timed_dataset(tmp / "d", false);
  PartitionOptions o = split_options(tmp / "p", 1, 0.1, 0.1);
  o.edge_split.by = SplitBy::kTime;
  partition_dataset(ds, o);
  return o;
}

// Stored entries that repeat the previous entry's pair (a pair repeated at different times).
int64_t repeated_entries(const graph::Csr& g) {
  int64_t n = 0;
  for (int64_t d = 0; d < g.num_rows(); ++d)
    for (int64_t k = g.indptr[d] + 1; k < g.indptr[d + 1]; ++k)
      n += g.indices[k] == g.indices[k - 1] ? 1 : 0;
  return n;
}

// A random split on a dataset with edge_time, whose repeated pairs are several edges (the
// `generate --edge-time` reproduction of the bug): the pair is the unit, so the fractions
// count distinct pairs, a held-out pair leaves the graph with every copy and no training
// edge is a held-out pair in either direction; info --verify accepts it.
TEST(EdgeSplit, RandomSplitHoldsOutEveryCopyOfARepeatedPair) {
  TempDir tmp;
  for (bool undirected : {true, false}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    const std::string name = undirected ? "u" : "d";
    data::Dataset ds = timed_dataset(tmp / name, undirected, /*nodes=*/1500, /*avg_degree=*/6,
                                     /*seed=*/5);
    ASSERT_GT(repeated_entries(ds.in_edges), 0) << "no repeated pair: the test cannot fail";
    PartitionOptions o = split_options(tmp / ("p" + name), 2, 0.05, 0.10);
    o.undirected = undirected;
    partition_dataset(ds, o);
    expect_valid_split(ds, o.out_dir, 0.05, 0.10);
    const StoredSplit s = read_back(o.out_dir);
    std::set<Pair> held;
    for (const auto* set : {&s.valid, &s.test})
      for (const Pair& e : *set)
        EXPECT_TRUE(held.insert(unordered(e.first, e.second)).second)
            << e.first << "-" << e.second << " held out twice";
    for (const Pair& e : s.train) {
      EXPECT_FALSE(held.count(unordered(e.first, e.second)))
          << "training edge " << e.first << "->" << e.second << " is a held-out pair";
    }
  }
}

TEST(EdgeSplitByTime, HoldsOutTheLatestWithTheirTimes) {
  TempDir tmp;
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    data::Dataset ds = timed_dataset(tmp / (undirected ? "u" : "d"), undirected);
    PartitionOptions o = split_options(tmp / (undirected ? "pu" : "pd"), 3, 0.1, 0.15);
    o.edge_split.by = SplitBy::kTime;
    o.undirected = undirected;
    partition_dataset(ds, o);
    expect_time_split(ds, o.out_dir, 0.1, 0.15);
  }
}

TEST(EdgeSplitByTime, RandomSplitMetaHasNoByKey) {
  TempDir tmp;
  data::Dataset ds = timed_dataset(tmp / "d", false);
  partition_dataset(ds, split_options(tmp / "random", 2, 0.1, 0.1));
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "random/partita.json"));
  EXPECT_FALSE(j["edge_split"].contains("by")) << j["edge_split"].dump();
  EXPECT_FALSE(std::filesystem::exists(tmp / "random/edges/valid_pos_time.npy"));
  PartitionOptions o = split_options(tmp / "time", 2, 0.1, 0.1);
  o.edge_split.by = SplitBy::kTime;
  partition_dataset(ds, o);
  const nlohmann::json t = nlohmann::json::parse(testing::read_file(tmp / "time/partita.json"));
  EXPECT_EQ(t["edge_split"]["by"], "time");
}

TEST(EdgeSplitByTime, DatasetWithoutEdgeTimeIsAUsageError) {
  TempDir dir;
  data::Dataset ds = testing::dataset_from_pairs(4, {0, 1, 1, 2, 2, 3, 3, 0, 0, 2});
  PartitionOptions o = split_options(dir.path(), 1, 0.2, 0.2);
  o.edge_split.by = SplitBy::kTime;
  const std::string what = usage_error([&] { partition_dataset(ds, o); });
  EXPECT_EQ(what.rfind("edge_split_by: time: ", 0), 0u) << what;
  EXPECT_NE(what.find("has no edge_time"), std::string::npos) << what;
}

// info --verify catches a training pair later than a held-out one.
TEST(EdgeSplitByTime, VerifyCatchesATrainingTimeAfterTheHeldOut) {
  TempDir tmp;
  const PartitionOptions o = partition_by_time(tmp);
  testing::rewrite_part_array<int64_t>(o.out_dir, part_file(0, kTrainEdgeTimeName),
                                       [](std::vector<int64_t>& t) { t.back() = 1'000'000; });
  testing::expect_verify_refuses(o.out_dir, "is later than a held-out edge's");
}

// info --verify refuses training pairs out of (dst, src, time) order: a pair repeated at the
// same time.
TEST(EdgeSplitByTime, VerifyCatchesTrainingPairsOutOfOrder) {
  TempDir tmp;
  const PartitionOptions o = partition_by_time(tmp);
  const std::string rel = part_file(0, kTrainEdgesName);
  std::vector<int64_t> train = flat(o.out_dir + "/" + rel);
  ASSERT_GE(train.size(), 4u);
  std::copy(train.begin(), train.begin() + 2, train.begin() + 2);
  PartitionMeta m = read_meta(o.out_dir);
  replace_array(o.out_dir, m, rel, train, {static_cast<int64_t>(train.size() / 2), 2});
  write_meta(o.out_dir, m);
  testing::rewrite_part_array<int64_t>(o.out_dir, part_file(0, kTrainEdgeTimeName),
                                       [](std::vector<int64_t>& t) { t[1] = t[0]; });
  testing::expect_verify_refuses(o.out_dir,
                                 rel + ": row 1: not strictly ascending by (dst, src, time)");
}

// info --verify catches a validation pair later than a test pair.
TEST(EdgeSplitByTime, VerifyCatchesAValidationTimeAfterATestTime) {
  TempDir tmp;
  const PartitionOptions o = partition_by_time(tmp);
  testing::rewrite_part_array<int64_t>(o.out_dir, kEdgeSplitTimeFiles[0],
                                       [](std::vector<int64_t>& t) { t.front() = 1'000'000; });
  testing::expect_verify_refuses(
      o.out_dir, fmt::format("{}/{}: a validation edge at time 1000000 is later than a test edge "
                             "at time",
                             o.out_dir, kEdgeSplitTimeFiles[0]));
}

}  // namespace
}  // namespace partita::partition
