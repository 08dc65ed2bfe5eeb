#pragma once
// Orders every row of a CSC whose entries are being built (the one-process builder in
// data/edge_arrays.cc and the ranks' builder in partition/shard_graph.cc): each row
// by data::order_row, then the kept entries packed to the front.
#include <cstdint>
#include <vector>

#include "partita/core/parallel.h"
#include "partita/data/edge_arrays.h"

namespace partita::data {

// Sorts each row r's entries (*entries)[indptr[r] .. indptr[r + 1]) by key(entry) (an
// EdgeOrderKey) and, unless `keep_repeats`, keeps the first entry of each source, as
// order_row does; then moves the kept entries of every row together, rewrites *indptr to
// them and shrinks *entries to their count, which it returns. Rows are ordered on
// `threads` threads (>= 1); the result does not depend on it.
template <class T, class Key>
int64_t order_rows(std::vector<int64_t>* indptr, std::vector<T>* entries, bool keep_repeats,
                   int threads, Key key) {
  std::vector<int64_t>& ptr = *indptr;
  const int64_t rows = static_cast<int64_t>(ptr.size()) - 1;
  T* data = entries->data();
  std::vector<int64_t> kept(static_cast<size_t>(rows), 0);
  parallel_chunks(0, rows, 1 << 12, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v)
      kept[v] = order_row(data + ptr[v], data + ptr[v + 1], keep_repeats, key);
  });
  int64_t out = 0;
  for (int64_t v = 0; v < rows; ++v) {
    const int64_t begin = ptr[v];
    for (int64_t k = 0; k < kept[v]; ++k) data[out + k] = data[begin + k];
    ptr[v] = out;
    out += kept[v];
  }
  ptr[rows] = out;
  entries->resize(static_cast<size_t>(out));
  return out;
}

}  // namespace partita::data
