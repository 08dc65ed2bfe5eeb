#include "partita/sample/csc_view.h"

#include <numeric>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "row_algorithms.h"

namespace partita::sample {

CscView csc_view_of(const graph::Csr& csc, ArrayView<const float> weights,
                    ArrayView<const int32_t> relations) {
  CscView view;
  view.indptr = ArrayView<const int64_t>(csc.indptr);
  view.indices = ArrayView<const int64_t>(csc.indices);
  view.weights = weights;
  view.relations = relations;
  return view;
}

std::vector<int64_t> edge_id_range(const CscView& view) {
  std::vector<int64_t> ids(static_cast<size_t>(view.indices.size()));
  std::iota(ids.begin(), ids.end(), view.first_edge);
  return ids;
}

std::vector<WeightSummary> weight_summaries(const CscView& view, int threads) {
  PARTITA_CHECK(view.weighted(), Error, "weight summaries asked of a view without weights");
  std::vector<WeightSummary> out(static_cast<size_t>(view.num_rows()));
  parallel_chunks(0, view.num_rows(), 1 << 14, threads, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t d = view.indptr[r + 1] - view.indptr[r];
      if (d > kSummarizedDegree) continue;
      const detail::WeightStats s = detail::weight_stats(view.weights.data() + view.indptr[r], d);
      out[r] = {s.max, static_cast<uint32_t>(s.heavy), static_cast<uint32_t>(s.positive)};
    }
  });
  return out;
}

void validate(const CscView& view, const char* what) {
  PARTITA_CHECK(!view.indptr.empty(), Error, "{}: indptr is empty (it needs rows + 1 offsets)",
                what);
  PARTITA_CHECK(view.first_row >= 0, Error, "{}: first row {} is negative", what, view.first_row);
  PARTITA_CHECK(view.indptr[0] >= 0, Error, "{}: indptr[0] = {} is negative", what, view.indptr[0]);
  for (int64_t r = 0; r < view.num_rows(); ++r) {
    PARTITA_CHECK(view.indptr[r] <= view.indptr[r + 1], Error,
                  "{}: indptr decreases at row {} ({} > {})", what, r, view.indptr[r],
                  view.indptr[r + 1]);
  }
  const int64_t last = view.indptr[view.num_rows()];
  PARTITA_CHECK(last <= view.indices.size(), Error,
                "{}: indptr ends at {} but there are only {} indices", what, last,
                view.indices.size());
  PARTITA_CHECK(view.weights.empty() || view.weights.size() == view.indices.size(), Error,
                "{}: {} weights for {} indices", what, view.weights.size(), view.indices.size());
  PARTITA_CHECK(view.relations.empty() || view.relations.size() == view.indices.size(), Error,
                "{}: {} relation ids for {} indices", what, view.relations.size(),
                view.indices.size());
  PARTITA_CHECK(view.times.empty() || view.times.size() == view.indices.size(), Error,
                "{}: {} edge times for {} indices", what, view.times.size(), view.indices.size());
  PARTITA_CHECK(view.first_edge >= 0, Error, "{}: first edge id {} is negative", what,
                view.first_edge);
  PARTITA_CHECK(
      view.edge_ids.empty() ||
          (view.edge_ids.size() == view.indices.size() && view.edge_ids[0] == view.first_edge &&
           view.edge_ids[view.edge_ids.size() - 1] == view.first_edge + view.indices.size() - 1),
      Error, "{}: {} edge ids for {} indices do not run from first edge {}", what,
      view.edge_ids.size(), view.indices.size(), view.first_edge);
  PARTITA_CHECK(view.stream_ids.empty() || view.stream_ids.size() == view.num_rows(), Error,
                "{}: {} stream ids for {} rows", what, view.stream_ids.size(), view.num_rows());
  PARTITA_CHECK(view.weight_summaries.empty() || view.weight_summaries.size() == view.num_rows(),
                Error, "{}: {} weight summaries for {} rows", what, view.weight_summaries.size(),
                view.num_rows());
}

}  // namespace partita::sample
