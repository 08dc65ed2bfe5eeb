// The partition format: metadata round trip, open_part, and verify_partition against
// corrupted directories (flipped bytes, truncation, missing files, bad ids, bad metadata).
#include "partita/partition/format.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "test_datasets.h"

namespace partita::partition {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

constexpr int kParts = 3;
constexpr int64_t kNodes = 300;

// One valid partition, written once; each test copies it and damages the copy.
class PartitionFormat : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    source_ = new TempDir;
    testing::PlantedOptions po;
    po.num_nodes = kNodes;
    po.clusters = kParts;
    data::Dataset ds = testing::planted_dataset(po);
    PartitionOptions o;
    o.out_dir = source_->path();
    o.num_parts = kParts;
    o.seed = 5;
    o.balance_train = true;
    o.threads = 2;
    summary_ = new PartitionSummary(partition_dataset(ds, o));
  }
  static void TearDownTestSuite() {
    delete source_;
    delete summary_;
  }
  void SetUp() override {
    dir_ = work_ / "p";
    fs::copy(source_->path(), dir_, fs::copy_options::recursive);
  }
  std::string path(const std::string& rel) const { return dir_ + "/" + rel; }

  // verify_partition must throw FormatError whose message contains every one of `parts`.
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
  // Edits partita.json as JSON.
  void edit_json(const std::function<void(nlohmann::ordered_json&)>& edit) {
    auto j = nlohmann::ordered_json::parse(read_file(path("partita.json")));
    edit(j);
    write_file(path("partita.json"), j.dump(2));
  }
  // Rewrites an int64 array with `fix` applied and records its new checksum, so that only
  // the content checks can catch the damage.
  void rewrite_int64(const std::string& rel,
                     const std::function<void(std::vector<int64_t>&)>& fix) {
    std::vector<int64_t> v = read_npy_vector<int64_t>(path(rel));
    fix(v);
    const uint32_t crc = write_npy(path(rel), v);
    PartitionMeta meta = read_meta(dir_);
    for (FileEntry& f : meta.files)
      if (f.path == rel) f.crc32 = crc;
    write_meta(dir_, meta);
  }

  static TempDir* source_;
  static PartitionSummary* summary_;
  TempDir work_;
  std::string dir_;
};
TempDir* PartitionFormat::source_ = nullptr;
PartitionSummary* PartitionFormat::summary_ = nullptr;

TEST_F(PartitionFormat, VerifyAcceptsWrittenDirectory) {
  VerifyReport r = verify_partition(dir_);
  EXPECT_EQ(r.files, 1 + 7 * kParts);
  int64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    if (e.path().extension() == ".npy") bytes += static_cast<int64_t>(e.file_size());
  EXPECT_EQ(r.bytes, bytes);
}

TEST_F(PartitionFormat, ReadMetaRoundTrip) {
  const PartitionMeta m = read_meta(dir_);
  EXPECT_EQ(m.version, kHomogeneousFormatVersion);  // typed partitions are version 2
  EXPECT_EQ(m.num_parts, kParts);
  EXPECT_EQ(m.num_nodes, kNodes);
  EXPECT_EQ(m.num_edges, summary_->num_edges);
  EXPECT_EQ(m.feat_dim, 5);
  EXPECT_EQ(m.num_classes, 3);
  EXPECT_EQ(m.method, "metis");
  EXPECT_EQ(m.seed, 5u);
  EXPECT_TRUE(m.balance_train);
  EXPECT_FALSE(m.balance_edges);
  EXPECT_FALSE(m.undirected);
  EXPECT_EQ(m.dataset, "memory");
  EXPECT_EQ(m.ranges.front(), 0);
  EXPECT_EQ(m.ranges.back(), kNodes);
  EXPECT_EQ(m.summary.edge_cut, summary_->edge_cut);
  EXPECT_EQ(m.summary.edge_cut_fraction, summary_->edge_cut_fraction);
  EXPECT_EQ(m.summary.train_imbalance, summary_->train_imbalance);
  EXPECT_EQ(m.summary.phase_seconds, summary_->phase_seconds);
  EXPECT_EQ(m.summary.peak_rss_bytes, summary_->peak_rss_bytes);
  ASSERT_EQ(m.summary.parts.size(), summary_->parts.size());
  for (size_t p = 0; p < m.summary.parts.size(); ++p) {
    EXPECT_EQ(m.summary.parts[p].nodes, summary_->parts[p].nodes);
    EXPECT_EQ(m.summary.parts[p].edges, summary_->parts[p].edges);
    EXPECT_EQ(m.summary.parts[p].test_nodes, summary_->parts[p].test_nodes);
  }
  EXPECT_EQ(format_summary(m.summary), format_summary(*summary_));
  EXPECT_EQ(m.files.size(), 1u + 7 * kParts);
  EXPECT_EQ(m.files[0].path, "node_map.npy");
  EXPECT_EQ(m.file("part2/feat.npy").crc32, crc32_file(path("part2/feat.npy")));
  // Serializing the parsed metadata gives the file back byte for byte.
  EXPECT_EQ(meta_to_json(m), read_file(path("partita.json")));
  for (int64_t gid = 0; gid < kNodes; ++gid)
    EXPECT_TRUE(m.ranges[m.owner(gid)] <= gid && gid < m.ranges[m.owner(gid) + 1]);
}

TEST_F(PartitionFormat, OpenPartMapsArraysWithMetadataShapes) {
  const PartitionMeta m = read_meta(dir_);
  for (int p = 0; p < kParts; ++p) {
    PartFiles f = open_part(dir_, m, p);
    EXPECT_EQ(f.indptr.dim(0), m.part_nodes(p) + 1);
    EXPECT_EQ(f.indices.dim(0), m.summary.parts[p].edges);
    EXPECT_EQ(f.feat.dim(0), m.part_nodes(p));
    EXPECT_EQ(f.feat.dim(1), 5);
    EXPECT_EQ(f.label.dim(0), m.part_nodes(p));
    EXPECT_EQ(f.train_idx.dim(0), m.summary.parts[p].train_nodes);
    EXPECT_EQ(f.indptr.view<int64_t>()[f.indptr.dim(0) - 1], f.indices.dim(0));
  }
  EXPECT_THROW(open_part(dir_, m, kParts), Error);
  // A file whose shape disagrees with the metadata is caught without reading data, by
  // open_part and by verify (before the checksum).
  write_npy(path("part1/label.npy"), std::vector<int64_t>{1, 2});
  try {
    open_part(dir_, m, 1);
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("{}: shape (2,) does not match partita.json (({},))",
                          path("part1/label.npy"), m.part_nodes(1)));
  }
  expect_rejected({fmt::format("{}: holds int64 (2,), partita.json says int64 ({},)",
                               path("part1/label.npy"), m.part_nodes(1))});
}

// write_meta renames a temp file into place: when that fails the error names partita.json
// and the temp file is removed.
TEST_F(PartitionFormat, FailedWriteMetaRemovesItsTempFile) {
  const PartitionMeta m = read_meta(dir_);
  fs::remove(path("partita.json"));
  fs::create_directories(path("partita.json/x"));  // a non-empty directory: rename fails
  try {
    write_meta(dir_, m);
    ADD_FAILURE() << "write_meta replaced a directory";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path("partita.json") + ": cannot rename into place: ", 0),
              0u)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path("partita.json.tmp")));
}

TEST_F(PartitionFormat, FlippedByteInAnyArrayFailsItsChecksum) {
  const PartitionMeta m = read_meta(dir_);
  for (const FileEntry& f : m.files) {
    std::string bytes = read_file(path(f.path));
    const NpyArray a = NpyArray::open(path(f.path));
    if (a.header().data_bytes() == 0) continue;  // nothing to flip but the header
    const std::string original = bytes;
    bytes[bytes.size() - 1 - a.header().data_bytes() / 2] ^= 0x10;
    write_file(path(f.path), bytes);
    expect_rejected({path(f.path) + ": ", "checksum mismatch"});
    write_file(path(f.path), original);
  }
  verify_partition(dir_);
}

TEST_F(PartitionFormat, TruncatedArrayIsRejected) {
  std::string bytes = read_file(path("part1/feat.npy"));
  write_file(path("part1/feat.npy"), bytes.substr(0, bytes.size() - 4));
  expect_rejected({path("part1/feat.npy") + ": ", "truncated"});
}

TEST_F(PartitionFormat, MissingArrayIsRejected) {
  fs::remove(path("part2/test_idx.npy"));
  expect_rejected({path("part2/test_idx.npy") + ": ", "missing"});
}

TEST_F(PartitionFormat, SourceIdOutOfRangeIsRejectedEvenWithMatchingChecksum) {
  rewrite_int64("part0/indices.npy", [](std::vector<int64_t>& v) { v[3] = kNodes; });
  expect_rejected({path("part0/indices.npy") + ": ", "= 300 is outside [0, 300)"});
}

TEST_F(PartitionFormat, ContentProblemsAreRejected) {
  rewrite_int64("part1/label.npy", [](std::vector<int64_t>& v) { v[0] = 3; });
  expect_rejected({path("part1/label.npy") + ": ", "label 3 of row 0 is outside [0, 3)"});
  fs::remove_all(dir_);
  fs::copy(source_->path(), dir_, fs::copy_options::recursive);
  rewrite_int64("part2/train_idx.npy", [](std::vector<int64_t>& v) { v[0] = 0; });
  expect_rejected({path("part2/train_idx.npy") + ": ", "is not owned by part 2"});
  fs::remove_all(dir_);
  fs::copy(source_->path(), dir_, fs::copy_options::recursive);
  rewrite_int64("part0/indptr.npy", [](std::vector<int64_t>& v) { std::swap(v[1], v[2]); });
  expect_rejected({path("part0/indptr.npy") + ": ", "decreases at row"});
  fs::remove_all(dir_);
  fs::copy(source_->path(), dir_, fs::copy_options::recursive);
  rewrite_int64("node_map.npy", [](std::vector<int64_t>& v) { v[1] = v[0]; });
  expect_rejected({path("node_map.npy") + ": ", "not a permutation"});
}

// Label -1 marks an unlabelled node: verify accepts it for a row in no split and rejects it
// for a split's node, naming the split file and the node.
TEST_F(PartitionFormat, UnlabelledRowsOnlyOutsideTheSplits) {
  const PartitionMeta meta = read_meta(dir_);
  const int64_t lo = meta.ranges[1], rows = meta.ranges[2] - lo;
  std::set<int64_t> in_split;
  for (const char* split : {"train_idx", "valid_idx", "test_idx"})
    for (int64_t id : read_npy_vector<int64_t>(path(std::string("part1/") + split + ".npy")))
      in_split.insert(id - lo);
  int64_t free_row = 0;
  while (free_row < rows && in_split.count(free_row) > 0) ++free_row;
  ASSERT_LT(free_row, rows) << "every row of part 1 is in a split";
  rewrite_int64("part1/label.npy", [&](std::vector<int64_t>& v) { v[free_row] = -1; });
  verify_partition(dir_);

  const int64_t train0 = read_npy_vector<int64_t>(path("part1/train_idx.npy")).at(0);
  rewrite_int64("part1/label.npy", [&](std::vector<int64_t>& v) { v[train0 - lo] = -1; });
  expect_rejected({path("part1/train_idx.npy") + ": ",
                   fmt::format("node {} at position 0 has label -1 (unlabelled)", train0),
                   path("part1/label.npy")});
  rewrite_int64("part1/label.npy", [&](std::vector<int64_t>& v) { v[train0 - lo] = -2; });
  expect_rejected(
      {path("part1/label.npy") + ": ", "label -2 of row", "outside [0, 3) (or -1: unlabelled)"});
}

TEST_F(PartitionFormat, InvalidJsonIsRejected) {
  write_file(path("partita.json"), "{\"format\": \"partita-partition\", \"version\": ");
  expect_rejected({path("partita.json") + ": ", "invalid JSON"});
  EXPECT_THROW(read_meta(dir_), FormatError);
}

// Found by fuzz/meta_fuzz.cc: a number too large for a double made nlohmann::json throw
// out_of_range, not parse_error, which escaped read_meta as a non-partita exception.
TEST_F(PartitionFormat, NumberOverflowIsInvalidJson) {
  std::string text = read_file(path("partita.json"));
  const std::string key = "\"peak_rss_bytes\": ";
  ASSERT_NE(text.find(key), std::string::npos);
  text.insert(text.find(key) + key.size(), "1e400");
  write_file(path("partita.json"), text);
  expect_rejected({path("partita.json") + ": invalid JSON", "number overflow"});
  EXPECT_THROW(parse_meta(text, "x.json"), FormatError);
}

TEST_F(PartitionFormat, FutureVersionIsRejected) {
  edit_json([](auto& j) { j["version"] = 7; });
  try {
    read_meta(dir_);
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              path("partita.json") + ": format version 7 is newer than this build supports (2)");
  }
  expect_rejected({path("partita.json") + ": ", "format version 7"});
}

TEST_F(PartitionFormat, InconsistentRangesAreRejected) {
  const auto original = nlohmann::ordered_json::parse(read_file(path("partita.json")));
  const std::vector<std::pair<std::function<void(nlohmann::ordered_json&)>, std::string>> cases{
      {[](auto& j) { j["ranges"][0] = 1; }, "ranges must start at 0"},
      {[](auto& j) { j["ranges"][1] = j["ranges"][2].template get<int64_t>() + 1; },
       "ranges decrease"},
      {[](auto& j) { j["ranges"][kParts] = kNodes - 1; }, "ranges end at 299"},
      {[](auto& j) { j["ranges"].erase(j["ranges"].size() - 1); },
       "ranges has 3 entries, expected num_parts + 1 = 4"},
  };
  for (const auto& [edit, message] : cases) {
    auto j = original;
    edit(j);
    write_file(path("partita.json"), j.dump(2));
    expect_rejected({path("partita.json") + ": ", message});
  }
}

TEST_F(PartitionFormat, MissingKeysWrongTypesAndBadCountsAreRejected) {
  const auto original = nlohmann::ordered_json::parse(read_file(path("partita.json")));
  const std::vector<std::pair<std::function<void(nlohmann::ordered_json&)>, std::string>> cases{
      {[](auto& j) { j.erase("num_nodes"); }, "missing key 'num_nodes'"},
      {[](auto& j) { j["num_edges"] = "many"; },
       "key 'num_edges' must be an integer, found string"},
      {[](auto& j) { j["summary"]["edge_cut_fraction"] = "x"; },
       "key 'summary.edge_cut_fraction' must be a number, found string"},
      {[](auto& j) { j["method"] = 3; }, "key 'method' must be a string, found number"},
      {[](auto& j) { j["ranges"] = 0; }, "key 'ranges' must be an array, found number"},
      {[](auto& j) { j["summary"] = nlohmann::ordered_json::array(); },
       "key 'summary' must be an object, found array"},
      {[](auto& j) { j["format"] = "other"; }, "key 'format' is 'other'"},
      {[](auto& j) { j["undirected"] = 1; },
       "key 'undirected' must be true or false, found number"},
      {[](auto& j) { j["files"].erase("part1/indices.npy"); },
       "files: 'part1/indices.npy' is not listed"},
      {[](auto& j) { j["files"]["part0/feat.npy"]["dtype"] = "float64"; },
       "files: 'part0/feat.npy' has dtype float64, expected float32"},
      {[](auto& j) { j["feature_dtype"] = "int64"; },
       "key 'feature_dtype' = int64 is not float32, float16 or bfloat16"},
      {[](auto& j) { j["feature_dtype"] = "half"; }, "key 'feature_dtype': unknown dtype 'half'"},
      {[](auto& j) { j["feature_dtype"] = "bfloat16"; },
       "files: 'part0/feat.npy' has dtype float32, expected bfloat16"},
      {[](auto& j) { j["files"]["part0/label.npy"]["dtype"] = "complex"; },
       "key 'files.part0/label.npy.dtype': unknown dtype 'complex'"},
      {[](auto& j) { j["files"]["part0/label.npy"].erase("crc32"); },
       "missing key 'files.part0/label.npy.crc32'"},
      {[](auto& j) { j["files"]["../x.npy"] = j["files"]["node_map.npy"]; },
       "'../x.npy' is not a relative path inside the directory"},
      {[](auto& j) { j["files"][std::string("x\0y.npy", 7)] = j["files"]["node_map.npy"]; },
       "'x?y.npy' is not a relative path inside the directory"},
      {[](auto& j) {
         j["summary"]["parts"][0]["edges"] =
             j["summary"]["parts"][0]["edges"].template get<int64_t>() + 1;
         j["summary"]["parts"][1]["edges"] =
             j["summary"]["parts"][1]["edges"].template get<int64_t>() - 1;
       },
       "files: 'part0/indices.npy' has shape"},
      {[](auto& j) { j["num_edges"] = j["num_edges"].template get<int64_t>() + 1; },
       "summary.parts edges sum to"},
      {[](auto& j) { j["summary"]["parts"][1]["nodes"] = 0; },
       "summary.parts[1].nodes = 0 disagrees with ranges"},
      // Signed overflow (undefined behaviour) before the fix; fuzz/corpus/meta/regress_* replay
      // these under UBSan.
      {[](auto& j) { j["summary"]["parts"][0]["edges"] = std::numeric_limits<int64_t>::max(); },
       "summary.parts edges sum to more than 9223372036854775807"},
      {[](auto& j) { j["num_nodes"] = std::numeric_limits<int64_t>::max(); },
       "key 'num_nodes' = 9223372036854775807 is too large"},
  };
  for (const auto& [edit, message] : cases) {
    auto j = original;
    edit(j);
    write_file(path("partita.json"), j.dump(2));
    expect_rejected({path("partita.json") + ": ", message});
  }
}

}  // namespace
}  // namespace partita::partition
