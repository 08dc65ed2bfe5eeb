#pragma once
// Link-prediction edge splits (`partita partition --edge-split VALID,TEST`, or the dataset's
// own train_edges.npy ...): which edges are held out of the message-passing graph, the
// non-edges they are scored against, and the graph that remains. Homogeneous graphs only.
//
// The unit held out is a node pair {u, v} joined by at least one edge: holding it out
// removes both u->v and v->u. A pair is written once as (s, d) where s->d is an edge, with
// s < d when both directions are. So on a graph loaded with --undirected an edge and its
// reverse count once, and on a directed graph each directed edge is one unit (a pair with
// edges both ways, one unit). Negatives are unordered pairs {a, b}, a != b, with no edge
// either way in the full graph, unique across valid and test.
// Everything is a pure function of (graph, fractions, seed): no thread count enters.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/data/dataset.h"
#include "partita/graph/csr.h"

namespace partita::partition {

// Fractions of the units held out for validation and test; both 0: no split.
struct EdgeSplitOptions {
  double valid_fraction = 0;
  double test_fraction = 0;
  bool enabled() const { return valid_fraction > 0 || test_fraction > 0; }
};

// Parses "VALID,TEST" (two decimal fractions). Throws ParameterError naming `edge_split` for
// a malformed list, a fraction <= 0 or >= 1, or fractions summing to 1 or more.
EdgeSplitOptions parse_edge_split(const std::string& text);

// Held-out and training edges in ORIGINAL ids, as interleaved (src, dst) pairs.
struct HeldOutEdges {
  std::string source;          // "sampled" (`edge_split`) or "dataset" (the dataset's own files)
  EdgeSplitOptions fractions;  // sampled only
  std::vector<int64_t> train, valid, test, valid_neg, test_neg;
};

// Units counted and held out as the header states: valid = round(valid_fraction * units),
// at least 1, likewise test; one negative per held-out positive. Throws ParameterError naming
// `edge_split` when that leaves no training unit, or when the graph has fewer non-edge pairs
// than negatives needed.
HeldOutEdges sample_edge_split(const graph::Csr& in_edges, const EdgeSplitOptions& options,
                               uint64_t seed);

// The dataset's own split (Dataset::edge_split), checked against the graph: a negative must
// not be an edge either way nor a held-out positive, nor repeat another (as an unordered pair,
// across both files); a training pair must not be held out. Throws FormatError naming
// `<dataset>/valid_neg.npy` or `test_neg.npy`.
HeldOutEdges dataset_edge_split(const data::Dataset& dataset);

// `in_edges` without the valid and test pairs, in both directions (rows stay sorted).
graph::Csr remove_held_out(const graph::Csr& in_edges, const HeldOutEdges& held);

// Whether u->v is an edge of `in_edges` (binary search in row v).
bool has_edge(const graph::Csr& in_edges, int64_t u, int64_t v);

}  // namespace partita::partition
