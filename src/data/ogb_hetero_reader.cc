// Reader of OGB's heterogeneous raw layout (ogbn-mag's): raw/num-node-dict.csv.gz,
// triplet-type-list.csv.gz, nodetype-has-label.csv.gz, relations/H___R___T/,
// node-feat/TYPE/, node-label/TARGET/ and split/NAME/TARGET/ (docs/dataset-format.md).
// The relations' edge files are parsed in parallel (one GzLineReader each); the typed
// graph is built by build_hetero_graph.
#include <algorithm>
#include <exception>
#include <filesystem>

#include "gz_reader.h"
#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/core/timer.h"
#include "readers.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

struct Line {
  int64_t number = 0;
  std::vector<std::string> fields;
};

std::vector<std::string> split_fields(const char* b, const char* e) {
  std::vector<std::string> fields;
  const char* start = b;
  for (const char* p = b;; ++p) {
    if (p == e || *p == ',') {
      fields.emplace_back(start, p);
      if (p == e) break;
      start = p + 1;
    }
  }
  return fields;
}

// The lines of a small CSV file, split at commas.
std::vector<Line> read_small_csv(const std::string& path, LoadStats& stats) {
  GzLineReader reader(path, 1 << 16);
  std::vector<Line> lines;
  for_each_line(reader, [&](const char* b, const char* e, int64_t number) {
    lines.push_back({number, split_fields(b, e)});
  });
  stats.text_bytes += reader.text_bytes();
  stats.compressed_bytes += reader.compressed_bytes();
  return lines;
}

// A two-line table: a header of node type names, then one value per type.
std::vector<Line> read_type_table(const std::string& path, const char* what, LoadStats& stats) {
  std::vector<Line> lines = read_small_csv(path, stats);
  PARTITA_CHECK(lines.size() == 2, FormatError,
                "{}: expected 2 lines (node type names, then {}), found {}", path, what,
                lines.size());
  PARTITA_CHECK(lines[0].fields.size() == lines[1].fields.size(), FormatError,
                "{}: {} node types in line 1 but {} values in line 2", path, lines[0].fields.size(),
                lines[1].fields.size());
  return lines;
}

// A "True"/"False" table (nodetype-has-label, nodetype-has-split): the types marked True.
std::vector<int> read_flagged_types(const std::string& path, const HeteroSchema& schema,
                                    LoadStats& stats) {
  std::vector<Line> lines = read_type_table(path, "True/False per type", stats);
  std::vector<int> flagged;
  for (size_t i = 0; i < lines[0].fields.size(); ++i) {
    const std::string& name = lines[0].fields[i];
    const int t = schema.find_type(name);
    PARTITA_CHECK(t >= 0, FormatError,
                  "{}: line 1: '{}' is not a node type of raw/num-node-dict.csv.gz", path, name);
    const std::string& v = lines[1].fields[i];
    PARTITA_CHECK(v == "True" || v == "False", FormatError,
                  "{}: line 2: value {} for type '{}' is neither True nor False", path,
                  quote_field(v.data(), v.data() + v.size()), name);
    if (v == "True") flagged.push_back(t);
  }
  return flagged;
}

void read_node_types(Dataset& ds, const std::string& path, LoadStats& stats) {
  std::vector<Line> lines = read_type_table(path, "their node counts", stats);
  HeteroSchema& schema = *ds.hetero;
  PARTITA_CHECK(!lines[0].fields.empty(), FormatError, "{}: no node types", path);
  for (size_t i = 0; i < lines[0].fields.size(); ++i) {
    const std::string& name = lines[0].fields[i];
    check_type_name(name, schema, path);
    const std::string& text = lines[1].fields[i];
    NodeType type;
    type.name = name;
    PARTITA_CHECK(parse_int_field(text.data(), text.data() + text.size(), &type.count), FormatError,
                  "{}: line 2: count {} of type '{}' is not an integer", path,
                  quote_field(text.data(), text.data() + text.size()), name);
    PARTITA_CHECK(type.count > 0, FormatError,
                  "{}: line 2: type '{}' has {} nodes (every type needs at least one)", path, name,
                  type.count);
    schema.node_types.push_back(std::move(type));
  }
  set_type_offsets(ds, path);
}

void read_relation_types(HeteroSchema& schema, const std::string& path, LoadStats& stats) {
  for (const Line& line : read_small_csv(path, stats)) {
    PARTITA_CHECK(line.fields.size() == 3, FormatError,
                  "{}: line {}: expected \"head,relation,tail\", found {} fields", path,
                  line.number, line.fields.size());
    const std::string& name = line.fields[1];
    PARTITA_CHECK(!name.empty() && name.find('/') == std::string::npos &&
                      name.find("___") == std::string::npos,
                  FormatError, "{}: line {}: relation name '{}' cannot name a folder", path,
                  line.number, name);
    Relation rel;
    rel.name = name;
    for (int end = 0; end < 2; ++end) {
      const std::string& type = line.fields[end == 0 ? 0 : 2];
      const int t = schema.find_type(type);
      PARTITA_CHECK(t >= 0, FormatError,
                    "{}: line {}: relation {}___{}___{} names unknown node type '{}' (not in "
                    "raw/num-node-dict.csv.gz)",
                    path, line.number, line.fields[0], name, line.fields[2], type);
      (end == 0 ? rel.src_type : rel.dst_type) = t;
    }
    schema.relations.push_back(rel);
    for (int r = 0; r + 1 < schema.num_relations(); ++r) {
      PARTITA_CHECK(schema.triplet(r) != schema.triplet(schema.num_relations() - 1), FormatError,
                    "{}: line {}: relation {} is listed twice", path, line.number,
                    schema.triplet(r));
    }
    PARTITA_CHECK(schema.num_relations() <= kMaxInputRelations, FormatError,
                  "{}: more than {} relations (not supported)", path, kMaxInputRelations);
  }
  PARTITA_CHECK(schema.num_relations() > 0, FormatError, "{}: no relations", path);
}

// Reads one relation's edge list, checking its line count against num-edge-list.
std::vector<int64_t> read_relation(const std::string& folder, LoadStats& stats) {
  const std::string count_path = folder + "/num-edge-list.csv.gz";
  const std::string edge_path = folder + "/edge.csv.gz";
  std::error_code ec;
  PARTITA_CHECK(fs::exists(count_path, ec), FormatError,
                "{}: missing (every relation folder needs num-edge-list.csv.gz and edge.csv.gz)",
                count_path);
  GzLineReader count_reader(count_path, 1 << 16);
  const int64_t claimed = parse_ogb_count(count_reader);
  GzLineReader reader(edge_path);
  Stopwatch watch;
  std::vector<int64_t> pairs = parse_ogb_edges(reader, claimed);
  stats.text_s += watch.seconds();
  stats.text_bytes += reader.text_bytes() + count_reader.text_bytes();
  stats.compressed_bytes += reader.compressed_bytes() + count_reader.compressed_bytes();
  const int64_t edges = static_cast<int64_t>(pairs.size() / 2);
  PARTITA_CHECK(edges == claimed, FormatError, "{}: {} edge lines, but {} says {}", edge_path,
                edges, count_path, claimed);
  return pairs;
}

// Features of every type that has a raw/node-feat/TYPE/ folder.
void read_type_features(HeteroSchema& schema, const std::string& root, LoadStats& stats) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    PARTITA_CHECK(schema.find_type(name) >= 0, FormatError,
                  "{}: not a node type of raw/num-node-dict.csv.gz", entry.path().string());
  }
  for (NodeType& type : schema.node_types) {
    const std::string path = root + "/" + type.name + "/node-feat.csv.gz";
    if (!fs::exists(path, ec)) continue;
    GzLineReader reader(path);
    Stopwatch watch;
    type.features = parse_ogb_features(reader, type.count,
                                       "raw/num-node-dict.csv.gz (type '" + type.name + "')");
    stats.text_s += watch.seconds();
    stats.text_bytes += reader.text_bytes();
    stats.compressed_bytes += reader.compressed_bytes();
  }
}

}  // namespace

Dataset read_ogb_hetero_dataset(const std::string& dir, const LoadOptions& options,
                                LoadStats& stats) {
  check_hetero_options(options);
  const std::string raw = dir + "/raw/";
  Dataset ds;
  ds.hetero.emplace();
  HeteroSchema& schema = *ds.hetero;

  Stopwatch watch;
  read_node_types(ds, raw + "num-node-dict.csv.gz", stats);
  read_relation_types(schema, raw + "triplet-type-list.csv.gz", stats);
  const std::string has_label = raw + "nodetype-has-label.csv.gz";
  const std::vector<int> labelled = read_flagged_types(has_label, schema, stats);
  PARTITA_CHECK(!labelled.empty(), FormatError, "{}: no node type is labelled", has_label);
  PARTITA_CHECK(labelled.size() == 1, FormatError,
                "{}: {} node types are labelled; only one labelled (target) type is supported",
                has_label, labelled.size());
  schema.target_type = labelled[0];
  const NodeType& target = schema.node_types[schema.target_type];

  const std::string label_path = raw + "node-label/" + target.name + "/node-label.csv.gz";
  std::vector<int64_t> labels;
  {
    GzLineReader reader(label_path);
    labels = parse_ogb_labels(reader);
    stats.text_bytes += reader.text_bytes();
    stats.compressed_bytes += reader.compressed_bytes();
  }
  PARTITA_CHECK(static_cast<int64_t>(labels.size()) == target.count, FormatError,
                "{}: {} labels, but raw/num-node-dict.csv.gz says type '{}' has {} nodes",
                label_path, labels.size(), target.name, target.count);
  set_hetero_labels(ds, labels, label_path);
  stats.read_rest_s += watch.seconds();

  // Relations in parallel; the first failing relation (in list order) reports.
  watch.restart();
  const int inputs = schema.num_relations();
  std::vector<std::vector<int64_t>> pairs(static_cast<size_t>(inputs));
  std::vector<LoadStats> relation_stats(static_cast<size_t>(inputs));
  std::vector<std::exception_ptr> failed(static_cast<size_t>(inputs));
  parallel_chunks(0, inputs, 1, resolve_threads(options.threads), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      try {
        pairs[r] = read_relation(raw + "relations/" + schema.triplet(static_cast<int>(r)),
                                 relation_stats[r]);
      } catch (...) {
        failed[r] = std::current_exception();
      }
    }
  });
  for (const auto& f : failed) {
    if (f) std::rethrow_exception(f);
  }
  std::vector<RelationEdges> edges;
  for (int r = 0; r < inputs; ++r) {
    stats.text_bytes += relation_stats[r].text_bytes;
    stats.compressed_bytes += relation_stats[r].compressed_bytes;
    stats.text_s += relation_stats[r].text_s;
    edges.push_back({pairs[r].data(), static_cast<int64_t>(pairs[r].size() / 2),
                     raw + "relations/" + schema.triplet(r) + "/edge.csv.gz", true});
  }
  stats.read_edges_s += watch.seconds();

  watch.restart();
  build_hetero_graph(ds, edges, options);
  pairs.clear();
  stats.build_graph_s += watch.seconds();

  watch.restart();
  read_type_features(schema, raw + "node-feat", stats);
  stats.read_features_s += watch.seconds();

  watch.restart();
  const std::string split_dir = choose_split(dir, options.split, &ds.split);
  const std::string has_split = split_dir + "/nodetype-has-split.csv.gz";
  std::error_code ec;
  if (fs::exists(has_split, ec)) {
    for (int t : read_flagged_types(has_split, schema, stats)) {
      PARTITA_CHECK(t == schema.target_type, FormatError,
                    "{}: type '{}' has a split but is not labelled ({} labels only '{}')",
                    has_split, schema.node_types[t].name, has_label, target.name);
    }
  }
  const std::string ids = split_dir + "/" + target.name + "/";
  std::vector<int64_t>* splits[] = {&ds.train_idx, &ds.valid_idx, &ds.test_idx};
  const char* names[] = {"train", "valid", "test"};
  for (int i = 0; i < 3; ++i) {
    GzLineReader reader(ids + names[i] + ".csv.gz", 1 << 20);
    *splits[i] = to_homogenised(parse_ogb_ids(reader, target.count), target.offset);
    stats.text_bytes += reader.text_bytes();
    stats.compressed_bytes += reader.compressed_bytes();
  }
  stats.read_rest_s += watch.seconds();
  return ds;
}

}  // namespace partita::data
