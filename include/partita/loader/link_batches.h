#pragma once
// Link-prediction batches (issue 12, `partita train --task link`): the seeds of a step are
// training edges (pairs), not nodes.
//
// Indexing. A partition made with an edge split stores each part's training pairs in
// part<p>/train_edges.npy (partition/format.h). The job numbers every pair: part p's pairs
// get the global indices [offset_p, offset_p + count_p), offsets in part order (counts from
// partita.json). Every rank builds the same loader::GlobalBatches over [0, total), so each
// epoch is one (seed, epoch) shuffle of all pairs cut into global batches of batch_size
// pairs, and a rank trains on the pairs of each batch it holds (its part's indices; in
// replicated mode an even share). Every rank therefore runs the same number of steps.
//
// Negatives. Each positive pair (u, v) of index i gets k corrupted pairs (u, w_1..w_k): the
// destinations are drawn by Rng(stream_key(seed, epoch, i, kNegativeStream)), k draws in
// order, uniformly over [0, N) or proportionally to the nodes' in-degree; so they depend on
// the pair and the epoch alone, not on the rank that trains it. A negative may by chance be
// an edge (as DGL's and PyG's uniform negatives).
//
// Pure functions and immutable objects after construction: thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/partition/format.h"
#include "partita/sample/edge_exclusion.h"

namespace partita::loader {

// The training pairs a rank holds, with their global indices.
struct LinkEdges {
  int64_t total = 0;           // training pairs over all parts
  int64_t first = 0;           // global index of the first pair held here
  std::vector<int64_t> pairs;  // [count, 2] row-major (src, dst), global new ids

  int64_t count() const { return static_cast<int64_t>(pairs.size() / 2); }
};

// Reads part `part`'s training pairs of the partition `dir` (meta: its partita.json).
// Throws UsageError when the partition has no edge split (it names the flag that makes
// one), FormatError naming the file when it is not int64 [count, 2] with the count
// partita.json gives or holds an id outside [0, num_nodes).
LinkEdges read_link_edges(const std::string& dir, const partition::PartitionMeta& meta, int part);

// Every part's training pairs (a 1-part directory shared by several ranks, or tests).
LinkEdges read_all_link_edges(const std::string& dir, const partition::PartitionMeta& meta);

// A held-out pair file (edges/valid_pos.npy, ...): int64 [k, 2], ids in [0, num_nodes);
// returned row-major. FormatError naming the file otherwise.
std::vector<int64_t> read_pair_file(const std::string& path, int64_t num_nodes);

enum class NegativeKind { kUniform, kDegree };

class NegativeSampler {
 public:
  // Destinations uniform over [0, num_nodes); num_nodes >= 1.
  static NegativeSampler uniform(int64_t num_nodes);
  // Destinations drawn with probability degree / sum of degrees (`degrees`: the in-degree
  // of every global id). Throws Error when every degree is 0 or one is negative.
  static NegativeSampler by_degree(const std::vector<int64_t>& degrees);

  // The k negative destinations of training pair `index` in epoch `epoch` (see above),
  // written to out[0..k).
  void draw(uint64_t seed, uint64_t epoch, int64_t index, int64_t k, int64_t* out) const;

 private:
  int64_t num_nodes_ = 0;
  std::vector<int64_t> cumulative_;  // degree mode: cumulative_[j] = degrees[0..j] summed
};

// One link batch: the blocks are sampled around `seeds`, and the model's rows of the
// seeds are scored pairwise.
struct LinkStep {
  // The distinct endpoints, in order of first appearance over the positives (src, dst),
  // then the negatives' destinations.
  std::vector<int64_t> seeds;
  std::vector<sample::SeedPair> positives;  // one per pair, positions into seeds
  std::vector<sample::SeedPair> negatives;  // k per positive: positive i's at [i k, (i+1) k)
};

// The step of `pairs` ([b, 2] row-major, global ids) whose positive i has the negative
// destinations negative_dsts[i k .. (i+1) k) (k >= 0; size b k).
LinkStep make_link_step(ArrayView<const int64_t> pairs, ArrayView<const int64_t> negative_dsts,
                        int64_t k);

}  // namespace partita::loader
