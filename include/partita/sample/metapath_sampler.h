#pragma once
// Metapath neighbour sampling (model han, issue 28): a NeighborSampler that decorates
// another one (LocalSampler, DistSampler) and answers, for each frontier node, its sampled
// METAPATH neighbours: the nodes reached by walking each metapath (metapath_spec.h) from it
// along in-edges. out->relations holds the metapath index (0..M-1) of each neighbour, and a
// node's neighbours are grouped by metapath in increasing index, so BlockBuilder (and the
// loader, typed input fetching and staging) build blocks whose `etypes` are metapath ids and
// whose src nodes all have the target type. Nothing is precomputed: every step is one or
// more calls to the inner sampler, which may be distributed.
//
// Fanouts: the request's fanouts are per METAPATH: relation_fanouts[m] (or `fanout` for
// every metapath when that list is empty) is N_m, the walks of metapath m from each
// frontier node. N = 0 leaves the metapath out; N = -1 takes every neighbour at every step,
// i.e. the exact set of metapath neighbours (beware of hubs: the walks multiply).
// With N >= 1, the walks of one frontier node form a tree with a budget: the node carries
// budget N; a node carrying budget c at step s takes min(c, d) distinct in-neighbours of the
// step's relation (the inner sampler's draw with fanout c, d its in-degree of that relation)
// and splits c among them in their sampled order: the i-th of k gets floor(c/k), plus one
// for i < c mod k. So a node reaches at most N endpoints per metapath, and all N when the
// degrees allow (paper-subject-paper: the paper's one subject carries all N, and its N
// papers are a uniform N-subset of the subject's papers).
// Endpoints are deduplicated per frontier node and metapath, in order of first appearance
// in the walk tree (depth-first: the order of the inner samples), and may include the
// frontier node itself (paper-author-paper comes back to the paper).
//
// Temporal (request.times given, one per frontier node; the inner sampler samples temporally,
// e.g. LocalSamplerOptions::temporal): every step of every walk from frontier node i is
// sampled at i's time T[i], whatever node the walk has reached: the inner call gets each
// walk head with T[i] (HopRequest::times), so a step may follow only in-edges with
// time <= T[i] (< with strict), exactly as every hop of the typed temporal sampler uses the
// time of the seed it descends from (neighbor_kernel.h). The fanout is the same budget, over
// the ALLOWED in-edges: a head carrying budget c takes min(c, m) of its m allowed
// in-neighbours of the step's relation, drawn by the inner strategy (uniform: the kernel's
// draw among the allowed entries with the run's own stream; recent: the c latest allowed,
// ties by stored position), and splits c among them as above. So with times every edge on
// every walk is no later than its frontier node's time, N = -1 gives exactly the endpoints
// of the walks over allowed edges, and a node with fewer allowed walks reaches fewer
// endpoints. Heads are grouped per inner call by (node, time): one node reached from
// frontier nodes of two times is sampled once at each. Over a DistSampler a head's time
// travels with it to the owner of the node it has reached (dist_sampler.h), so temporal walks
// too are identical for 1 and P ranks. Without times, walks are as above.
//
// Keys: the inner call of metapath m, step s and budget c uses
//     hop key stream_key(request.hop_key, m, s, c)   (c = -1 encoded as UINT64_MAX)
// with relation_fanouts that keep only the step's relation (fanout c); the time keys no
// stream. Hence every sampled neighbour of a node is a function of (node, request.hop_key,
// fanouts, and with times its time) alone: not of the rest of the frontier, the rank count,
// the thread count, or which sampler answers, and a batch is identical for 1 and P ranks, 1
// and N threads, and bit-identical on a rerun.
//
// Thread-safety: sample_hop keeps no state between calls; it may be called concurrently when
// the inner sampler may (it calls the inner sampler from several threads at once). It blocks
// while the inner sampler does. Each step of a metapath makes one inner call per distinct
// budget among its walks (N, then values <= N: at most about 2 sqrt(N) calls); the calls of
// a step, and the metapaths, run concurrently on threads of their own, so a hop costs one
// round of inner calls per step of its longest metapath.
#include <cstdint>
#include <vector>

#include "partita/sample/metapath_spec.h"
#include "partita/sample/neighbor_sampler.h"

namespace partita::sample {

class MetapathSampler final : public NeighborSampler {
 public:
  // Borrows `inner`, which must outlive this sampler. `num_relations` is the graph's
  // relation count (the size of the inner relation fanouts). Throws partita::Error if there
  // is no metapath, a metapath has no step, or a step's relation is out of range.
  MetapathSampler(NeighborSampler& inner, std::vector<Metapath> metapaths, int num_relations);

  // Throws partita::Error if request.relation_fanouts is neither empty nor one per
  // metapath, a fanout is < -1, or request.times is neither empty nor one per frontier
  // node; and whatever the inner sampler throws (e.g. times to a sampler that is not
  // temporal, or none to one that is).
  void sample_hop(const HopRequest& request, NeighborSample* out) override;

  const std::vector<Metapath>& metapaths() const { return metapaths_; }

 private:
  NeighborSampler& inner_;
  std::vector<Metapath> metapaths_;
  int num_relations_;
};

// The hop key of the inner call of metapath `metapath`, step `step`, budget `budget` (-1 for
// every neighbour) of a hop keyed `hop_key`: the derivation above, for tests to re-derive.
uint64_t metapath_step_key(uint64_t hop_key, int metapath, int step, int64_t budget);

}  // namespace partita::sample
