#pragma once
// A read-only view of the in-edges of a contiguous range of rows: the whole graph
// (first_row = 0) or one partition (rows [first_row, first_row + num_rows()) owned by a
// rank). Entries are GLOBAL source ids either way, so a sampled neighbor means the same
// node whoever sampled it.
//
// Ownership: the view owns nothing; the arrays it points to (a graph::Csr, memory-mapped
// partition files) must outlive it and every sampler built on it. Reading is thread-safe.
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/graph/csr.h"

namespace partita::sample {

// What decides how weighted sampling draws from a row (neighbor_kernel.h): its largest
// positive weight m, the number of its positive entries with w >= 0.5f * m, and the number
// of its positive entries. weight_summaries() below computes them once per view.
struct WeightSummary {
  float max = 0.0f;
  uint32_t heavy = 0;
  uint32_t positive = 0;
};

struct CscView {
  // num_rows() + 1 offsets into indices; row r (global id first_row + r) holds the
  // sources indices[indptr[r] .. indptr[r + 1]). indptr[0] need not be 0.
  ArrayView<const int64_t> indptr;
  ArrayView<const int64_t> indices;  // global source ids
  int64_t first_row = 0;             // global id of row 0
  // Optional, one weight per entry of `indices` (empty: unweighted). Weighted sampling
  // never picks an entry whose weight is <= 0 or NaN.
  ArrayView<const float> weights;
  // Optional, one per row: the id that keys the row's random stream (sample_key.h), e.g.
  // the dataset id from before renumbering, so that a node's draws do not depend on the
  // partitioning. Empty: the global id keys the stream.
  ArrayView<const int64_t> stream_ids;
  // Typed graphs only (empty: untyped): the relation id (>= 0) of each entry of `indices`.
  // Each row of a typed view is sorted by (relation, source), so a relation's entries in a
  // row form one contiguous run; the kernel samples every run on its own.
  ArrayView<const int32_t> relations;
  // Optional, one per entry of `indices` (empty: no times): the time of each edge, e.g. a
  // partition's edge_time.npy in CSC order. Temporal sampling (neighbor_kernel.h) reads it;
  // other sampling ignores it.
  ArrayView<const int64_t> times;
  // Edge ids (issue 41): entry e of `indices` is global edge id first_edge + e. For a part of
  // a partition, first_edge is the entries of the parts before it (its slot in the parts'
  // concatenated CSC, docs/partition-format.md), so an edge's id does not depend on which
  // rank samples it; for a whole graph, 0.
  int64_t first_edge = 0;
  // Optional (empty: none), one per entry: edge_ids[e] == first_edge + e (edge_id_range
  // builds it). Sampling with KernelOptions::edge_ids samples this array as it samples
  // `indices` (the draws never read an entry's value, so the picks are the same) and maps
  // each pick back to its source id.
  ArrayView<const int64_t> edge_ids;
  // Optional (empty: none), one per row: weight_summaries(*this), which weighted sampling
  // reads in place of a pass over a row's weights (the picks are the same either way).
  // Rows longer than kSummarizedDegree, and typed views' runs, are read as without it.
  ArrayView<const WeightSummary> weight_summaries;

  int64_t num_rows() const { return indptr.empty() ? 0 : indptr.size() - 1; }
  int64_t end_row() const { return first_row + num_rows(); }  // one past the last global id
  bool owns(int64_t node) const { return node >= first_row && node < end_row(); }
  int64_t degree(int64_t node) const {
    return indptr[node - first_row + 1] - indptr[node - first_row];
  }
  bool weighted() const { return !weights.empty(); }
  bool typed() const { return !relations.empty(); }
  bool timed() const { return !times.empty(); }
  bool has_edge_ids() const { return !edge_ids.empty() || indices.empty(); }
  int64_t stream_id(int64_t node) const {
    return stream_ids.empty() ? node : stream_ids[node - first_row];
  }
};

// A view of a whole graph (first_row = 0). `weights` and `relations` (a typed graph's
// relation per entry, e.g. Dataset::edge_relation), when given, have one value per entry.
CscView csc_view_of(const graph::Csr& csc, ArrayView<const float> weights = {},
                    ArrayView<const int32_t> relations = {});

// The edge ids of `view`'s entries: first_edge + e for e in [0, indices.size()), for a
// sampler to own and point view.edge_ids at (8 bytes per entry, built once).
std::vector<int64_t> edge_id_range(const CscView& view);

// The rows of at most this many entries that CscView::weight_summaries describes.
constexpr int64_t kSummarizedDegree = (int64_t{1} << 32) - 1;
// The weight summary of each row of a weighted view (12 bytes per row, built once, on
// `threads` threads), for a sampler to own and point view.weight_summaries at. Rows longer
// than kSummarizedDegree get an empty summary (the kernel reads their weights).
std::vector<WeightSummary> weight_summaries(const CscView& view, int threads);
// Throws partita::Error naming `what` unless the view is consistent: indptr non-empty and
// non-decreasing, its last offset <= indices.size(), first_row >= 0, first_edge >= 0,
// weights empty or sized like indices, stream_ids and weight_summaries empty or one per row (a
// summary's values are trusted as weight_summaries wrote them), relations, times and edge_ids empty
// or sized like indices (edge_ids: its ends first_edge and first_edge + size - 1; the entries
// between are trusted as edge_id_range wrote them). O(rows); source ids and relation ids themselves
// are not checked (partition loading bounds-checks them once; the kernel rejects a negative
// relation it meets).
void validate(const CscView& view, const char* what);

}  // namespace partita::sample
