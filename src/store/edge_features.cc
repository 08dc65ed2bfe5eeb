// Edge features by global edge id (feature_store.h, "Edge features"): an edge's row lives
// with the part that stores the edge, at position id - first_edge() of its edge_feat.npy.
#include "edge_features.h"

#include <cstring>
#include <string>
#include <vector>

#include "partita/comm/errors.h"
#include "partita/comm/sliced_exchange.h"
#include "partita/core/error.h"
#include "partita/store/feature_store.h"

namespace partita::store {
namespace {

constexpr size_t kSliceBytes = size_t{1} << 20;  // reply bytes per remote request, as features
constexpr int64_t kPrefetchRows = 4;

}  // namespace

void add_edge_feature_route(RpcRouter& router, const DistGraph& graph) {
  router.add(kRequestEdgeFeatures, [&graph](int source, WireReader& request) {
    PARTITA_CHECK(graph.has_edge_features(), CommError,
                  "rank {} was asked by rank {} for edge features; {} holds none", graph.rank(),
                  source, graph.dir());
    ArrayView<const int64_t> ids = request.get_array<int64_t>();
    request.expect_end();
    const int64_t width = graph.edge_feat_row_bytes();
    WireWriter reply(16 + static_cast<size_t>(ids.size() * width));
    uint8_t* out = reply.put_uninitialized<uint8_t>(ids.size() * width);
    for (int64_t i = 0; i < ids.size(); ++i) {
      PARTITA_CHECK(graph.stores_edge(ids[i]), CommError,
                    "rank {} was asked by rank {} for edge {} it does not store", graph.rank(),
                    source, ids[i]);
      std::memcpy(out + i * width, graph.edge_features() + (ids[i] - graph.first_edge()) * width,
                  static_cast<size_t>(width));
    }
    return reply.take();
  });
}

void FeatureFetcher::fetch_edge_features(ArrayView<const int64_t> edge_ids, void* out_bytes) {
  PARTITA_CHECK(graph_.has_edge_features(), Error,
                "{}: edge features asked of a partition without edge_feat.npy", graph_.dir());
  const int64_t width = graph_.edge_feat_row_bytes();
  const size_t row_bytes = static_cast<size_t>(width);
  uint8_t* out = static_cast<uint8_t*>(out_bytes);
  const uint8_t* rows = graph_.edge_features();
  const int64_t first = graph_.first_edge();
  std::vector<std::vector<int64_t>> positions;  // per remote rank: input positions
  int64_t local_rows = 0, host_rows = 0, cache_hits = 0;
  const int64_t n = edge_ids.size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t e = edge_ids[i];
    // Rows are scattered over the mapped file: start loading the one kPrefetchRows ahead.
    if (i + kPrefetchRows < n && graph_.stores_edge(edge_ids[i + kPrefetchRows])) {
      const char* row =
          reinterpret_cast<const char*>(rows + (edge_ids[i + kPrefetchRows] - first) * width);
      for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(row + b);
    }
    if (graph_.stores_edge(e)) {
      std::memcpy(out + i * width, rows + (e - first) * width, row_bytes);
      ++local_rows;
      continue;
    }
    const int owner = graph_.edge_owner(e);  // throws on an id out of range
    if (host_ != nullptr) {
      if (const DistGraph* peer = host_->peer(owner)) {
        std::memcpy(out + i * width, peer->edge_features() + (e - peer->first_edge()) * width,
                    row_bytes);
        ++host_rows;
        continue;
      }
    }
    if (const uint8_t* row = edge_cache_ != nullptr ? edge_cache_->find(e) : nullptr) {
      std::memcpy(out + i * width, row, row_bytes);
      ++cache_hits;
      continue;
    }
    if (positions.empty()) positions.resize(static_cast<size_t>(graph_.world_size()));
    positions[static_cast<size_t>(owner)].push_back(i);
  }
  local_rows_ += local_rows;
  host_rows_ += host_rows;
  edge_cache_hits_ += cache_hits;
  if (positions.empty()) return;
  PARTITA_CHECK(endpoint_ != nullptr, Error,
                "internal: remote edge rows asked without an endpoint");
  const size_t slice_rows = std::max<size_t>(1, kSliceBytes / std::max<size_t>(row_bytes, 1));
  remote_requests_ += sliced_exchange(
      *endpoint_, kRequestEdgeFeatures, positions, slice_rows,
      [&](ArrayView<const int64_t> slice, WireWriter& request) {
        int64_t* req_ids = request.put_uninitialized<int64_t>(slice.size());
        for (int64_t k = 0; k < slice.size(); ++k) req_ids[k] = edge_ids[slice[k]];
      },
      [&](int owner, ArrayView<const int64_t> slice, const std::vector<uint8_t>& bytes) {
        WireReader reply(bytes.data(), bytes.size(), "reply of rank " + std::to_string(owner));
        ArrayView<const uint8_t> got = reply.get_array<uint8_t>();
        reply.expect_end();
        PARTITA_CHECK(got.size() == slice.size() * width, CommError,
                      "reply of rank {}: {} bytes for {} edge rows of {} bytes", owner, got.size(),
                      slice.size(), width);
        for (int64_t k = 0; k < slice.size(); ++k)
          std::memcpy(out + slice[k] * width, got.data() + k * width, row_bytes);
        remote_rows_ += slice.size();
        remote_bytes_ += static_cast<int64_t>(bytes.size());
      });
}

}  // namespace partita::store
