// A typed dataset's per-relation edge arrays and per-type node times in the partition
// (docs/partition-format.md, "Edge and node arrays"), brute force against the input files:
// every listed edge (and its reverse relation's entry) lands in exactly one slot of one part
// with its time, weight and features; the files are listed and verified; corrupt values and
// rows out of (relation, source, time) order are refused by --verify.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"
#include "partition_edits.h"

namespace partita::partition {
namespace {

using testing::TempDir;

constexpr int64_t kFeatDim = 2;

// source, destination (homogenised original ids), relation, time, weight, features.
using Entry = std::tuple<int64_t, int64_t, int32_t, int64_t, float, std::vector<float>>;

std::string generate(const std::string& dir, bool time) {
  data::HeteroGenerateOptions h;
  h.nodes = 500;
  h.feat_dim = 3;
  h.classes = 3;
  h.seed = 7;
  h.threads = 1;
  h.edge_time = time;
  h.edge_weight = h.node_time = true;
  h.edge_feat_dim = kFeatDim;
  h.out_dir = dir;
  data::generate_hetero(h);
  return dir;
}

// Every listed edge as an Entry (and its reverse relation's, when `reverse`), self loops out.
std::vector<Entry> listed(const std::string& dir, bool time, bool reverse) {
  data::LoadOptions load;
  load.reverse_relations = false;
  const data::Dataset ds = data::load_dataset(dir, load);  // for the schema
  const data::HeteroSchema& h = *ds.hetero;
  const int inputs = h.num_relations();
  std::vector<Entry> out;
  for (int r = 0; r < inputs; ++r) {
    const std::string file = "/" + h.triplet(r) + ".npy";
    const auto pairs = read_npy_vector<int64_t>(dir + "/edges" + file, 2);
    const auto w = read_npy_vector<float>(dir + "/edge_weight" + file);
    const auto f = read_npy_vector<float>(dir + "/edge_feat" + file, 2);
    std::vector<int64_t> t(w.size(), 0);
    if (time) t = read_npy_vector<int64_t>(dir + "/edge_time" + file);
    const data::Relation& rel = h.relations[r];
    for (size_t i = 0; i < w.size(); ++i) {
      const int64_t s = pairs[2 * i] + h.node_types[rel.src_type].offset;
      const int64_t d = pairs[2 * i + 1] + h.node_types[rel.dst_type].offset;
      if (s == d) continue;
      const std::vector<float> feat(f.begin() + i * kFeatDim, f.begin() + (i + 1) * kFeatDim);
      out.emplace_back(s, d, r, t[i], w[i], feat);
      if (reverse) out.emplace_back(d, s, inputs + r, t[i], w[i], feat);
    }
  }
  return out;
}

// Every stored entry of the partition in `out` as an Entry of original ids.
std::vector<Entry> stored(const std::string& out, bool time) {
  const PartitionMeta m = read_meta(out);
  const auto node_map = read_npy_vector<int64_t>(out + "/node_map.npy");
  std::vector<Entry> got;
  for (int p = 0; p < m.num_parts; ++p) {
    auto file = [&](const char* name) { return out + "/" + part_file(p, name); };
    const auto indptr = read_npy_vector<int64_t>(file("indptr"));
    const auto indices = read_npy_vector<int64_t>(file("indices"));
    const auto etype = read_npy_vector<int32_t>(file("etype"));
    const auto w = read_npy_vector<float>(file("edge_weight"));
    const auto f = read_npy_vector<float>(file("edge_feat"), 2);
    std::vector<int64_t> t(indices.size(), 0);
    if (time) t = read_npy_vector<int64_t>(file("edge_time"));
    EXPECT_EQ(w.size(), indices.size());
    for (size_t i = 0; i + 1 < indptr.size(); ++i)
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
        got.emplace_back(
            node_map[indices[k]], node_map[m.ranges[p] + i], etype[k], t[k], w[k],
            std::vector<float>(f.begin() + k * kFeatDim, f.begin() + (k + 1) * kFeatDim));
  }
  return got;
}

PartitionOptions options(const std::string& out, int parts) {
  PartitionOptions o;
  o.num_parts = parts;
  o.seed = 2;
  o.threads = 1;
  o.out_dir = out;
  return o;
}

TEST(TypedEdgeArraysPartition, EveryTimedEdgeHasExactlyOneSlotWithItsValues) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", true);
  for (bool reverse : {true, false}) {
    SCOPED_TRACE(reverse ? "reverse relations" : "no reverse relations");
    data::LoadOptions load;
    load.reverse_relations = reverse;
    const std::string out = tmp / (reverse ? "pr" : "pn");
    run_partition(ds, load, options(out, 3));
    EXPECT_NO_THROW(verify_partition(out, 1));
    std::vector<Entry> want = listed(ds, true, reverse), got = stored(out, true);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
    // Node times beside the labels, every type's.
    const PartitionMeta m = read_meta(out);
    const auto node_map = read_npy_vector<int64_t>(out + "/node_map.npy");
    std::vector<int64_t> node_time;
    for (const char* type : {"author", "field_of_study", "institution", "paper"})
      for (int64_t x : read_npy_vector<int64_t>(ds + "/node_time/" + type + ".npy"))
        node_time.push_back(x);
    for (int p = 0; p < m.num_parts; ++p) {
      const auto t = read_npy_vector<int64_t>(out + "/" + part_file(p, "node_time"));
      ASSERT_EQ(static_cast<int64_t>(t.size()), m.part_nodes(p));
      for (int64_t i = 0; i < m.part_nodes(p); ++i)
        EXPECT_EQ(t[i], node_time[node_map[m.ranges[p] + i]]);
    }
  }
}

// Without edge_time a (relation, source, destination) is stored once, with the values of its
// first listed edge; the structure is the plain dataset's.
TEST(TypedEdgeArraysPartition, WithoutTimeEachPairKeepsItsFirstListedValues) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", false);
  run_partition(ds, {}, options(tmp / "a", 2));
  EXPECT_NO_THROW(verify_partition(tmp / "a", 1));
  std::vector<Entry> first;
  for (const Entry& e : listed(ds, false, true)) {
    const bool seen = std::any_of(first.begin(), first.end(), [&](const Entry& x) {
      return std::get<0>(x) == std::get<0>(e) && std::get<1>(x) == std::get<1>(e) &&
             std::get<2>(x) == std::get<2>(e);
    });
    if (!seen) first.push_back(e);
  }
  std::vector<Entry> got = stored(tmp / "a", false);
  std::sort(first.begin(), first.end());
  std::sort(got.begin(), got.end());
  EXPECT_TRUE(got == first);

  data::HeteroGenerateOptions h;  // the same graph without arrays
  h.nodes = 500;
  h.feat_dim = 3;
  h.classes = 3;
  h.seed = 7;
  h.threads = 1;
  h.out_dir = tmp / "plain";
  data::generate_hetero(h);
  run_partition(h.out_dir, {}, options(tmp / "b", 2));
  const PartitionMeta a = read_meta(tmp / "a"), b = read_meta(tmp / "b");
  EXPECT_TRUE(a.has_array("edge_weight") && a.has_array("edge_feat") && a.has_array("node_time"));
  EXPECT_FALSE(a.has_array("edge_time") || b.has_array("edge_weight"));
  for (const char* f : {"node_map.npy", "part0/indptr.npy", "part0/indices.npy", "part0/etype.npy",
                        "part1/indices.npy", "part1/feat_paper.npy"})
    EXPECT_EQ(testing::read_file(tmp / "a" + "/" + f), testing::read_file(tmp / "b" + "/" + f))
        << f;
}

TEST(TypedEdgeArraysPartition, VerifyRefusesBadValuesAndOrder) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", true);
  run_partition(ds, {}, options(tmp / "w", 2));
  testing::rewrite_part_array<float>(tmp / "w", "part1/edge_weight.npy",
                                     [](std::vector<float>& w) { w[3] = 0; });
  testing::expect_verify_refuses(
      tmp / "w", "part1/edge_weight.npy: entry 3 is 0; a weight must be finite and > 0");

  const std::string out = tmp / "t";
  run_partition(ds, {}, options(out, 2));
  // The first row of part 0 with a (relation, source) twice: its later entry made earlier.
  const auto indptr = read_npy_vector<int64_t>(out + "/part0/indptr.npy");
  const auto indices = read_npy_vector<int64_t>(out + "/part0/indices.npy");
  const auto etype = read_npy_vector<int32_t>(out + "/part0/etype.npy");
  const auto time = read_npy_vector<int64_t>(out + "/part0/edge_time.npy");
  int64_t at = -1;
  for (size_t i = 0; i + 1 < indptr.size() && at < 0; ++i)
    for (int64_t k = indptr[i] + 1; k < indptr[i + 1] && at < 0; ++k)
      if (indices[k] == indices[k - 1] && etype[k] == etype[k - 1] && time[k] > 0) at = k;
  ASSERT_GE(at, 0) << "no repeated (relation, source) in part 0";
  testing::rewrite_part_array<int64_t>(out, "part0/edge_time.npy",
                                       [&](std::vector<int64_t>& t) { t[at] = t[at - 1] - 1; });
  testing::expect_verify_refuses(out, "is not ascending by (relation, original source, edge_time)");
}

}  // namespace
}  // namespace partita::partition
