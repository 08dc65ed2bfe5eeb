#pragma once
// Compressed sparse rows. Partita stores graphs by destination (CSC of in-edges): row v
// lists the sources of the edges that end at v, sorted ascending and unique.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace partita::graph {

template <class Index>
struct CsrOf {
  std::vector<Index> indptr;   // num_rows() + 1 offsets into indices
  std::vector<Index> indices;  // row v is indices[indptr[v] .. indptr[v+1])

  int64_t num_rows() const { return indptr.empty() ? 0 : static_cast<int64_t>(indptr.size()) - 1; }
  int64_t num_entries() const { return static_cast<int64_t>(indices.size()); }
  int64_t degree(int64_t v) const { return static_cast<int64_t>(indptr[v + 1] - indptr[v]); }
};
using Csr = CsrOf<int64_t>;

// Receives `count` interleaved (src, dst) pairs per call.
using EdgeVisitor = std::function<void(const int64_t* pairs, int64_t count)>;
// Feeds every edge of a graph to the visitor, in chunks. Called more than once; every
// call must deliver the same sequence.
using EdgeStream = std::function<void(const EdgeVisitor&)>;

struct InEdgeOptions {
  bool undirected = false;  // also add (dst, src) for every (src, dst)
  int threads = 0;          // <= 0: all hardware threads
  std::string source;       // file name used in error messages
};

struct InEdgeResult {
  Csr in_edges;  // CSC: rows = destinations, entries = sources; no self loops, no duplicates
  int64_t input_edges = 0;         // pairs read
  int64_t self_loops_dropped = 0;  // pairs with src == dst
  int64_t duplicates_dropped = 0;  // entries removed as repeats (after symmetrizing)
};

// Builds the in-edge CSC of a graph with `num_nodes` nodes. Throws FormatError naming
// options.source if an id is negative or >= num_nodes.
InEdgeResult build_in_edges(int64_t num_nodes, const EdgeStream& edges,
                            const InEdgeOptions& options);

// Convenience: an EdgeStream over an in-memory interleaved (src, dst) array.
EdgeStream edge_stream_of(const std::vector<int64_t>& pairs);

// Sorts every row of `csr` and removes repeated entries in place; returns how many were
// removed. Rows are processed on up to `threads` threads.
template <class Index>
int64_t sort_and_dedup_rows(CsrOf<Index>& csr, int threads);

// Undirected adjacency in 32-bit indices (METIS's idx_t): row v = in(v) ∪ out(v), sorted,
// unique, without v. Throws FormatError if it would hold 2^31 or more entries.
CsrOf<int32_t> symmetrize_int32(const Csr& in_edges, int threads);

}  // namespace partita::graph
