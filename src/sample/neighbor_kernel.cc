#include "partita/sample/neighbor_kernel.h"

#include <algorithm>
#include <cstring>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/sample/sample_key.h"
#include "row_algorithms.h"

namespace partita::sample {
namespace {
using namespace detail;

// Up to this fanout the output is sized nodes * fanout without reading degrees first.
constexpr int64_t kDirectBoundFanout = 64;

// Samples nodes[0..n) into out (compact), counts into counts; returns entries written.
template <class PerNode>
int64_t sample_chunk(const CscView& view, const int64_t* nodes, int64_t n, uint64_t hop_key,
                     const PerNode& per_node, int64_t* counts, int64_t* out) {
  const int64_t* indptr = view.indptr.data();
  const int64_t* indices = view.indices.data();
  const float* weights = view.weights.data();
  const int64_t* stream_ids = view.stream_ids.empty() ? nullptr : view.stream_ids.data();
  const int64_t first = view.first_row;
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  Scratch scratch;
  int64_t written = 0;
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
      if (r < rows) __builtin_prefetch(indices + indptr[r]);
    }
    const int64_t v = nodes[i];
    const uint64_t r = static_cast<uint64_t>(v - first);
    if (r >= rows) throw_outside(view, v);
    const int64_t b = indptr[r];
    const int64_t d = indptr[r + 1] - b;
    const uint64_t key = node_key(hop_key, stream_ids ? stream_ids[r] : v);
    const int64_t c =
        per_node(indices + b, weights ? weights + b : nullptr, d, key, out + written, scratch);
    counts[i] = c;
    written += c;
  }
  return written;
}

// sample_chunk for the uniform modes, software-pipelined: node i's positions are drawn
// while node i - kLag's ids are gathered, so the cache misses of about kLag nodes (their
// offsets, then k scattered row entries each) are in flight together.
template <class Positions>
int64_t sample_chunk_pipelined(const CscView& view, const int64_t* nodes, int64_t n,
                               uint64_t hop_key, const Positions& positions, int64_t* counts,
                               int64_t* out) {
  constexpr int64_t kLag = 16;  // power of two
  struct Pending {
    const int64_t* row;
    int64_t offset;
    int64_t count;
    bool whole;
  };
  Pending ring[kLag];
  const int64_t* indptr = view.indptr.data();
  const int64_t* indices = view.indices.data();
  const int64_t* stream_ids = view.stream_ids.empty() ? nullptr : view.stream_ids.data();
  const int64_t first = view.first_row;
  const uint64_t rows = static_cast<uint64_t>(view.num_rows());
  Scratch scratch;
  int64_t written = 0;
  for (int64_t i = 0; i < n + kLag; ++i) {
    if (i >= kLag) {  // first frees node i's ring slot
      const Pending& p = ring[(i - kLag) & (kLag - 1)];
      int64_t* o = out + p.offset;
      if (p.whole) {
        copy_row(p.row, p.count, o);
      } else {
        for (int64_t j = 0; j < p.count; ++j) o[j] = p.row[o[j]];
      }
    }
    if (i < n) {
      if (i + kPrefetchDistance < n) {
        const uint64_t r = static_cast<uint64_t>(nodes[i + kPrefetchDistance] - first);
        if (r < rows) {
          __builtin_prefetch(indptr + r);
          if (stream_ids) __builtin_prefetch(stream_ids + r);
        }
      }
      const int64_t v = nodes[i];
      const uint64_t r = static_cast<uint64_t>(v - first);
      if (r >= rows) throw_outside(view, v);
      const int64_t b = indptr[r];
      const int64_t d = indptr[r + 1] - b;
      const int64_t* row = indices + b;
      int64_t* pos = out + written;
      int64_t c = positions(d, node_key(hop_key, stream_ids ? stream_ids[r] : v), pos, scratch);
      const bool whole = c == kWholeRow;
      if (whole) {
        c = d;
        for (int64_t p = 0; p < std::min<int64_t>(d, 128); p += 8) __builtin_prefetch(row + p);
      } else {
        for (int64_t j = 0; j < c; ++j) __builtin_prefetch(row + pos[j]);
      }
      ring[i & (kLag - 1)] = {row, written, c, whole};
      counts[i] = c;
      written += c;
    }
  }
  return written;
}

}  // namespace

void sample_neighbors(const CscView& view, ArrayView<const int64_t> nodes, uint64_t hop_key,
                      const KernelOptions& options, NeighborSample* out) {
  const int64_t k = options.fanout;
  PARTITA_CHECK(k >= -1, Error, "sample: fanout {} is invalid (use k >= 0, or -1 for all)", k);
  const bool weighted = options.weighting == Weighting::kEdgeWeight;
  PARTITA_CHECK(!weighted || view.weighted(), Error,
                "sample: weighted sampling asked of a graph without edge weights");
  if (view.typed()) {
    sample_typed_neighbors(view, nodes, hop_key, options, out);
    return;
  }
  // A typed graph's part without edges has no relation ids either: nothing to apply them to.
  PARTITA_CHECK(options.relation_fanouts.empty() || view.indptr.empty() ||
                    view.indptr[view.num_rows()] == view.indptr[0],
                Error, "sample: per-relation fanouts asked of a graph without relation ids");
  out->relations.clear();
  const bool with = options.replacement == Replacement::kWith;
  const int64_t n = nodes.size();
  const int64_t chunk = std::max<int64_t>(options.chunk, 1);
  const int64_t num_chunks = (n + chunk - 1) / chunk;
  out->counts.resize(static_cast<size_t>(n));

  // base[c]: where chunk c starts writing, from an upper bound of every node's count.
  std::vector<int64_t> base(static_cast<size_t>(num_chunks) + 1, 0);
  if (k >= 0 && k <= kDirectBoundFanout) {
    for (int64_t c = 0; c <= num_chunks; ++c) base[c] = std::min(c * chunk, n) * k;
  } else {
    parallel_chunks(0, n, chunk, options.threads, [&](int64_t b, int64_t e) {
      int64_t bound = 0;
      for (int64_t i = b; i < e; ++i) {
        if (!view.owns(nodes[i])) throw_outside(view, nodes[i]);
        const int64_t d = view.degree(nodes[i]);
        bound += k < 0 ? d : with ? (d > 0 ? k : 0) : std::min(k, d);
      }
      base[b / chunk + 1] = bound;
    });
    for (int64_t c = 0; c < num_chunks; ++c) base[c + 1] += base[c];
  }
  out->neighbors.resize(static_cast<size_t>(base[num_chunks]));

  std::vector<int64_t> written(static_cast<size_t>(num_chunks), 0);
  auto run = [&](const auto& per_node) {
    parallel_chunks(0, n, chunk, options.threads, [&](int64_t b, int64_t e) {
      const int64_t c = b / chunk;
      written[c] = sample_chunk(view, nodes.data() + b, e - b, hop_key, per_node,
                                out->counts.data() + b, out->neighbors.data() + base[c]);
    });
  };
  auto run_pipelined = [&](const auto& positions) {
    parallel_chunks(0, n, chunk, options.threads, [&](int64_t b, int64_t e) {
      const int64_t c = b / chunk;
      written[c] = sample_chunk_pipelined(view, nodes.data() + b, e - b, hop_key, positions,
                                          out->counts.data() + b, out->neighbors.data() + base[c]);
    });
  };
  if (k < 0) {
    run(All{weighted});
  } else if (!weighted && !with) {
    run_pipelined(UniformWithout{k});
  } else if (!weighted) {
    run_pipelined(UniformWith{k});
  } else if (!with) {
    run(WeightedWithout{k});
  } else {
    run(WeightedWith{k});
  }

  // Close the gaps between chunks; each moves to an offset <= its base.
  int64_t offset = 0;
  int64_t* data = out->neighbors.data();
  for (int64_t c = 0; c < num_chunks; ++c) {
    if (offset != base[c] && written[c] > 0) {
      std::memmove(data + offset, data + base[c], static_cast<size_t>(written[c]) * 8);
    }
    offset += written[c];
  }
  out->neighbors.resize(static_cast<size_t>(offset));
}

}  // namespace partita::sample
