// manifest.json of the chunked layout (partita/data/chunked_layout.h): parsing with every
// structural check, and writing.
#include "partita/data/chunked_layout.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "partita/core/error.h"
#include "partita/core/half.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;  // the manifest keeps its keys in the order written

// Errors name the manifest; `where` says which entry.
class ManifestParser {
 public:
  explicit ManifestParser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(fmt::format("{}: {}", path_, what));
  }
  const json& key(const json& obj, const char* name, const std::string& where) const {
    if (!obj.is_object()) fail(fmt::format("{} must be a JSON object", where));
    if (!obj.contains(name)) fail(fmt::format("{}: missing key \"{}\"", where, name));
    return obj[name];
  }
  int64_t integer(const json& v, const std::string& where, int64_t min) const {
    if (!v.is_number_integer()) fail(fmt::format("{} must be an integer", where));
    const int64_t x = v.get<int64_t>();
    if (x < min) fail(fmt::format("{} is {}; must be at least {}", where, x, min));
    return x;
  }
  std::string string(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(fmt::format("{} must be a string", where));
    return v.get<std::string>();
  }
  // A relative path inside the dataset directory.
  std::string file_name(const json& v, const std::string& where) const {
    const std::string name = string(v, where);
    const fs::path p(name);
    bool up = false;
    for (const fs::path& part : p) up = up || part == "..";
    if (name.empty() || p.is_absolute() || up)
      fail(fmt::format("{}: '{}' is not a path relative to the dataset directory (no '..')", where,
                       name));
    return name;
  }
  std::vector<ChunkFile> chunks(const json& v, const std::string& where) const {
    if (!v.is_array()) fail(fmt::format("{} must be a list of {{\"file\", \"rows\"}}", where));
    std::vector<ChunkFile> out;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string w = fmt::format("{}[{}]", where, i);
      ChunkFile c;
      c.file = file_name(key(v[i], "file", w), w + ".file");
      c.rows = integer(key(v[i], "rows", w), w + ".rows", 0);
      out.push_back(std::move(c));
    }
    return out;
  }
  int64_t total(const std::vector<ChunkFile>& chunks, const std::string& where) const {
    int64_t sum = 0;
    for (const ChunkFile& c : chunks) {
      if (c.rows > std::numeric_limits<int64_t>::max() / 2 - sum)
        fail(fmt::format("{}: row counts overflow", where));
      sum += c.rows;
    }
    return sum;
  }
  ChunkedFeatures features(const json& v, const std::string& where, int64_t rows) const {
    ChunkedFeatures f;
    f.dtype = dtype_from_name(string(key(v, "dtype", where), where + ".dtype"),
                              path_ + ": " + where + ".dtype");
    if (!is_feature_dtype(f.dtype))
      fail(fmt::format("{}.dtype is {}; features are float32, float16 or bfloat16", where,
                       dtype_name(f.dtype)));
    f.dim = integer(key(v, "dim", where), where + ".dim", 1);
    f.chunks = chunks(key(v, "chunks", where), where + ".chunks");
    const int64_t sum = total(f.chunks, where);
    if (sum != rows)
      fail(fmt::format("{}.chunks hold {} rows, but there are {} nodes", where, sum, rows));
    return f;
  }
  // The optional arrays under key "edge_arrays" / "node_arrays" of `obj` (absent: none). Edge
  // arrays: chunk i holds as many rows as edges[i]; node arrays: their chunks sum to `rows`.
  std::vector<ChunkedArray> arrays(const json& obj, const char* name, const std::string& where,
                                   const std::vector<ChunkFile>* edges, int64_t rows) const {
    std::vector<ChunkedArray> out;
    if (!obj.contains(name) || obj[name].is_null()) return out;
    const std::string w = where.empty() ? name : where + "." + name;
    const json& v = obj[name];
    if (!v.is_object()) fail(fmt::format("{} must be a JSON object of arrays", w));
    const std::vector<std::string> allowed =
        edges ? std::vector<std::string>{kEdgeTime, kEdgeWeight, kEdgeFeat}
              : std::vector<std::string>{kNodeTime};
    for (const std::string& array : allowed) {  // in this order, whatever the file's
      if (!v.contains(array)) continue;
      const std::string aw = w + "." + array;
      ChunkedArray a;
      a.name = array;
      a.dtype = dtype_from_name(string(key(v[array], "dtype", aw), aw + ".dtype"),
                                path_ + ": " + aw + ".dtype");
      const bool feat = array == kEdgeFeat;
      const bool ok = feat                   ? is_feature_dtype(a.dtype)
                      : array == kEdgeWeight ? a.dtype == DType::kFloat32
                                             : a.dtype == DType::kInt64;
      if (!ok)
        fail(fmt::format("{}.dtype is {}; {} is {}", aw, dtype_name(a.dtype), array,
                         feat                   ? "float32, float16 or bfloat16"
                         : array == kEdgeWeight ? "float32"
                                                : "int64"));
      if (feat) a.dim = integer(key(v[array], "dim", aw), aw + ".dim", 1);
      a.chunks = chunks(key(v[array], "chunks", aw), aw + ".chunks");
      if (edges) {
        if (a.chunks.size() != edges->size())
          fail(
              fmt::format("{}.chunks lists {} chunks, but there are {} edge chunks (one array "
                          "chunk per edge chunk)",
                          aw, a.chunks.size(), edges->size()));
        for (size_t i = 0; i < a.chunks.size(); ++i)
          if (a.chunks[i].rows != (*edges)[i].rows)
            fail(fmt::format("{}.chunks[{}] holds {} rows, but its edge chunk {} holds {}", aw, i,
                             a.chunks[i].rows, (*edges)[i].file, (*edges)[i].rows));
      } else if (const int64_t sum = total(a.chunks, aw); sum != rows) {
        fail(fmt::format("{}.chunks hold {} rows, but there are {} nodes", aw, sum, rows));
      }
      out.push_back(std::move(a));
    }
    for (const auto& [array, value] : v.items())
      if (std::find(allowed.begin(), allowed.end(), array) == allowed.end())
        fail(fmt::format("{}: unknown array \"{}\" (known: {})", w, array,
                         edges ? "edge_time, edge_weight, edge_feat" : "node_time"));
    return out;
  }
  // Every entry of `all` has the arrays of the first (names, dtypes, dims), or none does.
  void same_arrays(const std::vector<const std::vector<ChunkedArray>*>& all, const char* list,
                   const char* what) const {
    for (size_t i = 1; i < all.size(); ++i) {
      bool same = all[i]->size() == all[0]->size();
      for (size_t k = 0; same && k < all[i]->size(); ++k)
        same = (*all[i])[k].name == (*all[0])[k].name && (*all[i])[k].dtype == (*all[0])[k].dtype &&
               (*all[i])[k].dim == (*all[0])[k].dim;
      if (!same)
        fail(fmt::format(
            "{}[{}].{} differ from {}[0]'s: every {} has the same arrays (names, "
            "dtypes, dims) or none",
            list, i, what, list, list == std::string("relations") ? "relation" : "node type"));
    }
  }

  static constexpr const char* kEdgeTime = "edge_time";
  static constexpr const char* kEdgeWeight = "edge_weight";
  static constexpr const char* kEdgeFeat = "edge_feat";
  static constexpr const char* kNodeTime = "node_time";

 private:
  std::string path_;
};

json parse_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PARTITA_CHECK(in.good(), IoError, "{}: cannot open", path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {
    throw FormatError(fmt::format("{}: invalid JSON: {}", path, e.what()));
  }
}

ordered_json chunks_json(const std::vector<ChunkFile>& chunks) {
  ordered_json out = ordered_json::array();
  for (const ChunkFile& c : chunks) out.push_back({{"file", c.file}, {"rows", c.rows}});
  return out;
}

ordered_json features_json(const ChunkedFeatures& f) {
  return {{"dtype", dtype_name(f.dtype)}, {"dim", f.dim}, {"chunks", chunks_json(f.chunks)}};
}

ordered_json arrays_json(const std::vector<ChunkedArray>& arrays) {
  ordered_json out = ordered_json::object();
  for (const ChunkedArray& a : arrays) {
    ordered_json entry = {{"dtype", dtype_name(a.dtype)}};
    if (a.dim > 0) entry["dim"] = a.dim;
    entry["chunks"] = chunks_json(a.chunks);
    out[a.name] = std::move(entry);
  }
  return out;
}

void read_typed(const json& doc, const ManifestParser& p, ChunkedManifest& m) {
  const json& types = p.key(doc, "node_types", "the manifest");
  if (!types.is_array() || types.empty()) p.fail("\"node_types\" must be a non-empty list");
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string w = fmt::format("node_types[{}]", i);
    ChunkedNodeType t;
    t.name = p.string(p.key(types[i], "name", w), w + ".name");
    if (t.name.empty() || t.name.find('/') != std::string::npos ||
        t.name.find("___") != std::string::npos)
      p.fail(fmt::format("{}.name '{}' cannot name a node type", w, t.name));
    for (const ChunkedNodeType& other : m.node_types)
      if (other.name == t.name) p.fail(fmt::format("{}: type '{}' is listed twice", w, t.name));
    t.count = p.integer(p.key(types[i], "count", w), w + ".count", 1);
    if (t.count > (int64_t{1} << 62) - m.num_nodes) p.fail("node counts overflow");
    m.num_nodes += t.count;
    if (types[i].contains("features") && !types[i]["features"].is_null())
      t.features = p.features(types[i]["features"], w + ".features", t.count);
    t.node_arrays = p.arrays(types[i], "node_arrays", w, nullptr, t.count);
    m.node_types.push_back(std::move(t));
  }
  std::vector<const std::vector<ChunkedArray>*> node_arrays;
  for (const ChunkedNodeType& t : m.node_types) node_arrays.push_back(&t.node_arrays);
  p.same_arrays(node_arrays, "node_types", "node_arrays");
  const auto find = [&](const std::string& name, const std::string& where) {
    for (const ChunkedNodeType& t : m.node_types)
      if (t.name == name) return t.count;
    p.fail(fmt::format("{} names unknown node type '{}'", where, name));
  };
  const json& rels = p.key(doc, "relations", "the manifest");
  if (!rels.is_array() || rels.empty()) p.fail("\"relations\" must be a non-empty list");
  int64_t edges = 0;
  for (size_t i = 0; i < rels.size(); ++i) {
    const std::string w = fmt::format("relations[{}]", i);
    const json& triplet = p.key(rels[i], "relation", w);
    if (!triplet.is_array() || triplet.size() != 3)
      p.fail(fmt::format("{}.relation must be [head, relation, tail]", w));
    ChunkedRelation r;
    r.src_type = p.string(triplet[0], w + ".relation");
    r.name = p.string(triplet[1], w + ".relation");
    r.dst_type = p.string(triplet[2], w + ".relation");
    find(r.src_type, w);
    find(r.dst_type, w);
    for (const ChunkedRelation& other : m.relations)
      if (other.src_type == r.src_type && other.name == r.name && other.dst_type == r.dst_type)
        p.fail(fmt::format("{}: relation {}___{}___{} is listed twice", w, r.src_type, r.name,
                           r.dst_type));
    if (r.name.empty() || r.name.find('/') != std::string::npos ||
        r.name.find("___") != std::string::npos)
      p.fail(fmt::format("{}: relation name '{}' is not allowed", w, r.name));
    r.edges = p.chunks(p.key(rels[i], "edges", w), w + ".edges");
    edges += p.total(r.edges, w + ".edges");
    r.edge_arrays = p.arrays(rels[i], "edge_arrays", w, &r.edges, 0);
    m.relations.push_back(std::move(r));
  }
  std::vector<const std::vector<ChunkedArray>*> edge_arrays;
  for (const ChunkedRelation& r : m.relations) edge_arrays.push_back(&r.edge_arrays);
  p.same_arrays(edge_arrays, "relations", "edge_arrays");
  if (edges == 0) p.fail("no relation has an edge (the edge list is empty)");
  m.target = p.string(p.key(doc, "target", "the manifest"), "\"target\"");
  const int64_t target_count = find(m.target, "\"target\"");
  const int64_t labels = p.total(m.labels, "labels");
  if (labels != target_count)
    p.fail(fmt::format("labels hold {} rows, but target type '{}' has {} nodes", labels, m.target,
                       target_count));
}

bool has_arrays(const ChunkedManifest& m) {
  bool any = !m.edge_arrays.empty() || !m.node_arrays.empty();
  for (const ChunkedNodeType& t : m.node_types) any = any || !t.node_arrays.empty();
  for (const ChunkedRelation& r : m.relations) any = any || !r.edge_arrays.empty();
  return any;
}

}  // namespace

bool looks_like_chunked_layout(const std::string& dir) {
  std::error_code ec;
  return fs::exists(dir + "/" + kChunkedManifest, ec);
}

ChunkedManifest read_chunked_manifest(const std::string& dir) {
  const std::string path = dir + "/" + kChunkedManifest;
  const json doc = parse_json_file(path);
  const ManifestParser p(path);
  if (!doc.is_object()) p.fail("expected a JSON object");
  const std::string format = p.string(p.key(doc, "format", "the manifest"), "\"format\"");
  if (format != kChunkedFormat)
    p.fail(fmt::format("\"format\" is '{}', expected '{}'", format, kChunkedFormat));
  const int64_t version = p.integer(p.key(doc, "version", "the manifest"), "\"version\"", 1);
  if (version > kChunkedVersion)
    p.fail(fmt::format("version {} is newer than this build reads ({}); update partita", version,
                       kChunkedVersion));
  ChunkedManifest m;
  m.num_classes = p.integer(p.key(doc, "num_classes", "the manifest"), "\"num_classes\"", 1);
  m.labels = p.chunks(p.key(doc, "labels", "the manifest"), "labels");
  m.train_idx = p.file_name(p.key(doc, "train_idx", "the manifest"), "\"train_idx\"");
  m.valid_idx = p.file_name(p.key(doc, "valid_idx", "the manifest"), "\"valid_idx\"");
  m.test_idx = p.file_name(p.key(doc, "test_idx", "the manifest"), "\"test_idx\"");
  if (doc.contains("node_types")) {
    read_typed(doc, p, m);
    return m;
  }
  m.num_nodes = p.integer(p.key(doc, "num_nodes", "the manifest"), "\"num_nodes\"", 1);
  m.edges = p.chunks(p.key(doc, "edges", "the manifest"), "edges");
  if (p.total(m.edges, "edges") == 0) p.fail("edges: the edge list is empty");
  m.features = p.features(p.key(doc, "features", "the manifest"), "features", m.num_nodes);
  m.edge_arrays = p.arrays(doc, "edge_arrays", "", &m.edges, 0);
  m.node_arrays = p.arrays(doc, "node_arrays", "", nullptr, m.num_nodes);
  const int64_t labels = p.total(m.labels, "labels");
  if (labels != m.num_nodes)
    p.fail(fmt::format("labels hold {} rows, but there are {} nodes", labels, m.num_nodes));
  return m;
}

int64_t write_chunked_manifest(const std::string& dir, const ChunkedManifest& m) {
  ordered_json doc = {{"format", kChunkedFormat},
                      {"version", has_arrays(m) ? kChunkedVersion : kChunkedVersionWithoutArrays},
                      {"num_classes", m.num_classes}};
  if (m.typed()) {
    ordered_json types = ordered_json::array();
    for (const ChunkedNodeType& t : m.node_types) {
      ordered_json type = {{"name", t.name}, {"count", t.count}};
      if (t.features) type["features"] = features_json(*t.features);
      if (!t.node_arrays.empty()) type["node_arrays"] = arrays_json(t.node_arrays);
      types.push_back(std::move(type));
    }
    doc["node_types"] = std::move(types);
    ordered_json rels = ordered_json::array();
    for (const ChunkedRelation& r : m.relations) {
      ordered_json rel = {{"relation", {r.src_type, r.name, r.dst_type}},
                          {"edges", chunks_json(r.edges)}};
      if (!r.edge_arrays.empty()) rel["edge_arrays"] = arrays_json(r.edge_arrays);
      rels.push_back(std::move(rel));
    }
    doc["relations"] = std::move(rels);
    doc["target"] = m.target;
  } else {
    doc["num_nodes"] = m.num_nodes;
    doc["edges"] = chunks_json(m.edges);
    if (m.features) doc["features"] = features_json(*m.features);
    if (!m.edge_arrays.empty()) doc["edge_arrays"] = arrays_json(m.edge_arrays);
    if (!m.node_arrays.empty()) doc["node_arrays"] = arrays_json(m.node_arrays);
  }
  doc["labels"] = chunks_json(m.labels);
  doc["train_idx"] = m.train_idx;
  doc["valid_idx"] = m.valid_idx;
  doc["test_idx"] = m.test_idx;
  const std::string text = doc.dump(1) + "\n";
  const std::string path = dir + "/" + kChunkedManifest, tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    PARTITA_CHECK(out.good(), IoError, "{}: cannot write", tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  PARTITA_CHECK(!ec, IoError, "{}: cannot rename into place: {}", path, ec.message());
  return static_cast<int64_t>(text.size());
}

std::pair<size_t, size_t> chunk_share(const std::vector<int64_t>& chunk_rows, int rank, int ranks) {
  int64_t total = 0;
  for (int64_t r : chunk_rows) total += r;
  const auto share = [&](int r) {
    return static_cast<int64_t>(static_cast<__int128>(total) * r / ranks);
  };
  const int64_t lo = share(rank), hi = share(rank + 1);
  size_t first = chunk_rows.size(), last = chunk_rows.size();
  int64_t offset = 0;
  for (size_t i = 0; i < chunk_rows.size(); ++i) {
    const bool mine = offset >= lo && (offset < hi || (rank == ranks - 1 && offset <= hi));
    if (mine && first == chunk_rows.size()) first = i;
    if (!mine && first != chunk_rows.size()) {
      last = i;
      break;
    }
    offset += chunk_rows[i];
  }
  if (first == chunk_rows.size()) return {first, first};
  return {first, last};
}

}  // namespace partita::data
