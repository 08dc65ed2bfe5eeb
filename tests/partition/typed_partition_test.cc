// Typed (heterogeneous) partitions, format version 2: per-type ranges, rows and relations
// mapped through node_map, per-type features, labels and splits; verify_partition against
// corrupted relations and labels; the metadata's round trip and its refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"
#include "test_datasets.h"

namespace partita::partition {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

PartitionOptions typed_options(const std::string& out, int parts, Method method) {
  PartitionOptions o;
  o.out_dir = out;
  o.num_parts = parts;
  o.method = method;
  o.seed = 7;
  o.threads = 2;
  return o;
}

template <class T>
std::vector<T> values(const NpyArray& a) {
  auto v = a.view<T>();
  return {v.begin(), v.end()};
}

// Everything a typed partition must hold, checked against the dataset it was made from.
void expect_typed_round_trip(const data::Dataset& ds, const std::string& dir, DType dtype) {
  const data::HeteroSchema& h = *ds.hetero;
  const PartitionMeta meta = read_meta(dir);
  ASSERT_EQ(meta.version, 2);
  ASSERT_TRUE(meta.typed.has_value());
  const TypedMeta& tm = *meta.typed;
  ASSERT_EQ(tm.num_types(), h.num_types());
  ASSERT_EQ(tm.num_relations(), h.num_relations());
  EXPECT_EQ(tm.target_type, h.target_type);
  EXPECT_EQ(meta.feat_dim, 0);
  EXPECT_EQ(meta.feature_dtype, dtype);
  for (int t = 0; t < h.num_types(); ++t) {
    EXPECT_EQ(tm.node_types[t].name, h.node_types[t].name);
    EXPECT_EQ(tm.node_types[t].count, h.node_types[t].count);
    EXPECT_EQ(tm.node_types[t].offset, h.node_types[t].offset);
    EXPECT_EQ(tm.node_types[t].feat_dim, h.node_types[t].feat_dim());
  }
  for (int r = 0; r < h.num_relations(); ++r) {
    EXPECT_EQ(tm.relations[r].name, h.relations[r].name);
    EXPECT_EQ(tm.relations[r].src_type, h.relations[r].src_type);
    EXPECT_EQ(tm.relations[r].dst_type, h.relations[r].dst_type);
    EXPECT_EQ(tm.relations[r].num_edges, h.relations[r].num_edges);
    EXPECT_EQ(tm.relations[r].reverse, h.relations[r].reverse);
  }
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(dir + "/node_map.npy");
  std::vector<int64_t> type_total(static_cast<size_t>(h.num_types()), 0);
  std::set<int64_t> train, valid, test;
  for (int p = 0; p < meta.num_parts; ++p) {
    const int64_t lo = meta.ranges[p], hi = meta.ranges[p + 1];
    // Exact type ranges: brute force over the part's nodes.
    for (int t = 0; t < h.num_types(); ++t) {
      const auto [first, end] = tm.type_range(p, t);
      int64_t expected_first = hi, count = 0;
      for (int64_t gid = lo; gid < hi; ++gid) {
        if (h.type_of(node_map[gid]) != t) continue;
        expected_first = std::min(expected_first, gid);
        ++count;
      }
      if (count > 0) {
        EXPECT_EQ(first, expected_first) << "part " << p << " type " << t;
      }
      EXPECT_EQ(end - first, count) << "part " << p << " type " << t;
      for (int64_t gid = first; gid < end; ++gid) {
        ASSERT_EQ(h.type_of(node_map[gid]), t);
        ASSERT_EQ(meta.node_type(gid), t);
      }
      type_total[t] += count;
    }
    const PartFiles f = open_part(dir, meta, p);
    const auto indptr = values<int64_t>(f.indptr);
    const auto indices = values<int64_t>(f.indices);
    const auto etype = values<int32_t>(f.etype);
    const auto label = values<int64_t>(f.label);
    std::vector<int64_t> relation_edges(static_cast<size_t>(h.num_relations()), 0);
    for (int64_t i = 0; i < hi - lo; ++i) {
      const int64_t old = node_map[lo + i];
      std::vector<std::pair<int32_t, int64_t>> got, want;
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
        got.emplace_back(etype[k], node_map[indices[k]]);
        ++relation_edges[etype[k]];
      }
      for (int64_t k = ds.in_edges.indptr[old]; k < ds.in_edges.indptr[old + 1]; ++k)
        want.emplace_back(ds.edge_relation[k], ds.in_edges.indices[k]);
      ASSERT_EQ(got, want) << "in-edges of node " << old;
      ASSERT_EQ(label[i], ds.labels[old]);
    }
    EXPECT_EQ(relation_edges, meta.summary.parts[p].relation_edges);
    // Per-type features: rows of the type's range, rounded to the stored dtype.
    ASSERT_EQ(f.type_feat.size(), static_cast<size_t>(h.num_types()));
    for (int t = 0; t < h.num_types(); ++t) {
      const data::NodeType& type = h.node_types[t];
      if (type.feat_dim() == 0) {
        EXPECT_FALSE(fs::exists(dir + "/" + part_file(p, type_feature_name(type.name))));
        continue;
      }
      const auto [first, end] = tm.type_range(p, t);
      const NpyArray& a = f.type_feat[t];
      ASSERT_EQ(a.dtype(), dtype);
      ASSERT_EQ(a.header().shape, (std::vector<int64_t>{end - first, type.feat_dim()}));
      std::vector<float> got(static_cast<size_t>(a.num_elements()));
      widen_to_floats(a.data(), a.num_elements(), dtype, got.data());
      for (int64_t gid = first; gid < end; ++gid) {
        const float* want = type.features.row(node_map[gid] - type.offset);
        std::vector<uint8_t> narrowed(static_cast<size_t>(type.feat_dim()) * dtype_size(dtype));
        narrow_floats(want, type.feat_dim(), dtype, narrowed.data());
        std::vector<float> rounded(static_cast<size_t>(type.feat_dim()));
        widen_to_floats(narrowed.data(), type.feat_dim(), dtype, rounded.data());
        for (int64_t c = 0; c < type.feat_dim(); ++c)
          ASSERT_EQ(got[(gid - first) * type.feat_dim() + c], rounded[c])
              << "type " << type.name << " node " << node_map[gid] << " col " << c;
      }
    }
    for (auto [array, set] :
         {std::pair{&f.train_idx, &train}, {&f.valid_idx, &valid}, {&f.test_idx, &test}})
      for (int64_t id : values<int64_t>(*array)) set->insert(node_map[id]);
  }
  for (int t = 0; t < h.num_types(); ++t) EXPECT_EQ(type_total[t], h.node_types[t].count);
  EXPECT_EQ(train, std::set<int64_t>(ds.train_idx.begin(), ds.train_idx.end()));
  EXPECT_EQ(valid, std::set<int64_t>(ds.valid_idx.begin(), ds.valid_idx.end()));
  EXPECT_EQ(test, std::set<int64_t>(ds.test_idx.begin(), ds.test_idx.end()));
}

class TypedPartition : public ::testing::TestWithParam<std::tuple<int, Method>> {
 protected:
  void SetUp() override { set_log_level(LogLevel::kQuiet); }
  TempDir dir_;
};

TEST_P(TypedPartition, VerifiesAndRoundTrips) {
  const auto [parts, method] = GetParam();
  const data::Dataset ds = testing::typed_dataset({});
  PartitionOptions o = typed_options(dir_ / "p", parts, method);
  o.balance_train = method == Method::kMetis;
  const PartitionSummary s = partition_dataset(ds, o);
  EXPECT_EQ(s.num_edges, ds.in_edges.num_entries());
  EXPECT_EQ(s.type_names, (std::vector<std::string>{"paper", "author", "field"}));
  ASSERT_EQ(s.relation_names.size(), 6u);
  EXPECT_EQ(s.relation_names[0], "author___writes___paper");
  EXPECT_EQ(s.relation_names[3], "paper___rev_writes___author");
  const VerifyReport r = verify_partition(dir_ / "p");
  // node_map, then per part 8 arrays + the 2 featured types.
  EXPECT_EQ(r.files, 1 + parts * (7 + 2));
  expect_typed_round_trip(ds, dir_ / "p", DType::kFloat32);
  const std::string text = format_summary(read_meta(dir_ / "p").summary);
  EXPECT_NE(text.find("paper___rev_writes___author"), std::string::npos) << text;
  EXPECT_NE(text.find("field"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(PartsAndMethods, TypedPartition,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(Method::kRandom, Method::kMetis)));

TEST(TypedPartitionFormat, BFloat16FeaturesRoundTrip) {
  set_log_level(LogLevel::kQuiet);
  TempDir dir;
  const data::Dataset ds = testing::typed_dataset({});
  PartitionOptions o = typed_options(dir / "p", 2, Method::kRandom);
  o.feature_dtype = DType::kBFloat16;
  partition_dataset(ds, o);
  verify_partition(dir / "p");
  expect_typed_round_trip(ds, dir / "p", DType::kBFloat16);
}

TEST(TypedPartitionFormat, SingleRelationWithoutReverse) {
  set_log_level(LogLevel::kQuiet);
  TempDir dir;
  testing::TypedOptions to;
  to.single_relation = true;
  to.reverse = false;
  const data::Dataset ds = testing::typed_dataset(to);
  partition_dataset(ds, typed_options(dir / "p", 3, Method::kMetis));
  verify_partition(dir / "p");
  expect_typed_round_trip(ds, dir / "p", DType::kFloat32);
  const PartitionMeta m = read_meta(dir / "p");
  EXPECT_FALSE(m.typed->reverse_relations);
  EXPECT_EQ(m.typed->num_relations(), 1);
}

TEST(TypedPartitionFormat, DeterministicAndHomogeneousStaysVersion1) {
  set_log_level(LogLevel::kQuiet);
  TempDir dir;
  const data::Dataset ds = testing::typed_dataset({});
  partition_dataset(ds, typed_options(dir / "a", 2, Method::kMetis));
  partition_dataset(ds, typed_options(dir / "b", 2, Method::kMetis));
  auto stable = [&](const std::string& d) {
    auto j = nlohmann::json::parse(read_file(d + "/partita.json"));
    j["summary"].erase("phase_seconds");
    j["summary"].erase("peak_rss_bytes");
    return j;
  };
  EXPECT_EQ(stable(dir / "a"), stable(dir / "b"));
  EXPECT_EQ(stable(dir / "a")["version"], 2);
  partition_dataset(testing::planted_dataset({}), typed_options(dir / "h", 2, Method::kMetis));
  const auto h = stable(dir / "h");
  EXPECT_EQ(h["version"], 1);
  EXPECT_FALSE(h.contains("hetero"));
  EXPECT_FALSE(read_meta(dir / "h").typed.has_value());
}

// A valid typed partition written once; each test damages a copy.
class TypedCorruption : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    source_ = new TempDir;
    partition_dataset(testing::typed_dataset({}),
                      typed_options(source_->path(), 2, Method::kMetis));
  }
  static void TearDownTestSuite() { delete source_; }
  void SetUp() override {
    dir_ = work_ / "p";
    fs::copy(source_->path(), dir_, fs::copy_options::recursive);
  }
  std::string path(const std::string& rel) const { return dir_ + "/" + rel; }

  void expect_rejected(const std::vector<std::string>& parts) {
    try {
      verify_partition(dir_);
      ADD_FAILURE() << "verify_partition accepted a damaged directory";
    } catch (const FormatError& e) {
      for (const std::string& p : parts)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
            << "message '" << e.what() << "' lacks '" << p << "'";
    }
  }
  // Rewrites an array with `fix` applied and records its new checksum.
  template <class T>
  void rewrite(const std::string& rel, const std::function<void(std::vector<T>&)>& fix) {
    std::vector<T> v = read_npy_vector<T>(path(rel));
    fix(v);
    const uint32_t crc = write_npy(path(rel), v);
    PartitionMeta meta = read_meta(dir_);
    for (FileEntry& f : meta.files)
      if (f.path == rel) f.crc32 = crc;
    write_meta(dir_, meta);
  }
  void edit_json(const std::function<void(nlohmann::ordered_json&)>& edit) {
    auto j = nlohmann::ordered_json::parse(read_file(path("partita.json")));
    edit(j);
    write_file(path("partita.json"), j.dump(2));
  }
  std::string read_meta_error() {
    try {
      read_meta(dir_);
    } catch (const FormatError& e) {
      return e.what();
    }
    return "";
  }

  static TempDir* source_;
  TempDir work_;
  std::string dir_;
};
TempDir* TypedCorruption::source_ = nullptr;

TEST_F(TypedCorruption, RelationOutOfRange) {
  rewrite<int32_t>("part0/etype.npy", [](std::vector<int32_t>& v) { v[v.size() / 2] = 6; });
  expect_rejected({path("part0/etype.npy"), "is not a relation id in [0, 6)"});
}

TEST_F(TypedCorruption, RelationsOutOfOrder) {
  // The first row holding two relations gets its two entries at the boundary swapped, source
  // and relation together (so every entry stays well typed).
  const auto indptr = read_npy_vector<int64_t>(path("part1/indptr.npy"));
  const auto etype = read_npy_vector<int32_t>(path("part1/etype.npy"));
  int64_t at = -1;
  for (size_t i = 0; i + 1 < indptr.size() && at < 0; ++i)
    for (int64_t k = indptr[i] + 1; k < indptr[i + 1]; ++k)
      if (etype[k] != etype[k - 1]) {
        at = k;
        break;
      }
  ASSERT_GE(at, 0);
  rewrite<int32_t>("part1/etype.npy",
                   [&](std::vector<int32_t>& v) { std::swap(v[at], v[at - 1]); });
  rewrite<int64_t>("part1/indices.npy",
                   [&](std::vector<int64_t>& v) { std::swap(v[at], v[at - 1]); });
  expect_rejected({path("part1/etype.npy"), "not sorted by (relation, original source)"});
}

TEST_F(TypedCorruption, SourcesOutOfOrderWithinARelation) {
  const auto indptr = read_npy_vector<int64_t>(path("part0/indptr.npy"));
  const auto etype = read_npy_vector<int32_t>(path("part0/etype.npy"));
  int64_t at = -1;
  for (size_t i = 0; i + 1 < indptr.size() && at < 0; ++i)
    for (int64_t k = indptr[i] + 1; k < indptr[i + 1]; ++k)
      if (etype[k] == etype[k - 1]) {
        at = k;
        break;
      }
  ASSERT_GE(at, 0);
  rewrite<int64_t>("part0/indices.npy",
                   [&](std::vector<int64_t>& v) { std::swap(v[at], v[at - 1]); });
  expect_rejected({path("part0/etype.npy"), "not sorted by (relation, original source)",
                   "entry " + std::to_string(at)});
}

TEST_F(TypedCorruption, NodeMapDisagreesWithTypeRanges) {
  // Two nodes of part 0 of different types trade original ids: node_map stays a permutation.
  const PartitionMeta meta = read_meta(dir_);
  const int64_t paper = meta.typed->type_range(0, 0).first;
  const int64_t author = meta.typed->type_range(0, 1).first;
  ASSERT_LT(author, meta.typed->type_range(0, 1).second);
  rewrite<int64_t>("node_map.npy",
                   [&](std::vector<int64_t>& v) { std::swap(v[paper], v[author]); });
  expect_rejected({path("node_map.npy"), "type 'paper' by hetero.type_starts"});
}

TEST_F(TypedCorruption, RelationOfTheWrongTypes) {
  // An entry of relation writes (author -> paper) relabelled cites (paper -> paper).
  const auto etype = read_npy_vector<int32_t>(path("part0/etype.npy"));
  const auto it = std::find(etype.begin(), etype.end(), 0);
  ASSERT_NE(it, etype.end());
  const auto indptr = read_npy_vector<int64_t>(path("part0/indptr.npy"));
  // Only a row holding a single writes entry and no cites keeps the order valid.
  int64_t at = -1;
  for (size_t i = 0; i + 1 < indptr.size() && at < 0; ++i) {
    const int64_t b = indptr[i], e = indptr[i + 1];
    const auto writes = std::count(etype.begin() + b, etype.begin() + e, 0);
    const auto cites = std::count(etype.begin() + b, etype.begin() + e, 1);
    if (writes == 1 && cites == 0)
      at = std::find(etype.begin() + b, etype.begin() + e, 0) - etype.begin();
  }
  ASSERT_GE(at, 0);
  rewrite<int32_t>("part0/etype.npy", [&](std::vector<int32_t>& v) { v[at] = 1; });
  expect_rejected({path("part0/etype.npy"), "'paper___cites___paper'", "'author' -> 'paper'"});
}

TEST_F(TypedCorruption, LabelOffTheTargetType) {
  const PartitionMeta meta = read_meta(dir_);
  const auto [first, end] = meta.typed->type_range(1, /*type=*/1);  // authors of part 1
  ASSERT_LT(first, end);
  const int64_t row = first - meta.ranges[1];
  rewrite<int64_t>("part1/label.npy", [&](std::vector<int64_t>& v) { v[row] = 0; });
  expect_rejected({path("part1/label.npy"), "type 'author', not the target type"});
}

TEST_F(TypedCorruption, LabelOfTheTargetOutOfRange) {
  rewrite<int64_t>("part0/label.npy", [&](std::vector<int64_t>& v) { v[0] = -1; });
  expect_rejected({path("part0/label.npy"), "target type 'paper'"});
}

TEST_F(TypedCorruption, SplitOutsideTheTargetType) {
  const PartitionMeta meta = read_meta(dir_);
  const auto [first, end] = meta.typed->type_range(0, /*type=*/2);  // fields of part 0
  ASSERT_LT(first, end);
  rewrite<int64_t>("part0/test_idx.npy", [&](std::vector<int64_t>& v) { v.back() = end - 1; });
  // The shape is unchanged, so only the content check can catch it.
  expect_rejected({path("part0/test_idx.npy"), "not owned by part 0"});
}

TEST_F(TypedCorruption, TypeStartsDisagreeWithTypeCounts) {
  // A boundary moved by one in part 0, with the summary's per-type counts moved along.
  edit_json([](auto& j) {
    auto& s = j["hetero"]["type_starts"][0];
    s[1] = s[1].template get<int64_t>() + 1;
    auto& types = j["summary"]["parts"][0]["types"];
    types[0] = types[0].template get<int64_t>() + 1;
    types[1] = types[1].template get<int64_t>() - 1;
  });
  EXPECT_NE(read_meta_error().find("type 'paper' has 121 nodes over the parts, expected its "
                                   "count 120"),
            std::string::npos)
      << read_meta_error();
}

TEST_F(TypedCorruption, MetadataRefusals) {
  const std::string original = read_file(path("partita.json"));
  auto expect_meta_error = [&](const std::function<void(nlohmann::ordered_json&)>& edit,
                               const std::string& want) {
    write_file(path("partita.json"), original);
    edit_json(edit);
    const std::string error = read_meta_error();
    EXPECT_NE(error.find(want), std::string::npos) << "got '" << error << "'";
    EXPECT_NE(error.find("partita.json"), std::string::npos) << error;
  };
  expect_meta_error([](auto& j) { j["version"] = 1; }, "needs format version 2");
  expect_meta_error([](auto& j) { j.erase("hetero"); }, "missing key 'hetero'");
  expect_meta_error([](auto& j) { j["hetero"]["relations"][0]["src"] = "venue"; },
                    "unknown type 'venue'");
  expect_meta_error([](auto& j) { j["hetero"]["node_types"][1]["name"] = "a/b"; },
                    "is not 1 to 128 of");
  expect_meta_error([](auto& j) { j["hetero"]["node_types"][1]["name"] = "paper"; },
                    "appears twice");
  expect_meta_error([](auto& j) { j["hetero"]["target_type"] = "venue"; }, "unknown type 'venue'");
  expect_meta_error(
      [](auto& j) {
        j["hetero"]["node_types"][0]["count"] =
            j["hetero"]["node_types"][0]["count"].template get<int64_t>() + 1;
      },
      "counts sum to");
  expect_meta_error([](auto& j) { j["hetero"]["relations"][2]["num_edges"] = 0; },
                    "num_edges sum to");
  expect_meta_error([](auto& j) { j["hetero"]["type_starts"][1].erase(0); },
                    "hetero.type_starts[1] has 3 entries");
  expect_meta_error([](auto& j) { j["summary"]["parts"][0].erase("relations"); },
                    "missing key 'summary.parts[0].relations'");
  expect_meta_error([](auto& j) { j["files"].erase("part1/etype.npy"); },
                    "'part1/etype.npy' is not listed");
  expect_meta_error([](auto& j) { j["version"] = 3; }, "newer than this build supports (2)");
}

TEST_F(TypedCorruption, MetadataRoundTrip) {
  const std::string text = read_file(path("partita.json"));
  const PartitionMeta m = parse_meta(text, "x/partita.json");
  EXPECT_EQ(meta_to_json(m), text);
  const PartitionMeta again = parse_meta(meta_to_json(m), "y/partita.json");
  ASSERT_TRUE(again.typed.has_value());
  EXPECT_EQ(again.typed->type_starts, m.typed->type_starts);
  EXPECT_EQ(again.summary.type_names, m.summary.type_names);
  EXPECT_EQ(again.summary.relation_names, m.summary.relation_names);
  for (int p = 0; p < m.num_parts; ++p) {
    EXPECT_EQ(again.summary.parts[p].type_nodes, m.summary.parts[p].type_nodes);
    EXPECT_EQ(again.summary.parts[p].relation_edges, m.summary.parts[p].relation_edges);
  }
  EXPECT_EQ(m.typed->find_type("field"), 2);
  EXPECT_EQ(m.typed->triplet(2), "paper___has_topic___field");
  EXPECT_TRUE(nlohmann::json::parse(text)["hetero"]["reverse_relations"].get<bool>());
}

TEST(TypedPartitionInput, RefusesABrokenDataset) {
  set_log_level(LogLevel::kQuiet);
  TempDir dir;
  auto error_of = [&](const std::function<void(data::Dataset&)>& damage) {
    data::Dataset ds = testing::typed_dataset({});
    damage(ds);
    try {
      partition_dataset(ds, typed_options(dir / "p", 2, Method::kRandom));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of([](data::Dataset& ds) { ds.labels[130] = 1; }).find("non-target"),
            std::string::npos);
  EXPECT_NE(error_of([](data::Dataset& ds) { ds.edge_relation[3] = 9; }).find("relation 9"),
            std::string::npos);
  EXPECT_NE(error_of([](data::Dataset& ds) {
              ds.train_idx.push_back(200);
            }).find("not of the target type"),
            std::string::npos);
  EXPECT_NE(error_of([](data::Dataset& ds) {
              ds.hetero->node_types[1].name = "a b";
            }).find("cannot name a file"),
            std::string::npos);
}

}  // namespace
}  // namespace partita::partition
