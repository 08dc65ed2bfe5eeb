#include "partita/graph/csr.h"

#include <algorithm>
#include <limits>

#include "partita/core/error.h"
#include "partita/core/parallel.h"

namespace partita::graph {

InEdgeResult build_in_edges(int64_t num_nodes, const EdgeStream& edges,
                            const InEdgeOptions& options) {
  PARTITA_CHECK(num_nodes >= 0, FormatError, "{}: negative node count {}", options.source,
                num_nodes);
  InEdgeResult result;
  Csr& csc = result.in_edges;
  csc.indptr.assign(static_cast<size_t>(num_nodes) + 1, 0);
  int64_t* count = csc.indptr.data() + 1;

  // Pass 1: validate ids and count entries per destination.
  int64_t offset = 0;
  edges([&](const int64_t* pairs, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = pairs[2 * i], d = pairs[2 * i + 1];
      if (static_cast<uint64_t>(s) >= static_cast<uint64_t>(num_nodes) ||
          static_cast<uint64_t>(d) >= static_cast<uint64_t>(num_nodes)) {
        throw FormatError(fmt::format("{}: edge {} ({}, {}) has a node id outside [0, {})",
                                      options.source, offset + i, s, d, num_nodes));
      }
      if (s == d) {
        ++result.self_loops_dropped;
        continue;
      }
      ++count[d];
      if (options.undirected) ++count[s];
    }
    offset += n;
  });
  result.input_edges = offset;
  for (int64_t v = 0; v < num_nodes; ++v) csc.indptr[v + 1] += csc.indptr[v];

  // Pass 2: place sources at their destination's cursor.
  csc.indices.resize(static_cast<size_t>(csc.indptr[num_nodes]));
  std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
  edges([&](const int64_t* pairs, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = pairs[2 * i], d = pairs[2 * i + 1];
      if (s == d) continue;
      csc.indices[cursor[d]++] = s;
      if (options.undirected) csc.indices[cursor[s]++] = d;
    }
  });
  std::vector<int64_t>().swap(cursor);
  result.duplicates_dropped = sort_and_dedup_rows(csc, resolve_threads(options.threads));
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
  csr.indices.resize(static_cast<size_t>(write));
  csr.indices.shrink_to_fit();
  return removed;
}

template int64_t sort_and_dedup_rows<int64_t>(CsrOf<int64_t>&, int);
template int64_t sort_and_dedup_rows<int32_t>(CsrOf<int32_t>&, int);

CsrOf<int32_t> symmetrize_int32(const Csr& in_edges, int threads) {
  const int64_t n = in_edges.num_rows();
  const int64_t max_entries = std::numeric_limits<int32_t>::max();
  PARTITA_CHECK(n < max_entries && 2 * in_edges.num_entries() <= max_entries, FormatError,
                "graph: {} nodes and {} symmetrized adjacency entries exceed METIS's 32-bit "
                "index limit (2^31-1); use --method random",
                n, 2 * in_edges.num_entries());
  CsrOf<int32_t> adj;
  adj.indptr.assign(static_cast<size_t>(n) + 1, 0);
  for (int64_t d = 0; d < n; ++d) {
    adj.indptr[d + 1] += static_cast<int32_t>(in_edges.degree(d));
    for (int64_t k = in_edges.indptr[d]; k < in_edges.indptr[d + 1]; ++k)
      ++adj.indptr[in_edges.indices[k] + 1];
  }
  for (int64_t v = 0; v < n; ++v) adj.indptr[v + 1] += adj.indptr[v];
  adj.indices.resize(static_cast<size_t>(adj.indptr[n]));
  std::vector<int32_t> cursor(adj.indptr.begin(), adj.indptr.end() - 1);
  for (int64_t d = 0; d < n; ++d) {
    for (int64_t k = in_edges.indptr[d]; k < in_edges.indptr[d + 1]; ++k) {
      const int64_t s = in_edges.indices[k];
      adj.indices[cursor[d]++] = static_cast<int32_t>(s);
      adj.indices[cursor[s]++] = static_cast<int32_t>(d);
    }
  }
  std::vector<int32_t>().swap(cursor);
  sort_and_dedup_rows(adj, threads);
  return adj;
}

}  // namespace partita::graph
