#pragma once
// Features and labels of any global ids: owned rows are copied straight from the mapped
// part, remote rows come from their owners with one request per owner, all in flight at
// once (comm/rpc.h). Results are in input order.
//
// Serving side: add_feature_routes() registers the handlers on the router of every rank
// before its RpcEndpoint starts. They answer from the owned rows only and reject ids the
// rank does not own.
//
// Thread-safety: fetch_* may be called from several threads at once.
#include <atomic>
#include <cstdint>

#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_cache.h"

namespace partita::store {

struct FetchStats {
  int64_t local_rows = 0;
  int64_t remote_rows = 0;     // rows that crossed the wire
  int64_t remote_requests = 0;
  int64_t remote_bytes = 0;    // reply payload bytes received
  int64_t cache_hits = 0;      // remote feature rows answered by the cache instead
};

void add_feature_routes(RpcRouter& router, const DistGraph& graph);

class FeatureFetcher {
 public:
  // `endpoint` may be null when this rank owns every id it will be asked for (one rank, or
  // replicated mode); a remote id then throws Error. Both must outlive the fetcher.
  FeatureFetcher(const DistGraph& graph, RpcEndpoint* endpoint);

  // Answers remote feature rows from `cache` first (null: no cache). Results do not change.
  // Set it while no fetch is in progress; the cache must outlive its use.
  void set_cache(const FeatureCache* cache) { cache_ = cache; }

  // out: [ids.size(), feat_dim] row-major, in the graph's feature_dtype() (as stored:
  // feature_row_bytes() per row). Throws Error on an id outside [0, num_nodes),
  // TimeoutError/CommError from remote owners.
  void fetch_features(ArrayView<const int64_t> ids, void* out);
  // out: [ids.size()].
  void fetch_labels(ArrayView<const int64_t> ids, int64_t* out);
  // out: [ids.size()], the in-degree of each node in the partitioned graph (the number of
  // entries of its CSC row; for a symmetric graph, its degree).
  void fetch_degrees(ArrayView<const int64_t> ids, int64_t* out);

  FetchStats stats() const;

 private:
  // Writes `width` values of type T per id into out, in input order: owned ids through
  // copy_local(local_row, dst), remote ids from their owners (request kind `kind`).
  // prefetch_base (may be null): rows of `width` values indexed by local row, touched a few
  // ids ahead of the copy. cached (may be null): the cached row of a remote id, or null.
  template <class T, class CopyLocal>
  void fetch(ArrayView<const int64_t> ids, uint64_t kind, int64_t width, CopyLocal copy_local,
             const T* prefetch_base, const FeatureCache* cache, T* out);

  const DistGraph& graph_;
  RpcEndpoint* endpoint_;
  const FeatureCache* cache_ = nullptr;
  std::atomic<int64_t> local_rows_{0}, remote_rows_{0}, remote_requests_{0}, remote_bytes_{0},
      cache_hits_{0};
};

}  // namespace partita::store
