// The distributed sampler's messages and merge (sample_wire.h) on plain CscViews: a hop
// routed through encode -> serve on the owner's view -> decode -> merge, as DistSampler does
// it minus the transport, equals sampling on the whole graph, typed or not, temporal or not.
#include "partita/sample/sample_wire.h"

#include <gtest/gtest.h>

#include <set>

#include "partita/comm/errors.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "sample_test_util.h"
#include "temporal_test_util.h"

namespace partita::sample {
namespace {

using testing::expect_same_batch;
using testing::make_typed_part;
using testing::random_typed_graph;
using testing::random_weights;
using testing::TypedGraph;
using testing::TypedPart;

// Serves `request` (as built by encode_hop_request) on `view` as rank `rank` would.
std::vector<uint8_t> serve(const CscView& view, const LocalSamplerOptions& options, int rank,
                           const std::vector<uint8_t>& request) {
  WireReader reader(request.data(), request.size(), "test request");
  EXPECT_EQ(reader.get<uint64_t>(), static_cast<uint64_t>(kRequestSampleHop));
  return serve_hop_request(view, options, rank, reader);
}

// DistSampler's hop over parts [ranges[p], ranges[p+1]) in one process: every node goes to
// its owner through the wire, rank 0 included.
class WireRoutedSampler final : public NeighborSampler {
 public:
  WireRoutedSampler(std::vector<CscView> views, std::vector<int64_t> ranges,
                    LocalSamplerOptions options)
      : views_(std::move(views)), ranges_(std::move(ranges)), options_(options) {}

  void sample_hop(const HopRequest& request, NeighborSample* out) override {
    const size_t parts = views_.size();
    std::vector<std::vector<int64_t>> nodes(parts), times(parts);
    std::vector<int> owner;
    for (int64_t i = 0; i < request.frontier.size(); ++i) {
      const int64_t gid = request.frontier[i];
      const int p = static_cast<int>(std::upper_bound(ranges_.begin(), ranges_.end(), gid) -
                                     ranges_.begin() - 1);
      owner.push_back(p);
      nodes[p].push_back(gid);
      if (!request.times.empty()) times[p].push_back(request.times[i]);  // temporal
    }
    std::vector<std::vector<uint8_t>> replies(parts);
    std::vector<HopReply> answers(parts);
    for (size_t p = 0; p < parts; ++p) {
      if (nodes[p].empty()) continue;  // as DistSampler: no request, an empty answer
      replies[p] = serve(views_[p], options_, static_cast<int>(p),
                         encode_hop_request(request, nodes[p], times[p]));
      answers[p] = decode_hop_reply(replies[p], static_cast<int>(p),
                                    static_cast<int64_t>(nodes[p].size()), options_.edge_ids);
    }
    merge_hop_replies(owner, answers, out);
  }

 private:
  std::vector<CscView> views_;
  std::vector<int64_t> ranges_;
  LocalSamplerOptions options_;
};

// Drops relation r's entries from rows [first, end).
TypedGraph drop_relation(const TypedGraph& t, int32_t r, int64_t first, int64_t end) {
  TypedGraph out;
  out.num_relations = t.num_relations;
  out.g.indptr.push_back(0);
  for (int64_t v = 0; v < t.g.num_rows(); ++v) {
    for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e) {
      if (v >= first && v < end && t.relations[e] == r) continue;
      out.g.indices.push_back(t.g.indices[e]);
      out.relations.push_back(t.relations[e]);
    }
    out.g.indptr.push_back(static_cast<int64_t>(out.g.indices.size()));
  }
  return out;
}

TEST(SampleWire, TypedRequestRoundTripsToTheKernelsAnswer) {
  TypedGraph t = random_typed_graph(500, 3, 6, 3, 100, -1, 31);
  std::vector<float> w = random_weights(t.g.num_entries(), 31);
  std::vector<int64_t> ids(500);
  for (int64_t v = 0; v < 500; ++v) ids[v] = 7 * v + 1;
  TypedPart part = make_typed_part(t, w, ids, 200, 500);
  std::vector<int64_t> nodes{499, 200, 321, 321, 206};
  const std::vector<int64_t> per_relation{2, -1, 0};
  HopRequest request;
  request.hop_key = 991;
  request.fanout = 5;
  request.relation_fanouts = ArrayView<const int64_t>(per_relation);
  for (Weighting wt : {Weighting::kUniform, Weighting::kEdgeWeight}) {
    const LocalSamplerOptions options{Replacement::kWith, wt, 1, 2048};
    std::vector<uint8_t> reply = serve(part.view, options, 1, encode_hop_request(request, nodes));
    HopReply got = decode_hop_reply(reply, 1, static_cast<int64_t>(nodes.size()));

    NeighborSample want;
    KernelOptions kernel;
    kernel.fanout = 5;
    kernel.relation_fanouts = ArrayView<const int64_t>(per_relation);
    kernel.replacement = Replacement::kWith;
    kernel.weighting = wt;
    sample_neighbors(part.view, nodes, 991, kernel, &want);
    ASSERT_FALSE(want.relations.empty());
    EXPECT_EQ(std::vector<int64_t>(got.counts.begin(), got.counts.end()), want.counts);
    EXPECT_EQ(std::vector<int64_t>(got.neighbors.begin(), got.neighbors.end()), want.neighbors);
    EXPECT_EQ(std::vector<int32_t>(got.relations.begin(), got.relations.end()), want.relations);
  }
}

TEST(SampleWire, UntypedReplyCarriesNoRelations) {
  graph::Csr g = testing::random_graph(100, 5, 0, 0, 32);
  HopRequest request;
  request.hop_key = 3;
  request.fanout = 2;
  std::vector<int64_t> nodes{1, 2, 3};
  std::vector<uint8_t> reply = serve(csc_view_of(g), {}, 0, encode_hop_request(request, nodes));
  HopReply got = decode_hop_reply(reply, 0, 3);
  EXPECT_TRUE(got.relations.empty());
  EXPECT_GT(got.neighbors.size(), 0);
}

TEST(SampleWire, PartitionedTypedBlocksEqualWholeGraph) {
  // Parts [0, 6), [6, 7) (row 6 has no in-edges: an untyped view), [7, 700) and
  // [700, 1500) (which holds no edge of relation 2).
  TypedGraph t = drop_relation(random_typed_graph(1500, 3, 5, 8, 150, -1, 33), /*r=*/2, 700, 1500);
  ASSERT_EQ(t.g.indptr[6], t.g.indptr[7]);
  std::vector<float> w = random_weights(t.g.num_entries(), 33);
  std::vector<int64_t> ids(static_cast<size_t>(t.g.num_rows()));  // "dataset ids": reversed
  for (int64_t v = 0; v < t.g.num_rows(); ++v) ids[v] = t.g.num_rows() - 1 - v;
  const std::vector<int64_t> ranges{0, 6, 7, 700, 1500};
  std::vector<TypedPart> parts;
  std::vector<CscView> views;
  for (size_t p = 0; p + 1 < ranges.size(); ++p) {
    parts.push_back(make_typed_part(t, w, ids, ranges[p], ranges[p + 1]));
  }
  for (const TypedPart& p : parts) views.push_back(p.view);
  ASSERT_FALSE(views[1].typed());
  CscView whole = t.view(w);
  whole.stream_ids = ArrayView<const int64_t>(ids);

  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 1500; v += 29) seeds.push_back(v);
  seeds.push_back(6);
  const BlockOptions cases[] = {
      {Fanouts{5, 3}, {3, 1, 4}},
      {Fanouts({5, 3}, {{2, 0, 7}, {}}), {3, 1, 5}},
      {Fanouts({-1, 2}, {{}, {-1, 1, 3}}), {3, 1, 6}},
  };
  // A view without entries has no weights either, so weighted modes merge parts 0 and 1.
  const std::vector<int64_t> weighted_ranges{0, 7, 700, 1500};
  TypedPart first_two = make_typed_part(t, w, ids, 0, 7);
  const std::vector<CscView> weighted_views{first_two.view, views[2], views[3]};
  for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
    for (Weighting wt : {Weighting::kUniform, Weighting::kEdgeWeight}) {
      LocalSamplerOptions options{r, wt, 2, 16};
      LocalSampler single(whole, options);
      const bool weighted = wt == Weighting::kEdgeWeight;
      WireRoutedSampler routed(weighted ? weighted_views : views,
                               weighted ? weighted_ranges : ranges, options);
      for (const BlockOptions& o : cases) {
        SampledBatch want = sample_blocks(seeds, o, single);
        expect_same_batch(sample_blocks(seeds, o, routed), want);
        for (const Block& b : want.blocks) ASSERT_EQ(b.etypes.size(), b.indices.size());
      }
    }
  }
}

// Temporal sampling over 2 and 3 parts: each node's time travels with it to its owner, so
// the routed batch equals the whole graph's (which temporal_test.cc checks against the
// reference), and the leakage check holds on it.
TEST(SampleWire, PartitionedTemporalBlocksEqualWholeGraph) {
  for (bool typed : {false, true}) {
    const testing::TimedGraph t =
        typed ? testing::typed_graph(false, 51) : testing::untyped_graph(false, 51);
    const testing::EdgeTimes edge_time = testing::edge_times_of(t);
    const int64_t n = t.g.num_rows();
    std::vector<int64_t> ids(static_cast<size_t>(n));  // "dataset ids": reversed
    for (int64_t v = 0; v < n; ++v) ids[v] = n - 1 - v;
    CscView whole = t.view();
    whole.stream_ids = ArrayView<const int64_t>(ids);
    std::vector<int64_t> seeds, seed_times;
    testing::temporal_seeds(n, 40, testing::kTimeRange, 52, &seeds, &seed_times);
    // 2 and 3 parts (every part holds edges: a part without any has no weights either).
    for (const std::vector<int64_t>& ranges :
         {std::vector<int64_t>{0, 190, n}, std::vector<int64_t>{0, 3, 260, n}}) {
      std::vector<testing::TimedPart> parts;
      std::vector<CscView> views;
      for (size_t p = 0; p + 1 < ranges.size(); ++p) {
        parts.push_back(testing::make_timed_part(t, ids, ranges[p], ranges[p + 1]));
      }
      for (const testing::TimedPart& p : parts) views.push_back(p.view());
      for (const testing::TemporalMode& mode : testing::all_temporal_modes()) {
        SCOPED_TRACE(::testing::Message() << (typed ? "typed " : "") << ranges.size() - 1
                                          << " parts, strict " << mode.strict);
        LocalSamplerOptions options{mode.replacement, mode.weighting, 2, 16,
                                    mode.temporal,    mode.strict};
        LocalSampler single(whole, options);
        WireRoutedSampler routed(views, ranges, options);
        for (const Fanouts& f : {Fanouts{5, 3}, Fanouts{-1, 2}, Fanouts{8, 4, 2}}) {
          BlockOptions o{f, {3, 2, 1}};
          o.seed_times = seed_times;
          const SampledBatch got = sample_blocks(seeds, o, routed);
          testing::expect_same_temporal_batch(got, sample_blocks(seeds, o, single));
          EXPECT_GT(testing::check_no_leakage(edge_time, got, mode.strict), 0);
        }
      }
    }
  }
}

// Edge ids over 2 and 3 parts (issue 41): a part's first edge is its rows' offset in the
// whole graph, so the routed batch, edge ids included, equals the whole graph's, temporal
// or not, typed or not; and a reply carries the ids only when they are asked for.
TEST(SampleWire, PartitionedEdgeIdsEqualWholeGraph) {
  for (bool typed : {false, true}) {
    const testing::TimedGraph t =
        typed ? testing::typed_graph(true, 61) : testing::untyped_graph(true, 61);
    const int64_t n = t.g.num_rows();
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) ids[v] = n - 1 - v;
    CscView whole = t.view();
    whole.stream_ids = ArrayView<const int64_t>(ids);
    std::vector<int64_t> seeds, seed_times;
    testing::temporal_seeds(n, 40, testing::kTimeRange, 62, &seeds, &seed_times);
    std::vector<int64_t> distinct_seeds;
    for (int64_t v = 0; v < n; v += 9) distinct_seeds.push_back(v);
    for (const std::vector<int64_t>& ranges :
         {std::vector<int64_t>{0, 190, n}, std::vector<int64_t>{0, 3, 260, n}}) {
      std::vector<testing::TimedPart> parts;
      std::vector<std::vector<int64_t>> part_ids;
      std::vector<CscView> views;
      for (size_t p = 0; p + 1 < ranges.size(); ++p) {
        parts.push_back(testing::make_timed_part(t, ids, ranges[p], ranges[p + 1]));
      }
      for (const testing::TimedPart& p : parts) {
        CscView v = p.view();
        v.first_edge = t.g.indptr[p.first];
        part_ids.push_back(edge_id_range(v));
        views.push_back(v);
      }
      for (size_t p = 0; p < views.size(); ++p) views[p].edge_ids = part_ids[p];
      std::vector<testing::TemporalMode> modes = testing::all_temporal_modes();
      modes.push_back({Temporal::kNone, false, Replacement::kWithout, Weighting::kUniform});
      modes.push_back({Temporal::kNone, false, Replacement::kWith, Weighting::kEdgeWeight});
      for (const testing::TemporalMode& mode : modes) {
        SCOPED_TRACE(::testing::Message()
                     << (typed ? "typed " : "") << ranges.size() - 1 << " parts, temporal "
                     << static_cast<int>(mode.temporal));
        LocalSamplerOptions options{mode.replacement, mode.weighting, 2, 16,
                                    mode.temporal,    mode.strict};
        options.edge_ids = true;
        LocalSampler single(whole, options);
        WireRoutedSampler routed(views, ranges, options);
        BlockOptions o{Fanouts{5, 3}, {3, 2, 1}};
        if (mode.temporal != Temporal::kNone) o.seed_times = seed_times;
        const std::vector<int64_t>& s = mode.temporal != Temporal::kNone ? seeds : distinct_seeds;
        const SampledBatch got = sample_blocks(s, o, routed);
        const SampledBatch want = sample_blocks(s, o, single);
        ASSERT_EQ(got.blocks.size(), want.blocks.size());
        for (size_t l = 0; l < got.blocks.size(); ++l) {
          EXPECT_EQ(got.blocks[l].indices, want.blocks[l].indices);
          EXPECT_EQ(got.blocks[l].src_nodes, want.blocks[l].src_nodes);
          EXPECT_EQ(got.blocks[l].etypes, want.blocks[l].etypes);
          EXPECT_EQ(got.blocks[l].edge_ids.size(), got.blocks[l].indices.size());
          EXPECT_EQ(got.blocks[l].edge_ids, want.blocks[l].edge_ids);
        }
      }
    }
  }
}

TEST(SampleWire, RepliesCarryEdgeIdsOnlyWhenAsked) {
  const testing::TimedGraph t = testing::untyped_graph(false, 63);
  CscView view = t.view();
  view.first_edge = 5;
  const std::vector<int64_t> edge_ids = edge_id_range(view);
  view.edge_ids = edge_ids;
  std::vector<int64_t> nodes{1, 2, 3};
  HopRequest request;
  request.fanout = 2;
  LocalSamplerOptions plain, with;
  with.edge_ids = true;
  const std::vector<uint8_t> asked = encode_hop_request(request, nodes);
  EXPECT_EQ(asked, encode_hop_request(request, nodes));  // the request does not change
  const std::vector<uint8_t> a = serve(view, plain, 1, asked);
  const std::vector<uint8_t> b = serve(view, with, 1, asked);
  const HopReply x = decode_hop_reply(a, 1, 3);
  const HopReply y = decode_hop_reply(b, 1, 3, /*edge_ids=*/true);
  EXPECT_TRUE(x.edge_ids.empty());
  ASSERT_EQ(y.edge_ids.size(), y.neighbors.size());
  EXPECT_GT(y.neighbors.size(), 0);
  EXPECT_EQ(b.size(), a.size() + 8 + 8 * static_cast<size_t>(y.neighbors.size()));
  for (int64_t j = 0; j < y.neighbors.size(); ++j)
    EXPECT_EQ(t.g.indices[y.edge_ids[j] - 5], y.neighbors[j]);
  // A reply read with the wrong expectation is malformed, not misread.
  EXPECT_THROW(decode_hop_reply(a, 1, 3, /*edge_ids=*/true), CommError);
}

TEST(SampleWire, TemporalRequestsCarryTimesOnlyWhenTemporal) {
  const testing::TimedGraph t = testing::untyped_graph(false, 53);
  CscView view = t.view();
  std::vector<int64_t> nodes{1, 2, 3}, times{10, 20, 30};
  HopRequest plain;
  plain.fanout = 2;
  HopRequest temporal = plain;
  temporal.times = times;  // the frontier's times (here the same nodes)
  LocalSamplerOptions uniform;
  uniform.temporal = Temporal::kUniform;
  const std::vector<uint8_t> with_times = encode_hop_request(temporal, nodes, times);
  const std::vector<uint8_t> without = encode_hop_request(plain, nodes);
  EXPECT_GT(with_times.size(), without.size());
  const std::vector<uint8_t> reply = serve(view, uniform, 1, with_times);
  HopReply got = decode_hop_reply(reply, 1, 3);  // views into `reply`
  NeighborSample want;
  KernelOptions kernel;
  kernel.fanout = 2;
  kernel.temporal = Temporal::kUniform;
  sample_neighbors(view, nodes, times, 0, kernel, &want);
  EXPECT_EQ(std::vector<int64_t>(got.neighbors.begin(), got.neighbors.end()), want.neighbors);
  // A mode mismatch between ranks is a malformed request, not a silent wrong sample.
  EXPECT_THROW(serve(view, {}, 1, with_times), CommError);
  EXPECT_THROW(serve(view, uniform, 1, without), CommError);
  // Times must match the nodes, and only a temporal request has them.
  EXPECT_THROW(encode_hop_request(temporal, nodes, ArrayView<const int64_t>(times.data(), 2)),
               Error);
  EXPECT_THROW(encode_hop_request(plain, nodes, times), Error);
  WireWriter short_times;
  short_times.put<uint64_t>(kRequestSampleHop);
  short_times.put<uint64_t>(0);
  short_times.put<int64_t>(2);
  short_times.put_array<int64_t>(std::vector<int64_t>{});
  short_times.put_array<int64_t>(nodes);
  short_times.put_array<int64_t>(std::vector<int64_t>{10});
  EXPECT_THROW(serve(view, uniform, 1, short_times.take()), CommError);
}

TEST(SampleWire, RejectsMalformedMessages) {
  TypedGraph t = random_typed_graph(100, 2, 4, 0, 0, -1, 34);
  TypedPart part = make_typed_part(t, random_weights(t.g.num_entries(), 34),
                                   std::vector<int64_t>(100, 0), 50, 100);
  HopRequest request;
  request.fanout = 2;
  std::vector<int64_t> foreign{10};
  try {
    serve(part.view, {}, 3, encode_hop_request(request, foreign));
    FAIL();
  } catch (const CommError& e) {
    EXPECT_STREQ(e.what(), "rank 3 was asked to sample node 10 it does not own");
  }
  std::vector<int64_t> owned{60, 70};
  std::vector<uint8_t> truncated = encode_hop_request(request, owned);
  truncated.resize(truncated.size() - 8);
  EXPECT_THROW(serve(part.view, {}, 3, truncated), CommError);

  // A reply with relations that are neither empty nor one per neighbor.
  WireWriter bad;
  const std::vector<int64_t> counts{1}, neighbors{5};
  const std::vector<int32_t> relations{0, 1};
  bad.put_array<int64_t>(counts);
  bad.put_array<int64_t>(neighbors);
  bad.put_array<int32_t>(relations);
  EXPECT_THROW(decode_hop_reply(bad.take(), 2, 1), CommError);
  std::vector<uint8_t> reply = serve(part.view, {}, 3, encode_hop_request(request, owned));
  EXPECT_THROW(decode_hop_reply(reply, 3, 3), CommError);  // asked for 3 nodes, answered 2

  // Merging a typed answer with an untyped one that has neighbors.
  NeighborSample typed, untyped;
  typed.counts = {1};
  typed.neighbors = {4};
  typed.relations = {1};
  untyped.counts = {1};
  untyped.neighbors = {8};
  std::vector<HopReply> answers{reply_view(typed), reply_view(untyped)};
  std::vector<int> owner{0, 1};
  NeighborSample out;
  EXPECT_THROW(merge_hop_replies(owner, answers, &out), CommError);
  // ... but an untyped answer without neighbors (a part with no edges) merges fine.
  untyped.counts = {0};
  untyped.neighbors.clear();
  answers = {reply_view(typed), reply_view(untyped)};
  merge_hop_replies(owner, answers, &out);
  EXPECT_EQ(out.counts, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(out.relations, std::vector<int32_t>{1});
  std::vector<int> too_many{0, 0};
  EXPECT_THROW(merge_hop_replies(too_many, answers, &out), CommError);
}

}  // namespace
}  // namespace partita::sample
