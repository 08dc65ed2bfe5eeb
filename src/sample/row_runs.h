#pragma once
// Internal to src/sample: the policies of the sampling kernel's loops (neighbor_kernel.cc).
// A row of a view is sampled as one or more RUNS, each with its own fanout and stream
// (the contract is in neighbor_kernel.h):
//   OneRun        untyped views: the whole row is one run, with the call's fanout, keyed
//                 by the node's stream key.
//   RelationRuns  typed views: each relation's run of the row (rows are sorted by
//                 relation), with that relation's fanout, keyed by relation_key.
// A policy has
//   for_each_run(node, b, e, node_key, f)  calls f(s, t, relation, k, run_key) for every
//                 run [s, t) of the row [b, e), in row order; throws on a bad relation;
//   prefetch_row(b)           asks early for what for_each_run reads first at entry b
//                             (besides the ids);
//   prefetch_runs(b, e)       the same, for a loop that reads no ids yet;
//   kOffsetsAhead             how many nodes ahead the software-pipelined loop asks for
//                             the offsets (those that prefetch_runs then needs).
// OneRun's calls fold away once inlined (s = b, t = e, relation 0), so the untyped loops
// compile to what they were before the typed case shared them.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "partita/core/array_view.h"
#include "partita/core/error.h"
#include "partita/sample/sample_key.h"
#include "row_algorithms.h"

namespace partita::sample::detail {
namespace {

struct OneRun {
  static constexpr int64_t kOffsetsAhead = kPrefetchDistance;
  static constexpr bool kWholeRows = true;  // a row's only run is the row
  int64_t k;                                // the call's fanout

  template <class F>
  void for_each_run(int64_t, int64_t b, int64_t e, uint64_t node_key, F&& f) const {
    f(b, e, /*relation=*/0, k, node_key);
  }
  void prefetch_row(int64_t) const {}
  void prefetch_runs(int64_t, int64_t) const {}
};

class RelationRuns {
 public:
  // The relations decide the runs: the pipelined loop needs a row's offsets P nodes before
  // it prefetches the row's relations, which is P nodes before the row is sampled.
  static constexpr int64_t kOffsetsAhead = 2 * kPrefetchDistance;
  static constexpr bool kWholeRows = false;

  // Throws partita::Error if a relation fanout is < -1 or there are more than int32 ids.
  RelationRuns(const int32_t* relations, int64_t fanout, ArrayView<const int64_t> relation_fanouts)
      : relations_(relations), all_(fanout) {
    if (relation_fanouts.empty()) return;
    for (int64_t r = 0; r < relation_fanouts.size(); ++r) {
      PARTITA_CHECK(relation_fanouts[r] >= -1, Error,
                    "sample: fanout {} of relation {} is invalid (use k >= 0, or -1 for all)",
                    relation_fanouts[r], r);
    }
    PARTITA_CHECK(relation_fanouts.size() <= std::numeric_limits<int32_t>::max(), Error,
                  "sample: {} relation fanouts exceed the relation id range",
                  relation_fanouts.size());
    per_relation_ = relation_fanouts.data();
    limit_ = static_cast<uint32_t>(relation_fanouts.size());
  }

  template <class F>
  void for_each_run(int64_t node, int64_t b, int64_t e, uint64_t node_key, F&& f) const {
    for (int64_t s = b; s < e;) {
      const int32_t relation = relations_[s];
      if (static_cast<uint32_t>(relation) >= limit_) throw_bad_relation(node, relation);
      const int64_t t = run_end(s, e);
      f(s, t, relation, per_relation_ ? per_relation_[relation] : all_,
        relation_key(node_key, relation));
      s = t;
    }
  }
  void prefetch_row(int64_t b) const { __builtin_prefetch(relations_ + b); }
  void prefetch_runs(int64_t b, int64_t e) const {
    const int64_t d = std::min<int64_t>(e - b, kRelationLines * 16);
    for (int64_t p = 0; p < d; p += 16) __builtin_prefetch(relations_ + b + p);
  }

 private:
  // A run's end is looked for by a linear scan over this many entries, then by binary
  // search (hub rows hold long runs).
  static constexpr int64_t kLinearRunScan = 16;
  static constexpr int64_t kRelationLines = 4;  // cache lines of a row's relations prefetched

  // One past the last entry of the run of relation relations_[s], within [s, e).
  int64_t run_end(int64_t s, int64_t e) const {
    const int32_t* rel = relations_;
    const int32_t r = rel[s];
    if (rel[e - 1] == r) return e;  // the row's last run (its only one, on many graphs)
    const int64_t scan_end = std::min(e, s + kLinearRunScan);
    int64_t t = s + 1;
    while (t < scan_end && rel[t] == r) ++t;
    if (t < scan_end || t == e) return t;
    return std::upper_bound(rel + t, rel + e, r) - rel;
  }

  [[noreturn]] void throw_bad_relation(int64_t node, int32_t relation) const {
    if (relation < 0) {
      throw Error(
          fmt::format("sample: node {} has an in-edge of relation {} (negative)", node, relation));
    }
    throw Error(fmt::format(
        "sample: node {} has an in-edge of relation {}, but fanouts are given for {} relations",
        node, relation, limit_));
  }

  const int32_t* relations_;
  const int64_t* per_relation_ = nullptr;  // null: all_ for every relation
  // Relation ids must be < limit_ (negative ones wrap above it).
  uint32_t limit_ = static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) + 1;
  int64_t all_;
};

}  // namespace
}  // namespace partita::sample::detail
