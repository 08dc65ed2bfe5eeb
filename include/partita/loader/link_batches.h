#pragma once
// Link-prediction batches (issue 12, `partita train --task link`): the seeds of a step are
// training edges (pairs), not nodes.
//
// Indexing. A partition made with an edge split stores each part's training pairs in
// part<p>/train_edges.npy (partition/format.h). The job numbers every pair: part p's pairs
// get the global indices [offset_p, offset_p + count_p), offsets in part order (counts from
// partita.json). Each pair also has a key, pair_key() of its endpoints' ORIGINAL ids, which
// does not depend on the partitioning. Every rank builds the same loader::GlobalBatches of
// (key, index) over all pairs, so each epoch is one (seed, epoch) shuffle of the pairs in
// key order, cut into global batches of batch_size pairs; a rank trains on the pairs of
// each batch it holds (its part's indices; in replicated mode an even share). Every rank
// therefore runs the same number of steps, and 1 rank and P ranks train on the same global
// batches, whatever the partitioning.
//
// Negatives. Each positive pair (u, v) of key c gets k corrupted pairs (u, w_1..w_k): the
// destinations are drawn by Rng(stream_key(seed, epoch, c, kNegativeStream)), k draws in
// order, of ORIGINAL ids, uniformly over [0, N) or proportionally to the nodes' in-degree,
// then mapped to global new ids; so they depend on the pair and the epoch alone, not on the
// rank that trains it nor on the partitioning. A negative may by chance be an edge (as
// DGL's and PyG's uniform negatives). The sampler holds the inverse of node_map (8 bytes
// per node of the graph), and for degree negatives their cumulative degrees (8 more).
//
// Time (a partition split by time, partition/edge_split.h): every training and held-out pair
// has a time (LinkEdges::times, read_time_file). A pair repeated at different times is one
// pair per time; the job keys its pairs by time_pair_keys instead of pair_key. Temporal
// training (train --temporal) samples both endpoints of a pair at its time and draws its
// negatives with draw(..., rejected): a destination w is redrawn while (u, w) is not a
// negative at the pair's time (the trainer's rule: joined by a training pair, either way, no
// later than that time); make_link_step(..., times) then makes the step's seeds (node, time)
// pairs.
//
// Pure functions and immutable objects after construction: thread-safe.
#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/core/name_table.h"
#include "partita/core/random.h"
#include "partita/partition/format.h"

namespace partita::loader {

// The training pairs a rank holds, with their global indices.
struct LinkEdges {
  int64_t total = 0;           // training pairs over all parts
  int64_t first = 0;           // global index of the first pair held here
  std::vector<int64_t> pairs;  // [count, 2] row-major (src, dst), global new ids
  std::vector<int64_t> times;  // split by time: the time of each pair; else empty

  int64_t count() const { return static_cast<int64_t>(pairs.size() / 2); }
};

// Reads part `part`'s training pairs of the partition `dir` (meta: its partita.json), and
// their times when it is split by time. Throws ParameterError naming `task` when the
// partition has no edge split (and `edge_split`, which makes one), FormatError naming the
// file when it is not int64 [count, 2] (times: [count]) with the count partita.json gives or
// holds an id outside [0, num_nodes).
LinkEdges read_link_edges(const std::string& dir, const partition::PartitionMeta& meta, int part);

// Every part's training pairs (a 1-part directory shared by several ranks, or tests).
LinkEdges read_all_link_edges(const std::string& dir, const partition::PartitionMeta& meta);

// A held-out pair file (edges/valid_pos.npy, ...): int64 [k, 2], ids in [0, num_nodes);
// returned row-major. FormatError naming the file otherwise.
std::vector<int64_t> read_pair_file(const std::string& path, int64_t num_nodes);

// A time file of a split by time (edges/valid_pos_time.npy, ...): int64 [rows]. FormatError
// naming the file otherwise.
std::vector<int64_t> read_time_file(const std::string& path, int64_t rows);

// The keys of timed pairs ([t, 2] row-major ORIGINAL ids, and one time each): the position
// of (src, dst, time) in the sorted list of them all, distinct for distinct triples and
// independent of the partitioning. Throws Error on a repeated triple or mismatched sizes.
std::vector<int64_t> time_pair_keys(const std::vector<int64_t>& original_pairs,
                                    const std::vector<int64_t>& times);

// The key of pair (src, dst) by original ids: original_src * num_nodes + original_dst,
// distinct for distinct pairs. Throws Error when num_nodes^2 does not fit an int64.
int64_t pair_key(int64_t original_src, int64_t original_dst, int64_t num_nodes);

enum class NegativeKind { kUniform, kDegree };

// The names of the negative distributions (--negatives-by).
inline const NameTable<NegativeKind>& negative_kind_names() {
  static const NameTable<NegativeKind> names{{"uniform", NegativeKind::kUniform},
                                             {"degree", NegativeKind::kDegree}};
  return names;
}

class NegativeSampler {
 public:
  // Destinations uniform over the nodes. node_map: the original id of every global id (a
  // permutation of [0, N), N >= 1; partition/format.h). Throws Error otherwise.
  static NegativeSampler uniform(ArrayView<const int64_t> node_map);
  // Destinations drawn with probability degree / sum of degrees (`degrees`: the in-degree
  // of every global id). Throws ParameterError naming `negatives_by` when every
  // degree is 0, Error when one is negative or the sizes differ.
  static NegativeSampler by_degree(ArrayView<const int64_t> node_map,
                                   const std::vector<int64_t>& degrees);

  // The k negative destinations of the training pair of key `key` in epoch `epoch` (see
  // above), written to out[0..k).
  void draw(uint64_t seed, uint64_t epoch, int64_t key, int64_t k, int64_t* out) const;
  // The same, each destination w with rejected(w) drawn again from the same stream (the
  // draws in order); after kMaxNegativeDraws draws for one destination, the first node
  // after the last draw in original-id order (wrapping) that is not rejected. Throws Error
  // when every node is rejected.
  static constexpr int kMaxNegativeDraws = 64;
  void draw(uint64_t seed, uint64_t epoch, int64_t key, int64_t k, int64_t* out,
            const std::function<bool(int64_t)>& rejected) const;

 private:
  int64_t draw_original(Rng& rng) const;  // one draw: an original id

  std::vector<int64_t> global_of_;  // [N]: the global id of each original id
  // Degree mode: cumulative_[o] = the degrees of original ids 0..o summed.
  std::vector<int64_t> cumulative_;
};

// The temporal negatives' rule over the training pairs: u and w are joined at time t when a
// training pair (u, w) or (w, u) has a time <= t; a destination w joined to the source u at
// the pair's time is not a negative. Immutable after construction: thread-safe.
class JoinedPairs {
 public:
  // `pairs`: [n, 2] row-major global ids; `times`: one per pair. Error when the sizes differ.
  JoinedPairs(ArrayView<const int64_t> pairs, ArrayView<const int64_t> times);
  bool joined(int64_t u, int64_t w, int64_t t) const;

 private:
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> earliest_;  // {lo, hi} -> time
};

// A pair of a link batch as positions into LinkStep::seeds: the edge src -> dst.
struct SeedPair {
  int64_t src = 0;
  int64_t dst = 0;
};

// One rank's link batch: the blocks are sampled around `seeds`, and the model's rows of the
// seeds are scored pairwise.
struct LinkStep {
  // The distinct endpoints, in order of first appearance over the positives (src, dst),
  // then the negatives' destinations.
  std::vector<int64_t> seeds;
  std::vector<SeedPair> positives;  // one per pair, positions into seeds
  std::vector<SeedPair> negatives;  // k per positive: positive i's at [i k, (i+1) k)
  // The pairs of the whole global batch (every rank's; [g, 2] row-major global ids): the
  // edges excluded from message passing (sample/edge_exclusion.h). Excluding the global
  // batch's pairs, not only this rank's, makes a step the same for 1 and P ranks.
  std::vector<int64_t> excluded;
  // Temporal steps only (else empty): the time of each seed; a seed is then a (node, time)
  // pair, distinct as a pair (sample/block_builder.h).
  std::vector<int64_t> seed_times;
};

// The step of `pairs` ([b, 2] row-major, global ids) whose positive i has the negative
// destinations negative_dsts[i k .. (i+1) k) (k >= 0; size b k). `excluded` is left empty.
// `times` (temporal: one per pair, else empty): pair i and its negatives are at times[i]; the
// seeds are then the distinct (node, time) pairs, in the same order, and seed_times theirs.
LinkStep make_link_step(ArrayView<const int64_t> pairs, ArrayView<const int64_t> negative_dsts,
                        int64_t k, ArrayView<const int64_t> times = {});

}  // namespace partita::loader
