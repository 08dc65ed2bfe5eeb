#include "partita/sample/sample_wire.h"

#include <string>

#include "partita/comm/errors.h"
#include "partita/core/error.h"

namespace partita::sample {

std::vector<uint8_t> encode_hop_request(const HopRequest& request, ArrayView<const int64_t> nodes,
                                        ArrayView<const int64_t> times) {
  const bool temporal = !request.times.empty();
  PARTITA_CHECK(temporal ? times.size() == nodes.size() : times.empty(), Error,
                "internal: {} times for {} nodes of a {}temporal sample request", times.size(),
                nodes.size(), temporal ? "" : "non-");
  WireWriter w(
      56 + static_cast<size_t>(request.relation_fanouts.size() + nodes.size() + times.size()) * 8);
  w.put<uint64_t>(kRequestSampleHop);
  w.put<uint64_t>(request.hop_key);
  w.put<int64_t>(request.fanout);
  w.put_array<int64_t>(request.relation_fanouts);
  w.put_array<int64_t>(nodes);
  if (temporal) w.put_array<int64_t>(times);
  return w.take();
}

std::vector<uint8_t> serve_hop_request(const CscView& view, const LocalSamplerOptions& options,
                                       int rank, WireReader& request) {
  const uint64_t hop_key = request.get<uint64_t>();
  KernelOptions kernel;
  kernel.fanout = request.get<int64_t>();
  kernel.relation_fanouts = request.get_array<int64_t>();
  const ArrayView<const int64_t> nodes = request.get_array<int64_t>();
  ArrayView<const int64_t> times;
  if (options.temporal != Temporal::kNone) {
    times = request.get_array<int64_t>();
    PARTITA_CHECK(times.size() == nodes.size(), CommError,
                  "rank {} was asked to sample {} nodes at {} times", rank, nodes.size(),
                  times.size());
  }
  request.expect_end();
  kernel.replacement = options.replacement;
  kernel.weighting = options.weighting;
  kernel.threads = options.threads;
  kernel.chunk = options.chunk;
  kernel.temporal = options.temporal;
  kernel.strict = options.strict;
  kernel.edge_ids = options.edge_ids;
  for (int64_t gid : nodes) {
    PARTITA_CHECK(view.owns(gid), CommError, "rank {} was asked to sample node {} it does not own",
                  rank, gid);
  }
  NeighborSample sample;
  sample_neighbors(view, nodes, times, hop_key, kernel, &sample);
  WireWriter reply(56 +
                   (sample.counts.size() + sample.neighbors.size() + sample.edge_ids.size()) * 8 +
                   sample.relations.size() * 4);
  reply.put_array<int64_t>(sample.counts);
  reply.put_array<int64_t>(sample.neighbors);
  if (options.edge_ids) reply.put_array<int64_t>(sample.edge_ids);
  reply.put_array<int32_t>(sample.relations);
  return reply.take();
}

HopReply reply_view(const NeighborSample& sample) {
  return {sample.counts, sample.neighbors, sample.relations, sample.edge_ids};
}

HopReply decode_hop_reply(const std::vector<uint8_t>& reply, int rank, int64_t num_nodes,
                          bool edge_ids) {
  WireReader reader(reply.data(), reply.size(), "sample reply of rank " + std::to_string(rank));
  HopReply r;
  r.counts = reader.get_array<int64_t>();
  r.neighbors = reader.get_array<int64_t>();
  if (edge_ids) {
    r.edge_ids = reader.get_array<int64_t>();
    PARTITA_CHECK(r.edge_ids.size() == r.neighbors.size(), CommError,
                  "sample reply of rank {}: {} edge ids for {} neighbors", rank, r.edge_ids.size(),
                  r.neighbors.size());
  }
  r.relations = reader.get_array<int32_t>();
  reader.expect_end();
  PARTITA_CHECK(r.counts.size() == num_nodes, CommError,
                "sample reply of rank {}: {} counts for {} nodes", rank, r.counts.size(),
                num_nodes);
  PARTITA_CHECK(r.relations.empty() || r.relations.size() == r.neighbors.size(), CommError,
                "sample reply of rank {}: {} relations for {} neighbors", rank, r.relations.size(),
                r.neighbors.size());
  return r;
}

void merge_hop_replies(ArrayView<const int> owner, ArrayView<const HopReply> replies,
                       NeighborSample* out) {
  bool typed = false, with_ids = false;
  size_t total = 0;
  for (const HopReply& r : replies) {
    typed |= !r.relations.empty();
    with_ids |= !r.edge_ids.empty();
    total += static_cast<size_t>(r.neighbors.size());
  }
  for (int64_t q = 0; q < replies.size(); ++q) {
    PARTITA_CHECK(!typed || replies[q].relations.size() == replies[q].neighbors.size(), CommError,
                  "sample reply of rank {}: {} relations for {} neighbors", q,
                  replies[q].relations.size(), replies[q].neighbors.size());
    PARTITA_CHECK(!with_ids || replies[q].edge_ids.size() == replies[q].neighbors.size(), CommError,
                  "sample reply of rank {}: {} edge ids for {} neighbors", q,
                  replies[q].edge_ids.size(), replies[q].neighbors.size());
  }
  struct Cursor {
    int64_t node = 0, offset = 0;
  };
  std::vector<Cursor> cursors(static_cast<size_t>(replies.size()));
  const int64_t n = owner.size();
  out->counts.resize(static_cast<size_t>(n));
  out->neighbors.clear();
  out->neighbors.reserve(total);
  out->relations.clear();
  if (typed) out->relations.reserve(total);
  out->edge_ids.clear();
  if (with_ids) out->edge_ids.reserve(total);
  for (int64_t i = 0; i < n; ++i) {
    PARTITA_CHECK(owner[i] >= 0 && owner[i] < replies.size(), Error,
                  "internal: node {} of the frontier has owner {} of {}", i, owner[i],
                  replies.size());
    const HopReply& r = replies[owner[i]];
    Cursor& c = cursors[owner[i]];
    PARTITA_CHECK(c.node < r.counts.size(), CommError,
                  "sample reply of rank {}: fewer counts than nodes", owner[i]);
    const int64_t count = r.counts[c.node++];
    PARTITA_CHECK(count >= 0 && c.offset + count <= r.neighbors.size(), CommError,
                  "sample reply of rank {}: inconsistent counts", owner[i]);
    out->counts[i] = count;
    out->neighbors.insert(out->neighbors.end(), r.neighbors.begin() + c.offset,
                          r.neighbors.begin() + c.offset + count);
    if (typed) {
      out->relations.insert(out->relations.end(), r.relations.begin() + c.offset,
                            r.relations.begin() + c.offset + count);
    }
    if (with_ids) {
      out->edge_ids.insert(out->edge_ids.end(), r.edge_ids.begin() + c.offset,
                           r.edge_ids.begin() + c.offset + count);
    }
    c.offset += count;
  }
}

}  // namespace partita::sample
