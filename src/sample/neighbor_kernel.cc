#include "partita/sample/neighbor_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/core/random.h"
#include "partita/sample/sample_key.h"

namespace partita::sample {
namespace {

// Floyd's algorithm keeps its taken set three ways, by fanout (measured with fanouts
// 5..100 on rows of degree 200): up to kTinyFanout a small array scanned and rank-sorted
// without data-dependent branches (they mispredict on random draws); up to kSmallFanout a
// sorted array with insertion; above, an open-addressing set and a final sort. All three
// take the same positions for the same draws.
constexpr int64_t kTinyFanout = 16;
constexpr int64_t kSmallFanout = 128;
// Up to this fanout the output is sized nodes * fanout without reading degrees first.
constexpr int64_t kDirectBoundFanout = 64;
// Nodes ahead whose offsets are prefetched (sample_chunk: and whose row start; offsets
// then twice as far ahead).
constexpr int64_t kPrefetchDistance = 8;

// Per-chunk scratch, grown on demand and reused for every node of the chunk.
struct Scratch {
  std::vector<int64_t> set;                       // Floyd, large k
  std::vector<double> cumulative;                 // weighted, with replacement
  std::vector<std::pair<double, int64_t>> keyed;  // weighted, without replacement
};

inline bool positive(float w) { return w > 0.0f && w <= std::numeric_limits<float>::max(); }

[[noreturn]] void throw_outside(const CscView& view, int64_t node) {
  throw Error(fmt::format("sample: node {} is outside the rows [{}, {}) of this view", node,
                          view.first_row, view.end_row()));
}

int64_t copy_row(const int64_t* row, int64_t d, int64_t* out) {
  if (d > 0) std::memcpy(out, row, static_cast<size_t>(d) * sizeof(int64_t));
  return d;
}

int64_t copy_positive(const int64_t* row, const float* w, int64_t d, int64_t* out) {
  int64_t c = 0;
  for (int64_t i = 0; i < d; ++i) {
    if (positive(w[i])) out[c++] = row[i];
  }
  return c;
}

// Floyd's algorithm, k < d, k <= kTinyFanout: membership is an OR over every taken
// position; the result is sorted by rank (the number of smaller taken positions, all
// distinct).
int64_t floyd_tiny(Rng& rng, int64_t d, int64_t k, int64_t* pos) {
  int64_t taken[kTinyFanout];
  for (int64_t c = 0; c < k; ++c) {
    const int64_t j = d - k + c;
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    bool seen = false;
    for (int64_t q = 0; q < c; ++q) seen |= taken[q] == t;
    taken[c] = seen ? j : t;
  }
  for (int64_t a = 0; a < k; ++a) {
    int64_t rank = 0;
    for (int64_t b = 0; b < k; ++b) rank += taken[b] < taken[a];
    pos[rank] = taken[a];
  }
  return k;
}

// Floyd's algorithm, k < d, k <= kSmallFanout. pos[0..c) stays sorted: a draw t already
// taken means j is taken instead, and j exceeds everything taken so far.
int64_t floyd_small(Rng& rng, int64_t d, int64_t k, int64_t* pos) {
  int64_t c = 0;
  for (int64_t j = d - k; j < d; ++j) {
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    int64_t p = c;
    while (p > 0 && pos[p - 1] > t) --p;
    if (p > 0 && pos[p - 1] == t) {
      pos[c++] = j;
      continue;
    }
    for (int64_t q = c; q > p; --q) pos[q] = pos[q - 1];
    pos[p] = t;
    ++c;
  }
  return c;
}

// Floyd's algorithm, k < d, any k: the same draws and decisions with a hash set.
int64_t floyd_large(Rng& rng, int64_t d, int64_t k, int64_t* pos, Scratch& scratch) {
  uint64_t capacity = 16;
  while (capacity < 2 * static_cast<uint64_t>(k)) capacity <<= 1;
  const uint64_t mask = capacity - 1;
  scratch.set.assign(capacity, -1);
  int64_t* set = scratch.set.data();
  auto insert = [&](int64_t x) {  // false if x was present
    uint64_t h = mix64(static_cast<uint64_t>(x)) & mask;
    while (true) {
      if (set[h] == -1) {
        set[h] = x;
        return true;
      }
      if (set[h] == x) return false;
      h = (h + 1) & mask;
    }
  };
  int64_t c = 0;
  for (int64_t j = d - k; j < d; ++j) {
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    if (insert(t)) {
      pos[c++] = t;
    } else {
      insert(j);
      pos[c++] = j;
    }
  }
  std::sort(pos, pos + c);
  return c;
}

// Uniform modes split a node's work in two: draw positions now (and prefetch the lines
// they fall on), read the ids kLag nodes later, when those lines have arrived. kWholeRow:
// take every entry.
constexpr int64_t kWholeRow = -1;

struct UniformWithout {
  int64_t k;
  int64_t operator()(int64_t d, uint64_t node_key, int64_t* pos, Scratch& scratch) const {
    if (k >= d) return kWholeRow;
    Rng rng(node_key);
    if (k <= kTinyFanout) return floyd_tiny(rng, d, k, pos);
    if (k <= kSmallFanout) return floyd_small(rng, d, k, pos);
    return floyd_large(rng, d, k, pos, scratch);
  }
};

struct UniformWith {
  int64_t k;
  int64_t operator()(int64_t d, uint64_t node_key, int64_t* pos, Scratch&) const {
    if (d == 0) return 0;
    Rng rng(node_key);
    for (int64_t i = 0; i < k; ++i)
      pos[i] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(d)));
    return k;
  }
};

struct WeightedWithout {
  int64_t k;
  int64_t operator()(const int64_t* row, const float* w, int64_t d, uint64_t node_key, int64_t* out,
                     Scratch& scratch) const {
    if (k >= d) return copy_positive(row, w, d, out);
    Rng rng(node_key);
    auto& keyed = scratch.keyed;
    keyed.clear();
    for (int64_t i = 0; i < d; ++i) {
      const double u = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;
      if (positive(w[i])) keyed.emplace_back(-std::log(u) / w[i], i);
    }
    if (static_cast<int64_t>(keyed.size()) <= k) {
      for (size_t i = 0; i < keyed.size(); ++i) out[i] = row[keyed[i].second];
      return static_cast<int64_t>(keyed.size());
    }
    std::nth_element(keyed.begin(), keyed.begin() + k, keyed.end());  // (key, i) order
    for (int64_t i = 0; i < k; ++i) out[i] = keyed[i].second;
    std::sort(out, out + k);
    for (int64_t i = 0; i < k; ++i) out[i] = row[out[i]];
    return k;
  }
};

struct WeightedWith {
  int64_t k;
  int64_t operator()(const int64_t* row, const float* w, int64_t d, uint64_t node_key, int64_t* out,
                     Scratch& scratch) const {
    auto& cumulative = scratch.cumulative;
    cumulative.resize(static_cast<size_t>(d));
    double total = 0.0;
    int64_t last = -1;
    for (int64_t i = 0; i < d; ++i) {
      if (positive(w[i])) {
        total += w[i];
        last = i;
      }
      cumulative[i] = total;
    }
    if (last < 0) return 0;
    Rng rng(node_key);
    for (int64_t j = 0; j < k; ++j) {
      const double x = rng.uniform() * total;
      int64_t i =
          std::upper_bound(cumulative.begin(), cumulative.begin() + d, x) - cumulative.begin();
      out[j] = row[std::min(i, last)];
    }
    return k;
  }
};

struct All {
  bool weighted;
  int64_t operator()(const int64_t* row, const float* w, int64_t d, uint64_t, int64_t* out,
                     Scratch&) const {
    return weighted ? copy_positive(row, w, d, out) : copy_row(row, d, out);
  }
};

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
