#pragma once
// Features and labels of any global ids: owned rows are copied straight from the mapped
// part, remote rows come from their owners with one request per owner, all in flight at
// once (comm/rpc.h). Results are in input order.
//
// Serving side: add_feature_routes() registers the handlers on the router of every rank
// before its RpcEndpoint starts. They answer from the owned rows only and reject ids the
// rank does not own.
//
// Typed partitions (DistGraph::typed()): features are per node type. fetch_typed_features
// takes the ids of every type of a batch at once and sends each owner ONE request carrying
// all of them (kRequestTypedFeatures in the registry comm/request_kinds.h), so a typed
// batch's features travel in one round however many types it has; fetch_type_features
// fetches one type (kRequestTypeFeatures, whose request carries the type before the ids).
// Both give the same bytes. The hot-feature cache (set_cache) of a typed graph is a typed
// FeatureCache (FeatureCache::fetch_typed: each row its type's width); both typed fetches
// consult it, and fetch_features refuses a typed graph.
//
// Wire (after the u64 kind, comm/request_kinds.h; docs/formats.md). features, labels,
// degrees, node_times: the request is a counted i64 array of ids the receiver owns; the reply a
// counted array of their rows in request order (u8, feature_row_bytes() per id; i64 labels; i64
// in-degrees; i64 node times). type_features: the request is an i64 node type, then the counted
// ids; the reply as features, type_feature_row_bytes(type) per id. typed_features: the request is
// a counted i64 array of ids the receiver owns, of any featured types mixed; the reply a
// counted u8 array of their rows in request order, each type_feature_row_bytes() of its
// id's type wide (the receiver knows every id's type from the schema). edge_features: the
// request is a counted i64 array of global edge ids the receiver stores; the reply a counted
// u8 array of their edge_feat rows in request order, edge_feat_row_bytes() per id.
//
// Edge features (fetch_edge_features, issue 41): rows of edge_feat.npy by global edge id
// (DistGraph::first_edge), kept by the part that stores the edge (the owner of its dst):
// rows stored here are read in place, a mapped peer's from its mapping, others requested
// from their owners over the same sliced request path as node features. Edge rows have a
// hot-feature cache of their own (set_edge_cache: a FeatureCache keyed by global edge id,
// built by FeatureCache::fetch_edges), consulted after the mapped peers and before the
// owners, as the node cache is; the stats count its hits apart (edge_cache_hits).

// Host-local rows (set_host_parts, issue 23): rows owned by a rank whose part is mapped here
// (same host, same directory: runtime/host_local.h) are copied from that mapping, no request
// sent; the results are the same bytes the owner would send.
//
// Resident rows (fetch_features_except, issue 24): ids whose rows the caller already holds
// (store/resident_rows.h, e.g. in a device cache) are skipped before anything else: not
// gathered, not requested, not counted as local, host or remote rows; the stats count them
// apart (resident_*), so the traffic figures stay those of the rows really fetched.
//
// Thread-safety: fetch_* may be called from several threads at once.
#include <atomic>
#include <cstdint>
#include <memory_resource>
#include <vector>

#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_cache.h"
#include "partita/store/host_parts.h"
#include "partita/store/resident_rows.h"

namespace partita::store {

struct FetchStats {
  int64_t local_rows = 0;
  int64_t remote_rows = 0;  // rows that crossed the wire
  int64_t remote_requests = 0;
  int64_t remote_bytes = 0;  // reply payload bytes received
  int64_t cache_hits = 0;    // remote feature rows answered by the cache instead
  int64_t host_rows = 0;     // rows of other ranks copied from their mapped parts (no request)
  // fetch_features_except: feature rows looked up in a resident set, the ones found there
  // (not fetched at all), and of those the ones owned by other ranks.
  int64_t resident_lookups = 0;
  int64_t resident_hits = 0;
  int64_t resident_remote_hits = 0;
  // Remote edge feature rows answered by the edge cache (set_edge_cache) instead of their
  // owners (not in cache_hits, which counts node rows).
  int64_t edge_cache_hits = 0;
};

// Registers features, labels, degrees, node times, typed features and edge features.
void add_feature_routes(RpcRouter& router, const DistGraph& graph);

class FeatureFetcher {
 public:
  // `endpoint` may be null when this rank owns every id it will be asked for (one rank, or
  // replicated mode); a remote id then throws Error. Both must outlive the fetcher.
  FeatureFetcher(const DistGraph& graph, RpcEndpoint* endpoint);

  // Answers remote feature rows from `cache` first (null: no cache). Results do not change.
  // Set it while no fetch is in progress; the cache must outlive its use. On a typed graph
  // it must be a typed cache of this graph (FeatureCache::fetch_typed).
  void set_cache(const FeatureCache* cache) { cache_ = cache; }
  // Reads the rows of the ranks whose parts `parts` maps from memory (null: none), before
  // the cache is consulted. Same rules as set_cache; `parts` must outlive its use.
  void set_host_parts(const HostParts* parts) { host_ = parts; }
  // Answers remote edge feature rows (fetch_edge_features) from `cache`, a cache keyed by
  // global edge id of edge_feat_row_bytes() rows (FeatureCache::fetch_edges; null: none),
  // after the mapped peers. Results do not change. Same rules as set_cache.
  void set_edge_cache(const FeatureCache* cache) { edge_cache_ = cache; }

  // out: [ids.size(), feat_dim] row-major, in the graph's feature_dtype() (as stored:
  // feature_row_bytes() per row). Throws Error on an id outside [0, num_nodes) or on a typed
  // graph (use fetch_type_features), TimeoutError/CommError from remote owners.
  void fetch_features(ArrayView<const int64_t> ids, void* out);
  // fetch_features for the ids not in `resident`: their positions in `ids` and slots are
  // appended to *hits (store/resident_rows.h), and *out is resized to the rows of the other
  // ids, packed in input order ([ids.size() - hits, feat_dim], feature_row_bytes() each).
  // An empty resident set gives exactly fetch_features' rows. Same errors as fetch_features.
  // (*out keeps its memory resource: the batch pipeline's may be pinned host memory.)
  void fetch_features_except(ArrayView<const int64_t> ids, const ResidentRows& resident,
                             ResidentHits* hits, std::pmr::vector<uint8_t>* out);
  // Typed graphs: out: [ids.size(), type_feat_dim(type)] row-major in feature_dtype()
  // (type_feature_row_bytes(type) per row), in input order. Every id must be of node type
  // `type`, and the type must have features: Error otherwise (naming the id or the type).
  // Owned rows are copied locally, remote rows come from their owners, one request per owner
  // (in slices) as fetch_features. A homogeneous graph has the one type 0.
  void fetch_type_features(int type, ArrayView<const int64_t> ids, void* out);
  // The rows of several node types in one round: ids[t] are ids of type t (empty: none
  // asked), out[t] receives [ids[t].size(), type_feature_row_bytes(t)] bytes in input order
  // (may be null when ids[t] is empty). ids.size() and out.size() must be
  // num_node_types(). Every remote owner gets one request for all types (more only when its
  // reply passes the ~1 MiB slice, all in flight at once). The bytes are exactly
  // fetch_type_features' for each type; same errors (an id of another type than its slot, a
  // non-empty slot of a featureless type), and a homogeneous graph has the one type 0.
  void fetch_typed_features(const std::vector<ArrayView<const int64_t>>& ids,
                            const std::vector<uint8_t*>& out);
  // out: [edge_ids.size(), edge_feat_dim] row-major in the graph's edge_feat_dtype() (as
  // stored: edge_feat_row_bytes() per row), in input order. Throws Error when the partition
  // holds no edge features or on an id outside [0, num_edges), TimeoutError/CommError from
  // remote owners.
  void fetch_edge_features(ArrayView<const int64_t> edge_ids, void* out);
  // out: [ids.size()].
  void fetch_labels(ArrayView<const int64_t> ids, int64_t* out);
  // out: [ids.size()], the time of each node (node_time.npy: a temporal seed's time). Throws
  // Error when the partition holds no node times (DistGraph::has_node_times), as
  // fetch_features otherwise.
  void fetch_node_times(ArrayView<const int64_t> ids, int64_t* out);
  // out: [ids.size()], the in-degree of each node in the partitioned graph (the number of
  // entries of its CSC row; for a symmetric graph, its degree).
  void fetch_degrees(ArrayView<const int64_t> ids, int64_t* out);

  FetchStats stats() const;
  const DistGraph& graph() const { return graph_; }

 private:
  // Where owned rows come from, for the prefetch a few ids ahead of the copy: rows of
  // `width` values, row 0 being global id `first_gid`. base null: no prefetch.
  template <class T>
  struct Prefetch {
    const T* base = nullptr;
    int64_t first_gid = 0;
  };
  // Writes `width` values of type T per id into out, in input order: owned ids through
  // copy_local(local_row, dst) (local_row = gid - first_node()), remote ids from their
  // owners (request kind `kind`, followed by `argument` when it is >= 0, then the ids).
  // cache (may be null): remote rows answered from it first. Ids owned by a rank mapped in
  // host_ are written by copy_peer(peer_graph, gid, dst) before the cache is consulted.
  template <class T, class CopyLocal, class CopyPeer>
  void fetch(ArrayView<const int64_t> ids, uint64_t kind, int64_t argument, int64_t width,
             CopyLocal copy_local, CopyPeer copy_peer, Prefetch<T> prefetch,
             const FeatureCache* cache, T* out);

  const DistGraph& graph_;
  RpcEndpoint* endpoint_;
  const FeatureCache* cache_ = nullptr;
  const FeatureCache* edge_cache_ = nullptr;
  const HostParts* host_ = nullptr;
  std::atomic<int64_t> local_rows_{0}, remote_rows_{0}, remote_requests_{0}, remote_bytes_{0},
      cache_hits_{0}, host_rows_{0}, resident_lookups_{0}, resident_hits_{0},
      resident_remote_hits_{0}, edge_cache_hits_{0};
};

}  // namespace partita::store
