#pragma once
// Link-prediction edge splits (`partita partition --edge-split VALID,TEST`, or the dataset's
// own train_edges.npy ...): which edges are held out of the message-passing graph, the
// non-edges they are scored against, and the graph that remains. Homogeneous graphs only.
//
// The unit held out is a node pair {u, v} joined by at least one edge: holding it out
// removes both u->v and v->u. A pair is written once as (s, d) where s->d is an edge, with
// s < d when both directions are. So on a graph loaded with --undirected an edge and its
// reverse count once, and on a directed graph each directed edge is one unit (a pair with
// edges both ways, one unit). A pair repeated at different times (edge_time) is one unit
// too: the fractions count distinct pairs, a held-out pair takes all its copies out of the
// graph, and no training pair is a held-out pair. Negatives are unordered pairs {a, b},
// a != b, with no edge either way in the full graph, unique across valid and test.
// Everything is a pure function of (graph, fractions, seed): no thread or rank count enters.
//
// By time (EdgeSplitOptions::by = kTime; the dataset has edge_time): a unit's time is the
// edge_time of its stored entry s -> d (unlike a random split, a pair repeated at different
// times is several entries, so several units, one per time). The latest valid + test units,
// ordered by (time, unit order: destination, then source, then stored order), are held out:
// the latest `test` of them for test, the `valid` before them for validation, so every test
// unit is at least as late as every validation unit, and every one of them as every training
// unit. A training unit whose pair is also held out (an earlier copy of it) is dropped with it
// (held-out pairs leave the graph both ways, all copies). Negatives are drawn as for a random
// split; negative k (in draw order) takes the time of the k-th held-out unit in (time, unit)
// order, so a validation negative has a validation time, a test negative a test time. Every
// held-out, negative and training pair then carries its time (format.h, the *_time files).
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/name_table.h"

namespace partita::partition {

// How the held-out units are chosen: at random (the default) or the latest by edge_time.
enum class SplitBy { kRandom, kTime };

// The names of the split modes (`--edge-split-by`).
inline const NameTable<SplitBy>& split_by_names() {
  static const NameTable<SplitBy> names{{"random", SplitBy::kRandom}, {"time", SplitBy::kTime}};
  return names;
}

// Fractions of the units held out for validation and test; both 0: no split.
struct EdgeSplitOptions {
  double valid_fraction = 0;
  double test_fraction = 0;
  SplitBy by = SplitBy::kRandom;  // kTime needs a dataset with edge_time
  bool enabled() const { return valid_fraction > 0 || test_fraction > 0; }
};

// Parses "VALID,TEST" (two decimal fractions). Throws ParameterError naming `edge_split` for
// a malformed list, a fraction <= 0 or >= 1, or fractions summing to 1 or more.
EdgeSplitOptions parse_edge_split(const std::string& text);

// Held-out and training edges in ORIGINAL ids, as interleaved (src, dst) pairs: one rank's
// share (all of them on one rank). Sampled: the units of the rank's rows (train, valid,
// test; in unit order) and the negatives whose draw index k satisfies k mod ranks == rank.
// Dataset: the rank's rows of each file, in file order (ranks in rank order make up each
// file). Made by the pipeline (src/partition/edge_split_steps.h).
// The sets, indexed as data::kEdgeSplitArrayFiles lists them.
enum HeldSet { kTrainSet, kValidSet, kTestSet, kValidNegSet, kTestNegSet, kHeldSets };
struct HeldOutEdges {
  std::string source;          // "sampled" (`edge_split`) or "dataset" (the dataset's own files)
  EdgeSplitOptions fractions;  // sampled only
  std::vector<int64_t> pairs[kHeldSets];
  // Split by time only (else empty): one time per pair of the set of the same index.
  std::vector<int64_t> times[kHeldSets];
};

}  // namespace partita::partition
