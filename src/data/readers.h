#pragma once
// The two layout readers and the validation they share. Private to data/.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "partita/data/dataset.h"

namespace partita::data {

// Labels above this are rejected as implausible (a lying file must not make a model
// allocate an absurd output layer).
constexpr int64_t kMaxLabel = (int64_t{1} << 24) - 1;

// Readers of one layout; `dir` has been checked to exist. They fill everything but
// Dataset::path and Dataset::layout.
Dataset read_ogb_dataset(const std::string& dir, const LoadOptions& options, LoadStats& stats);
Dataset read_numpy_dataset(const std::string& dir, const LoadOptions& options, LoadStats& stats);
// The chunked layout (manifest.json), in one process: read_dataset_shard's one share made a
// Dataset (features widened to float32, num_classes the manifest's).
Dataset read_chunked_dataset(const std::string& dir, const LoadOptions& options, LoadStats& stats);
// The heterogeneous layouts (raw/num-node-dict.csv.gz ...; hetero.json ...). They fill
// Dataset::hetero and edge_relation as data/hetero.h states.
Dataset read_ogb_hetero_dataset(const std::string& dir, const LoadOptions& options,
                                LoadStats& stats);
Dataset read_numpy_hetero_dataset(const std::string& dir, const LoadOptions& options,
                                  LoadStats& stats);

// The numpy layout's link-prediction split (train_edges.npy, valid_edges.npy,
// test_edges.npy, valid_neg.npy, test_neg.npy, int64 [k, 2]): nullopt when none of the five
// is present. Rank `rank` of `ranks` reads rows node_block(k, rank, ranks) of each file (one
// process: all of them). Throws FormatError naming the file when only some are, for a wrong
// dtype or shape, an id outside [0, num_nodes), a self loop, or an empty valid/test array.
std::optional<EdgeSplitArrays> read_numpy_edge_split(const std::string& dir, int64_t num_nodes,
                                                     int rank = 0, int ranks = 1);

class LineSource;  // gz_reader.h

// The OGB CSV parsers, over any LineSource: read_ogb_dataset gives them GzLineReaders, tests
// and fuzz/ogb_csv_fuzz.cc text in memory. Malformed text throws FormatError
// "<source>: line N: ..."; a count the source is too small to hold throws before allocating.
//
// One non-negative count (num-node-list / num-edge-list).
int64_t parse_ogb_count(LineSource& text);
// One label per line, each an integer (or integral float) in [0, kMaxLabel].
std::vector<int64_t> parse_ogb_labels(LineSource& text);
// One line of node-label.csv.gz: an integer (or integral float) in [0, kMaxLabel];
// FormatError "<path>: line N: ..." otherwise.
int64_t parse_ogb_label_line(const std::string& path, const char* b, const char* e, int64_t line);
// "src,dst" lines, as interleaved pairs; `claimed_edges` only sizes the buffer.
std::vector<int64_t> parse_ogb_edges(LineSource& text, int64_t claimed_edges);
// Exactly num_nodes (> 0) rows of equally many finite floats; `count_source` names the file
// num_nodes came from, for messages.
FeatureMatrix parse_ogb_features(LineSource& text, int64_t num_nodes,
                                 const std::string& count_source);
// One node id per line, checked by validate_split (in range, unique) and sorted.
std::vector<int64_t> parse_ogb_ids(LineSource& text, int64_t num_nodes);

// Whether a label may be -1, marking an unlabelled node (the numpy layout: the reader then
// checks that no split holds one).
enum class Unlabelled { kRefused, kAllowed };

// Checks every label is in [0, kMaxLabel] (or -1, if allowed); returns num_classes = max + 1.
// FormatError "<source>: node i has label v ..." otherwise, and when no node has a label.
int64_t validate_labels(const std::vector<int64_t>& labels, const std::string& source,
                        Unlabelled unlabelled = Unlabelled::kRefused);
// The same for label file `path` (int64 [count]), scanned in bounded batches; keeps the
// labels of nodes [begin, end) in `kept` (the whole file: [0, count)).
int64_t scan_labels(const std::string& path, int64_t begin, int64_t end, Unlabelled unlabelled,
                    std::vector<int64_t>& kept);

// Every id of `ids` has a label >= 0 (`labels` holds those of nodes [first, ...)).
// FormatError "<label file>: node v has label -1 (unlabelled) but is in the <name> split
// (<path>) ..." otherwise; `label_file(v)` names the file holding v's label.
void check_split_labeled(const std::vector<int64_t>& labels, int64_t first,
                         const std::vector<int64_t>& ids,
                         const std::function<std::string(int64_t)>& label_file,
                         const std::string& name, const std::string& path);

// Checks ids are in [0, num_nodes) and unique, and sorts them. Errors name `source` and
// the position: "line i+1" when `lines` (CSV), "entry i" otherwise (npy).
void validate_split(std::vector<int64_t>& ids, int64_t num_nodes, const std::string& source,
                    bool lines);

// Logs a warning when the three splits overlap (not an error: some datasets do it).
void warn_split_overlap(const Dataset& ds);

// Copies the result of graph::build_in_edges into the dataset's graph fields.
void set_graph(Dataset& ds, graph::InEdgeResult&& result);

// Builds ds's in-edge CSC from the listed edges src/dst (ids already checked) and their
// arrays `listed` (one row per listed edge), in data/edge_arrays.h's row order, and sets
// in_edges, edge_arrays (one row per entry), input_edges, self_loops_dropped,
// duplicates_dropped. With edge_time among `listed`, repeated pairs are kept.
void build_keyed_graph(Dataset& ds, const std::vector<int64_t>& src,
                       const std::vector<int64_t>& dst, const std::vector<ExtraArray>& listed,
                       bool undirected, int threads);

// The arrays OGB ships beside a node-property graph under `raw` (".../raw/"), each optional:
// edge_year.csv.gz -> edge_time (int64, one per line), edge_weight.csv.gz (float32, finite,
// > 0), edge_feat.csv.gz (float32, d values per line), one line per listed edge (`edges`, as
// edge_count_path says); node_year.csv.gz -> node_time (int64, one line per node). Appends them
// to edge / node in data/edge_arrays.h's order. FormatError "<file>: line N: ..." for a
// malformed value, a non-positive weight or a wrong line count.
void read_ogb_arrays(const std::string& raw, int64_t edges, const std::string& edge_count_path,
                     int64_t nodes, const std::string& node_count_path,
                     std::vector<ExtraArray>& edge, std::vector<ExtraArray>& node,
                     LoadStats& stats);

// The folder split/<name> of an OGB dataset to read: `wanted`, or the only one present
// (IoError/FormatError naming split/ otherwise). Sets *name to the folder's name.
std::string choose_split(const std::string& dir, const std::string& wanted, std::string* name);

// Scans features for NaN/Inf in parallel (dropping mapped pages after each chunk);
// FormatError "<path>: row r column c: value v is not finite" for the first one.
void check_finite(const FeatureMatrix& features, const std::string& path, int threads);

// Throws the FormatError for an edge file without edges: "<source>: the edge list is empty".
[[noreturn]] void throw_no_edges(const std::string& source);

// ---- Heterogeneous datasets (hetero_graph.cc): the steps both hetero readers share. ----

// Relations and nodes a heterogeneous dataset may have: relation ids (with the reverses)
// must fit in the 16 bits build_hetero_graph packs them into, node ids in METIS's int32.
constexpr int kMaxInputRelations = 16383;
constexpr int64_t kMaxHeteroNodes = (int64_t{1} << 31) - 1;

// ParameterError for `undirected`: heterogeneous datasets get reverse relations instead.
void check_hetero_options(const LoadOptions& options);

// Checks a node type's name (non-empty, usable as a folder or file name: no '/', no "___",
// not "." or "..") and that it is not repeated; FormatError "<source>: ..." otherwise.
void check_type_name(const std::string& name, const HeteroSchema& schema,
                     const std::string& source);

// Sets the types' offsets (dataset order) and Dataset::num_nodes; checks the total against
// kMaxHeteroNodes (FormatError naming `source`).
void set_type_offsets(Dataset& ds, const std::string& source);

// One input relation's edges: `count` interleaved (src, dst) pairs of type-local ids.
struct RelationEdges {
  const int64_t* pairs = nullptr;
  int64_t count = 0;
  std::string source;  // the file they came from, for messages
  bool lines = true;   // messages count CSV lines ("line i+1") or npy rows ("row i")
};

// Builds the typed CSC of ds.hetero (node types with offsets, the input relations, one
// RelationEdges each, in order): validates every id against its type's count (FormatError
// "<source>: line/row i: ..."), homogenises ids, drops self loops and duplicates within a
// relation, appends the reverse relations unless options.reverse_relations is false, sorts
// each row by (relation, source) and sets in_edges, edge_relation, input_edges,
// self_loops_dropped, duplicates_dropped (input relations only: a reverse repeats them) and
// every Relation::num_edges. FormatError naming the first source if no relation has an edge.
// Parallel on options.threads; the result does not depend on the thread count.
// With arrays `listed` (one row per listed edge, the relations' edges one after another in
// schema order) each row is ordered as data/edge_arrays.h states, with the packed (relation,
// source) as the source and listing positions counted over that concatenation, and
// ds.edge_arrays gets one row per entry; with edge_time among them, repeats are kept.
void build_hetero_graph(Dataset& ds, const std::vector<RelationEdges>& edges,
                        const LoadOptions& options, const std::vector<ExtraArray>& listed = {});

// Stores the target type's labels (`source` names their file) as Dataset::labels (-1 for
// the other types) and sets num_classes.
void set_hetero_labels(Dataset& ds, const std::vector<int64_t>& target_labels,
                       const std::string& source);

// Parses hetero.json (the numpy heterogeneous layout) at `path` into ds.hetero (which must
// be engaged): types with counts and offsets, relations, target; sets ds.num_nodes.
// FormatError naming `path` for anything malformed.
void read_hetero_json(Dataset& ds, const std::string& path);

// Target-local split ids (validated, sorted) to homogenised ids.
std::vector<int64_t> to_homogenised(std::vector<int64_t> ids, int64_t offset);

}  // namespace partita::data
