#pragma once
// The two layout readers and the validation they share. Private to data/.
#include <cstdint>
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

class LineSource;  // gz_reader.h

// The OGB CSV parsers, over any LineSource: read_ogb_dataset gives them GzLineReaders, tests
// and fuzz/ogb_csv_fuzz.cc text in memory. Malformed text throws FormatError
// "<source>: line N: ..."; a count the source is too small to hold throws before allocating.
//
// One non-negative count (num-node-list / num-edge-list).
int64_t parse_ogb_count(LineSource& text);
// One label per line, each an integer (or integral float) in [0, kMaxLabel].
std::vector<int64_t> parse_ogb_labels(LineSource& text);
// "src,dst" lines, as interleaved pairs; `claimed_edges` only sizes the buffer.
std::vector<int64_t> parse_ogb_edges(LineSource& text, int64_t claimed_edges);
// Exactly num_nodes (> 0) rows of equally many finite floats; `count_source` names the file
// num_nodes came from, for messages.
FeatureMatrix parse_ogb_features(LineSource& text, int64_t num_nodes,
                                 const std::string& count_source);
// One node id per line, checked by validate_split (in range, unique) and sorted.
std::vector<int64_t> parse_ogb_ids(LineSource& text, int64_t num_nodes);

// Checks every label is in [0, kMaxLabel]; returns num_classes = max + 1. FormatError
// "<source>: node i has label v ..." otherwise.
int64_t validate_labels(const std::vector<int64_t>& labels, const std::string& source);

// Checks ids are in [0, num_nodes) and unique, and sorts them. Errors name `source` and
// the position: "line i+1" when `lines` (CSV), "entry i" otherwise (npy).
void validate_split(std::vector<int64_t>& ids, int64_t num_nodes, const std::string& source,
                    bool lines);

// Logs a warning when the three splits overlap (not an error: some datasets do it).
void warn_split_overlap(const Dataset& ds);

// Copies the result of graph::build_in_edges into the dataset's graph fields.
void set_graph(Dataset& ds, graph::InEdgeResult&& result);

// Throws the FormatError for an edge file without edges: "<source>: the edge list is empty".
[[noreturn]] void throw_no_edges(const std::string& source);

}  // namespace partita::data
