#pragma once
// Assignment of nodes to parts: part[v] in [0, num_parts) for every node v. Both methods
// are deterministic functions of their inputs and seed, whatever the thread count.
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/graph/csr.h"

namespace partita::partition {

// METIS's input: the undirected adjacency of the graph in 32-bit indices.
struct MetisGraph {
  graph::CsrOf<int32_t> adj;  // row v = in(v) ∪ out(v), sorted, unique, without v
  // The input CSC was already symmetric, so adj's rows are exactly its rows: a caller that
  // owns the input may drop its indices and read the graph from adj instead.
  bool equals_input = false;
};

// Builds METIS's input. A symmetric CSC (e.g. loaded with --undirected) is detected by a
// parallel check and narrowed to 32 bits directly; anything else goes through
// graph::symmetrize_int32. Rows not strictly ascending (edge_time keeps repeated pairs; typed
// rows go by relation first) are sorted and deduplicated into a copy first (equals_input is
// then false). Throws FormatError past
// METIS's 32-bit limit (2^31-1 entries).
MetisGraph metis_graph(const graph::Csr& in_edges, int threads);

// True when every edge (s -> d) of the CSC has its reverse (d -> s) and there is no self
// loop. Rows must be unique (graph::Csr's contract). Compares out- with in-degrees (rejects
// most directed graphs), then hashed sums of the edge set and of its reverse in one
// sequential pass (false positive probability about 2^-128).
bool is_symmetric(const graph::Csr& in_edges, int threads);

struct MetisAssignOptions {
  int num_parts = 2;           // >= 1; 1 skips METIS entirely
  uint64_t seed = 0;           // METIS_OPTION_SEED gets seed mod 2^31
  bool balance_train = false;  // add a constraint: weight 1 for training nodes, else 0
  bool balance_edges = false;  // add a constraint: in-degree (edges the part will store)
};

struct MetisAssignStats {
  double metis_s = 0;
  int num_constraints = 0;     // ncon passed to METIS (0 when METIS was not called)
  int64_t objective = 0;       // METIS's edge cut of the symmetrized graph
  int filled_empty_parts = 0;  // parts METIS left empty, given one node each afterwards
};

// METIS_PartGraphKway on `adj`, with one vertex weight per constraint: always 1 (node count),
// then the training indicator and the in-degree (`in_degree_indptr`: indptr of the in-edge
// CSC, [n+1]) when asked. A constraint whose total weight is 0 (no training nodes, no edges)
// is dropped with a warning. Parts METIS leaves empty (tiny graphs) get one node each from
// the largest part, so every part owns a node. Throws Error when METIS fails, naming its code.
std::vector<int32_t> assign_metis(const graph::CsrOf<int32_t>& adj,
                                  ArrayView<const int64_t> in_degree_indptr,
                                  ArrayView<const int64_t> train_idx,
                                  const MetisAssignOptions& options, MetisAssignStats* stats);

// Seeded balanced random assignment: the labels 0,0,..,1,1,..,P-1 (node counts differing by
// at most one, larger parts first) shuffled by Fisher-Yates with Rng(stream_key(seed, tag)).
std::vector<int32_t> assign_random(int64_t num_nodes, int num_parts, uint64_t seed);

}  // namespace partita::partition
