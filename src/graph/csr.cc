#include "partita/graph/csr.h"

#include <algorithm>
#include <limits>

#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/timer.h"

namespace partita::graph {

namespace {

// Calls fn(stripe, lo, hi) for `stripes` row ranges [lo, hi) splitting [0, rows) at `bound`,
// one thread per stripe. Every stripe touches only its own rows, so per-row order is the
// stream order whatever the thread count.
void for_each_stripe(const std::vector<int64_t>& bound,
                     const std::function<void(int, int64_t, int64_t)>& fn) {
  const int stripes = static_cast<int>(bound.size()) - 1;
  parallel_chunks(0, stripes, 1, stripes, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) fn(static_cast<int>(t), bound[t], bound[t + 1]);
  });
}

// How many edges ahead the random-access passes prefetch.
constexpr int64_t kAhead = 16;

bool in_range(int64_t v, int64_t lo, int64_t hi) {
  return static_cast<uint64_t>(v - lo) < static_cast<uint64_t>(hi - lo);
}

}  // namespace

InEdgeResult build_in_edges(int64_t num_nodes, const EdgeStream& edges,
                            const InEdgeOptions& options) {
  PARTITA_CHECK(num_nodes >= 0, FormatError, "{}: negative node count {}", options.source,
                num_nodes);
  InEdgeResult result;
  Csr& csc = result.in_edges;
  csc.indptr.assign(static_cast<size_t>(num_nodes) + 1, 0);
  int64_t* count = csc.indptr.data() + 1;
  const int threads = static_cast<int>(
      std::min<int64_t>(resolve_threads(options.threads), std::max<int64_t>(num_nodes, 1)));
  const bool undirected = options.undirected;

  Stopwatch watch;
  // Pass 1: validate ids (stripe 0) and count entries per destination (each stripe its rows).
  std::vector<int64_t> bound(static_cast<size_t>(threads) + 1);
  for (int t = 0; t <= threads; ++t) bound[t] = num_nodes * t / threads;
  int64_t offset = 0;
  edges([&](const int64_t* pairs, int64_t n) {
    for_each_stripe(bound, [&](int stripe, int64_t lo, int64_t hi) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t s = pairs[2 * i], d = pairs[2 * i + 1];
        if (stripe == 0) {
          if (!in_range(s, 0, num_nodes) || !in_range(d, 0, num_nodes)) {
            throw FormatError(fmt::format("{}: edge {} ({}, {}) has a node id outside [0, {})",
                                          options.source, offset + i, s, d, num_nodes));
          }
          if (s == d) ++result.self_loops_dropped;
        }
        if (s == d) continue;
        if (i + kAhead < n) {
          const int64_t ahead = pairs[2 * (i + kAhead) + 1];
          if (in_range(ahead, lo, hi)) __builtin_prefetch(&count[ahead], 1);
        }
        if (in_range(d, lo, hi)) ++count[d];
        if (undirected && in_range(s, lo, hi)) ++count[s];
      }
    });
    offset += n;
  });
  result.input_edges = offset;
  for (int64_t v = 0; v < num_nodes; ++v) csc.indptr[v + 1] += csc.indptr[v];

  const double count_s = watch.seconds();
  watch.restart();
  // Pass 2: place sources at their destination's cursor; stripes now balance entries.
  const int64_t entries = csc.indptr[num_nodes];
  for (int t = 1; t < threads; ++t)
    bound[t] = std::lower_bound(csc.indptr.begin(), csc.indptr.end(), entries * t / threads) -
               csc.indptr.begin();
  csc.indices.resize(static_cast<size_t>(entries));
  std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
  edges([&](const int64_t* pairs, int64_t n) {
    for_each_stripe(bound, [&](int, int64_t lo, int64_t hi) {
      int64_t* indices = csc.indices.data();
      for (int64_t i = 0; i < n; ++i) {
        // The writes land at random: fetch the cursor 2*kAhead edges ahead and the slot it
        // points to kAhead edges ahead (ids were validated in pass 1).
        if (i + 2 * kAhead < n) __builtin_prefetch(&cursor[pairs[2 * (i + 2 * kAhead) + 1]]);
        if (i + kAhead < n) {
          const int64_t ahead = pairs[2 * (i + kAhead) + 1];
          if (in_range(ahead, lo, hi)) __builtin_prefetch(indices + cursor[ahead], 1);
        }
        const int64_t s = pairs[2 * i], d = pairs[2 * i + 1];
        if (s == d) continue;
        if (in_range(d, lo, hi)) indices[cursor[d]++] = s;
        if (undirected && in_range(s, lo, hi)) indices[cursor[s]++] = d;
      }
    });
  });
  std::vector<int64_t>().swap(cursor);
  const double scatter_s = watch.seconds();
  watch.restart();
  result.duplicates_dropped = sort_and_dedup_rows(csc, threads);
  log_debug("{}: in-edge CSC built on {} threads: count {:.2f} s, scatter {:.2f} s, sort {:.2f} s",
            options.source, threads, count_s, scatter_s, watch.seconds());
  return result;
}

EdgeStream edge_stream_of(const std::vector<int64_t>& pairs) {
  return [&pairs](const EdgeVisitor& visit) {
    visit(pairs.data(), static_cast<int64_t>(pairs.size() / 2));
  };
}

template <class Index>
int64_t sort_and_dedup_rows(CsrOf<Index>& csr, int threads) {
  const int64_t rows = csr.num_rows();
  if (rows == 0) return 0;
  // Sort and dedup each row where it lies, remembering its new length.
  std::vector<Index> kept(static_cast<size_t>(rows));
  parallel_chunks(0, rows, 1 << 14, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      Index* first = csr.indices.data() + csr.indptr[v];
      Index* last = csr.indices.data() + csr.indptr[v + 1];
      std::sort(first, last);
      kept[v] = static_cast<Index>(std::unique(first, last) - first);
    }
  });
  // Compact forward: a row's new start never exceeds its old start.
  Index write = 0;
  for (int64_t v = 0; v < rows; ++v) {
    const Index start = csr.indptr[v];
    if (write != start)
      std::copy(csr.indices.begin() + start, csr.indices.begin() + start + kept[v],
                csr.indices.begin() + write);
    csr.indptr[v] = write;
    write += kept[v];
  }
  const int64_t removed = csr.num_entries() - static_cast<int64_t>(write);
  csr.indptr[rows] = write;
  // No shrink_to_fit: it would hold two copies of the largest array at once.
  csr.indices.resize(static_cast<size_t>(write));
  return removed;
}

template int64_t sort_and_dedup_rows<int64_t>(CsrOf<int64_t>&, int);
template int64_t sort_and_dedup_rows<int32_t>(CsrOf<int32_t>&, int);

namespace {

// Calls fn(v, u) for each u of the sorted union of sorted rows a and b, skipping v itself and
// repeats.
template <class A, class B, class Fn>
void merge_rows(int64_t v, const A* a, const A* a_end, const B* b, const B* b_end, Fn&& fn) {
  int64_t last = -1;
  while (a != a_end || b != b_end) {
    int64_t u;
    if (b == b_end || (a != a_end && static_cast<int64_t>(*a) <= static_cast<int64_t>(*b)))
      u = *a++;
    else
      u = *b++;
    if (u != v && u != last) fn(u);
    last = u;
  }
}

}  // namespace

// Transpose + merge: out-edges are scattered once (stripes of destinations in parallel, each
// into its own slots, so out rows come out sorted), then every row merges its sorted in- and
// out-lists twice (count, then write). Peak extra memory: the int32 transpose plus the result;
// no unsorted doubled copy.
CsrOf<int32_t> symmetrize_int32(const Csr& in_edges, int threads) {
  const int64_t n = in_edges.num_rows();
  const int64_t entries = in_edges.num_entries();
  const int64_t max_entries = std::numeric_limits<int32_t>::max();
  auto too_large = [&](int64_t adjacency) {
    return FormatError(fmt::format(
        "graph: {} nodes and {} symmetrized adjacency entries exceed METIS's 32-bit index "
        "limit (2^31-1); use --method random",
        n, adjacency));
  };
  // The result holds every in-edge, so more than 2^31-1 of them can never fit.
  if (n >= max_entries || entries > max_entries) throw too_large(entries);
  threads = std::max(threads, 1);

  // Stripes of destination rows with about equal entry counts; stripe t counts, per source,
  // its out-edges in count[t], later turned into that stripe's write cursors.
  const int stripes = static_cast<int>(std::min<int64_t>({threads, 8, std::max<int64_t>(n, 1)}));
  std::vector<int64_t> bound(static_cast<size_t>(stripes) + 1, n);
  bound[0] = 0;
  for (int t = 1; t < stripes; ++t)
    bound[t] =
        std::lower_bound(in_edges.indptr.begin(), in_edges.indptr.end(), entries * t / stripes) -
        in_edges.indptr.begin();
  std::vector<std::vector<int32_t>> count(static_cast<size_t>(stripes));
  parallel_chunks(0, stripes, 1, threads, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      count[t].assign(static_cast<size_t>(n), 0);
      const int64_t* src = in_edges.indices.data();
      const int64_t end = in_edges.indptr[bound[t + 1]];
      for (int64_t d = bound[t]; d < bound[t + 1]; ++d) {
        for (int64_t k = in_edges.indptr[d]; k < in_edges.indptr[d + 1]; ++k) {
          PARTITA_CHECK(k == in_edges.indptr[d] || src[k - 1] < src[k], Error,
                        "internal: symmetrize_int32: row {} is not sorted and unique", d);
          if (k + kAhead < end) __builtin_prefetch(&count[t][src[k + kAhead]], 1);
          ++count[t][src[k]];
        }
      }
    }
  });
  CsrOf<int32_t> out;  // transpose: row s lists the destinations of s's out-edges, ascending
  out.indptr.assign(static_cast<size_t>(n) + 1, 0);
  for (int64_t s = 0; s < n; ++s) {
    int32_t offset = out.indptr[s];
    for (int t = 0; t < stripes; ++t) {
      const int32_t c = count[t][s];
      count[t][s] = offset;
      offset += c;
    }
    out.indptr[s + 1] = offset;
  }
  out.indices.resize(static_cast<size_t>(entries));
  parallel_chunks(0, stripes, 1, threads, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int32_t* cursor = count[t].data();
      const int64_t* src = in_edges.indices.data();
      int32_t* dst = out.indices.data();
      const int64_t end = in_edges.indptr[bound[t + 1]];
      for (int64_t d = bound[t]; d < bound[t + 1]; ++d) {
        for (int64_t k = in_edges.indptr[d]; k < in_edges.indptr[d + 1]; ++k) {
          if (k + 2 * kAhead < end) __builtin_prefetch(&cursor[src[k + 2 * kAhead]]);
          if (k + kAhead < end) __builtin_prefetch(dst + cursor[src[k + kAhead]], 1);
          dst[cursor[src[k]]++] = static_cast<int32_t>(d);
        }
      }
      std::vector<int32_t>().swap(count[t]);
    }
  });

  // Row sizes of the union, then offsets, then the rows themselves.
  const int64_t kRowChunk = 1 << 14;
  std::vector<int64_t> size(static_cast<size_t>(n) + 1, 0);
  auto merge = [&](int64_t v, auto&& fn) {
    merge_rows(v, in_edges.indices.data() + in_edges.indptr[v],
               in_edges.indices.data() + in_edges.indptr[v + 1], out.indices.data() + out.indptr[v],
               out.indices.data() + out.indptr[v + 1], fn);
  };
  parallel_chunks(0, n, kRowChunk, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      int64_t c = 0;
      merge(v, [&](int64_t) { ++c; });
      size[v + 1] = c;
    }
  });
  for (int64_t v = 0; v < n; ++v) size[v + 1] += size[v];
  if (size[n] > max_entries) throw too_large(size[n]);
  CsrOf<int32_t> adj;
  adj.indptr.assign(size.begin(), size.end());
  std::vector<int64_t>().swap(size);
  adj.indices.resize(static_cast<size_t>(adj.indptr[n]));
  parallel_chunks(0, n, kRowChunk, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      int32_t* dst = adj.indices.data() + adj.indptr[v];
      merge(v, [&](int64_t u) { *dst++ = static_cast<int32_t>(u); });
    }
  });
  return adj;
}

}  // namespace partita::graph
