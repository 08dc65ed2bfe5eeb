// sample_neighbors (neighbor_kernel.h): one set of loops for untyped and typed views.
//
// The loops walk a chunk of nodes and sample each row as runs (row_runs.h: OneRun for an
// untyped view, RelationRuns for a typed one), with a per-run sampler for the mode:
// EveryEntry, WeightedRuns<R> (ids, a node at a time) or UniformRuns<R> (positions,
// software-pipelined). Where a chunk writes is its output's business:
//   BoundedLayout  untyped: every node's bound follows from the fanout (and maybe its
//                  degree), so chunk c writes straight into the result from an offset
//                  computed beforehand; the gaps between chunks close at the end.
//   GrowingLayout  typed: a node's bound depends on how its row splits into runs, known
//                  only once the row is walked; so each chunk writes into a buffer that
//                  grows on demand (chunk 0 into the result itself), joined at the end.
#include "partita/sample/neighbor_kernel.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/sample/sample_key.h"
#include "row_algorithms.h"
#include "row_runs.h"
#include "temporal_kernel.h"

namespace partita::sample {
namespace {
using namespace detail;

// Up to this fanout the output is sized nodes * fanout without reading degrees first.
constexpr int64_t kDirectBoundFanout = 64;

// Entries a run's sample may hold, for a run of d entries with fanout k.
template <Replacement R>
inline int64_t run_bound(int64_t k, int64_t d) {
  if (k < 0) return d;
  return R == Replacement::kWith ? k : std::min(k, d);
}

// ---- Per-run samplers ----------------------------------------------------------------
// Direct ones write ids: (k, row, weights, d, key, out, scratch) -> count. Pipelined ones
// write positions in the run: (k, d, key, weights, pos, scratch) -> count, or kWholeRow;
// kWeighted ones read the run's weights to draw them. A fanout of 0 draws nothing (the
// run's stream is its own, so skipping its draws changes nothing).

// Every entry of each run (weighted: of positive weight), whatever its fanout.
struct EveryEntry {
  static constexpr bool kPipelined = false;
  bool weighted;

  int64_t bound(int64_t, int64_t d) const { return d; }
  int64_t operator()(int64_t, const int64_t* row, const float* w, int64_t d, uint64_t key,
                     int64_t* out, Scratch& scratch) const {
    return All{weighted}(row, w, d, key, out, scratch);
  }
};

template <Replacement R>
struct WeightedRuns {
  static constexpr bool kPipelined = true;
  static constexpr bool kWeighted = true;

  int64_t bound(int64_t k, int64_t d) const { return run_bound<R>(k, d); }
  int64_t operator()(int64_t k, int64_t d, uint64_t key, const float* w, int64_t* pos,
                     Scratch& scratch, const WeightSummary* summary) const {
    if (k < 0) return positive_positions(w, d, pos);
    if (k == 0) return 0;
    if constexpr (R == Replacement::kWith) {
      return WeightedWith{k}(d, key, w, pos, scratch, summary);
    } else {
      return WeightedWithout{k}(d, key, w, pos, scratch, summary);
    }
  }
};

template <Replacement R>
struct UniformRuns {
  static constexpr bool kPipelined = true;
  static constexpr bool kWeighted = false;

  int64_t bound(int64_t k, int64_t d) const { return run_bound<R>(k, d); }
  int64_t operator()(int64_t k, int64_t d, uint64_t key, const float*, int64_t* pos,
                     Scratch& scratch, const WeightSummary*) const {
    if (k < 0) return kWholeRow;
    if (k == 0) return 0;
    if constexpr (R == Replacement::kWith) {
      return UniformWith{k}(d, key, pos, scratch);
    } else {
      return UniformWithout{k}(d, key, pos, scratch);
    }
  }
};

// ---- Chunk outputs -------------------------------------------------------------------
// reserve(more): room for `more` entries after the `size` in use; returns where they
// start. add(c, relation): c entries of that relation were written there. A loop holds its
// output by value, so that `size` lives in a register.

struct BoundedOutput {
  int64_t* data;  // room for the chunk's bound
  int64_t size = 0;

  int64_t* ids() const { return data; }
  int64_t* reserve(int64_t) const { return data + size; }
  void add(int64_t c, int32_t) { size += c; }
};

struct GrowingOutput {
  std::vector<int64_t>* neighbors;
  std::vector<int32_t>* relations;
  int64_t size = 0;

  int64_t* ids() const { return neighbors->data(); }
  int64_t* reserve(int64_t more) {
    const size_t need = static_cast<size_t>(size + more);
    if (need > neighbors->size()) {
      const size_t grown = std::max<size_t>({need, 2 * neighbors->size(), 256});
      neighbors->resize(grown);
      relations->resize(grown);
    }
    return neighbors->data() + size;
  }
  void add(int64_t c, int32_t relation) {
    std::fill_n(relations->data() + size, c, relation);
    size += c;
  }
};

// ---- The loops -----------------------------------------------------------------------

template <class Runs>
struct ChunkContext {
  const CscView& view;
  const Runs& runs;
  uint64_t hop_key;
};

// Samples nodes[0..n) a node at a time into out (compact), counts into counts.
template <class Runs, class PerRun, class Output>
Output sample_chunk(const ChunkContext<Runs>& ctx, const PerRun& per_run, const int64_t* nodes,
                    int64_t n, int64_t* counts, Output out) {
  const CscView& view = ctx.view;
  const Runs& runs = ctx.runs;
  const int64_t* indptr = view.indptr.data();
  const int64_t* indices = view.indices.data();
  const float* weights = view.weights.data();
  const int64_t* stream_ids = view.stream_ids.empty() ? nullptr : view.stream_ids.data();
  const int64_t first = view.first_row;
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  Scratch scratch;
  for (int64_t i = 0; i < n; ++i) {
    // Rows are scattered over a big array: ask for node i + 2P's offsets and node i + P's
    // row start early so that several cache misses are in flight at once.
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
        if (weights) __builtin_prefetch(weights + indptr[r]);
        runs.prefetch_row(indptr[r]);
      }
    }
    const int64_t v = nodes[i];
    const uint64_t r = static_cast<uint64_t>(v - first);
    if (r >= rows) throw_outside(view, v);
    const int64_t start = out.size;
    runs.for_each_run(
        v, indptr[r], indptr[r + 1], node_key(ctx.hop_key, stream_ids ? stream_ids[r] : v),
        [&](int64_t s, int64_t t, int32_t relation, int64_t k, uint64_t key) {
          int64_t* o = out.reserve(per_run.bound(k, t - s));
          out.add(per_run(k, indices + s, weights ? weights + s : nullptr, t - s, key, o, scratch),
                  relation);
        });
    counts[i] = out.size - start;
  }
  return out;
}

// sample_chunk for the sampling modes, software-pipelined: node i's positions are drawn
// (as offsets from its row start; the lines they fall on prefetched) while node i - kLag's
// are turned into ids, so the cache misses of about kLag nodes (their offsets, then k
// scattered row entries each) are in flight together. Weighted modes read a run's weights
// to draw: the first kWeightLines lines of a node's weights are asked for 2P nodes ahead
// (and its offsets 3P ahead).
template <class Runs, class PerRun, class Output>
Output sample_chunk_pipelined(const ChunkContext<Runs>& ctx, const PerRun& per_run,
                              const int64_t* nodes, int64_t n, int64_t* counts, Output out) {
  constexpr int64_t kOffsetsAhead = PerRun::kWeighted
                                        ? std::max(Runs::kOffsetsAhead, 3 * kPrefetchDistance)
                                        : Runs::kOffsetsAhead;
  constexpr int64_t kWeightsAhead = PerRun::kWeighted ? 2 * kPrefetchDistance : kPrefetchDistance;
  constexpr int64_t kWeightLines = 8;
  constexpr int64_t kLag = 16;  // power of two
  struct Pending {
    const int64_t* row;
    int64_t offset;
    int64_t count;
    bool whole;  // the row's only run, taken whole: copied, no positions
  };
  Pending ring[kLag];
  const CscView& view = ctx.view;
  const Runs& runs = ctx.runs;
  const int64_t* indptr = view.indptr.data();
  const int64_t* indices = view.indices.data();
  const float* weights = view.weights.data();
  const int64_t* stream_ids = view.stream_ids.empty() ? nullptr : view.stream_ids.data();
  const WeightSummary* summaries =
      PerRun::kWeighted && !view.weight_summaries.empty() ? view.weight_summaries.data() : nullptr;
  const int64_t first = view.first_row;
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  Scratch scratch;
  for (int64_t i = 0; i < n + kLag; ++i) {
    if (i >= kLag) {  // first frees node i's ring slot
      const Pending& p = ring[(i - kLag) & (kLag - 1)];
      int64_t* o = out.ids() + p.offset;
      if (p.whole) {
        copy_row(p.row, p.count, o);
      } else {
        for (int64_t j = 0; j < p.count; ++j) o[j] = p.row[o[j]];
      }
    }
    if (i >= n) continue;
    if (i + kOffsetsAhead < n) {
      const uint64_t r = static_cast<uint64_t>(nodes[i + kOffsetsAhead] - first);
      if (r < rows) {
        __builtin_prefetch(indptr + r);
        if (stream_ids) __builtin_prefetch(stream_ids + r);
      }
    }
    if constexpr (kOffsetsAhead > kPrefetchDistance) {  // what decides the runs
      if (i + kPrefetchDistance < n) {
        const uint64_t r = static_cast<uint64_t>(nodes[i + kPrefetchDistance] - first);
        if (r < rows) runs.prefetch_runs(indptr[r], indptr[r + 1]);
      }
    }
    if constexpr (PerRun::kWeighted) {
      if (i + kWeightsAhead < n) {
        const uint64_t r = static_cast<uint64_t>(nodes[i + kWeightsAhead] - first);
        if (r < rows) {
          // A summarized row longer than kSmallRun is read only where its draws fall (a
          // shorter one reads its weights, which hold its statistics: no summary line).
          const int64_t b = indptr[r], whole = indptr[r + 1] - b;
          const bool summarized = summaries && whole > kSmallRun;
          if (summarized) __builtin_prefetch(summaries + r);
          if constexpr (Runs::kWholeRows) {
            if (summarized && runs.k > 0) {
              const int64_t v = nodes[i + kWeightsAhead];
              prefetch_trials(node_key(ctx.hop_key, stream_ids ? stream_ids[r] : v), weights + b,
                              whole, runs.k);
            }
          }
          const int64_t d = summarized ? 0 : std::min(whole, kWeightLines * 16);
          for (int64_t j = 0; j < d; j += 16) __builtin_prefetch(weights + b + j);
        }
      }
    }
    const int64_t v = nodes[i];
    const uint64_t r = static_cast<uint64_t>(v - first);
    if (r >= rows) throw_outside(view, v);
    const int64_t b = indptr[r], e = indptr[r + 1];
    const int64_t* row = indices + b;
    const int64_t start = out.size;
    bool whole = false;
    auto draw_run = [&](int64_t s, int64_t t, int32_t relation, int64_t k, uint64_t key) {
      const int64_t d = t - s;
      int64_t* pos = out.reserve(per_run.bound(k, d));
      // A summary describes a whole row (and so a run that is one); read for long rows only.
      const WeightSummary* summary =
          summaries && s == b && t == e && d > kSmallRun && d <= kSummarizedDegree ? summaries + r
                                                                                   : nullptr;
      int64_t c =
          per_run(k, d, key, PerRun::kWeighted ? weights + s : nullptr, pos, scratch, summary);
      if (c == kWholeRow) {
        c = d;
        if (s == b && t == e) {
          whole = true;
        } else {
          for (int64_t j = 0; j < d; ++j) pos[j] = s - b + j;
        }
        for (int64_t j = 0; j < std::min<int64_t>(d, 128); j += 8)
          __builtin_prefetch(row + s - b + j);
      } else {
        for (int64_t j = 0; j < c; ++j) {
          pos[j] += s - b;
          __builtin_prefetch(row + pos[j]);
        }
      }
      out.add(c, relation);
    };
    runs.for_each_run(v, b, e, node_key(ctx.hop_key, stream_ids ? stream_ids[r] : v), draw_run);
    ring[i & (kLag - 1)] = {row, start, out.size - start, whole};
    counts[i] = out.size - start;
  }
  return out;
}

// ---- Layouts -------------------------------------------------------------------------
// chunk(): nodes per chunk; output(c): chunk c's output; finish(c, o): chunk c is done;
// join(): the chunks' entries, in order, make up the result.

class BoundedLayout {
 public:
  using Output = BoundedOutput;

  // Throws if a node is outside the view (when degrees are read for the bound).
  BoundedLayout(const CscView& view, ArrayView<const int64_t> nodes, const KernelOptions& options,
                NeighborSample* out)
      : out_(out), chunk_(std::max<int64_t>(options.chunk, 1)) {
    const int64_t k = options.fanout;
    const bool with = options.replacement == Replacement::kWith;
    const int64_t n = nodes.size();
    const int64_t num_chunks = (n + chunk_ - 1) / chunk_;
    // base_[c]: where chunk c starts writing, from an upper bound of every node's count.
    base_.assign(static_cast<size_t>(num_chunks) + 1, 0);
    written_.assign(static_cast<size_t>(num_chunks), 0);
    if (k >= 0 && k <= kDirectBoundFanout) {
      for (int64_t c = 0; c <= num_chunks; ++c) base_[c] = std::min(c * chunk_, n) * k;
    } else {
      parallel_chunks(0, n, chunk_, options.threads, [&](int64_t b, int64_t e) {
        int64_t bound = 0;
        for (int64_t i = b; i < e; ++i) {
          if (!view.owns(nodes[i])) throw_outside(view, nodes[i]);
          const int64_t d = view.degree(nodes[i]);
          bound += k < 0 ? d : with ? (d > 0 ? k : 0) : std::min(k, d);
        }
        base_[b / chunk_ + 1] = bound;
      });
      for (int64_t c = 0; c < num_chunks; ++c) base_[c + 1] += base_[c];
    }
    out->relations.clear();
    out->neighbors.resize(static_cast<size_t>(base_[num_chunks]));
  }

  int64_t chunk() const { return chunk_; }
  Output output(int64_t c) const { return {out_->neighbors.data() + base_[c]}; }
  void finish(int64_t c, const Output& o) { written_[c] = o.size; }

  // Closes the gaps between chunks; each moves to an offset <= its base.
  void join() {
    int64_t offset = 0;
    int64_t* data = out_->neighbors.data();
    for (size_t c = 0; c < written_.size(); ++c) {
      if (offset != base_[c] && written_[c] > 0) {
        std::memmove(data + offset, data + base_[c], static_cast<size_t>(written_[c]) * 8);
      }
      offset += written_[c];
    }
    out_->neighbors.resize(static_cast<size_t>(offset));
  }

 private:
  NeighborSample* out_;
  int64_t chunk_;
  std::vector<int64_t> base_;
  std::vector<int64_t> written_;
};

class GrowingLayout {
 public:
  using Output = GrowingOutput;

  GrowingLayout(int64_t n, const KernelOptions& options, NeighborSample* out)
      : out_(out),
        // One thread: one chunk, written straight into `out`. Results do not depend on chunks.
        chunk_(options.threads <= 1 ? std::max<int64_t>(n, 1)
                                    : std::max<int64_t>(options.chunk, 1)),
        more_neighbors_(static_cast<size_t>(std::max<int64_t>((n + chunk_ - 1) / chunk_ - 1, 0))),
        more_relations_(more_neighbors_.size()) {
    out->neighbors.clear();
    out->relations.clear();
  }

  int64_t chunk() const { return chunk_; }
  // Chunk 0 fills `out`'s own vectors (their capacity is reused); the others their own.
  Output output(int64_t c) {
    if (c == 0) return {&out_->neighbors, &out_->relations};
    return {&more_neighbors_[c - 1], &more_relations_[c - 1]};
  }
  void finish(int64_t, const Output& o) {
    o.neighbors->resize(static_cast<size_t>(o.size));
    o.relations->resize(static_cast<size_t>(o.size));
  }
  void join() {
    for (size_t c = 0; c < more_neighbors_.size(); ++c) {
      out_->neighbors.insert(out_->neighbors.end(), more_neighbors_[c].begin(),
                             more_neighbors_[c].end());
      out_->relations.insert(out_->relations.end(), more_relations_[c].begin(),
                             more_relations_[c].end());
    }
  }

 private:
  NeighborSample* out_;
  int64_t chunk_;
  std::vector<std::vector<int64_t>> more_neighbors_;
  std::vector<std::vector<int32_t>> more_relations_;
};

// ---- The kernel ----------------------------------------------------------------------

// Samples `nodes` as `runs` into `layout`'s chunks and joins them. every_entry: the call
// takes every entry of every row (an untyped fanout of -1), with no draws to pipeline.
template <class Runs, class Layout>
void sample_runs(const CscView& view, ArrayView<const int64_t> nodes, uint64_t hop_key,
                 const KernelOptions& options, const Runs& runs, bool every_entry, Layout& layout,
                 NeighborSample* out) {
  const int64_t n = nodes.size();
  const int64_t chunk = layout.chunk();
  const ChunkContext<Runs> ctx{view, runs, hop_key};
  auto run = [&](const auto& per_run) {
    parallel_chunks(0, n, chunk, options.threads, [&](int64_t b, int64_t e) {
      const int64_t c = b / chunk;
      int64_t* counts = out->counts.data() + b;
      if constexpr (std::decay_t<decltype(per_run)>::kPipelined) {
        layout.finish(c, sample_chunk_pipelined(ctx, per_run, nodes.data() + b, e - b, counts,
                                                layout.output(c)));
      } else {
        layout.finish(
            c, sample_chunk(ctx, per_run, nodes.data() + b, e - b, counts, layout.output(c)));
      }
    });
  };
  const bool weighted = options.weighting == Weighting::kEdgeWeight;
  const bool with = options.replacement == Replacement::kWith;
  if (every_entry) {
    run(EveryEntry{weighted});
  } else if (!weighted && !with) {
    run(UniformRuns<Replacement::kWithout>{});
  } else if (!weighted) {
    run(UniformRuns<Replacement::kWith>{});
  } else if (!with) {
    run(WeightedRuns<Replacement::kWithout>{});
  } else {
    run(WeightedRuns<Replacement::kWith>{});
  }
  layout.join();
}

// Samples with edge ids (neighbor_kernel.h): `sample` on a view whose entries are their
// edge ids, then each pick's source id read from view.indices.
template <class Sample>
void sample_edge_ids(const CscView& view, const KernelOptions& options, NeighborSample* out,
                     const Sample& sample) {
  PARTITA_CHECK(view.has_edge_ids(), Error, "sample: edge ids asked of a view without them");
  CscView slots = view;
  slots.indices = view.edge_ids;
  KernelOptions inner = options;
  inner.edge_ids = false;
  sample(slots, inner);
  out->edge_ids.swap(out->neighbors);
  const int64_t m = static_cast<int64_t>(out->edge_ids.size());
  out->neighbors.resize(static_cast<size_t>(m));
  const int64_t* ids = out->edge_ids.data();
  const int64_t* indices = view.indices.data();
  const int64_t first = view.first_edge;
  int64_t* neighbors = out->neighbors.data();
  parallel_chunks(0, m, std::max<int64_t>(options.chunk, 1) * 16, options.threads,
                  [&](int64_t b, int64_t e) {
                    for (int64_t j = b; j < e; ++j) {
                      if (j + kPrefetchDistance < e)
                        __builtin_prefetch(indices + (ids[j + kPrefetchDistance] - first));
                      neighbors[j] = indices[ids[j] - first];
                    }
                  });
}

}  // namespace

void sample_neighbors(const CscView& view, ArrayView<const int64_t> nodes, uint64_t hop_key,
                      const KernelOptions& options, NeighborSample* out) {
  if (options.edge_ids) {
    sample_edge_ids(view, options, out, [&](const CscView& slots, const KernelOptions& inner) {
      sample_neighbors(slots, nodes, hop_key, inner, out);
    });
    return;
  }
  out->edge_ids.clear();
  const int64_t k = options.fanout;
  PARTITA_CHECK(options.temporal == Temporal::kNone, Error,
                "sample: temporal sampling needs a time for every node");
  PARTITA_CHECK(k >= -1, Error, "sample: fanout {} is invalid (use k >= 0, or -1 for all)", k);
  PARTITA_CHECK(options.weighting != Weighting::kEdgeWeight || view.weighted(), Error,
                "sample: weighted sampling asked of a graph without edge weights");
  if (view.typed()) {
    const RelationRuns runs(view.relations.data(), k, options.relation_fanouts);
    out->counts.resize(static_cast<size_t>(nodes.size()));
    GrowingLayout layout(nodes.size(), options, out);
    sample_runs(view, nodes, hop_key, options, runs, /*every_entry=*/false, layout, out);
    return;
  }
  // A typed graph's part without edges has no relation ids either: nothing to apply them to.
  PARTITA_CHECK(options.relation_fanouts.empty() || view.indptr.empty() ||
                    view.indptr[view.num_rows()] == view.indptr[0],
                Error, "sample: per-relation fanouts asked of a graph without relation ids");
  out->counts.resize(static_cast<size_t>(nodes.size()));
  BoundedLayout layout(view, nodes, options, out);
  sample_runs(view, nodes, hop_key, options, OneRun{k}, /*every_entry=*/k < 0, layout, out);
}

void sample_neighbors(const CscView& view, ArrayView<const int64_t> nodes,
                      ArrayView<const int64_t> node_times, uint64_t hop_key,
                      const KernelOptions& options, NeighborSample* out) {
  if (options.temporal != Temporal::kNone) {
    if (options.edge_ids) {
      sample_edge_ids(view, options, out, [&](const CscView& slots, const KernelOptions& inner) {
        detail::sample_temporal(slots, nodes, node_times, hop_key, inner, out);
      });
      return;
    }
    out->edge_ids.clear();
    detail::sample_temporal(view, nodes, node_times, hop_key, options, out);
    return;
  }
  PARTITA_CHECK(node_times.empty(), Error,
                "sample: node times given to sampling that is not temporal");
  sample_neighbors(view, nodes, hop_key, options, out);
}

}  // namespace partita::sample
