// Reader of the Partita numpy heterogeneous layout (docs/dataset-format.md): hetero.json
// (types, counts, relations, target), edges/H___R___T.npy, feat/TYPE.npy (optional per
// type), label.npy and {train,valid,test}_idx.npy of the target type. Edge files stay
// mapped while the graph is built; feature files stay mapped.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "partita/core/timer.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

// The string at `v`, or FormatError naming `what`.
std::string string_of(const json& v, const std::string& path, const std::string& what) {
  PARTITA_CHECK(v.is_string(), FormatError, "{}: {} must be a string", path, what);
  return v.get<std::string>();
}

void read_schema(Dataset& ds, const std::string& path) {
  const json doc = parse_json_file(path);
  PARTITA_CHECK(doc.is_object(), FormatError, "{}: expected a JSON object", path);
  for (const char* key : {"node_types", "relations", "target"}) {
    PARTITA_CHECK(doc.contains(key), FormatError, "{}: missing key \"{}\"", path, key);
  }
  HeteroSchema& schema = *ds.hetero;
  const json& types = doc["node_types"];
  PARTITA_CHECK(types.is_array() && !types.empty(), FormatError,
                "{}: \"node_types\" must be a non-empty list", path);
  for (size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    const std::string where = fmt::format("node_types[{}]", i);
    PARTITA_CHECK(t.is_object() && t.contains("name") && t.contains("count"), FormatError,
                  "{}: {} must be {{\"name\": ..., \"count\": ...}}", path, where);
    NodeType type;
    type.name = string_of(t["name"], path, where + ".name");
    check_type_name(type.name, schema, path);
    PARTITA_CHECK(t["count"].is_number_integer(), FormatError, "{}: {}.count must be an integer",
                  path, where);
    type.count = t["count"].get<int64_t>();
    PARTITA_CHECK(type.count > 0, FormatError,
                  "{}: type '{}' has {} nodes (every type needs at least one)", path, type.name,
                  type.count);
    schema.node_types.push_back(std::move(type));
  }
  set_type_offsets(ds, path);

  const json& relations = doc["relations"];
  PARTITA_CHECK(relations.is_array() && !relations.empty(), FormatError,
                "{}: \"relations\" must be a non-empty list", path);
  PARTITA_CHECK(relations.size() <= static_cast<size_t>(kMaxInputRelations), FormatError,
                "{}: more than {} relations (not supported)", path, kMaxInputRelations);
  for (size_t i = 0; i < relations.size(); ++i) {
    const json& r = relations[i];
    const std::string where = fmt::format("relations[{}]", i);
    PARTITA_CHECK(r.is_array() && r.size() == 3, FormatError,
                  "{}: {} must be [head, relation, tail]", path, where);
    const std::string head = string_of(r[0], path, where), name = string_of(r[1], path, where),
                      tail = string_of(r[2], path, where);
    PARTITA_CHECK(!name.empty() && name.find('/') == std::string::npos &&
                      name.find("___") == std::string::npos,
                  FormatError, "{}: {}: relation name '{}' cannot name a file", path, where, name);
    Relation rel;
    rel.name = name;
    for (const std::string* type : {&head, &tail}) {
      const int t = schema.find_type(*type);
      PARTITA_CHECK(t >= 0, FormatError,
                    "{}: {}: relation {}___{}___{} names unknown node type '{}'", path, where, head,
                    name, tail, *type);
      (type == &head ? rel.src_type : rel.dst_type) = t;
    }
    schema.relations.push_back(rel);
    for (int k = 0; k + 1 < schema.num_relations(); ++k) {
      PARTITA_CHECK(schema.triplet(k) != schema.triplet(schema.num_relations() - 1), FormatError,
                    "{}: {}: relation {} is listed twice", path, where, schema.triplet(k));
    }
  }

  const std::string target = string_of(doc["target"], path, "\"target\"");
  schema.target_type = schema.find_type(target);
  PARTITA_CHECK(schema.target_type >= 0, FormatError, "{}: \"target\" names unknown node type '{}'",
                path, target);
}

}  // namespace

void read_hetero_json(Dataset& ds, const std::string& path) { read_schema(ds, path); }

NumpyHeteroLayout check_numpy_hetero_layout(const std::string& dir, const HeteroSchema& schema) {
  NumpyHeteroLayout files;
  const NodeType& target = schema.node_types[schema.target_type];
  files.label = dir + "/label.npy";
  const MappedNpy label = MappedNpy::open(files.label);
  label.expect(DType::kInt64, 1);
  PARTITA_CHECK(label.dim(0) == target.count, FormatError,
                "{}: {} labels, but hetero.json says type '{}' has {} nodes", files.label,
                label.dim(0), target.name, target.count);
  const char* names[] = {"train", "valid", "test"};
  for (int i = 0; i < 3; ++i) {
    const MappedNpy f = MappedNpy::open(dir + "/" + names[i] + "_idx.npy");
    f.expect(DType::kInt64, 1);
    std::vector<int64_t> ids(static_cast<size_t>(f.dim(0)));
    f.copy_elements(0, f.dim(0), ids.data());
    validate_split(ids, target.count, f.path(), /*lines=*/false);
    files.splits[i] = to_homogenised(std::move(ids), target.offset);
  }
  int64_t total = 0;
  for (int r = 0; r < schema.num_relations(); ++r) {
    files.edges.push_back(dir + "/edges/" + schema.triplet(r) + ".npy");
    const MappedNpy f = MappedNpy::open(files.edges.back());
    f.expect(DType::kInt64, 2);
    PARTITA_CHECK(f.dim(1) == 2, FormatError, "{}: expected shape (E, 2), found {}", f.path(),
                  f.shape());
    total += f.dim(0);
    files.edge_counts.push_back(f.dim(0));
  }
  if (total == 0) throw_no_edges(files.edges.front());
  const std::string feat_dir = dir + "/feat";
  std::error_code ec;
  if (fs::is_directory(feat_dir, ec)) {
    for (const auto& entry : fs::directory_iterator(feat_dir, ec)) {
      const fs::path p = entry.path();
      PARTITA_CHECK(p.extension() == ".npy" && schema.find_type(p.stem().string()) >= 0,
                    FormatError, "{}: not <node type>.npy for a node type of hetero.json",
                    p.string());
    }
  }
  for (const NodeType& type : schema.node_types) {
    const std::string path = feat_dir + "/" + type.name + ".npy";
    files.features.push_back(fs::exists(path, ec) ? path : std::string());
    if (files.features.back().empty()) continue;
    const MappedNpy feat = MappedNpy::open(path);
    feat.expect(DType::kFloat32, 2);
    PARTITA_CHECK(feat.dim(0) == type.count, FormatError,
                  "{}: {} rows, but hetero.json says type '{}' has {} nodes", path, feat.dim(0),
                  type.name, type.count);
    PARTITA_CHECK(feat.dim(1) > 0, FormatError, "{}: shape {} has no feature columns", path,
                  feat.shape());
  }
  find_typed_array_files(dir, schema, files);
  return files;
}

Dataset read_numpy_hetero_dataset(const std::string& dir, const LoadOptions& options,
                                  LoadStats& stats) {
  check_hetero_options(options);
  Dataset ds;
  ds.hetero.emplace();
  HeteroSchema& schema = *ds.hetero;

  Stopwatch watch;
  read_schema(ds, dir + "/hetero.json");
  const NumpyHeteroLayout files = check_numpy_hetero_layout(dir, schema);
  {
    NpyArray label = NpyArray::open(files.label);
    ArrayView<const int64_t> v = label.view<int64_t>();
    set_hetero_labels(ds, std::vector<int64_t>(v.begin(), v.end()), files.label);
  }
  ds.train_idx = files.splits[0];
  ds.valid_idx = files.splits[1];
  ds.test_idx = files.splits[2];
  stats.read_rest_s += watch.seconds();

  for (const std::vector<ArrayFile>& per_type : files.node_arrays)
    ds.node_arrays.push_back(read_joined_rows(per_type, 0, ds.num_nodes));
  stats.read_rest_s += watch.seconds();

  watch.restart();
  std::vector<NpyArray> arrays;
  std::vector<RelationEdges> edges;
  for (const std::string& path : files.edges) {
    NpyArray array = NpyArray::open(path);
    edges.push_back({array.view<int64_t>().data(), array.dim(0), path, false});
    arrays.push_back(std::move(array));
  }
  // Edge arrays: one row per listed edge, the relations' rows one after another.
  std::vector<ExtraArray> listed;
  int64_t listed_edges = 0;
  for (int64_t count : files.edge_counts) listed_edges += count;
  for (const std::vector<ArrayFile>& per_relation : files.edge_arrays)
    listed.push_back(read_joined_rows(per_relation, 0, listed_edges));
  build_hetero_graph(ds, edges, options, listed);
  arrays.clear();
  stats.build_graph_s += watch.seconds();

  watch.restart();
  for (int t = 0; t < schema.num_types(); ++t) {
    if (files.features[t].empty()) continue;
    schema.node_types[t].features = FeatureMatrix::mapped(NpyArray::open(files.features[t]));
    check_finite(schema.node_types[t].features, files.features[t], options.threads);
  }
  stats.read_features_s += watch.seconds();
  return ds;
}

}  // namespace partita::data
