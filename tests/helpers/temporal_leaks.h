#pragma once
// The brute-force leakage walk of the temporal MPI checks (tests/store/temporal_mpi_check.cc:
// node seeds, homogeneous and typed; tests/train/link_temporal_mpi_check.cc: link seeds):
// every edge of every block of a sampled batch, with the time of the seed it descends from,
// judged against the dataset's own edge times. One walker, a per-edge callback for what each
// check counts or refuses. Header-only; links nothing but what the checks link already.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "partita/core/error.h"
#include "partita/data/edge_arrays.h"
#include "partita/graph/csr.h"
#include "partita/sample/block_builder.h"

namespace partita::testing {

// The values of the dataset array `name` (data/edge_arrays.h) as T; throws if there is none.
template <class T>
std::vector<T> array_values(const std::vector<data::ExtraArray>& arrays, const char* name) {
  const data::ExtraArray* a = data::find_array(arrays, name);
  if (a == nullptr) throw Error(std::string("the dataset has no ") + name);
  std::vector<T> out(a->values.size() / sizeof(T));
  std::memcpy(out.data(), a->values.data(), a->values.size());
  return out;
}

// Whether an edge at `edge_time` is later than a seed at `t` allows (strict: not earlier).
inline bool later_than(int64_t edge_time, int64_t t, bool strict) {
  return strict ? edge_time >= t : edge_time > t;
}

// A dataset's in-edges in original ids with the time of every entry (reverse entries
// included) and, typed, its relation. Borrowed: the arrays must outlive it.
struct TimedEdges {
  const graph::Csr& in_edges;
  const std::vector<int64_t>& time;
  const std::vector<int32_t>& relations;  // empty: untyped (every edge of relation 0)

  // The earliest time of an edge src -> dst of `relation`, or -1 when there is none. A
  // linear scan of dst's row: a (relation, source) pair may repeat at several times.
  int64_t earliest(int64_t dst, int64_t src, int32_t relation) const {
    int64_t best = -1;
    for (int64_t k = in_edges.indptr[dst]; k < in_edges.indptr[dst + 1]; ++k) {
      if (in_edges.indices[k] != src) continue;
      if (!relations.empty() && relations[static_cast<size_t>(k)] != relation) continue;
      if (best < 0 || time[static_cast<size_t>(k)] < best) best = time[static_cast<size_t>(k)];
    }
    return best;
  }
  // Whether dst has an in-edge later than a seed at t allows: one temporal sampling keeps out.
  bool has_later(int64_t dst, int64_t t, bool strict) const {
    for (int64_t k = in_edges.indptr[dst]; k < in_edges.indptr[dst + 1]; ++k)
      if (later_than(time[static_cast<size_t>(k)], t, strict)) return true;
    return false;
  }
};

// One block edge src -> dst as the walk meets it: original ids, its relation (0 untyped),
// and t, the time of the seed its dst entry descends from.
struct SampledEdge {
  size_t hop;
  int64_t dst, src;
  int32_t relation;
  int64_t time;
};

// Walks every edge of every block of `batch` (partition ids, mapped through node_map) in
// block order. `seed_times` holds one time per seed (block 0's dst order); a src entry gets
// the time of the dst entry it was sampled for, which hop l + 1's dst entries carry on. Blocks
// with src_times (temporal sampling) must carry exactly those times, else the walk fails;
// `need_times`: blocks without them fail too. `on_edge(const SampledEdge&)` returns a
// failure ("" to go on). Returns the first failure, or "".
template <class OnEdge>
std::string walk_sampled_edges(const sample::SampledBatch& batch,
                               const std::vector<int64_t>& seed_times,
                               const std::vector<int64_t>& node_map, bool need_times,
                               OnEdge on_edge) {
  std::vector<int64_t> dst_times = seed_times;
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const sample::Block& b = batch.blocks[l];
    const std::string at = "block " + std::to_string(l) + ": ";
    const bool timed = !b.src_times.empty();
    if (timed && b.src_times.size() != static_cast<size_t>(b.num_src))
      return at + "src times not one per src entry";
    if (need_times && !timed) return at + "no src times";
    if (dst_times.size() < static_cast<size_t>(b.num_dst)) return at + "fewer times than dst";
    std::vector<int64_t> src_times(static_cast<size_t>(b.num_src), -1);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t t = dst_times[static_cast<size_t>(i)];
      src_times[static_cast<size_t>(i)] = t;
      if (timed && b.src_times[static_cast<size_t>(i)] != t)
        return at + "dst entry " + std::to_string(i) + " has time " +
               std::to_string(b.src_times[static_cast<size_t>(i)]) + ", its seed's is " +
               std::to_string(t);
      const int64_t d = node_map[static_cast<size_t>(b.src_nodes[static_cast<size_t>(i)])];
      for (int64_t k = b.indptr[static_cast<size_t>(i)]; k < b.indptr[static_cast<size_t>(i) + 1];
           ++k) {
        const int64_t j = b.indices[static_cast<size_t>(k)];
        if (j >= b.num_dst) src_times[static_cast<size_t>(j)] = t;
        if (timed && b.src_times[static_cast<size_t>(j)] != t)
          return at + "src entry " + std::to_string(j) + " has time " +
                 std::to_string(b.src_times[static_cast<size_t>(j)]) + ", its dst entry's is " +
                 std::to_string(t);
        const SampledEdge edge{l, d,
                               node_map[static_cast<size_t>(b.src_nodes[static_cast<size_t>(j)])],
                               b.etypes.empty() ? 0 : b.etypes[static_cast<size_t>(k)], t};
        std::string failure = on_edge(edge);
        if (!failure.empty()) return at + failure;
      }
    }
    dst_times = std::move(src_times);
  }
  return "";
}

}  // namespace partita::testing
