// A dataset's edge and node arrays in the partition (docs/partition-format.md, "Edge and node
// arrays"), brute force against the input: every listed edge's (source, destination, time,
// weight, features) lands in exactly one slot of one part, every node's time beside its
// label; the files are listed and verified; corrupt values are refused by --verify.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/npy.h"
#include "partita/data/generate.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"
#include "partition_edits.h"

namespace partita::partition {
namespace {

using testing::TempDir;

constexpr int64_t kFeatDim = 3;

// One stored or listed edge: source, destination (original ids), time, weight, features.
using Edge = std::tuple<int64_t, int64_t, int64_t, float, std::vector<float>>;

struct Input {
  std::vector<int64_t> edges, time, node_time;
  std::vector<float> weight, feat;
};

Input read_input(const std::string& dir) {
  Input in;
  in.edges = read_npy_vector<int64_t>(dir + "/edges.npy", 2);
  if (std::filesystem::exists(dir + "/edge_time.npy"))
    in.time = read_npy_vector<int64_t>(dir + "/edge_time.npy");
  in.weight = read_npy_vector<float>(dir + "/edge_weight.npy");
  in.feat = read_npy_vector<float>(dir + "/edge_feat.npy", 2);
  in.node_time = read_npy_vector<int64_t>(dir + "/node_time.npy");
  return in;
}

std::string generate(const std::string& dir, bool time) {
  data::GenerateOptions g;
  g.nodes = 400;
  g.avg_degree = 6;
  g.feat_dim = 4;
  g.classes = 3;
  g.seed = 5;
  g.threads = 1;
  g.edge_time = time;
  g.edge_weight = g.node_time = true;
  g.edge_feat_dim = kFeatDim;
  g.out_dir = dir;
  data::generate_synthetic(g);
  return dir;
}

// Every stored entry of the partition in `dir` as an Edge of original ids.
std::vector<Edge> stored_edges(const std::string& dir, bool time) {
  const PartitionMeta m = read_meta(dir);
  const auto node_map = read_npy_vector<int64_t>(dir + "/node_map.npy");
  std::vector<Edge> out;
  for (int p = 0; p < m.num_parts; ++p) {
    auto file = [&](const char* name) { return dir + "/" + part_file(p, name); };
    const auto indptr = read_npy_vector<int64_t>(file("indptr"));
    const auto indices = read_npy_vector<int64_t>(file("indices"));
    const auto w = read_npy_vector<float>(file("edge_weight"));
    const auto f = read_npy_vector<float>(file("edge_feat"), 2);
    std::vector<int64_t> t(indices.size(), 0);
    if (time) t = read_npy_vector<int64_t>(file("edge_time"));
    EXPECT_EQ(w.size(), indices.size());
    EXPECT_EQ(f.size(), indices.size() * kFeatDim);
    for (size_t i = 0; i + 1 < indptr.size(); ++i)
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
        out.emplace_back(
            node_map[indices[k]], node_map[m.ranges[p] + i], t[k], w[k],
            std::vector<float>(f.begin() + k * kFeatDim, f.begin() + (k + 1) * kFeatDim));
  }
  return out;
}

Edge listed(const Input& in, size_t i, bool reverse, bool time) {
  const int64_t s = in.edges[2 * i], d = in.edges[2 * i + 1];
  return {reverse ? d : s, reverse ? s : d, time ? in.time[i] : 0, in.weight[i],
          std::vector<float>(in.feat.begin() + i * kFeatDim, in.feat.begin() + (i + 1) * kFeatDim)};
}

PartitionOptions options(const std::string& out, int parts) {
  PartitionOptions o;
  o.num_parts = parts;
  o.seed = 2;
  o.threads = 1;
  o.out_dir = out;
  return o;
}

// With edge_time every listed edge (and, undirected, its reverse) is one slot, repeats
// included.
TEST(EdgeArraysPartition, EveryTimedEdgeHasExactlyOneSlotWithItsValues) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", true);
  const Input in = read_input(ds);
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    data::LoadOptions load;
    load.undirected = undirected;
    const std::string out = tmp / (undirected ? "pu" : "pd");
    run_partition(ds, load, options(out, 3));
    EXPECT_NO_THROW(verify_partition(out, 1));
    std::vector<Edge> want;
    for (size_t i = 0; i < in.time.size(); ++i) {
      if (in.edges[2 * i] == in.edges[2 * i + 1]) continue;
      want.push_back(listed(in, i, false, true));
      if (undirected) want.push_back(listed(in, i, true, true));
    }
    std::vector<Edge> got = stored_edges(out, true);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
    // Repeated pairs are there (the test would not tell keeping from dropping otherwise).
    std::map<std::pair<int64_t, int64_t>, int> pairs;
    int repeats = 0;
    for (const Edge& e : got) repeats += pairs[{std::get<0>(e), std::get<1>(e)}]++ > 0;
    EXPECT_GT(repeats, 0);
    // Node times beside the labels.
    const PartitionMeta m = read_meta(out);
    const auto node_map = read_npy_vector<int64_t>(out + "/node_map.npy");
    for (int p = 0; p < m.num_parts; ++p) {
      const auto t = read_npy_vector<int64_t>(out + "/" + part_file(p, "node_time"));
      ASSERT_EQ(static_cast<int64_t>(t.size()), m.part_nodes(p));
      for (int64_t i = 0; i < m.part_nodes(p); ++i)
        EXPECT_EQ(t[i], in.node_time[node_map[m.ranges[p] + i]]);
    }
  }
}

// Without edge_time a pair is stored once (as without arrays), with the values of its first
// listed edge (undirected: first of either direction).
TEST(EdgeArraysPartition, WithoutTimeEachPairKeepsItsFirstListedValues) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", false);
  const Input in = read_input(ds);
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    data::LoadOptions load;
    load.undirected = undirected;
    const std::string out = tmp / (undirected ? "pu" : "pd");
    run_partition(ds, load, options(out, 2));
    EXPECT_NO_THROW(verify_partition(out, 1));
    std::map<std::pair<int64_t, int64_t>, Edge> first;
    for (size_t i = 0; i < in.weight.size(); ++i) {
      if (in.edges[2 * i] == in.edges[2 * i + 1]) continue;
      for (bool reverse : {false, true}) {
        if (reverse && !undirected) continue;
        const Edge e = listed(in, i, reverse, false);
        first.emplace(std::make_pair(std::get<0>(e), std::get<1>(e)), e);
      }
    }
    const std::vector<Edge> got = stored_edges(out, false);
    EXPECT_EQ(got.size(), first.size());
    for (const Edge& e : got) {
      const auto it = first.find({std::get<0>(e), std::get<1>(e)});
      ASSERT_NE(it, first.end());
      EXPECT_TRUE(it->second == e) << std::get<0>(e) << " -> " << std::get<1>(e);
    }
  }
}

// The arrays are listed (with checksums); a dataset without them partitions to the same
// structure as the plain dataset.
TEST(EdgeArraysPartition, ListedAndStructureUnchangedWithoutTime) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", false);
  data::GenerateOptions g;  // the same graph without arrays
  g.nodes = 400;
  g.avg_degree = 6;
  g.feat_dim = 4;
  g.classes = 3;
  g.seed = 5;
  g.threads = 1;
  g.out_dir = tmp / "plain";
  data::generate_synthetic(g);
  run_partition(ds, {}, options(tmp / "a", 2));
  run_partition(g.out_dir, {}, options(tmp / "b", 2));
  const PartitionMeta a = read_meta(tmp / "a"), b = read_meta(tmp / "b");
  EXPECT_TRUE(a.has_array("edge_weight") && a.has_array("edge_feat") && a.has_array("node_time"));
  EXPECT_FALSE(a.has_array("edge_time") || b.has_array("edge_weight") || b.has_array("node_time"));
  EXPECT_EQ(a.file(part_file(1, "edge_feat")).shape,
            (std::vector<int64_t>{a.summary.parts[1].edges, kFeatDim}));
  for (const char* f : {"node_map.npy", "part0/indptr.npy", "part0/indices.npy",
                        "part1/indices.npy", "part1/feat.npy"})
    EXPECT_EQ(testing::read_file(tmp / "a" + "/" + f), testing::read_file(tmp / "b" + "/" + f))
        << f;
}

// --verify reads the values: a weight of -1 or entries out of (source, time) order are
// refused even with the checksums made right.
TEST(EdgeArraysPartition, VerifyRefusesBadValues) {
  TempDir tmp;
  const std::string ds = generate(tmp / "ds", true);
  run_partition(ds, {}, options(tmp / "w", 2));
  EXPECT_NO_THROW(verify_partition(tmp / "w", 1));
  testing::rewrite_part_array<float>(tmp / "w", "part1/edge_weight.npy",
                                     [](std::vector<float>& w) { w[5] = -1; });
  testing::expect_verify_refuses(
      tmp / "w", "part1/edge_weight.npy: entry 5 is -1; a weight must be finite and > 0");

  const std::string out = tmp / "t";
  run_partition(ds, {}, options(out, 2));
  // The first row of part 0 with a source twice: its later entry's time made earlier.
  const auto indptr = read_npy_vector<int64_t>(out + "/part0/indptr.npy");
  const auto indices = read_npy_vector<int64_t>(out + "/part0/indices.npy");
  int64_t at = -1;
  for (size_t i = 0; i + 1 < indptr.size() && at < 0; ++i)
    for (int64_t k = indptr[i] + 1; k < indptr[i + 1] && at < 0; ++k)
      if (indices[k] == indices[k - 1]) at = k;
  ASSERT_GE(at, 0) << "no repeated pair in part 0";
  testing::rewrite_part_array<int64_t>(out, "part0/edge_time.npy",
                                       [&](std::vector<int64_t>& t) { t[at] = t[at - 1] - 1; });
  testing::expect_verify_refuses(out, "is not ascending by (original id, edge_time)");
}

// partita.json holds every part to the optional arrays part 0 lists: each listed with the
// dtype and rows its counts imply, edge_feat as wide as part 0's, none listed by a later part
// alone; open_part maps each listed array (and leaves an unlisted one empty).
TEST(EdgeArraysPartition, MetadataHoldsEveryPartToPart0sArrays) {
  TempDir tmp;
  const std::string out = tmp / "p";
  run_partition(generate(tmp / "ds", true), {}, options(out, 2));
  const PartitionMeta m = read_meta(out);
  const int64_t n1 = m.part_nodes(1), e1 = m.summary.parts[1].edges;
  for (int p = 0; p < 2; ++p) {
    const PartFiles f = open_part(out, m, p);
    EXPECT_EQ(f.edge_time.header().shape, std::vector<int64_t>{m.summary.parts[p].edges});
    EXPECT_EQ(f.edge_weight.header().shape, std::vector<int64_t>{m.summary.parts[p].edges});
    EXPECT_EQ(f.edge_feat.header().shape,
              (std::vector<int64_t>{m.summary.parts[p].edges, kFeatDim}));
    EXPECT_EQ(f.node_time.header().shape, std::vector<int64_t>{m.part_nodes(p)});
  }
  // `edit` applied to the files of m; read_meta's error holds `message`.
  auto expect_refused = [&](auto edit, const std::string& message) {
    PartitionMeta edited = m;
    edit(edited.files);
    try {
      parse_meta(meta_to_json(edited), "partita.json");
      ADD_FAILURE() << "accepted; expected " << message;
    } catch (const FormatError& e) {
      EXPECT_EQ(std::string(e.what()), "partita.json: " + message);
    }
  };
  auto entry = [](std::vector<FileEntry>& files, const std::string& path) -> FileEntry& {
    return *std::find_if(files.begin(), files.end(),
                         [&](const FileEntry& f) { return f.path == path; });
  };
  auto drop = [](std::vector<FileEntry>& files, const std::string& path) {
    files.erase(std::remove_if(files.begin(), files.end(),
                               [&](const FileEntry& f) { return f.path == path; }),
                files.end());
  };
  expect_refused([&](auto& files) { drop(files, "part0/edge_time.npy"); },
                 "files: 'part1/edge_time.npy' is listed but not 'part0/edge_time.npy'");
  expect_refused([&](auto& files) { drop(files, "part1/node_time.npy"); },
                 "files: 'part1/node_time.npy' is not listed");
  expect_refused(
      [&](auto& files) { entry(files, "part0/edge_feat.npy").shape.pop_back(); },
      "files: 'part0/edge_feat.npy' must be float32, float16 or bfloat16 [edges, d > 0]");
  expect_refused([&](auto& files) { entry(files, "part1/edge_feat.npy").shape[1] = 2; },
                 fmt::format("files: 'part1/edge_feat.npy' has shape ({}, 2), expected ({}, 3) "
                             "from the counts",
                             e1, e1));
  expect_refused([&](auto& files) { entry(files, "part1/edge_weight.npy").dtype = DType::kInt64; },
                 "files: 'part1/edge_weight.npy' has dtype int64, expected float32");
  expect_refused([&](auto& files) { entry(files, "part1/node_time.npy").shape[0] = n1 + 1; },
                 fmt::format("files: 'part1/node_time.npy' has shape ({},), expected ({},) from "
                             "the counts",
                             n1 + 1, n1));
  expect_refused([&](auto& files) { entry(files, "part1/edge_time.npy").shape[0] = e1 - 1; },
                 fmt::format("files: 'part1/edge_time.npy' has shape ({},), expected ({},) from "
                             "the counts",
                             e1 - 1, e1));

  // Without edge_time the part lists no edge_time array and open_part maps none.
  run_partition(generate(tmp / "ds2", false), {}, options(tmp / "q", 2));
  const PartitionMeta q = read_meta(tmp / "q");
  EXPECT_FALSE(q.has_array("edge_time"));
  EXPECT_EQ(open_part(tmp / "q", q, 1).edge_time.ndim(), 0);
  EXPECT_EQ(open_part(tmp / "q", q, 1).edge_weight.ndim(), 1);
}

// edge_feat in float16 and bfloat16 (numpy descr "<f2", "<u2" as for node features): the
// partition keeps the dtype and every entry's row bit for bit; --verify and the reader refuse
// a value that is not finite.
TEST(EdgeArraysPartition, HalfEdgeFeaturesKeepTheirDtypeAndBits) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    TempDir tmp;
    const std::string ds = generate(tmp / "ds", true);
    const Input in = read_input(ds);
    const int64_t rows = static_cast<int64_t>(in.feat.size()) / kFeatDim;
    std::vector<uint16_t> half(in.feat.size());
    narrow_floats(in.feat.data(), static_cast<int64_t>(in.feat.size()), dtype, half.data());
    auto write_half = [&](const std::vector<uint16_t>& v) {
      NpyWriter w(ds + "/edge_feat.npy", dtype, {rows, kFeatDim});
      w.write(v.data(), v.size() * sizeof(uint16_t));
      w.finish();
    };
    write_half(half);
    const std::string out = tmp / "p";
    run_partition(ds, {}, options(out, 2));
    EXPECT_NO_THROW(verify_partition(out, 1));
    const PartitionMeta m = read_meta(out);
    EXPECT_EQ(m.file(part_file(0, "edge_feat")).dtype, dtype);
    // Each stored entry's (source, destination, time) names its listed edge (times make the
    // rows tell repeats apart only together with the weight), whose half row it must hold.
    std::map<std::tuple<int64_t, int64_t, int64_t, float>, std::vector<uint16_t>> listed;
    for (int64_t i = 0; i < rows; ++i)
      listed[{in.edges[2 * i], in.edges[2 * i + 1], in.time[i], in.weight[i]}] =
          std::vector<uint16_t>(half.begin() + i * kFeatDim, half.begin() + (i + 1) * kFeatDim);
    const auto node_map = read_npy_vector<int64_t>(out + "/node_map.npy");
    int64_t checked = 0;
    for (int p = 0; p < m.num_parts; ++p) {
      auto file = [&](const char* name) { return out + "/" + part_file(p, name); };
      const auto indptr = read_npy_vector<int64_t>(file("indptr"));
      const auto indices = read_npy_vector<int64_t>(file("indices"));
      const auto t = read_npy_vector<int64_t>(file("edge_time"));
      const auto w = read_npy_vector<float>(file("edge_weight"));
      const NpyArray f = NpyArray::open(file("edge_feat"));
      ASSERT_EQ(f.dtype(), dtype);
      const uint16_t* bits = reinterpret_cast<const uint16_t*>(f.data());
      for (size_t i = 0; i + 1 < indptr.size(); ++i)
        for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k, ++checked) {
          const auto it =
              listed.find({node_map[indices[k]], node_map[m.ranges[p] + i], t[k], w[k]});
          ASSERT_NE(it, listed.end());
          EXPECT_TRUE(std::equal(it->second.begin(), it->second.end(), bits + k * kFeatDim));
        }
    }
    EXPECT_GT(checked, 0);

    // A NaN in the partition (checksums made right) and in the dataset.
    const uint16_t nan = dtype == DType::kFloat16 ? 0x7e00 : 0x7fc0;
    {
      const std::string rel = part_file(1, "edge_feat");
      const NpyArray f = NpyArray::open(out + "/" + rel);
      std::vector<uint16_t> v(reinterpret_cast<const uint16_t*>(f.data()),
                              reinterpret_cast<const uint16_t*>(f.data()) + f.num_elements());
      v[2 * kFeatDim + 1] = nan;
      NpyWriter writer(out + "/" + rel, dtype, {f.dim(0), kFeatDim});
      writer.write(v.data(), v.size() * sizeof(uint16_t));
      writer.finish();
      PartitionMeta meta = read_meta(out);
      for (FileEntry& e : meta.files) e.crc32 = crc32_file(out + "/" + e.path);
      write_meta(out, meta);
      testing::expect_verify_refuses(
          out, "part1/edge_feat.npy: row 2 column 1: value nan is not finite");
    }
    half[3 * kFeatDim] = nan;
    write_half(half);
    try {
      run_partition(ds, {}, options(tmp / "q", 2));
      ADD_FAILURE() << "a NaN edge feature was accepted";
    } catch (const FormatError& e) {
      EXPECT_NE(
          std::string(e.what()).find("edge_feat.npy: row 3 column 0: value nan is not finite"),
          std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace partita::partition
