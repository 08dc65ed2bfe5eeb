// DeviceTopology: see partita/train/device_sampler.h.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/train/device_sampler.h"

namespace partita::train {
namespace {

// Runs must be shorter than this: device_random::below needs n < 2^31.
constexpr int64_t kMaxRun = (int64_t{1} << 31) - 1;

torch::Tensor borrowed(ArrayView<const int64_t> a) {
  // The arrays outlive the topology (the session's mapped parts); nothing writes them.
  return torch::from_blob(const_cast<int64_t*>(a.data()), {a.size()}, torch::kInt64);
}

torch::Tensor borrowed(ArrayView<const float> a) {
  return torch::from_blob(const_cast<float*>(a.data()), {a.size()}, torch::kFloat32);
}

// The views checked to cover [0, N) in order; returns N and the entry count E.
std::pair<int64_t, int64_t> check_views(const std::vector<sample::CscView>& views, bool typed,
                                        int num_relations, bool weights, bool times) {
  int64_t rows = 0, edges = 0;
  for (size_t p = 0; p < views.size(); ++p) {
    const sample::CscView& v = views[p];
    sample::validate(v, "device topology");
    PARTITA_CHECK(v.first_row == rows, Error,
                  "device topology: view {} starts at row {}, expected {} (views must cover the "
                  "graph in order)",
                  p, v.first_row, rows);
    PARTITA_CHECK(v.typed() == typed || v.num_rows() == 0, Error,
                  "device topology: view {} is {}typed, view 0 is {}typed", p,
                  v.typed() ? "" : "un", typed ? "" : "un");
    PARTITA_CHECK(!weights || v.weighted() || v.indices.empty(), Error,
                  "device topology: view {} has no edge weights", p);
    PARTITA_CHECK(!times || v.timed() || v.indices.empty(), Error,
                  "device topology: view {} has no edge times", p);
    rows += v.num_rows();
    edges += v.num_rows() > 0 ? v.indptr[v.num_rows()] - v.indptr[0] : 0;
  }
  PARTITA_CHECK(!typed || num_relations >= 1, Error,
                "device topology: a typed graph needs at least one relation, got {}",
                num_relations);
  return {rows, edges};
}

}  // namespace

DeviceTopology::DeviceTopology(const std::vector<sample::CscView>& views, int num_relations,
                               torch::Device device, bool weights, bool times)
    : device_(device) {
  typed_ = !views.empty() && views[0].typed();
  relations_ = typed_ ? num_relations : 1;
  std::tie(num_nodes_, num_edges_) = check_views(views, typed_, num_relations, weights, times);
  const int64_t R = relations_;
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);

  // The CPU with one untyped view starting at offset 0: its arrays as they are.
  if (device_.is_cpu() && !typed_ && views.size() == 1 && views[0].num_rows() > 0 &&
      views[0].indptr[0] == 0) {
    const sample::CscView& v = views[0];
    for (int64_t r = 0; r < v.num_rows(); ++r)
      PARTITA_CHECK(v.indptr[r + 1] - v.indptr[r] <= kMaxRun, Error,
                    "device topology: node {} has {} in-edges, more than device sampling takes "
                    "({})",
                    r, v.indptr[r + 1] - v.indptr[r], kMaxRun);
    edge_shift_ = v.first_edge;
    run_ptr_ = borrowed(v.indptr);
    indices_ = borrowed(v.indices.subview(0, v.indptr[v.num_rows()]));
    stream_ids_ = v.stream_ids.empty() ? torch::arange(num_nodes_, i64) : borrowed(v.stream_ids);
    device_bytes_ = v.stream_ids.empty() ? num_nodes_ * 8 : 0;
    if (weights) weights_ = borrowed(v.weights.subview(0, v.indptr[v.num_rows()]));
    if (times) times_ = borrowed(v.times.subview(0, v.indptr[v.num_rows()]));
    return;
  }

  // Host copies in the device's layout, then one transfer each.
  const bool narrow = !device_.is_cpu() && num_nodes_ < std::numeric_limits<int32_t>::max();
  torch::Tensor run_ptr = torch::empty({num_nodes_ * R + 1}, i64);
  torch::Tensor indices =
      torch::empty({num_edges_}, i64.dtype(narrow ? torch::kInt32 : torch::kInt64));
  torch::Tensor stream_ids = torch::empty({num_nodes_}, i64);
  torch::Tensor weight = weights ? torch::empty({num_edges_}, torch::kFloat32) : torch::Tensor();
  torch::Tensor time = times ? torch::empty({num_edges_}, i64) : torch::Tensor();
  int64_t* ptr = run_ptr.data_ptr<int64_t>();
  int64_t* sid = stream_ids.data_ptr<int64_t>();
  int64_t base = 0;  // entries of the views before this one
  // Edge ids: view v's entry `first + e` is at base + e here and is edge v.first_edge +
  // first + e: the shift is v.first_edge + first - base, per view.
  std::vector<std::pair<int64_t, int64_t>> shifts;  // (rows, shift) of each view
  for (const sample::CscView& v : views) {
    const int64_t first = v.num_rows() > 0 ? v.indptr[0] : 0;
    shifts.emplace_back(v.num_rows(), v.first_edge + first - base);
    for (int64_t r = 0; r < v.num_rows(); ++r) {
      const int64_t node = v.first_row + r;
      sid[node] = v.stream_id(node);
      const int64_t begin = v.indptr[r], end = v.indptr[r + 1];
      for (int64_t e = begin; typed_ && e < end; ++e) {
        const int32_t q = v.relations[e];
        PARTITA_CHECK(q >= 0 && q < R && (e == begin || v.relations[e - 1] <= q), Error,
                      "device topology: node {}: relation {} of entry {} is outside [0, {}) or "
                      "out of order",
                      node, q, e - begin, R);
      }
      // Run q starts at the first entry of relation >= q (rows are sorted by relation).
      int64_t k = begin;
      for (int64_t q = 0; q < R; ++q) {
        while (typed_ && k < end && v.relations[k] < q) ++k;
        ptr[node * R + q] = base + k - first;
      }
      for (int64_t q = 0; q < R; ++q) {
        const int64_t stop = q + 1 < R ? ptr[node * R + q + 1] : base + end - first;
        PARTITA_CHECK(stop - ptr[node * R + q] <= kMaxRun, Error,
                      "device topology: node {} has {} in-edges of one relation, more than "
                      "device sampling takes ({})",
                      node, stop - ptr[node * R + q], kMaxRun);
      }
    }
    const int64_t count = v.num_rows() > 0 ? v.indptr[v.num_rows()] - first : 0;
    if (narrow) {
      int32_t* out = indices.data_ptr<int32_t>() + base;
      for (int64_t e = 0; e < count; ++e) out[e] = static_cast<int32_t>(v.indices[first + e]);
    } else if (count > 0) {
      std::memcpy(indices.data_ptr<int64_t>() + base, v.indices.data() + first,
                  static_cast<size_t>(count) * sizeof(int64_t));
    }
    if (weights && count > 0)
      std::memcpy(weight.data_ptr<float>() + base, v.weights.data() + first,
                  static_cast<size_t>(count) * sizeof(float));
    if (times && count > 0)
      std::memcpy(time.data_ptr<int64_t>() + base, v.times.data() + first,
                  static_cast<size_t>(count) * sizeof(int64_t));
    base += count;
  }
  ptr[num_nodes_ * R] = base;
  run_ptr_ = run_ptr.to(device_);
  indices_ = indices.to(device_);
  stream_ids_ = stream_ids.to(device_);
  device_bytes_ = (run_ptr.numel() + stream_ids.numel()) * 8 +
                  indices.numel() * static_cast<int64_t>(indices.element_size());
  if (weights) {
    weights_ = weight.to(device_);
    device_bytes_ += num_edges_ * 4;
  }
  if (times) {
    times_ = time.to(device_);
    device_bytes_ += num_edges_ * 8;
  }
  // One shift for the whole graph (views with rows, in order, each at its first_edge: a
  // partition's parts), else one per row.
  const auto with_rows =
      std::find_if(shifts.begin(), shifts.end(), [](const auto& s) { return s.first > 0; });
  edge_shift_ = with_rows != shifts.end() ? with_rows->second : 0;
  if (std::all_of(shifts.begin(), shifts.end(),
                  [&](const auto& s) { return s.first == 0 || s.second == edge_shift_; }))
    return;
  torch::Tensor per_row = torch::empty({num_nodes_}, i64);
  int64_t* out = per_row.data_ptr<int64_t>();
  for (const auto& [rows, shift] : shifts) out = std::fill_n(out, rows, shift);
  row_edge_shift_ = per_row.to(device_);
  device_bytes_ += num_nodes_ * 8;
}

torch::Tensor DeviceTopology::edge_ids(const torch::Tensor& entries,
                                       const torch::Tensor& nodes) const {
  if (!row_edge_shift_.defined()) return entries + edge_shift_;
  return entries + row_edge_shift_.index_select(0, nodes);
}

}  // namespace partita::train
