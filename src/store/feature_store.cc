#include "partita/store/feature_store.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "edge_features.h"
#include "partita/comm/sliced_exchange.h"
#include "partita/core/error.h"

namespace partita::store {
namespace {

constexpr int64_t kPrefetchRows = 4;
constexpr size_t kSliceBytes = size_t{1} << 20;  // reply bytes per remote request

// Copies row `row` (a local index) of a row-major [*, width] array to dst.
template <class T>
auto row_copier(const T* base, int64_t width) {
  return [base, width](int64_t row, T* dst) {
    std::memcpy(dst, base + row * width, static_cast<size_t>(width) * sizeof(T));
  };
}

// Copies the row of global id `gid` of another rank's mapped part `peer` ([*, width] rows of
// its owned ids, from first_node()) to dst.
template <class T>
auto peer_row_copier(int64_t width, const T* (*rows_of)(const DistGraph&)) {
  return [width, rows_of](const DistGraph& peer, int64_t gid, T* dst) {
    std::memcpy(dst, rows_of(peer) + (gid - peer.first_node()) * width,
                static_cast<size_t>(width) * sizeof(T));
  };
}

// Writes the in-degree of local row `row` to dst.
auto degree_copier(const DistGraph& graph) {
  return [indptr = graph.indptr()](int64_t row, int64_t* dst) {
    *dst = indptr[row + 1] - indptr[row];
  };
}

// Reply to a feature, label or degree request: the rows of the requested ids, which must
// lie in [first, end) (the owned ids, or the owned ids of one type), in order, written by
// copy_local(gid - first, dst).
template <class T, class CopyLocal>
std::vector<uint8_t> serve_rows(const DistGraph& graph, WireReader& request, int64_t width,
                                int64_t first, int64_t end, CopyLocal copy_local) {
  ArrayView<const int64_t> ids = request.get_array<int64_t>();
  request.expect_end();
  WireWriter reply(16 + static_cast<size_t>(ids.size() * width) * sizeof(T));
  T* out = reply.put_uninitialized<T>(ids.size() * width);
  for (int64_t i = 0; i < ids.size(); ++i) {
    const int64_t gid = ids[i];
    PARTITA_CHECK(graph.owns(gid), CommError, "rank {} was asked for node {} it does not own",
                  graph.rank(), gid);
    PARTITA_CHECK(gid >= first && gid < end, CommError,
                  "rank {} was asked for node {} as one of its ids [{}, {}) of the requested "
                  "type",
                  graph.rank(), gid, first, end);
    copy_local(gid - first, out + i * width);
  }
  return reply.take();
}

// Checks that `type` is a node type of `graph` with features; names the graph's directory.
void check_featured_type(const DistGraph& graph, int64_t type) {
  PARTITA_CHECK(type >= 0 && type < graph.num_node_types(), Error,
                "{}: node type {} requested, the partition has {}", graph.dir(), type,
                graph.num_node_types());
  PARTITA_CHECK(graph.type_feat_dim(static_cast<int>(type)) > 0, Error,
                "{}: node type {} ('{}') has no features", graph.dir(), type,
                graph.typed() ? graph.typed_meta().node_types[type].name : std::string("nodes"));
}

}  // namespace

void add_feature_routes(RpcRouter& router, const DistGraph& graph) {
  const int64_t first = graph.first_node(), end = graph.end_node();
  router.add(kRequestFeatures, [&graph, first, end](int, WireReader& request) {
    return serve_rows<uint8_t>(graph, request, graph.feature_row_bytes(), first, end,
                               row_copier(graph.features(), graph.feature_row_bytes()));
  });
  router.add(kRequestLabels, [&graph, first, end](int, WireReader& request) {
    return serve_rows<int64_t>(graph, request, 1, first, end, row_copier(graph.labels().data(), 1));
  });
  router.add(kRequestDegrees, [&graph, first, end](int, WireReader& request) {
    return serve_rows<int64_t>(graph, request, 1, first, end, degree_copier(graph));
  });
  router.add(kRequestNodeTimes, [&graph, first, end](int source, WireReader& request) {
    PARTITA_CHECK(graph.has_node_times(), CommError,
                  "rank {} was asked by rank {} for node times; {} holds none", graph.rank(),
                  source, graph.dir());
    return serve_rows<int64_t>(graph, request, 1, first, end,
                               row_copier(graph.node_times().data(), 1));
  });
  add_edge_feature_route(router, graph);
  router.add(kRequestTypeFeatures, [&graph](int source, WireReader& request) {
    const int64_t type = request.get<int64_t>();
    try {
      check_featured_type(graph, type);
    } catch (const Error& e) {
      throw CommError(fmt::format("request from rank {}: {}", source, e.what()));
    }
    const auto [type_first, type_end] = graph.owned_type_range(static_cast<int>(type));
    const int64_t width = graph.type_feature_row_bytes(static_cast<int>(type));
    return serve_rows<uint8_t>(graph, request, width, type_first, type_end,
                               row_copier(graph.type_features(static_cast<int>(type)), width));
  });
  router.add(kRequestTypedFeatures, [&graph](int source, WireReader& request) {
    ArrayView<const int64_t> ids = request.get_array<int64_t>();
    request.expect_end();
    // Per id its type's width and the start of its owned rows of that type.
    const int types = graph.num_node_types();
    std::vector<int64_t> width(static_cast<size_t>(types)), type_first(static_cast<size_t>(types));
    for (int t = 0; t < types; ++t) {
      width[t] = graph.type_feature_row_bytes(t);
      type_first[t] = graph.owned_type_range(t).first;
    }
    std::vector<int> type_of(static_cast<size_t>(ids.size()));
    size_t bytes = 0;
    for (int64_t i = 0; i < ids.size(); ++i) {
      const int64_t gid = ids[i];
      PARTITA_CHECK(graph.owns(gid), CommError,
                    "rank {} was asked by rank {} for node {} it does not own", graph.rank(),
                    source, gid);
      const int t = graph.node_type(gid);
      PARTITA_CHECK(width[t] > 0, CommError,
                    "rank {} was asked by rank {} for the features of node {}, of node type {} "
                    "which has none",
                    graph.rank(), source, gid, t);
      type_of[static_cast<size_t>(i)] = t;
      bytes += static_cast<size_t>(width[t]);
    }
    WireWriter reply(16 + bytes);
    uint8_t* out = reply.put_uninitialized<uint8_t>(static_cast<int64_t>(bytes));
    for (int64_t i = 0; i < ids.size(); ++i) {
      const int t = type_of[static_cast<size_t>(i)];
      std::memcpy(out, graph.type_features(t) + (ids[i] - type_first[t]) * width[t],
                  static_cast<size_t>(width[t]));
      out += width[t];
    }
    return reply.take();
  });
}

FeatureFetcher::FeatureFetcher(const DistGraph& graph, RpcEndpoint* endpoint)
    : graph_(graph), endpoint_(endpoint) {}

void FeatureFetcher::fetch_features(ArrayView<const int64_t> ids, void* out) {
  PARTITA_CHECK(!graph_.typed(), Error,
                "{}: a typed partition has features per node type (fetch_type_features)",
                graph_.dir());
  const int64_t width = graph_.feature_row_bytes();
  fetch<uint8_t>(ids, kRequestFeatures, /*argument=*/-1, width,
                 row_copier(graph_.features(), width),
                 peer_row_copier<uint8_t>(width, [](const DistGraph& g) { return g.features(); }),
                 {graph_.features(), graph_.first_node()}, cache_, static_cast<uint8_t*>(out));
}

void FeatureFetcher::fetch_features_except(ArrayView<const int64_t> ids,
                                           const ResidentRows& resident, ResidentHits* hits,
                                           std::pmr::vector<uint8_t>* out) {
  PARTITA_CHECK(hits != nullptr && out != nullptr, Error,
                "internal: fetch_features_except without its outputs");
  std::vector<int64_t> misses;
  misses.reserve(static_cast<size_t>(ids.size()));
  const size_t first_hit = hits->positions.size();
  resident.split(ids, hits, &misses);
  int64_t remote_hits = 0;
  for (size_t k = first_hit; k < hits->positions.size(); ++k)
    if (!graph_.owns(ids[hits->positions[k]])) ++remote_hits;
  resident_lookups_ += ids.size();
  resident_hits_ += static_cast<int64_t>(hits->positions.size() - first_hit);
  resident_remote_hits_ += remote_hits;
  out->resize(misses.size() * static_cast<size_t>(graph_.feature_row_bytes()));
  fetch_features(misses, out->data());
}

void FeatureFetcher::fetch_type_features(int type, ArrayView<const int64_t> ids, void* out) {
  check_featured_type(graph_, type);
  for (int64_t i = 0; i < ids.size(); ++i) {
    const int found = graph_.node_type(ids[i]);  // throws on an id out of range
    PARTITA_CHECK(found == type, Error,
                  "{}: node {} (position {}) is of type {}, not of the requested type {}",
                  graph_.dir(), ids[i], i, found, type);
  }
  const int64_t width = graph_.type_feature_row_bytes(type);
  const uint8_t* rows = graph_.type_features(type);
  // Owned rows of the type start at its owned range, not at first_node().
  const int64_t skip = graph_.owned_type_range(type).first - graph_.first_node();
  auto copy_local = [rows, width, skip](int64_t local_row, uint8_t* dst) {
    std::memcpy(dst, rows + (local_row - skip) * width, static_cast<size_t>(width));
  };
  auto copy_peer = [type, width](const DistGraph& peer, int64_t gid, uint8_t* dst) {
    std::memcpy(dst, peer.type_features(type) + (gid - peer.owned_type_range(type).first) * width,
                static_cast<size_t>(width));
  };
  fetch<uint8_t>(ids, kRequestTypeFeatures, type, width, copy_local, copy_peer,
                 {rows, graph_.owned_type_range(type).first}, cache_, static_cast<uint8_t*>(out));
}

void FeatureFetcher::fetch_typed_features(const std::vector<ArrayView<const int64_t>>& ids,
                                          const std::vector<uint8_t*>& out) {
  const int types = graph_.num_node_types();
  PARTITA_CHECK(static_cast<int>(ids.size()) == types && static_cast<int>(out.size()) == types,
                Error,
                "internal: fetch_typed_features with {} id lists and {} outputs for {} types",
                ids.size(), out.size(), types);
  // Every asked row as one item: its id, its destination, its width; items in type order,
  // then input order. rows/type_first: where the owned rows of each type start.
  struct Item {
    int64_t gid;
    uint8_t* dst;
    int64_t width;
    int type;
  };
  std::vector<Item> items;
  std::vector<const uint8_t*> rows(static_cast<size_t>(types), nullptr);
  std::vector<int64_t> type_first(static_cast<size_t>(types), 0);
  int64_t max_width = 0;
  for (int t = 0; t < types; ++t) {
    const ArrayView<const int64_t> type_ids = ids[static_cast<size_t>(t)];
    if (type_ids.empty()) continue;
    check_featured_type(graph_, t);
    PARTITA_CHECK(out[static_cast<size_t>(t)] != nullptr, Error,
                  "internal: fetch_typed_features without an output for type {}", t);
    const int64_t width = graph_.type_feature_row_bytes(t);
    max_width = std::max(max_width, width);
    rows[static_cast<size_t>(t)] = graph_.type_features(t);
    type_first[static_cast<size_t>(t)] = graph_.owned_type_range(t).first;
    for (int64_t i = 0; i < type_ids.size(); ++i) {
      const int found = graph_.node_type(type_ids[i]);  // throws on an id out of range
      PARTITA_CHECK(found == t, Error,
                    "{}: node {} (position {}) is of type {}, not of the requested type {}",
                    graph_.dir(), type_ids[i], i, found, t);
      items.push_back({type_ids[i], out[static_cast<size_t>(t)] + i * width, width, t});
    }
  }
  // The owned row of item `it` (of type t).
  const auto owned_row = [&](const Item& it) {
    const size_t t = static_cast<size_t>(it.type);
    return rows[t] + (it.gid - type_first[t]) * it.width;
  };
  std::vector<std::vector<int64_t>> positions;  // per remote rank: item indices
  int64_t local_rows = 0, cache_hits = 0, host_rows = 0;
  const int64_t n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    const Item& it = items[static_cast<size_t>(i)];
    if (i + kPrefetchRows < n && graph_.owns(items[static_cast<size_t>(i + kPrefetchRows)].gid)) {
      const Item& ahead = items[static_cast<size_t>(i + kPrefetchRows)];
      const char* row = reinterpret_cast<const char*>(owned_row(ahead));
      for (int64_t b = 0; b < ahead.width; b += 64) __builtin_prefetch(row + b);
    }
    const size_t row_bytes = static_cast<size_t>(it.width);
    if (graph_.owns(it.gid)) {
      std::memcpy(it.dst, owned_row(it), row_bytes);
      ++local_rows;
      continue;
    }
    int owner = -1;
    if (host_ != nullptr) {
      owner = graph_.owner_rank(it.gid);
      if (const DistGraph* peer = host_->peer(owner)) {
        std::memcpy(it.dst,
                    peer->type_features(it.type) +
                        (it.gid - peer->owned_type_range(it.type).first) * it.width,
                    row_bytes);
        ++host_rows;
        continue;
      }
    }
    if (const uint8_t* row = cache_ != nullptr ? cache_->find(it.gid) : nullptr) {
      std::memcpy(it.dst, row, row_bytes);
      ++cache_hits;
      continue;
    }
    if (owner < 0) owner = graph_.owner_rank(it.gid);
    if (positions.empty()) positions.resize(static_cast<size_t>(graph_.world_size()));
    positions[static_cast<size_t>(owner)].push_back(i);
  }
  local_rows_ += local_rows;
  cache_hits_ += cache_hits;
  host_rows_ += host_rows;
  if (positions.empty()) return;
  PARTITA_CHECK(endpoint_ != nullptr, Error, "internal: remote rows asked without an endpoint");
  // Slices as fetch(): at most about kSliceBytes of reply each, sized by the widest type.
  const size_t slice_rows = std::max<size_t>(1, kSliceBytes / static_cast<size_t>(max_width));
  remote_requests_ += sliced_exchange(
      *endpoint_, kRequestTypedFeatures, positions, slice_rows,
      [&](ArrayView<const int64_t> slice, WireWriter& request) {
        int64_t* req_ids = request.put_uninitialized<int64_t>(slice.size());
        for (int64_t k = 0; k < slice.size(); ++k)
          req_ids[k] = items[static_cast<size_t>(slice[k])].gid;
      },
      [&](int owner, ArrayView<const int64_t> slice, const std::vector<uint8_t>& bytes) {
        WireReader reply(bytes.data(), bytes.size(), "reply of rank " + std::to_string(owner));
        ArrayView<const uint8_t> got = reply.get_array<uint8_t>();
        reply.expect_end();
        int64_t expected = 0;
        for (int64_t k = 0; k < slice.size(); ++k)
          expected += items[static_cast<size_t>(slice[k])].width;
        PARTITA_CHECK(got.size() == expected, CommError,
                      "reply of rank {}: {} bytes for {} typed rows of {} bytes in all", owner,
                      got.size(), slice.size(), expected);
        const uint8_t* src = got.data();
        for (int64_t k = 0; k < slice.size(); ++k) {
          const Item& it = items[static_cast<size_t>(slice[k])];
          std::memcpy(it.dst, src, static_cast<size_t>(it.width));
          src += it.width;
        }
        remote_rows_ += slice.size();
        remote_bytes_ += static_cast<int64_t>(bytes.size());
      });
}

void FeatureFetcher::fetch_labels(ArrayView<const int64_t> ids, int64_t* out) {
  fetch<int64_t>(ids, kRequestLabels, /*argument=*/-1, 1, row_copier(graph_.labels().data(), 1),
                 peer_row_copier<int64_t>(1, [](const DistGraph& g) { return g.labels().data(); }),
                 {}, nullptr, out);
}

void FeatureFetcher::fetch_node_times(ArrayView<const int64_t> ids, int64_t* out) {
  PARTITA_CHECK(graph_.has_node_times(), Error,
                "{}: node times asked of a partition without node_time.npy", graph_.dir());
  fetch<int64_t>(
      ids, kRequestNodeTimes, /*argument=*/-1, 1, row_copier(graph_.node_times().data(), 1),
      peer_row_copier<int64_t>(1, [](const DistGraph& g) { return g.node_times().data(); }), {},
      nullptr, out);
}

void FeatureFetcher::fetch_degrees(ArrayView<const int64_t> ids, int64_t* out) {
  auto copy_peer = [](const DistGraph& peer, int64_t gid, int64_t* dst) {
    degree_copier(peer)(gid - peer.first_node(), dst);
  };
  fetch<int64_t>(ids, kRequestDegrees, /*argument=*/-1, 1, degree_copier(graph_), copy_peer, {},
                 nullptr, out);
}

template <class T, class CopyLocal, class CopyPeer>
void FeatureFetcher::fetch(ArrayView<const int64_t> ids, uint64_t kind, int64_t argument,
                           int64_t width, CopyLocal copy_local, CopyPeer copy_peer,
                           Prefetch<T> prefetch, const FeatureCache* cache, T* out) {
  const int64_t first = graph_.first_node();
  const size_t row_bytes = static_cast<size_t>(width) * sizeof(T);
  // positions[r]: input positions of the ids owned by rank r (remote ranks only).
  std::vector<std::vector<int64_t>> positions;
  int64_t local_rows = 0, cache_hits = 0, host_rows = 0;
  for (int64_t i = 0; i < ids.size(); ++i) {
    const int64_t gid = ids[i];
    // Rows are scattered over the mapped file: start loading the one kPrefetchRows ahead.
    if (prefetch.base != nullptr && i + kPrefetchRows < ids.size() &&
        graph_.owns(ids[i + kPrefetchRows])) {
      const char* row = reinterpret_cast<const char*>(
          prefetch.base + (ids[i + kPrefetchRows] - prefetch.first_gid) * width);
      for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(row + b);
    }
    if (graph_.owns(gid)) {
      copy_local(gid - first, out + i * width);
      ++local_rows;
      continue;
    }
    // The owner, looked up once (it throws on an id out of range); without host-local reads
    // only on a cache miss: the cache holds only valid remote ids.
    int owner = -1;
    // A same-host owner's mapped part (host-local reads): a memory copy, no request.
    if (host_ != nullptr) {
      owner = graph_.owner_rank(gid);
      if (const DistGraph* peer = host_->peer(owner)) {
        copy_peer(*peer, gid, out + i * width);
        ++host_rows;
        continue;
      }
    }
    if (const uint8_t* row = cache != nullptr ? cache->find(gid) : nullptr) {
      std::memcpy(out + i * width, row, row_bytes);
      ++cache_hits;
      continue;
    }
    if (owner < 0) owner = graph_.owner_rank(gid);
    if (positions.empty()) positions.resize(static_cast<size_t>(graph_.world_size()));
    positions[owner].push_back(i);
  }
  local_rows_ += local_rows;
  cache_hits_ += cache_hits;
  host_rows_ += host_rows;
  if (positions.empty()) return;
  PARTITA_CHECK(endpoint_ != nullptr, Error, "internal: remote rows asked without an endpoint");

  // Remote rows go in slices of at most kSliceBytes of reply per owner, all in flight at
  // once; each slice is scattered as soon as it is in, while the owners gather and send the
  // next ones (remote_fetch_bench one way: 1.9 -> 2.9 GB/s; sample-bench fetch 3.2 -> 1.5 s),
  // and no reply nears the 32 MiB below which message buffers are reused (message_memory.h).
  const size_t slice_rows = std::max<size_t>(1, kSliceBytes / row_bytes);
  remote_requests_ += sliced_exchange(
      *endpoint_, kind, positions, slice_rows,
      [&](ArrayView<const int64_t> slice, WireWriter& request) {
        if (argument >= 0) request.put<int64_t>(argument);
        int64_t* req_ids = request.put_uninitialized<int64_t>(slice.size());
        for (int64_t k = 0; k < slice.size(); ++k) req_ids[k] = ids[slice[k]];
      },
      [&](int owner, ArrayView<const int64_t> slice, const std::vector<uint8_t>& bytes) {
        WireReader reply(bytes.data(), bytes.size(), "reply of rank " + std::to_string(owner));
        ArrayView<const T> rows = reply.get_array<T>();
        reply.expect_end();
        PARTITA_CHECK(rows.size() == slice.size() * width, CommError,
                      "reply of rank {}: {} values for {} rows of width {}", owner, rows.size(),
                      slice.size(), width);
        for (int64_t k = 0; k < slice.size(); ++k)
          std::memcpy(out + slice[k] * width, rows.data() + k * width, row_bytes);
        remote_rows_ += slice.size();
        remote_bytes_ += static_cast<int64_t>(bytes.size());
      });
}

FetchStats FeatureFetcher::stats() const {
  return {local_rows_.load(),       remote_rows_.load(),   remote_requests_.load(),
          remote_bytes_.load(),     cache_hits_.load(),    host_rows_.load(),
          resident_lookups_.load(), resident_hits_.load(), resident_remote_hits_.load(),
          edge_cache_hits_.load()};
}

}  // namespace partita::store
