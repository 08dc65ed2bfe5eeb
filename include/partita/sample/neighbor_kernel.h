#pragma once
// The sampling kernel: up to `fanout` in-neighbors for each node of a list, read from one
// CscView (the whole graph or one partition). Every node draws from its own stream
// (sample_key.h), so its sample is a function of (hop key, node id, its row) alone, and
// sampling a node through a partition's view gives what the whole graph's view gives.
//
// The algorithms are part of the contract (a reference in tests/sample re-derives every
// result from them). For a node with degree d, row entries e[0..d) in stored order,
// k = fanout and rng = Rng(node_key(hop_key, view.stream_id(node))):
//   fanout -1        every entry in stored order, no draws, whatever the mode (weighted:
//                    every entry of positive weight).
//   uniform, without k >= d: every entry in stored order, no draws. Otherwise Floyd's
//                    algorithm: for j = d-k .. d-1: t = rng.below(j+1); take t unless
//                    taken already, else take j. Output: taken positions in stored order.
//   uniform, with    exactly k draws e[rng.below(d)] in draw order (none when d = 0).
//   weighted, without  successive sampling: each pick drawn proportional to weight among
//                    the positive-weight entries not picked yet. With p = the number of
//                    positive entries: k >= p (so k >= d): every positive-weight entry in
//                    stored order, no draws. Otherwise, with m = the largest positive
//                    weight and h = the number of positive entries with w[i] >= 0.5f * m:
//                    SHORT RUNS (d <= 64): if 8 * h >= p, by rejection among the untaken
//                    entries: L = the positive positions in stored order, n = p; at most
//                    8 * k + 16 trials, each drawing x = rng.next(), with y = x * n
//                    (128-bit) sets j = y >> 64 and u = ((y mod 2^64) >> 11) * 2^-53, and
//                    takes i = L[j] if u * m < w[i] (in double), then L[j] = L[n - 1] and
//                    n -= 1; if picks are still missing after the last trial, Efraimidis-
//                    Spirakis (below) on the entries not taken yet takes the rest (its
//                    draws skip taken entries). If 8 * h < p: Efraimidis-Spirakis.
//                    LONGER RUNS: if 8 * (h - k + 1) >= d, by REJECTION: until k
//                    positions are taken, a trial draws x = rng.next(), with y = x * d
//                    (128-bit) sets i = y >> 64
//                    (rng.below(d)'s value) and u = ((y mod 2^64) >> 11) * 2^-53, and
//                    takes i if w[i] is positive, u * m < w[i] (in double) and i is not
//                    taken yet.
//                    Else (a skewed run: few heavy entries) Efraimidis-Spirakis: one draw
//                    per entry i in stored order, u = ((rng.next() >> 11) + 1) * 2^-53 in
//                    (0, 1], key = -log(u) / w[i]; take the k smallest (key, i) among
//                    positive weights. Output: taken positions in stored order. (Both give
//                    successive sampling's distribution; rejection costs O(d) for the
//                    statistics, a vectorized pass (none for a long row of a view with
//                    weight summaries, csc_view.h), plus about 2 trials per pick with
//                    weights uniform in (0, 1], at most 16 on average under the bound;
//                    Efraimidis-Spirakis one draw and one log per entry.)
//   weighted, with   none when p = 0. If 8 * h >= d, by rejection: k picks in draw order,
//                    each the first accepted trial (as above, without the "not taken").
//                    Else prefix sums c[i] (double) of the positive weights, total
//                    c[d-1]; k draws x = rng.uniform() * total, taking the first i with
//                    c[i] > x (the last positive entry if rounding leaves none), in draw
//                    order.
// A weight is positive when it is > 0 and finite; others are never drawn.
//
// Positions index the row's stored order, so two views give the same sample of a node
// only if they store its row in the same order (and key it with the same stream id).
//
// Typed views (view.relations non-empty; rows sorted by relation): for each relation r
// that has entries in the node's row, in increasing r, the algorithm above runs on r's run
// of entries alone (positions index the run), with k = the fanout of relation r
// (options.relation_fanouts[r], or options.fanout when that list is empty) and
// rng = Rng(relation_key(node_key(hop_key, view.stream_id(node)), r)) (sample_key.h). The
// node's output is the runs' picks concatenated in relation order, and out->relations
// holds the relation of each output neighbor. A relation without entries in the row draws
// nothing; fanout 0 gives nothing for that relation.
//
// Temporal sampling (options.temporal != kNone; the view needs `times`, one per entry):
// each requested node i comes with a time T[i] (the time of the seed it is sampled for).
// Entry e of the row is ALLOWED when times[e] <= T[i] (options.strict: times[e] < T[i]);
// the allowed entries of a run (the whole row when untyped), in stored order, form a
// sub-run a[0..m), and the run is sampled as if it held only them, with the run's own
// k and stream (the same keys as above; the time does not key the stream):
//   kUniform         the algorithms above on a[0..m) (positions index a): fanout -1, or
//                    k >= m without replacement, gives every allowed entry (weighted: of
//                    positive weight) in stored order; with replacement, k draws from a.
//   kRecent          no draws: the first min(k, m) allowed entries in the order (time
//                    descending, stored position ascending) -- the k most recent, ties
//                    going to the entry stored first; fanout -1: every allowed entry.
//                    Output in stored order. Uniform and without replacement only.
// Entries later than T[i] are never read as samples: no sampled edge is later than the
// time its node was asked for (tests/sample/temporal_test.cc checks it over every hop).
// A node asked for twice with different times may get different samples.
//
// Edge ids (options.edge_ids; the view needs edge_ids, csc_view.h): out->edge_ids holds
// the global edge id (view.first_edge + the entry's position in view.indices) of each
// sampled neighbor, aligned with out->neighbors. The kernel samples view.edge_ids in place
// of view.indices with the same algorithms, keys and runs (no draw reads an entry's value),
// then reads each pick's source id, so the sample is the one taken without edge ids; an
// entry picked twice (with replacement) has its id twice. Off: out->edge_ids is empty and
// the loops are the ones above, untouched.
//
// Thread-safety: sample_neighbors only reads the view; concurrent calls are safe with
// distinct outputs. It allocates nothing per node (scratch is per chunk, output buffers
// are reused across calls). The uniform modes are software-pipelined: a node's positions
// are drawn (and their cache lines prefetched) 16 nodes before its ids are read. Typed
// and untyped views run the same loops (neighbor_kernel.cc), an untyped row being one run
// (src/sample/row_runs.h); on a typed view with threads > 1 every chunk but the first
// writes into a buffer of its own, joined at the end.
// Temporal sampling runs loops of its own (temporal_kernel.cc), a node at a time, each
// chunk into a buffer of its own: the non-temporal loops are untouched by it.
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/sample/csc_view.h"

namespace partita::sample {

enum class Replacement { kWithout, kWith };
enum class Weighting { kUniform, kEdgeWeight };  // kEdgeWeight needs view.weights
// kNone: times are ignored. kUniform / kRecent: among the entries allowed by each node's
// time (contract above); they need view.times and one time per node.
enum class Temporal { kNone, kUniform, kRecent };

struct KernelOptions {
  int64_t fanout = -1;  // k >= 0, or -1 for every neighbor
  Replacement replacement = Replacement::kWithout;
  Weighting weighting = Weighting::kUniform;
  int threads = 1;       // > 1: chunks of nodes in parallel; results do not change
  int64_t chunk = 2048;  // nodes per parallel task; results do not change
  // Typed views: the fanout of each relation, indexed by relation id (each >= -1); empty:
  // `fanout` for every relation. Borrowed for the duration of the call.
  ArrayView<const int64_t> relation_fanouts;
  Temporal temporal = Temporal::kNone;
  bool strict = false;    // temporal: allowed is time < T (else time <= T)
  bool edge_ids = false;  // also return each sampled entry's edge id (needs view.edge_ids)
};

// Sampled in-neighbors of a node list, in list order (CSR-like, ready to merge).
struct NeighborSample {
  std::vector<int64_t> counts;     // one per node
  std::vector<int64_t> neighbors;  // global ids: node i's counts[i] ids follow node i-1's
  // Typed views: the relation of each neighbor (aligned with `neighbors`; within a node
  // increasing). Untyped views: empty.
  std::vector<int32_t> relations;
  // KernelOptions::edge_ids: the global edge id of each neighbor (aligned with `neighbors`);
  // otherwise empty.
  std::vector<int64_t> edge_ids;
};

// Samples `options.fanout` in-neighbors for each of `nodes` (global ids, each owned by
// `view`; duplicates are allowed and get identical samples) into `out`, replacing its
// content (capacity is reused). Throws partita::Error if options.temporal is not kNone
// (that takes node times, below), if a node is outside the view's rows, if a fanout is
// < -1, if kEdgeWeight is asked of a view without weights, if a row holds a relation id
// < 0 or (with relation_fanouts) >= relation_fanouts.size(), or if relation_fanouts are
// given for an untyped view that has edges, or if edge ids are asked of a view without them.
void sample_neighbors(const CscView& view, ArrayView<const int64_t> nodes, uint64_t hop_key,
                      const KernelOptions& options, NeighborSample* out);

// The same, with node_times[i] the time node i is sampled at (temporal contract above).
// Temporal options need node_times.size() == nodes.size() and a view with times (unless
// it has no entries); options.temporal == kNone needs node_times empty. kRecent takes
// neither replacement nor edge weights. Each of these is a partita::Error.
void sample_neighbors(const CscView& view, ArrayView<const int64_t> nodes,
                      ArrayView<const int64_t> node_times, uint64_t hop_key,
                      const KernelOptions& options, NeighborSample* out);

}  // namespace partita::sample
