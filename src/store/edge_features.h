#pragma once
// Internal to src/store: the serving half of FeatureFetcher::fetch_edge_features
// (feature_store.h), kept next to the fetching half in edge_features.cc.
#include "partita/comm/wire.h"
#include "partita/store/dist_graph.h"

namespace partita::store {

// Registers kRequestEdgeFeatures: the edge_feat rows of edge ids this rank's part stores.
// A request for an edge stored elsewhere, or to a partition without edge features, is
// answered with a CommError naming the rank.
void add_edge_feature_route(RpcRouter& router, const DistGraph& graph);

}  // namespace partita::store
