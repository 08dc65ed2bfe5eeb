// sample_neighbors on typed views (neighbor_kernel.h): every relation's run of a row is
// sampled on its own, with its own fanout and stream. Kept apart from the untyped path so
// that path's loops stay as they are.
//
// A node's output bound depends on how its row splits into runs, which is only known once
// the row has been walked; so rather than a counting pass, each chunk writes into its own
// growing buffer (chunk 0 straight into the output) and the buffers are joined at the end.
#include <algorithm>
#include <cstring>
#include <limits>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/sample/sample_key.h"
#include "row_algorithms.h"

namespace partita::sample::detail {
namespace {

// A run's end is looked for by a linear scan over this many entries, then by binary search
// (hub rows hold long runs).
constexpr int64_t kLinearRunScan = 16;

// The fanout of each relation, and which relation ids are valid.
struct RelationFanouts {
  const int64_t* per_relation;  // null: `all` for every relation
  uint32_t limit;               // relation ids must be < limit (negative ones wrap above)
  int64_t all;

  int64_t of(int32_t relation) const { return per_relation ? per_relation[relation] : all; }
};

// One chunk's output: ids and relations, grown on demand. `size` entries are in use.
struct ChunkOutput {
  std::vector<int64_t>* neighbors;
  std::vector<int32_t>* relations;
  int64_t size = 0;

  // Room for `more` entries after `size`; returns where they start.
  int64_t* reserve(int64_t more) {
    const size_t need = static_cast<size_t>(size + more);
    if (need > neighbors->size()) {
      const size_t grown = std::max<size_t>({need, 2 * neighbors->size(), 256});
      neighbors->resize(grown);
      relations->resize(grown);
    }
    return neighbors->data() + size;
  }
  void finish() {
    neighbors->resize(static_cast<size_t>(size));
    relations->resize(static_cast<size_t>(size));
  }
};

// One past the last entry of the run of relation rel[s], within [s, e).
inline int64_t run_end(const int32_t* rel, int64_t s, int64_t e) {
  const int32_t r = rel[s];
  if (rel[e - 1] == r) return e;  // the row's last run (its only one, on many graphs)
  const int64_t scan_end = std::min(e, s + kLinearRunScan);
  int64_t t = s + 1;
  while (t < scan_end && rel[t] == r) ++t;
  if (t < scan_end || t == e) return t;
  return std::upper_bound(rel + t, rel + e, r) - rel;
}

// The weighted algorithms of neighbor_kernel.h on one run of d entries with fanout k.
// Writes ids to out (room for run_bound) and returns how many.
template <Replacement R>
int64_t sample_weighted_run(int64_t k, const int64_t* row, const float* w, int64_t d, uint64_t key,
                            int64_t* out, Scratch& scratch) {
  if (k < 0) return All{/*weighted=*/true}(row, w, d, key, out, scratch);
  if (k == 0) return 0;  // skipping the draws changes nothing: the run's stream is its own
  if constexpr (R == Replacement::kWith) {
    return WeightedWith{k}(row, w, d, key, out, scratch);
  } else {
    return WeightedWithout{k}(row, w, d, key, out, scratch);
  }
}

// Entries a run's sample may hold for a run of d entries with fanout k.
template <Replacement R>
inline int64_t run_bound(int64_t k, int64_t d) {
  if (k < 0) return d;
  return R == Replacement::kWith ? k : std::min(k, d);
}

[[noreturn]] void throw_bad_relation(int64_t node, int32_t relation, const RelationFanouts& f) {
  if (relation < 0) {
    throw Error(
        fmt::format("sample: node {} has an in-edge of relation {} (negative)", node, relation));
  }
  throw Error(fmt::format(
      "sample: node {} has an in-edge of relation {}, but fanouts are given for {} relations", node,
      relation, f.limit));
}

// The weighted modes, a node at a time (as the untyped sample_chunk).
template <Replacement R>
void sample_typed_chunk_weighted(const CscView& view, const int64_t* nodes, int64_t n,
                                 uint64_t hop_key, const RelationFanouts& fanouts, int64_t* counts,
                                 ChunkOutput& out) {
  const int64_t* indptr = view.indptr.data();
  const int64_t* indices = view.indices.data();
  const int32_t* relations = view.relations.data();
  const float* weights = view.weights.data();
  const int64_t* stream_ids = view.stream_ids.empty() ? nullptr : view.stream_ids.data();
  const int64_t first = view.first_row;
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  Scratch scratch;
  for (int64_t i = 0; i < n; ++i) {
    // As sample_chunk: offsets 2P nodes ahead, row starts (ids and relations) P ahead.
    if (i + 2 * kPrefetchDistance < n) {
      const uint64_t r = static_cast<uint64_t>(nodes[i + 2 * kPrefetchDistance] - first);
      if (r < rows) {
        __builtin_prefetch(indptr + r);
        if (stream_ids) __builtin_prefetch(stream_ids + r);
      }
    }
    if (i + kPrefetchDistance < n) {
      const uint64_t r = static_cast<uint64_t>(nodes[i + kPrefetchDistance] - first);
      if (r < rows) {
        __builtin_prefetch(indices + indptr[r]);
        __builtin_prefetch(relations + indptr[r]);
      }
    }
    const int64_t v = nodes[i];
    const uint64_t r = static_cast<uint64_t>(v - first);
    if (r >= rows) throw_outside(view, v);
    const int64_t e = indptr[r + 1];
    const uint64_t key = node_key(hop_key, stream_ids ? stream_ids[r] : v);
    int64_t count = 0;
    for (int64_t s = indptr[r]; s < e;) {
      const int32_t relation = relations[s];
      if (static_cast<uint32_t>(relation) >= fanouts.limit)
        throw_bad_relation(v, relation, fanouts);
      const int64_t t = run_end(relations, s, e);
      const int64_t k = fanouts.of(relation);
      int64_t* o = out.reserve(run_bound<R>(k, t - s));
      const int64_t c = sample_weighted_run<R>(k, indices + s, weights + s, t - s,
                                               relation_key(key, relation), o, scratch);
      std::fill_n(out.relations->data() + out.size, c, relation);
      out.size += c;
      count += c;
      s = t;
    }
    counts[i] = count;
  }
}

// The uniform modes, software-pipelined as the untyped sample_chunk_pipelined: node i's
// runs are found and their positions drawn (as offsets from the row start; the lines they
// fall on prefetched) while node i - kLag's positions are turned into ids.
template <Replacement R>
void sample_typed_chunk_pipelined(const CscView& view, const int64_t* nodes, int64_t n,
                                  uint64_t hop_key, const RelationFanouts& fanouts, int64_t* counts,
                                  ChunkOutput& out) {
  constexpr int64_t kLag = 16;           // power of two
  constexpr int64_t kRelationLines = 4;  // cache lines of a row's relations prefetched
  struct Pending {
    const int64_t* row;
    int64_t offset;
    int64_t count;
  };
  Pending ring[kLag];
  const int64_t* indptr = view.indptr.data();
  const int64_t* indices = view.indices.data();
  const int32_t* relations = view.relations.data();
  const int64_t* stream_ids = view.stream_ids.empty() ? nullptr : view.stream_ids.data();
  const int64_t first = view.first_row;
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  Scratch scratch;
  for (int64_t i = 0; i < n + kLag; ++i) {
    if (i >= kLag) {  // first frees node i's ring slot
      const Pending& p = ring[(i - kLag) & (kLag - 1)];
      int64_t* o = out.neighbors->data() + p.offset;
      for (int64_t j = 0; j < p.count; ++j) o[j] = p.row[o[j]];
    }
    if (i >= n) continue;
    if (i + 2 * kPrefetchDistance < n) {
      const uint64_t r = static_cast<uint64_t>(nodes[i + 2 * kPrefetchDistance] - first);
      if (r < rows) {
        __builtin_prefetch(indptr + r);
        if (stream_ids) __builtin_prefetch(stream_ids + r);
      }
    }
    if (i + kPrefetchDistance < n) {  // the relations decide the runs: needed first
      const uint64_t r = static_cast<uint64_t>(nodes[i + kPrefetchDistance] - first);
      if (r < rows) {
        const int64_t b = indptr[r], d = std::min<int64_t>(indptr[r + 1] - b, kRelationLines * 16);
        for (int64_t p = 0; p < d; p += 16) __builtin_prefetch(relations + b + p);
      }
    }
    const int64_t v = nodes[i];
    const uint64_t r = static_cast<uint64_t>(v - first);
    if (r >= rows) throw_outside(view, v);
    const int64_t b = indptr[r], e = indptr[r + 1];
    const int64_t* row = indices + b;
    const uint64_t key = node_key(hop_key, stream_ids ? stream_ids[r] : v);
    const int64_t start = out.size;
    for (int64_t s = b; s < e;) {
      const int32_t relation = relations[s];
      if (static_cast<uint32_t>(relation) >= fanouts.limit)
        throw_bad_relation(v, relation, fanouts);
      const int64_t t = run_end(relations, s, e);
      const int64_t k = fanouts.of(relation);
      const int64_t d = t - s;
      int64_t* pos = out.reserve(run_bound<R>(k, d));
      int64_t c = 0;  // fanout 0: no draws (the run's stream is its own)
      if (k < 0) {
        c = kWholeRow;
      } else if (k > 0) {
        const uint64_t run_key = relation_key(key, relation);
        if constexpr (R == Replacement::kWith) {
          c = UniformWith{k}(d, run_key, pos, scratch);
        } else {
          c = UniformWithout{k}(d, run_key, pos, scratch);
        }
      }
      if (c == kWholeRow) {
        c = d;
        for (int64_t j = 0; j < d; ++j) pos[j] = s - b + j;
        for (int64_t j = 0; j < std::min<int64_t>(d, 128); j += 8)
          __builtin_prefetch(row + s - b + j);
      } else {
        for (int64_t j = 0; j < c; ++j) {
          pos[j] += s - b;
          __builtin_prefetch(row + pos[j]);
        }
      }
      std::fill_n(out.relations->data() + out.size, c, relation);
      out.size += c;
      s = t;
    }
    ring[i & (kLag - 1)] = {row, start, out.size - start};
    counts[i] = out.size - start;
  }
}

}  // namespace

void sample_typed_neighbors(const CscView& view, ArrayView<const int64_t> nodes, uint64_t hop_key,
                            const KernelOptions& options, NeighborSample* out) {
  RelationFanouts fanouts{nullptr, static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) + 1,
                          options.fanout};
  if (!options.relation_fanouts.empty()) {
    for (int64_t r = 0; r < options.relation_fanouts.size(); ++r) {
      PARTITA_CHECK(options.relation_fanouts[r] >= -1, Error,
                    "sample: fanout {} of relation {} is invalid (use k >= 0, or -1 for all)",
                    options.relation_fanouts[r], r);
    }
    PARTITA_CHECK(options.relation_fanouts.size() <= std::numeric_limits<int32_t>::max(), Error,
                  "sample: {} relation fanouts exceed the relation id range",
                  options.relation_fanouts.size());
    fanouts.per_relation = options.relation_fanouts.data();
    fanouts.limit = static_cast<uint32_t>(options.relation_fanouts.size());
  }
  const int64_t n = nodes.size();
  // One thread: one chunk, written straight into `out`. Results do not depend on chunks.
  const int64_t chunk =
      options.threads <= 1 ? std::max<int64_t>(n, 1) : std::max<int64_t>(options.chunk, 1);
  const int64_t num_chunks = (n + chunk - 1) / chunk;
  out->counts.resize(static_cast<size_t>(n));
  out->neighbors.clear();
  out->relations.clear();
  // Chunk 0 fills `out`'s own vectors (their capacity is reused); the others their own.
  std::vector<std::vector<int64_t>> more_neighbors(
      static_cast<size_t>(std::max<int64_t>(num_chunks - 1, 0)));
  std::vector<std::vector<int32_t>> more_relations(more_neighbors.size());
  std::vector<ChunkOutput> outputs(static_cast<size_t>(num_chunks));
  for (int64_t c = 0; c < num_chunks; ++c) {
    outputs[c].neighbors = c == 0 ? &out->neighbors : &more_neighbors[c - 1];
    outputs[c].relations = c == 0 ? &out->relations : &more_relations[c - 1];
  }
  const bool with = options.replacement == Replacement::kWith;
  auto run = [&](auto sample_chunk) {
    parallel_chunks(0, n, chunk, options.threads, [&](int64_t b, int64_t e) {
      ChunkOutput& o = outputs[b / chunk];
      sample_chunk(view, nodes.data() + b, e - b, hop_key, fanouts, out->counts.data() + b, o);
      o.finish();
    });
  };
  if (options.weighting == Weighting::kUniform) {
    if (with) {
      run(sample_typed_chunk_pipelined<Replacement::kWith>);
    } else {
      run(sample_typed_chunk_pipelined<Replacement::kWithout>);
    }
  } else if (with) {
    run(sample_typed_chunk_weighted<Replacement::kWith>);
  } else {
    run(sample_typed_chunk_weighted<Replacement::kWithout>);
  }
  for (size_t c = 0; c < more_neighbors.size(); ++c) {
    out->neighbors.insert(out->neighbors.end(), more_neighbors[c].begin(), more_neighbors[c].end());
    out->relations.insert(out->relations.end(), more_relations[c].begin(), more_relations[c].end());
  }
}

}  // namespace partita::sample::detail
