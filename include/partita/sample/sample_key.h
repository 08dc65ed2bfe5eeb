#pragma once
// Random streams of sampling. Node v sampled at hop h of batch b in epoch e under seed s
// draws from its own counter-based stream
//     Rng(node_key(hop_key({s, e, b}, h), v))
// so what it gets depends on nothing else: not on the thread count, not on the other
// nodes of the frontier, not on which rank owns v. A distributed sampler ships the single
// 64-bit hop key with a request; the owner derives every node's stream from it. (A view
// may key streams by another per-row id than v, e.g. the id before renumbering:
// CscView::stream_ids.)
//
// On a typed graph each relation r of v's row draws from a stream of its own,
//     Rng(relation_key(node_key(hop_key({s, e, b}, h), v), r))
// so the sample of one relation does not depend on the fanouts or edges of the others.
#include <cstdint>

#include "partita/core/random.h"

namespace partita::sample {

struct SampleKey {
  uint64_t seed = 0;   // --seed
  uint64_t epoch = 0;  // epoch number
  uint64_t batch = 0;  // batch number within the epoch (global, the same on every rank)
};

// Key of hop `hop` (0-based: hop 0 samples around the seeds) of a batch.
inline uint64_t hop_key(const SampleKey& key, int hop) {
  return stream_key(key.seed, key.epoch, key.batch, static_cast<uint64_t>(hop));
}

// Stream key of one node at one hop.
inline uint64_t node_key(uint64_t hop_key, int64_t node) {
  return stream_key(hop_key, static_cast<uint64_t>(node));
}

// Stream key of one relation's in-edges of one node at one hop (typed graphs).
inline uint64_t relation_key(uint64_t node_key, int32_t relation) {
  return stream_key(node_key, static_cast<uint64_t>(relation));
}

}  // namespace partita::sample
