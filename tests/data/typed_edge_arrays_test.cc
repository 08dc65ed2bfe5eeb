// Edge and node arrays of the typed numpy layout (docs/dataset-format.md): edge_time/,
// edge_weight/, edge_feat/ with one <triplet>.npy per relation, node_time/ with one
// <type>.npy per node type. Read into the typed CSC in (relation, source, time, listing
// position) order, against a reference built here; read in shares; refused with one message
// naming the file and the relation when malformed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "hetero_test_util.h"
#include "partita/data/generate.h"
#include "partita/data/shard.h"

namespace partita::data {
namespace {

using testing::HeteroSpec;
using testing::TempDir;
using testing::tiny_hetero;
using testing::write_numpy_hetero;

template <class T>
std::vector<T> values_of(const ExtraArray& a) {
  std::vector<T> out(a.values.size() / sizeof(T));
  std::memcpy(out.data(), a.values.data(), a.values.size());
  return out;
}

std::string triplet(const HeteroSpec::Rel& r) { return r.head + "___" + r.name + "___" + r.tail; }

// Listed edge i of the whole listing (relations end to end): time (ties on purpose), weight,
// two feature columns.
int64_t time_of(int64_t i) { return (3 * i) % 5; }
float weight_of(int64_t i) { return 1.0f + static_cast<float>(i); }
float feat_of(int64_t i, int c) { return 10.0f * static_cast<float>(i) + static_cast<float>(c); }

// Writes the arrays of `s` asked for into `dir`, values by listing position.
void write_typed_arrays(const std::string& dir, const HeteroSpec& s, bool time, bool weight,
                        bool feat, bool node_time) {
  int64_t base = 0;
  for (const char* name : {"edge_time", "edge_weight", "edge_feat", "node_time"})
    std::filesystem::create_directories(dir + "/" + name);
  for (const auto& r : s.relations) {
    const int64_t m = static_cast<int64_t>(r.pairs.size() / 2);
    std::vector<int64_t> t;
    std::vector<float> w, f;
    for (int64_t i = 0; i < m; ++i) {
      t.push_back(time_of(base + i));
      w.push_back(weight_of(base + i));
      for (int c = 0; c < 2; ++c) f.push_back(feat_of(base + i, c));
    }
    const std::string file = "/" + triplet(r) + ".npy";
    if (time) write_npy<int64_t>(dir + "/edge_time" + file, t);
    if (weight) write_npy<float>(dir + "/edge_weight" + file, w);
    if (feat) write_npy<float>(dir + "/edge_feat" + file, ArrayView<const float>(f), {m, 2});
    base += m;
  }
  for (size_t k = 0; k < s.types.size() && node_time; ++k) {
    std::vector<int64_t> nt;
    for (int64_t v = 0; v < s.types[k].count; ++v) nt.push_back(100 * static_cast<int64_t>(k) + v);
    write_npy<int64_t>(dir + "/node_time/" + s.types[k].name + ".npy", nt);
  }
  for (const char* name : {"edge_time", "edge_weight", "edge_feat", "node_time"})
    if (std::filesystem::is_empty(dir + "/" + name)) std::filesystem::remove(dir + "/" + name);
}

// One stored entry: row, relation, source (homogenised ids), listing position (2i, 2i+1).
struct Entry {
  int64_t row, rel, src, time, position;
  bool operator<(const Entry& o) const {
    return std::tie(row, rel, src, time, position) <
           std::tie(o.row, o.rel, o.src, o.time, o.position);
  }
};

// The reference: every listed edge and its reverse, self loops dropped, sorted; without time,
// only the first entry of each (row, relation, source) kept.
std::vector<Entry> reference(const HeteroSpec& s, bool timed) {
  std::vector<int64_t> offset;
  int64_t total = 0;
  for (const auto& t : s.types) {
    offset.push_back(total);
    total += t.count;
  }
  auto type_offset = [&](const std::string& name) {
    for (size_t k = 0; k < s.types.size(); ++k)
      if (s.types[k].name == name) return offset[k];
    return int64_t{-1};
  };
  const int64_t inputs = static_cast<int64_t>(s.relations.size());
  std::vector<Entry> out;
  int64_t base = 0;
  for (int64_t r = 0; r < inputs; ++r) {
    const auto& rel = s.relations[r];
    for (size_t i = 0; i < rel.pairs.size() / 2; ++i) {
      const int64_t at = base + static_cast<int64_t>(i);
      const int64_t src = rel.pairs[2 * i] + type_offset(rel.head);
      const int64_t dst = rel.pairs[2 * i + 1] + type_offset(rel.tail);
      if (src == dst) continue;
      const int64_t t = timed ? time_of(at) : 0;
      out.push_back({dst, r, src, t, 2 * at});
      out.push_back({src, inputs + r, dst, t, 2 * at + 1});
    }
    base += static_cast<int64_t>(rel.pairs.size() / 2);
  }
  std::sort(out.begin(), out.end());
  if (!timed)
    out.erase(std::unique(out.begin(), out.end(),
                          [](const Entry& a, const Entry& b) {
                            return a.row == b.row && a.rel == b.rel && a.src == b.src;
                          }),
              out.end());
  return out;
}

void expect_reference(const Dataset& ds, const HeteroSpec& s, bool timed) {
  const std::vector<Entry> want = reference(s, timed);
  ASSERT_EQ(ds.in_edges.num_entries(), static_cast<int64_t>(want.size()));
  const ExtraArray* time = find_array(ds.edge_arrays, kEdgeTimeName);
  const ExtraArray* weight = find_array(ds.edge_arrays, kEdgeWeightName);
  const ExtraArray* feat = find_array(ds.edge_arrays, kEdgeFeatName);
  ASSERT_NE(weight, nullptr);
  ASSERT_NE(feat, nullptr);
  ASSERT_EQ(time != nullptr, timed);
  const auto t = timed ? values_of<int64_t>(*time) : std::vector<int64_t>();
  const auto w = values_of<float>(*weight);
  const auto f = values_of<float>(*feat);
  size_t k = 0;
  for (int64_t v = 0; v < ds.num_nodes; ++v) {
    for (int64_t e = ds.in_edges.indptr[v]; e < ds.in_edges.indptr[v + 1]; ++e, ++k) {
      SCOPED_TRACE(::testing::Message() << "row " << v << ", entry " << e);
      const Entry& x = want[k];
      const int64_t listed = x.position / 2;
      EXPECT_EQ(x.row, v);
      EXPECT_EQ(ds.in_edges.indices[e], x.src);
      EXPECT_EQ(ds.edge_relation[e], x.rel);
      if (timed) {
        EXPECT_EQ(t[e], time_of(listed));
      }
      EXPECT_EQ(w[e], weight_of(listed));
      EXPECT_EQ(f[2 * e], feat_of(listed, 0));
      EXPECT_EQ(f[2 * e + 1], feat_of(listed, 1));
    }
  }
}

// tiny_hetero lists author 1 -> paper 0 twice (writes rows 1 and 4) and a cites self loop.
TEST(TypedEdgeArrays, TimedRowsFollowRelationSourceTimePosition) {
  TempDir dir;
  const HeteroSpec s = tiny_hetero();
  write_numpy_hetero(dir.path(), s);
  write_typed_arrays(dir.path(), s, true, true, true, true);
  const Dataset ds = load_dataset(dir.path(), {});
  EXPECT_EQ(ds.duplicates_dropped, 0);  // the repeated pair is two edges
  EXPECT_EQ(ds.self_loops_dropped, 1);
  expect_reference(ds, s, true);
  // Paper 0 lists author 1 (homogenised 4) twice by writes: listed row 4 (time 2) before
  // listed row 1 (time 3), time before listing position.
  const int64_t row = ds.in_edges.indptr[0];
  EXPECT_EQ(ds.in_edges.indices[row + 1], 4);
  EXPECT_EQ(ds.in_edges.indices[row + 2], 4);
  EXPECT_EQ(values_of<float>(*find_array(ds.edge_arrays, kEdgeWeightName))[row + 1], weight_of(4));
  ASSERT_EQ(ds.node_arrays.size(), 1u);
  EXPECT_EQ(values_of<int64_t>(ds.node_arrays[0]),
            (std::vector<int64_t>{0, 1, 2, 100, 101, 102, 103, 200, 201}));
}

TEST(TypedEdgeArrays, UntimedKeepsTheFirstListedOfARepeat) {
  TempDir dir;
  const HeteroSpec s = tiny_hetero();
  write_numpy_hetero(dir.path(), s);
  write_typed_arrays(dir.path(), s, false, true, true, false);
  const Dataset ds = load_dataset(dir.path(), {});
  EXPECT_EQ(ds.duplicates_dropped, 1);
  EXPECT_TRUE(ds.node_arrays.empty());
  expect_reference(ds, s, false);
}

// Without arrays, and with them but no edge_time, the graph is the same as before.
TEST(TypedEdgeArrays, UntimedGraphEqualsThePlainOne) {
  TempDir plain, arrays;
  const HeteroSpec s = tiny_hetero();
  write_numpy_hetero(plain.path(), s);
  write_numpy_hetero(arrays.path(), s);
  write_typed_arrays(arrays.path(), s, false, true, false, false);
  // (edge_feat absent: the reference needs it, so compare the structure only.)
  const Dataset a = load_dataset(plain.path(), {});
  const Dataset b = load_dataset(arrays.path(), {});
  EXPECT_EQ(a.in_edges.indptr, b.in_edges.indptr);
  EXPECT_EQ(a.in_edges.indices, b.in_edges.indices);
  EXPECT_EQ(a.edge_relation, b.edge_relation);
  EXPECT_EQ(a.duplicates_dropped, b.duplicates_dropped);
  for (int r = 0; r < a.hetero->num_relations(); ++r)
    EXPECT_EQ(a.hetero->relations[r].num_edges, b.hetero->relations[r].num_edges);
}

TEST(TypedEdgeArrays, NoReverseRelations) {
  TempDir dir;
  const HeteroSpec s = tiny_hetero();
  write_numpy_hetero(dir.path(), s);
  write_typed_arrays(dir.path(), s, true, true, true, false);
  LoadOptions o;
  o.reverse_relations = false;
  const Dataset ds = load_dataset(dir.path(), o);
  std::vector<Entry> want = reference(s, true);
  want.erase(std::remove_if(want.begin(), want.end(), [](const Entry& e) { return e.rel >= 3; }),
             want.end());
  ASSERT_EQ(ds.in_edges.num_entries(), static_cast<int64_t>(want.size()));
  const auto t = values_of<int64_t>(*find_array(ds.edge_arrays, kEdgeTimeName));
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(ds.in_edges.indices[k], want[k].src);
    EXPECT_EQ(t[k], time_of(want[k].position / 2));
  }
}

// Every rank's share holds the rows of its listed edges and of its node block.
TEST(TypedEdgeArrays, SharesHoldTheirRows) {
  TempDir dir;
  const HeteroSpec s = tiny_hetero();
  write_numpy_hetero(dir.path(), s);
  write_typed_arrays(dir.path(), s, true, true, true, true);
  const int ranks = 3;
  std::vector<int64_t> times, node_times;
  int64_t next = 0;
  for (int r = 0; r < ranks; ++r) {
    const DatasetShard shard = read_dataset_shard(dir.path(), r, ranks);
    EXPECT_EQ(shard.first_edge, next);
    ASSERT_EQ(shard.edge_arrays.size(), 3u);
    for (const ExtraArray& a : shard.edge_arrays)
      EXPECT_EQ(a.rows(), static_cast<int64_t>(shard.src.size())) << a.name;
    next += static_cast<int64_t>(shard.src.size());
    for (int64_t x : values_of<int64_t>(*find_array(shard.edge_arrays, kEdgeTimeName)))
      times.push_back(x);
    ASSERT_EQ(shard.node_arrays.size(), 1u);
    for (int64_t x : values_of<int64_t>(shard.node_arrays[0])) node_times.push_back(x);
  }
  std::vector<int64_t> want;
  for (int64_t i = 0; i < next; ++i) want.push_back(time_of(i));
  EXPECT_EQ(times, want);
  EXPECT_EQ(node_times, (std::vector<int64_t>{0, 1, 2, 100, 101, 102, 103, 200, 201}));
}

// The generator writes every array per relation and per type; they load.
TEST(TypedEdgeArrays, GeneratedMagLoads) {
  TempDir dir;
  HeteroGenerateOptions h;
  h.nodes = 300;
  h.feat_dim = 3;
  h.classes = 3;
  h.seed = 2;
  h.threads = 1;
  h.edge_time = h.edge_weight = h.node_time = true;
  h.edge_feat_dim = 2;
  h.out_dir = dir.path();
  generate_hetero(h);
  EXPECT_TRUE(std::filesystem::exists(dir / "edge_time/author___writes___paper.npy"));
  EXPECT_TRUE(std::filesystem::exists(dir / "node_time/institution.npy"));
  const Dataset ds = load_dataset(dir.path(), {});
  ASSERT_EQ(ds.edge_arrays.size(), 3u);
  for (const ExtraArray& a : ds.edge_arrays) EXPECT_EQ(a.rows(), ds.in_edges.num_entries());
  ASSERT_EQ(ds.node_arrays.size(), 1u);
  EXPECT_EQ(ds.node_arrays[0].rows(), ds.num_nodes);
  EXPECT_EQ(ds.duplicates_dropped, 0);
}

// ---- Bad input: one FormatError naming the file (and the relation or type). ----

void expect_error(const std::string& dir, const std::vector<std::string>& parts) {
  try {
    load_dataset(dir, {});
    FAIL() << "no error";
  } catch (const FormatError& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nmissing: " << p;
  }
  // The share reader checks the same files.
  try {
    read_dataset_shard(dir, 1, 2);
    FAIL() << "no error in shares";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(parts.front()), std::string::npos) << e.what();
  }
}

class TypedEdgeArrayErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    write_numpy_hetero(dir_.path(), s_);
    write_typed_arrays(dir_.path(), s_, true, true, true, true);
  }
  std::string file(const std::string& folder, int r) const {
    return dir_ / (folder + "/" + triplet(s_.relations[r]) + ".npy");
  }
  TempDir dir_;
  HeteroSpec s_ = tiny_hetero();
};

TEST_F(TypedEdgeArrayErrors, MissingRelationFile) {
  std::filesystem::remove(file("edge_weight", 1));
  expect_error(dir_.path(), {file("edge_weight", 1), "missing", "relation paper___cites___paper"});
}

TEST_F(TypedEdgeArrayErrors, StrayFile) {
  write_npy<int64_t>(dir_ / "edge_time/paper___likes___paper.npy", std::vector<int64_t>{1});
  expect_error(dir_.path(), {dir_ / "edge_time/paper___likes___paper.npy", "not <head>"});
}

TEST_F(TypedEdgeArrayErrors, WrongLength) {
  write_npy<int64_t>(file("edge_time", 2), std::vector<int64_t>{1, 2});
  expect_error(dir_.path(),
               {file("edge_time", 2), "2 rows", "paper___has_topic___field.npy lists 3"});
}

TEST_F(TypedEdgeArrayErrors, FeatureWidthDiffersBetweenRelations) {
  write_npy<float>(file("edge_feat", 1), ArrayView<const float>(std::vector<float>(12, 1)), {4, 3});
  expect_error(dir_.path(), {file("edge_feat", 1), "3 columns", "relation paper___cites___paper"});
}

TEST_F(TypedEdgeArrayErrors, NegativeWeight) {
  write_npy<float>(file("edge_weight", 2), std::vector<float>{1, -2, 1});
  expect_error(dir_.path(), {file("edge_weight", 2), "entry 1 is -2"});
}

TEST_F(TypedEdgeArrayErrors, TimeNotInt64) {
  write_npy<double>(file("edge_time", 0), std::vector<double>(5, 1.0));
  expect_error(dir_.path(), {file("edge_time", 0), "expected dtype int64, found float64"});
}

TEST_F(TypedEdgeArrayErrors, NodeTimeMissingAType) {
  std::filesystem::remove(dir_ / "node_time/author.npy");
  expect_error(dir_.path(), {dir_ / "node_time/author.npy", "type 'author' has none"});
}

TEST_F(TypedEdgeArrayErrors, HomogeneousFileBesideHeteroJson) {
  write_npy<int64_t>(dir_ / "edge_time.npy", std::vector<int64_t>{1});
  expect_error(dir_.path(), {dir_ / "edge_time.npy", "edge_time/<head>___<relation>___<tail>.npy"});
}

}  // namespace
}  // namespace partita::data
