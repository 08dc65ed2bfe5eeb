// Temporal sampling (neighbor_kernel.h): a node at a time, each run of its row (row_runs.h)
// filtered to the entries its time allows, then sampled by the per-run algorithms of the
// non-temporal kernel (row_algorithms.h) on that filtered run, or by recency. The filter
// reads every entry's time, so this path is O(row) per node whatever the fanout; it is kept
// apart from the pipelined loops of neighbor_kernel.cc so that they stay as they are.
//
// Each chunk of nodes writes into a buffer of its own (chunk 0 into the result), joined in
// chunk order at the end: results do not depend on threads or chunk.
#include "temporal_kernel.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/sample/sample_key.h"
#include "row_algorithms.h"
#include "row_runs.h"

namespace partita::sample::detail {
namespace {

// Per-chunk buffers, reused for every run of the chunk.
struct TemporalScratch {
  Scratch base;
  std::vector<int64_t> ids;                        // the allowed entries' ids, stored order
  std::vector<float> weights;                      // their weights (weighted sampling)
  std::vector<int64_t> pos;                        // uniform: drawn positions in `ids`
  std::vector<std::pair<int64_t, int64_t>> order;  // recent: (-time, position in `ids`)
};

struct ChunkOutput {
  std::vector<int64_t>* neighbors;
  std::vector<int32_t>* relations;  // null: untyped
};

class TemporalRuns {
 public:
  TemporalRuns(const CscView& view, const KernelOptions& options)
      : indices_(view.indices.data()),
        weights_(view.weights.data()),
        times_(view.times.data()),
        strict_(options.strict),
        recent_(options.temporal == Temporal::kRecent),
        weighted_(options.weighting == Weighting::kEdgeWeight),
        with_(options.replacement == Replacement::kWith) {}

  // Appends the sample of entries [s, t) at node time `time` with fanout k and stream `key`
  // to `out`; returns how many.
  int64_t operator()(int64_t s, int64_t t, int64_t time, int64_t k, uint64_t key,
                     std::vector<int64_t>& out, TemporalScratch& sc) const {
    if (k == 0) return 0;  // the run's stream is its own: skipping its draws changes nothing
    sc.ids.clear();
    sc.weights.clear();
    sc.order.clear();
    for (int64_t e = s; e < t; ++e) {
      if (strict_ ? !(times_[e] < time) : !(times_[e] <= time)) continue;
      if (recent_) sc.order.emplace_back(-times_[e], static_cast<int64_t>(sc.ids.size()));
      sc.ids.push_back(indices_[e]);
      if (weighted_) sc.weights.push_back(weights_[e]);
    }
    const int64_t m = static_cast<int64_t>(sc.ids.size());
    const int64_t* ids = sc.ids.data();
    const float* w = sc.weights.data();
    const size_t start = out.size();
    const int64_t bound = k < 0 ? m : with_ ? k : std::min(k, m);
    out.resize(start + static_cast<size_t>(bound));
    int64_t* o = out.data() + start;
    int64_t c = 0;
    if (k < 0) {
      c = All{weighted_}(ids, w, m, key, o, sc.base);
    } else if (recent_) {
      if (m <= k) {
        c = copy_row(ids, m, o);
      } else {
        std::nth_element(sc.order.begin(), sc.order.begin() + k, sc.order.end());
        for (int64_t j = 0; j < k; ++j) o[j] = sc.order[j].second;
        std::sort(o, o + k);
        for (int64_t j = 0; j < k; ++j) o[j] = ids[o[j]];
        c = k;
      }
    } else if (weighted_) {
      c = with_ ? weighted_ids(WeightedWith{k}, ids, w, m, key, o, sc.base)
                : weighted_ids(WeightedWithout{k}, ids, w, m, key, o, sc.base);
    } else {
      sc.pos.resize(static_cast<size_t>(k));
      int64_t* pos = sc.pos.data();
      c = with_ ? UniformWith{k}(m, key, pos, sc.base) : UniformWithout{k}(m, key, pos, sc.base);
      if (c == kWholeRow) {
        c = copy_row(ids, m, o);
      } else {
        for (int64_t j = 0; j < c; ++j) o[j] = ids[pos[j]];
      }
    }
    out.resize(start + static_cast<size_t>(c));
    return c;
  }

 private:
  const int64_t* indices_;
  const float* weights_;
  const int64_t* times_;
  bool strict_, recent_, weighted_, with_;
};

template <class Runs>
void sample_chunk(const CscView& view, const Runs& runs, const TemporalRuns& temporal,
                  const int64_t* nodes, const int64_t* node_times, int64_t n, uint64_t hop_key,
                  int64_t* counts, ChunkOutput out) {
  const int64_t* indptr = view.indptr.data();
  const int64_t* times = view.times.data();
  const int64_t* indices = view.indices.data();
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  TemporalScratch scratch;
  for (int64_t i = 0; i < n; ++i) {
    // Rows are scattered: ask for node i + 2P's offsets and node i + P's first times and
    // ids early, so that several cache misses are in flight at once.
    if (i + 2 * kPrefetchDistance < n) {
      const uint64_t r = static_cast<uint64_t>(nodes[i + 2 * kPrefetchDistance] - view.first_row);
      if (r < rows) __builtin_prefetch(indptr + r);
    }
    if (i + kPrefetchDistance < n) {
      const uint64_t r = static_cast<uint64_t>(nodes[i + kPrefetchDistance] - view.first_row);
      if (r < rows) {
        __builtin_prefetch(times + indptr[r]);
        __builtin_prefetch(indices + indptr[r]);
        runs.prefetch_row(indptr[r]);
      }
    }
    const int64_t v = nodes[i];
    const uint64_t r = static_cast<uint64_t>(v - view.first_row);
    if (r >= rows) throw_outside(view, v);
    const size_t start = out.neighbors->size();
    runs.for_each_run(v, indptr[r], indptr[r + 1], node_key(hop_key, view.stream_id(v)),
                      [&](int64_t s, int64_t t, int32_t relation, int64_t k, uint64_t key) {
                        const int64_t c =
                            temporal(s, t, node_times[i], k, key, *out.neighbors, scratch);
                        if (out.relations) out.relations->insert(out.relations->end(), c, relation);
                      });
    counts[i] = static_cast<int64_t>(out.neighbors->size() - start);
  }
}

template <class Runs>
void sample_all(const CscView& view, const Runs& runs, ArrayView<const int64_t> nodes,
                ArrayView<const int64_t> node_times, uint64_t hop_key, const KernelOptions& options,
                NeighborSample* out) {
  const int64_t n = nodes.size();
  const int64_t chunk =
      options.threads <= 1 ? std::max<int64_t>(n, 1) : std::max<int64_t>(options.chunk, 1);
  const int64_t num_chunks = (n + chunk - 1) / chunk;
  const bool typed = view.typed();
  // Chunk 0 writes into `out` (its capacity reused), chunk c > 0 into more[c - 1].
  std::vector<NeighborSample> more(static_cast<size_t>(std::max<int64_t>(num_chunks - 1, 0)));
  out->counts.resize(static_cast<size_t>(n));
  out->neighbors.clear();
  out->relations.clear();
  const TemporalRuns temporal(view, options);
  parallel_chunks(0, n, chunk, options.threads, [&](int64_t b, int64_t e) {
    const int64_t c = b / chunk;
    NeighborSample* into = c == 0 ? out : &more[static_cast<size_t>(c - 1)];
    sample_chunk(view, runs, temporal, nodes.data() + b, node_times.data() + b, e - b, hop_key,
                 out->counts.data() + b,
                 ChunkOutput{&into->neighbors, typed ? &into->relations : nullptr});
  });
  for (const NeighborSample& m : more) {
    out->neighbors.insert(out->neighbors.end(), m.neighbors.begin(), m.neighbors.end());
    out->relations.insert(out->relations.end(), m.relations.begin(), m.relations.end());
  }
}

}  // namespace

void sample_temporal(const CscView& view, ArrayView<const int64_t> nodes,
                     ArrayView<const int64_t> node_times, uint64_t hop_key,
                     const KernelOptions& options, NeighborSample* out) {
  const int64_t k = options.fanout;
  PARTITA_CHECK(k >= -1, Error, "sample: fanout {} is invalid (use k >= 0, or -1 for all)", k);
  PARTITA_CHECK(options.weighting != Weighting::kEdgeWeight || view.weighted(), Error,
                "sample: weighted sampling asked of a graph without edge weights");
  PARTITA_CHECK(view.timed() || view.indices.empty(), Error,
                "sample: temporal sampling asked of a graph without edge times");
  PARTITA_CHECK(node_times.size() == nodes.size(), Error,
                "sample: temporal sampling needs one time per node ({} times for {} nodes)",
                node_times.size(), nodes.size());
  PARTITA_CHECK(
      options.temporal != Temporal::kRecent || (options.replacement == Replacement::kWithout &&
                                                options.weighting == Weighting::kUniform),
      Error, "sample: recent temporal sampling takes neither replacement nor edge weights");
  if (view.typed()) {
    const RelationRuns runs(view.relations.data(), k, options.relation_fanouts);
    sample_all(view, runs, nodes, node_times, hop_key, options, out);
    return;
  }
  PARTITA_CHECK(options.relation_fanouts.empty() || view.indptr.empty() ||
                    view.indptr[view.num_rows()] == view.indptr[0],
                Error, "sample: per-relation fanouts asked of a graph without relation ids");
  sample_all(view, OneRun{k}, nodes, node_times, hop_key, options, out);
}

}  // namespace partita::sample::detail
