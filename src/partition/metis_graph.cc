// METIS's input graph: symmetric adjacency in 32-bit indices.
#include <array>
#include <atomic>
#include <limits>

#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/random.h"
#include "partita/partition/assign.h"

namespace partita::partition {

constexpr int64_t kRowChunk = 1 << 14;

// A CSC (rows sorted and unique, as graph::Csr promises) is symmetric iff its edge set equals
// its reversed edge set. Both are summed under two independent 64-bit hashes of the ordered
// pair: one sequential pass, no random access (a binary search per edge took ~35 s on a
// 122M-edge graph, this takes well under a second). Different sets collide with probability
// about 2^-128; even then the partition written stays exact (METIS's adjacency is a copy of
// the input rows), only METIS would see an asymmetric graph.
bool is_symmetric(const graph::Csr& in, int threads) {
  constexpr uint64_t kSeedA = 0x243f6a8885a308d3ULL, kSeedB = 0x13198a2e03707344ULL;
  auto hash = [](uint64_t seed, int64_t a, int64_t b) {
    return mix64(mix64(static_cast<uint64_t>(a) ^ seed) + static_cast<uint64_t>(b));
  };
  // Fast rejection of most directed graphs: a symmetric graph's out-degrees equal its
  // in-degrees (one pass of increments, cheaper than the hashes).
  {
    std::vector<int64_t> out_degree(static_cast<size_t>(in.num_rows()), 0);
    for (int64_t s : in.indices) ++out_degree[s];
    for (int64_t v = 0; v < in.num_rows(); ++v)
      if (out_degree[v] != in.degree(v)) return false;
  }
  const int64_t n = in.num_rows();
  const int64_t chunks = (n + kRowChunk - 1) / kRowChunk;
  // Per-chunk sums, added in chunk order: the result does not depend on the thread count.
  std::vector<std::array<uint64_t, 4>> sums(static_cast<size_t>(chunks), {0, 0, 0, 0});
  std::atomic<bool> self_loop{false};
  parallel_chunks(0, n, kRowChunk, threads, [&](int64_t b, int64_t e) {
    std::array<uint64_t, 4>& s = sums[b / kRowChunk];
    for (int64_t d = b; d < e; ++d)
      for (int64_t k = in.indptr[d]; k < in.indptr[d + 1]; ++k) {
        const int64_t src = in.indices[k];
        if (src == d) self_loop.store(true, std::memory_order_relaxed);
        s[0] += hash(kSeedA, src, d);
        s[1] += hash(kSeedA, d, src);
        s[2] += hash(kSeedB, src, d);
        s[3] += hash(kSeedB, d, src);
      }
  });
  std::array<uint64_t, 4> total{0, 0, 0, 0};
  for (const auto& s : sums)
    for (int i = 0; i < 4; ++i) total[i] += s[i];
  return !self_loop.load() && total[0] == total[1] && total[2] == total[3];
}

// Whether a row is not strictly ascending: a source listed twice (edge_time keeps a pair
// listed at several times, data/edge_arrays.h), or typed rows, sorted by (relation, source).
bool has_unsorted_rows(const graph::Csr& in, int threads) {
  std::atomic<bool> repeat{false};
  parallel_chunks(0, in.num_rows(), kRowChunk, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v)
      for (int64_t k = in.indptr[v] + 1; k < in.indptr[v + 1]; ++k)
        if (in.indices[k] <= in.indices[k - 1]) {
          repeat.store(true, std::memory_order_relaxed);
          return;
        }
  });
  return repeat.load();
}

MetisGraph metis_graph(const graph::Csr& in, int threads) {
  if (has_unsorted_rows(in, threads)) {
    // METIS wants each neighbour once: a deduplicated copy, never the input's own rows.
    graph::Csr unique = in;
    graph::sort_and_dedup_rows(unique, threads);
    MetisGraph g = metis_graph(unique, threads);
    g.equals_input = false;
    return g;
  }
  const int64_t n = in.num_rows(), entries = in.num_entries();
  MetisGraph g;
  if (n < std::numeric_limits<int32_t>::max() && entries <= std::numeric_limits<int32_t>::max() &&
      is_symmetric(in, threads)) {
    log_info("partition: the graph is symmetric; using it as METIS's adjacency directly");
    g.equals_input = true;
    g.adj.indptr.resize(static_cast<size_t>(n) + 1);
    g.adj.indices.resize(static_cast<size_t>(entries));
    parallel_chunks(0, n + 1, kRowChunk * 16, threads, [&](int64_t b, int64_t e) {
      for (int64_t v = b; v < e; ++v) g.adj.indptr[v] = static_cast<int32_t>(in.indptr[v]);
    });
    parallel_chunks(0, entries, kRowChunk * 64, threads, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) g.adj.indices[k] = static_cast<int32_t>(in.indices[k]);
    });
    return g;
  }
  log_info("partition: symmetrizing {} nodes, {} edges for METIS", n, entries);
  g.adj = graph::symmetrize_int32(in, threads);  // throws past the 32-bit limit
  return g;
}

}  // namespace partita::partition
