#pragma once
// How many in-neighbors each hop of sampling takes: the one fanout type of every layer that
// samples (sample::BlockOptions, loader::BatchPipelineOptions, loader::hottest_remote_nodes,
// train::TrainOptions). fanout_spec.h builds one from the text `25,cites=10:20`.
//
// Contract: hops[h] is hop h's fanout (hop 0 around the seeds; -1: all neighbors). On a typed
// graph, relations[h][r] is hop h's fanout of relation id r; `relations` empty, or an empty
// relations[h], means hops[h] for every relation. When `relations` is not empty it has one
// entry per hop. A value object: no invariants are checked here (BlockBuilder checks them).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace partita::sample {

struct Fanouts {
  std::vector<int64_t> hops;                    // per hop; -1: all neighbors
  std::vector<std::vector<int64_t>> relations;  // per hop, per relation id (typed graphs)

  Fanouts() = default;
  // The same fanout for every relation of a hop: Fanouts{15, 10, 5}.
  Fanouts(std::vector<int64_t> per_hop) : hops(std::move(per_hop)) {}  // NOLINT: implicit
  Fanouts(std::initializer_list<int64_t> per_hop) : hops(per_hop) {}
  Fanouts(std::vector<int64_t> per_hop, std::vector<std::vector<int64_t>> per_relation)
      : hops(std::move(per_hop)), relations(std::move(per_relation)) {}

  size_t num_hops() const { return hops.size(); }
  // True when some hop gives its relations their own fanouts.
  bool per_relation() const { return !relations.empty(); }
  // Hop h's fanouts per relation id, or an empty list when every relation takes hops[h].
  const std::vector<int64_t>& relations_of(size_t hop) const {
    static const std::vector<int64_t> kNone;
    return hop < relations.size() ? relations[hop] : kNone;
  }

  friend bool operator==(const Fanouts& a, const Fanouts& b) {
    return a.hops == b.hops && a.relations == b.relations;
  }
  friend bool operator!=(const Fanouts& a, const Fanouts& b) { return !(a == b); }
};

}  // namespace partita::sample
