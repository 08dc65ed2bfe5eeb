#pragma once
// The hop messages of distributed sampling (dist_sampler.h), and the two halves of a hop
// that need no DistGraph: serving a request on the owner's view, and merging the owners'
// answers in frontier order. DistSampler and add_sample_routes are these plus routing, so
// tests can check the encoding of typed requests and replies on plain CscViews.
//
// Request: kind kRequestSampleHop (u64), hop_key (u64), fanout (i64),
//          relation_fanouts (counted i64 array; empty: fanout for every relation),
//          nodes (counted i64 array: global ids the receiver owns),
//          times (counted i64 array, one per node: the time each is sampled at), present
//          only under temporal sampling (LocalSamplerOptions::temporal, which every rank
//          must agree on, as on the rest of the mode); a request of a non-temporal
//          sampler is byte-identical to what it was before times existed.
// Reply:   counts (counted i64 array, one per node, request order),
//          neighbors (counted i64 array, CSR-like by counts),
//          edge_ids (counted i64 array, one per neighbor: its global edge id), present only
//          when edge ids are asked for (LocalSamplerOptions::edge_ids, which every rank must
//          agree on); a reply without them is byte-identical to what it was before,
//          relations (counted i32 array: one per neighbor from a typed view, else empty;
//          last, so the 8-byte arrays before it stay aligned).
//
// Thread-safety: free functions on their arguments; serve_hop_request only reads the view.
#include <cstdint>
#include <vector>

#include "partita/comm/wire.h"
#include "partita/core/array_view.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/neighbor_sampler.h"

namespace partita::sample {

// The request for `nodes` (kind code first), with the hop key and fanouts of `request`
// (its frontier is not sent). When request.times is not empty (temporal sampling), `times`
// are the nodes' times, one per node, and are sent; otherwise they must be empty. Throws
// partita::Error if they do not match.
std::vector<uint8_t> encode_hop_request(const HopRequest& request, ArrayView<const int64_t> nodes,
                                        ArrayView<const int64_t> times = {});

// Serves one request whose kind code has been read: samples its nodes on `view` (validated
// by the caller; with edge_ids when options.edge_ids) in the mode of `options`, and
// returns the reply. Throws CommError naming
// `rank` if a node is not owned by the view or the request is malformed (temporal: no
// time per node), and partita::Error for what the kernel rejects (a fanout < -1, a bad
// relation id, temporal sampling on a view without times).
std::vector<uint8_t> serve_hop_request(const CscView& view, const LocalSamplerOptions& options,
                                       int rank, WireReader& request);

// One owner's answer, viewed in place (in a reply buffer or a NeighborSample, which must
// outlive it). relations is empty, or one per neighbor.
struct HopReply {
  ArrayView<const int64_t> counts;
  ArrayView<const int64_t> neighbors;
  ArrayView<const int32_t> relations;
  ArrayView<const int64_t> edge_ids;  // empty, or one per neighbor
};

HopReply reply_view(const NeighborSample& sample);

// Views the reply of rank `rank` to a request for `num_nodes` nodes; `edge_ids`: the reply
// carries them (the sampler's LocalSamplerOptions::edge_ids). Throws CommError naming the
// rank if it is malformed, has another count of counts, or a relations array that is
// neither empty nor one per neighbor, or edge ids not one per neighbor.
HopReply decode_hop_reply(const std::vector<uint8_t>& reply, int rank, int64_t num_nodes,
                          bool edge_ids = false);

// Joins the answers in frontier order into `out`: node i's sample is the next one in
// replies[owner[i]] (every reply answers its nodes in frontier order). out->relations is
// filled when any reply carries relations, and then every reply must; out->edge_ids alike. Throws
// CommError if a reply's counts do not match its neighbors or it runs out of nodes.
void merge_hop_replies(ArrayView<const int> owner, ArrayView<const HopReply> replies,
                       NeighborSample* out);

}  // namespace partita::sample
