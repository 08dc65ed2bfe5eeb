// partita.json: serialization, parsing and cross-checking of the partition metadata.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "json_reader.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/data/dataset.h"
#include "partita/partition/format.h"
#include "partition_meta.h"

namespace partita::partition {
namespace {

std::vector<int64_t> integer_array(const Reader& rd, const Json& obj, const std::string& key,
                                   const std::string& where) {
  const Json& a = rd.typed(obj, key, /*array=*/true, where);
  std::vector<int64_t> out;
  for (size_t i = 0; i < a.size(); ++i) {
    rd.fail_if(!a[i].is_number_integer() || a[i].get<int64_t>() < 0,
               "key '{}{}' must hold non-negative integers", where, key);
    out.push_back(a[i].get<int64_t>());
  }
  return out;
}

// `text` parsed: a JSON object, else FormatError naming the reader's file.
Json parse_object(const Reader& rd, const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    rd.fail(fmt::format("invalid JSON: {}", e.what()));
  }
  rd.fail_if(!j.is_object(), "invalid JSON: expected an object, found {}", j.type_name());
  return j;
}

// The entry of `path`, or null.
const FileEntry* find_file(const std::vector<FileEntry>& files, const std::string& path) {
  for (const FileEntry& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

// A relative path with no empty, "." or ".." component.
bool safe_relative_path(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  std::stringstream parts(p);
  std::string part;
  while (std::getline(parts, part, '/'))
    if (part.empty() || part == "." || part == "..") return false;
  return p.back() != '/';
}

FileEntry parse_file_entry(const Reader& rd, const std::string& rel, const Json& v) {
  const std::string where = "files." + rel + ".";
  rd.fail_if(!v.is_object(), "key 'files.{}' must be an object", rel);
  // Printable characters only: a control character would garble the error line, a NUL
  // silently cut the name the OS sees.
  std::string shown = rel;
  std::replace_if(
      shown.begin(), shown.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, '?');
  rd.fail_if(shown != rel || !safe_relative_path(rel),
             "files: '{}' is not a relative path inside the directory", shown);
  FileEntry f;
  f.path = rel;
  const Json& dtype = rd.get(v, "dtype", where);
  rd.fail_if(!dtype.is_string(), "key '{}dtype' must be a string", where);
  f.dtype = dtype_from_name(dtype.get<std::string>(), rd.key_name(where + "dtype"));
  f.shape = integer_array(rd, v, "shape", where);
  const uint64_t crc = rd.unsigned_integer(v, "crc32", where);
  rd.fail_if(crc > 0xffffffffULL, "key '{}crc32' = {} exceeds 32 bits", where, crc);
  f.crc32 = static_cast<uint32_t>(crc);
  return f;
}

Json files_json(const std::vector<FileEntry>& files) {
  Json out = Json::object();
  for (const FileEntry& f : files)
    out[f.path] = Json{{"dtype", dtype_name(f.dtype)}, {"shape", f.shape}, {"crc32", f.crc32}};
  return out;
}

// Records on one line (a scalar, an array of scalars, or an object of scalars and scalar
// arrays), other containers one element per line, indented by `depth`.
void dump_value(const Json& v, int depth, std::string& out) {
  auto flat = [](const Json& x) {
    return !x.is_structured() ||
           (x.is_array() &&
            std::none_of(x.begin(), x.end(), [](const Json& y) { return y.is_structured(); }));
  };
  if ((v.is_object() ? std::all_of(v.begin(), v.end(), flat) : flat(v)) || v.empty()) {
    out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  const std::string indent(static_cast<size_t>(2 * (depth + 1)), ' ');
  out += v.is_array() ? "[\n" : "{\n";
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += indent;
    if (v.is_object())
      out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace) + ": ";
    dump_value(*it, depth + 1, out);
    out += std::next(it) != v.end() ? ",\n" : "\n";
  }
  out += std::string(static_cast<size_t>(2 * depth), ' ') + (v.is_array() ? "]" : "}");
}

// Everything read_meta checks beyond types: ranges, expected files, per-part figures.
void check_consistency(const Reader& rd, const PartitionMeta& m) {
  const int64_t parts = m.num_parts;
  rd.fail_if(static_cast<int64_t>(m.ranges.size()) != parts + 1,
             "ranges has {} entries, expected num_parts + 1 = {}", m.ranges.size(), parts + 1);
  rd.fail_if(m.ranges[0] != 0, "ranges must start at 0, found {}", m.ranges[0]);
  for (int64_t p = 0; p < parts; ++p)
    rd.fail_if(m.ranges[p + 1] < m.ranges[p], "ranges decrease: ranges[{}] = {} < ranges[{}] = {}",
               p + 1, m.ranges[p + 1], p, m.ranges[p]);
  rd.fail_if(m.ranges[parts] != m.num_nodes, "ranges end at {}, expected num_nodes = {}",
             m.ranges[parts], m.num_nodes);

  const PartitionSummary& s = m.summary;
  rd.fail_if(static_cast<int64_t>(s.parts.size()) != parts,
             "summary.parts has {} entries, expected num_parts = {}", s.parts.size(), parts);
  int64_t edges = 0;
  for (int p = 0; p < m.num_parts; ++p) {
    rd.fail_if(s.parts[p].nodes != m.part_nodes(p),
               "summary.parts[{}].nodes = {} disagrees with ranges ({} nodes)", p, s.parts[p].nodes,
               m.part_nodes(p));
    rd.fail_if(__builtin_add_overflow(edges, s.parts[p].edges, &edges),
               "summary.parts edges sum to more than {}, expected num_edges = {}",
               std::numeric_limits<int64_t>::max(), m.num_edges);
  }
  rd.fail_if(edges != m.num_edges, "summary.parts edges sum to {}, expected num_edges = {}", edges,
             m.num_edges);
  rd.fail_if(s.edge_cut > m.num_edges, "summary.edge_cut = {} exceeds num_edges = {}", s.edge_cut,
             m.num_edges);

  auto expect_file = [&](const std::string& rel, DType dtype, std::vector<int64_t> shape) {
    const FileEntry* it = find_file(m.files, rel);
    rd.fail_if(it == nullptr, "files: '{}' is not listed", rel);
    rd.fail_if(it->dtype != dtype, "files: '{}' has dtype {}, expected {}", rel,
               dtype_name(it->dtype), dtype_name(dtype));
    if (it->shape != shape)  // the shape strings made only for the message
      rd.fail(fmt::format("files: '{}' has shape {}, expected {} from the counts", rel,
                          NpyHeader{it->dtype, it->shape}.shape_string(),
                          NpyHeader{dtype, shape}.shape_string()));
  };
  if (m.typed) check_typed_meta(rd, m);
  expect_file(kNodeMapFile, DType::kInt64, {m.num_nodes});
  // The optional arrays: in every part or none, one edge feature width and dtype for all
  // parts (part 0's, checked before part_arrays holds the parts to it).
  if (m.has_array("edge_feat")) {
    const FileEntry& first = m.file(part_file(0, "edge_feat"));
    rd.fail_if(first.shape.size() != 2 || first.shape[1] < 1 || !is_feature_dtype(first.dtype),
               "files: '{}' must be float32, float16 or bfloat16 [edges, d > 0]", first.path);
  }
  for (int p = 0; p < m.num_parts; ++p)
    for (const PartArray& a : part_arrays(m, p))
      expect_file(part_file(p, a.name), a.dtype, a.shape);
  std::vector<std::string> arrays(std::begin(kEdgeArrayNames), std::end(kEdgeArrayNames));
  arrays.insert(arrays.end(), std::begin(kNodeArrayNames), std::end(kNodeArrayNames));
  for (const std::string& name : arrays)
    for (int p = 1; p < m.num_parts && !m.has_array(name); ++p)
      rd.fail_if(m.has_file(part_file(p, name)), "files: '{}' is listed but not '{}'",
                 part_file(p, name), part_file(0, name));
  if (const auto& e = s.edge_split) {
    if (m.typed) rd.fail("key 'edge_split' is only valid for a homogeneous partition");
    rd.fail_if(static_cast<int64_t>(e->train_per_part.size()) != parts,
               "edge_split.train has {} entries, expected num_parts = {}", e->train_per_part.size(),
               parts);
    const int64_t rows[] = {e->valid, e->valid_neg, e->test, e->test_neg};
    for (size_t i = 0; i < 4; ++i) expect_file(kEdgeSplitFiles[i], DType::kInt64, {rows[i], 2});
    for (int p = 0; p < m.num_parts; ++p)
      expect_file(part_file(p, kTrainEdgesName), DType::kInt64, {e->train_per_part[p], 2});
    if (e->by_time) {
      for (size_t i = 0; i < 4; ++i) expect_file(kEdgeSplitTimeFiles[i], DType::kInt64, {rows[i]});
      for (int p = 0; p < m.num_parts; ++p)
        expect_file(part_file(p, kTrainEdgeTimeName), DType::kInt64, {e->train_per_part[p]});
    }
  }
}

}  // namespace

int PartitionMeta::owner(int64_t gid) const {
  return static_cast<int>(std::upper_bound(ranges.begin(), ranges.end(), gid) - ranges.begin()) - 1;
}

int PartitionMeta::node_type(int64_t gid) const {
  return typed ? typed->type_of(owner(gid), gid) : 0;
}

const FileEntry& PartitionMeta::file(const std::string& path) const {
  if (const FileEntry* f = find_file(files, path)) return *f;
  throw FormatError(fmt::format("{}: file '{}' is not listed", kMetaFileName, path));
}

bool PartitionMeta::has_file(const std::string& path) const {
  return find_file(files, path) != nullptr;
}

std::string meta_to_json(const PartitionMeta& m) {
  const PartitionSummary& s = m.summary;
  Json parts = Json::array();
  for (const PartStats& p : s.parts) {
    Json& j = parts.emplace_back(Json::object());
    for (const auto& [key, field] : kPartCounts) j[key] = p.*field;
    if (m.typed) {
      j["types"] = p.type_nodes;
      j["relations"] = p.relation_edges;
    }
  }
  Json phases = Json::object();
  for (const auto& [name, seconds] : s.phase_seconds) phases[name] = seconds;
  Json summary{
      {"edge_cut", s.edge_cut},
      {"edge_cut_fraction", s.edge_cut_fraction},
      {"parts", parts},
      {"imbalance",
       {{"nodes", s.node_imbalance}, {"edges", s.edge_imbalance}, {"train", s.train_imbalance}}},
      {"phase_seconds", phases},
      {"peak_rss_bytes", s.peak_rss_bytes}};
  if (!s.rank_peak_rss_bytes.empty()) summary["rank_peak_rss_bytes"] = s.rank_peak_rss_bytes;
  Json split;  // null: no edge split
  if (const auto& e = s.edge_split) {
    split = {{"source", e->source},
             {"valid_fraction", e->valid_fraction},
             {"test_fraction", e->test_fraction}};
    for (const auto& [key, field] : kEdgeSplitCounts) split[key] = *e.*field;
    split["train"] = e->train_per_part;
    if (e->by_time) split["by"] = "time";  // absent: random (the bytes of a random split's meta)
  }
  Json top{
      {"format", kFormatName},
      {"version", m.typed ? kFormatVersion : kHomogeneousFormatVersion},
      {"num_parts", m.num_parts},
      {"num_nodes", m.num_nodes},
      {"num_edges", m.num_edges},
      {"feat_dim", m.feat_dim},
      {"feature_dtype", dtype_name(m.feature_dtype)},
      {"num_classes", m.num_classes},
      {"ranges", m.ranges},
      {"method", m.method},
      {"seed", m.seed},
      {"balance_train", m.balance_train},
      {"balance_edges", m.balance_edges},
      {"undirected", m.undirected},
      {"dataset", m.dataset},
      {"hetero", m.typed ? typed_meta_json(*m.typed) : Json()},
      {"edge_split", split},
      {"summary", summary},
      {"files", files_json(m.files)},
  };
  for (const char* key : {"hetero", "edge_split"})  // only when present
    if (top[key].is_null()) top.erase(key);
  std::string out;
  dump_value(top, 0, out);
  return out + "\n";
}

void write_meta(const std::string& dir, const PartitionMeta& meta) {
  const std::string path = dir + "/" + kMetaFileName, tmp = path + ".tmp";
  const std::string text = meta_to_json(meta);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  PARTITA_CHECK(fd >= 0, IoError, "{}: cannot create: {}", tmp, std::strerror(errno));
  // Throws "<file>: <what>: <errno's reason>" with the temp file closed and removed.
  auto fail = [&](const std::string& file, const char* what) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError(fmt::format("{}: {}: {}", file, what, std::strerror(err)));
  };
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(tmp, "write failed");
    off += static_cast<size_t>(n);
  }
  if (::close(std::exchange(fd, -1)) != 0) fail(tmp, "close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "cannot rename into place");
}

PartitionMeta parse_meta(const std::string& text, const std::string& path) {
  Reader rd(path);
  const Json j = parse_object(rd, text);
  // Identity and version first: a newer version may have changed anything else.
  const std::string format = rd.string(j, "format");
  rd.fail_if(format != kFormatName, "key 'format' is '{}', expected '{}'", format, kFormatName);
  const int64_t version = rd.integer(j, "version", "", 1);
  rd.fail_if(version > kFormatVersion, "format version {} is newer than this build supports ({})",
             version, kFormatVersion);

  PartitionMeta m;
  m.version = static_cast<int>(version);
  const int64_t num_parts = rd.integer(j, "num_parts", "", 1);
  rd.fail_if(num_parts > std::numeric_limits<int>::max(), "key 'num_parts' = {} is too large",
             num_parts);
  m.num_parts = static_cast<int>(num_parts);
  m.num_nodes = rd.integer(j, "num_nodes");
  if (m.num_nodes == std::numeric_limits<int64_t>::max())  // a part's indptr holds n + 1
    rd.fail(fmt::format("key 'num_nodes' = {} is too large", m.num_nodes));
  m.num_edges = rd.integer(j, "num_edges");
  m.feat_dim = rd.integer(j, "feat_dim");
  if (j.contains("feature_dtype")) {  // written since format version 1's compact features
    m.feature_dtype = dtype_from_name(rd.string(j, "feature_dtype"), rd.key_name("feature_dtype"));
    rd.fail_if(!is_feature_dtype(m.feature_dtype),
               "key 'feature_dtype' = {} is not float32, float16 or bfloat16",
               dtype_name(m.feature_dtype));
  }
  m.num_classes = rd.integer(j, "num_classes");
  const Json& ranges = rd.typed(j, "ranges", /*array=*/true);
  for (size_t i = 0; i < ranges.size(); ++i) {
    rd.fail_if(!ranges[i].is_number_integer(), "ranges[{}] must be an integer, found {}", i,
               ranges[i].type_name());
    m.ranges.push_back(ranges[i].get<int64_t>());
  }
  m.method = rd.string(j, "method");
  if (m.method.empty()) rd.fail("key 'method' is empty");
  m.seed = rd.unsigned_integer(j, "seed");
  m.balance_train = rd.boolean(j, "balance_train");
  m.balance_edges = rd.boolean(j, "balance_edges");
  m.undirected = rd.boolean(j, "undirected");
  m.dataset = rd.string(j, "dataset");
  // Version 2 introduced typed partitions: its directories have "hetero", version 1's never.
  if (version >= 2)
    m.typed = parse_typed_meta(rd, rd.typed(j, "hetero", /*array=*/false));
  else if (j.contains("hetero"))
    rd.fail("key 'hetero' (a typed partition) needs format version 2, found version 1");

  PartitionSummary& s = m.summary;
  s.num_nodes = m.num_nodes;
  s.num_edges = m.num_edges;
  const Json& sum = rd.typed(j, "summary", /*array=*/false);
  s.edge_cut = rd.integer(sum, "edge_cut", "summary.");
  s.edge_cut_fraction = rd.number(sum, "edge_cut_fraction", "summary.");
  const Json& parts = rd.typed(sum, "parts", /*array=*/true, "summary.");
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::string where = fmt::format("summary.parts[{}].", p);
    rd.fail_if(!parts[p].is_object(), "summary.parts[{}] must be an object", p);
    PartStats& ps = s.parts.emplace_back();
    for (const auto& [key, field] : kPartCounts) ps.*field = rd.integer(parts[p], key, where);
    if (m.typed) {
      ps.type_nodes = integer_array(rd, parts[p], "types", where);
      ps.relation_edges = integer_array(rd, parts[p], "relations", where);
    }
  }
  const Json& imbalance = rd.typed(sum, "imbalance", /*array=*/false, "summary.");
  s.node_imbalance = rd.number(imbalance, "nodes", "summary.imbalance.");
  s.edge_imbalance = rd.number(imbalance, "edges", "summary.imbalance.");
  s.train_imbalance = rd.number(imbalance, "train", "summary.imbalance.");
  const Json& phases = rd.typed(sum, "phase_seconds", /*array=*/false, "summary.");
  for (auto it = phases.begin(); it != phases.end(); ++it)
    s.phase_seconds.emplace_back(it.key(), rd.number(phases, it.key(), "summary.phase_seconds."));
  s.peak_rss_bytes = rd.integer(sum, "peak_rss_bytes", "summary.");
  if (sum.contains("rank_peak_rss_bytes"))  // distributed runs only
    s.rank_peak_rss_bytes = integer_array(rd, sum, "rank_peak_rss_bytes", "summary.");
  if (j.contains("edge_split")) {
    const Json& split = rd.typed(j, "edge_split", /*array=*/false);
    const std::string where = "edge_split.";
    EdgeSplitStats& e = s.edge_split.emplace();
    e.source = rd.string(split, "source", where);
    rd.fail_if(e.source != "sampled" && e.source != "dataset",
               "key 'edge_split.source' is '{}', expected 'sampled' or 'dataset'", e.source);
    e.valid_fraction = rd.number(split, "valid_fraction", where);
    e.test_fraction = rd.number(split, "test_fraction", where);
    for (const auto& [key, field] : kEdgeSplitCounts) e.*field = rd.integer(split, key, where);
    e.train_per_part = integer_array(rd, split, "train", where);
    if (split.contains("by")) {
      const std::string by = rd.string(split, "by", where);
      rd.fail_if(by != "time" && by != "random",
                 "key 'edge_split.by' is '{}', expected 'time' or 'random'", by);
      e.by_time = by == "time";
    }
  }

  const Json& files = rd.typed(j, "files", /*array=*/false);
  for (auto it = files.begin(); it != files.end(); ++it)
    m.files.push_back(parse_file_entry(rd, it.key(), it.value()));
  check_consistency(rd, m);
  if (m.typed) {
    for (const TypedNodeType& t : m.typed->node_types) s.type_names.push_back(t.name);
    for (int r = 0; r < m.typed->num_relations(); ++r)
      s.relation_names.push_back(m.typed->triplet(r));
  }
  return m;
}

PartitionMeta read_meta(const std::string& dir) {
  const std::string path = dir + "/" + kMetaFileName;
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  // What a user passes to --parts before running `partita partition`.
  PARTITA_CHECK(exists || !data::looks_like_dataset(dir), IoError,
                "{}: a dataset, not a partition directory (no {}); partition it first: partita "
                "partition --dataset {} --out <dir> --num-parts <ranks>",
                dir, kMetaFileName, dir);
  // What a failed or stopped `partita partition` leaves: part files, but no partita.json,
  // which it writes last.
  const bool partial = std::filesystem::exists(dir + "/part0", ec) ||
                       std::filesystem::exists(dir + "/node_map.npy.tmp", ec);
  PARTITA_CHECK(exists || !partial, IoError,
                "{}: an incomplete partition (no {}, which partition writes last: the run that "
                "wrote {} failed or was stopped); partition again",
                dir, kMetaFileName, dir);
  // A FIFO or device would block or never end: only regular files are read.
  PARTITA_CHECK(!exists || std::filesystem::is_regular_file(path, ec), IoError,
                "{}: not a regular file", path);
  std::ifstream in(path, std::ios::binary);
  PARTITA_CHECK(in.good(), IoError, "{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  PARTITA_CHECK(!in.bad(), IoError, "{}: read failed", path);
  return parse_meta(text.str(), path);
}

std::string files_to_json(const std::vector<FileEntry>& files) { return files_json(files).dump(); }

std::vector<FileEntry> files_from_json(const std::string& text, const std::string& source) {
  const Reader rd(source);
  const Json j = parse_object(rd, text);
  std::vector<FileEntry> files;
  for (auto it = j.begin(); it != j.end(); ++it)
    files.push_back(parse_file_entry(rd, it.key(), it.value()));
  return files;
}

std::string part_file(int part, const std::string& name) {
  return fmt::format("part{}/{}.npy", part, name);
}

}  // namespace partita::partition
