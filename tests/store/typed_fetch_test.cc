// Typed feature fetches in one round and the typed hot-feature cache (issue 28), over a typed
// dataset in 2 random parts (ranks as threads over the in-process transport):
// - FeatureFetcher::fetch_typed_features gives, for every id of every featured type, the
//   bytes fetch_type_features gives and the dataset's values, with ONE request to the other
//   rank where the per-type path sends one per featured type, and none when the other
//   rank's part is mapped here (host-local reads); bad slots are refused.
// - A typed batch of the loader takes exactly one request round per hop whose frontier holds
//   a remote node, plus one for all its feature rows: counted by the sampler's and the
//   fetcher's stats and by the endpoint's requests_sent, batch by batch.
// - A typed FeatureCache (hottest remote rows of featured types, FeatureCache::fetch_typed)
//   leaves every batch's feature bytes unchanged, hits, and the remote rows drop by exactly
//   the hits.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../partition/test_datasets.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/fanout_spec.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_cache.h"
#include "partita/store/feature_store.h"
#include "partita/store/host_parts.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

constexpr int kRanks = 2;
constexpr int kPaper = 0, kAuthor = 1, kField = 2;  // testing::typed_dataset's types
// The cache ratio: large enough that fields (fewer, less often sampled) get rows too.
constexpr double kRatio = 0.6;

class TypedFetch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    testing::TypedOptions o;
    o.papers = 400;
    o.authors = 300;
    o.fields = 60;
    o.seed = 5;
    ds_ = new data::Dataset(testing::typed_dataset(o));
    partition::PartitionOptions p;
    p.num_parts = kRanks;
    p.method = partition::Method::kRandom;  // most edges cut: remote rows of every type
    p.seed = 4;
    p.threads = 2;
    p.out_dir = parts();
    partition::partition_dataset(*ds_, p);
  }
  static void TearDownTestSuite() {
    delete ds_;
    delete dir_;
  }
  static std::string parts() { return *dir_ / "random2"; }

  // Runs work(rank, graph, endpoint) on both ranks (threads, every rank serving samples and
  // features) and expects neither to throw.
  using Work = std::function<void(int, const store::DistGraph&, RpcEndpoint&)>;
  static void on_every_rank(const Work& work) {
    InProcessWorld world(kRanks);
    std::vector<store::DistGraph> graphs;
    for (int r = 0; r < kRanks; ++r) graphs.push_back(store::DistGraph::open(parts(), r, kRanks));
    std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
    for (int r = 0; r < kRanks; ++r) {
      RpcRouter router;
      store::add_feature_routes(router, graphs[r]);
      sample::add_sample_routes(router, graphs[r], sample::LocalSamplerOptions{});
      RpcOptions options;
      options.timeout_s = 20;
      endpoints.push_back(
          std::make_unique<RpcEndpoint>(world.transport(r), router.handler(), options));
    }
    std::vector<std::string> failures(kRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] {
        try {
          work(r, graphs[r], *endpoints[r]);
        } catch (const std::exception& e) {
          failures[r] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
    std::vector<std::thread> closing;
    for (int r = 0; r < kRanks; ++r) closing.emplace_back([&, r] { endpoints[r]->shutdown(); });
    for (auto& t : closing) t.join();
  }

  static sample::Fanouts fanouts() {
    std::vector<std::string> names;
    for (const data::Relation& r : ds_->hetero->relations) names.push_back(r.name);
    return sample::resolve_fanouts("4,3", names);
  }

  // The rank's batches: its training ids in chunks of 16.
  static std::vector<std::vector<int64_t>> batches_of(const store::DistGraph& g) {
    const std::vector<int64_t> train(g.train_ids().begin(), g.train_ids().end());
    return loader::chunk(train, 16);
  }

  static loader::BatchPipelineOptions pipeline_options() {
    loader::BatchPipelineOptions o;
    o.threads = 1;
    o.prefetch = 1;
    o.fanouts = fanouts();
    o.seed = 17;
    o.epoch = 0;
    o.typed = true;
    o.fetch_labels = true;  // the seeds' labels: owned, no request
    return o;
  }

  static TempDir* dir_;
  static data::Dataset* ds_;
};
TempDir* TypedFetch::dir_ = nullptr;
data::Dataset* TypedFetch::ds_ = nullptr;

// Throws unless `rows` ([ids.size(), dim] float32) are the dataset's features of type t.
void expect_dataset_rows(const data::Dataset& ds, int t, const std::vector<int64_t>& ids,
                         const std::vector<int64_t>& node_map, const uint8_t* bytes) {
  const data::NodeType& type = ds.hetero->node_types[static_cast<size_t>(t)];
  const int64_t dim = type.feat_dim();
  const float* rows = reinterpret_cast<const float*>(bytes);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t original = node_map[static_cast<size_t>(ids[i])];
    for (int64_t c = 0; c < dim; ++c)
      if (rows[i * dim + c] != type.features.row(original - type.offset)[c])
        throw Error("type " + std::to_string(t) + ": feature " + std::to_string(c) + " of node " +
                    std::to_string(original) + " differs from the dataset");
  }
}

TEST_F(TypedFetch, OneRoundGivesThePerTypeBytesWithOneRequest) {
  const std::vector<int64_t> node_map = testing::read_node_map(parts());
  on_every_rank([&](int r, const store::DistGraph& g, RpcEndpoint& endpoint) {
    // Every featured node of the graph, shuffled, grouped by type; authors have no rows.
    std::vector<std::vector<int64_t>> ids(3);
    std::vector<int64_t> all(static_cast<size_t>(g.num_nodes()));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), std::mt19937_64(static_cast<uint64_t>(r) + 1));
    for (int64_t gid : all)
      if (g.node_type(gid) != kAuthor) ids[static_cast<size_t>(g.node_type(gid))].push_back(gid);
    std::vector<std::vector<uint8_t>> typed(3), per_type(3);
    std::vector<ArrayView<const int64_t>> views(3);
    std::vector<uint8_t*> out(3, nullptr);
    for (int t : {kPaper, kField}) {
      typed[t].resize(ids[t].size() * static_cast<size_t>(g.type_feature_row_bytes(t)));
      per_type[t].resize(typed[t].size());
      views[t] = ids[t];
      out[t] = typed[t].data();
    }
    store::FeatureFetcher one_round(g, &endpoint), by_type(g, &endpoint);
    const int64_t sent0 = endpoint.stats().requests_sent;
    one_round.fetch_typed_features(views, out);
    const int64_t sent1 = endpoint.stats().requests_sent;
    for (int t : {kPaper, kField}) by_type.fetch_type_features(t, ids[t], per_type[t].data());
    const int64_t sent2 = endpoint.stats().requests_sent;
    for (int t : {kPaper, kField}) {
      if (typed[t] != per_type[t])
        throw Error("type " + std::to_string(t) + ": the one-round bytes differ");
      expect_dataset_rows(*ds_, t, ids[t], node_map, typed[t].data());
    }
    const store::FetchStats a = one_round.stats(), b = by_type.stats();
    // Both types have remote rows, so the per-type path takes two rounds, this one one.
    if (a.remote_requests != 1 || sent1 - sent0 != 1)
      throw Error("one round sent " + std::to_string(a.remote_requests) + " requests");
    if (b.remote_requests != 2 || sent2 - sent1 != 2)
      throw Error("per type sent " + std::to_string(b.remote_requests) + " requests");
    if (a.remote_rows != b.remote_rows || a.local_rows != b.local_rows || a.remote_rows == 0)
      throw Error("row counts differ: " + std::to_string(a.remote_rows) + " remote vs " +
                  std::to_string(b.remote_rows));
    // The wire: one request of mixed widths costs no more reply bytes than two.
    if (a.remote_bytes > b.remote_bytes) throw Error("one round received more bytes");

    // Host-local reads (the other rank's part mapped here): the same bytes, no request.
    const store::HostParts host = store::HostParts::map(g, {1 - r}, 0);
    store::FeatureFetcher mapped(g, &endpoint);
    mapped.set_host_parts(&host);
    std::vector<std::vector<uint8_t>> from_memory(3);
    std::vector<uint8_t*> memory_out(3, nullptr);
    for (int t : {kPaper, kField}) {
      from_memory[t].resize(typed[t].size());
      memory_out[t] = from_memory[t].data();
    }
    const int64_t sent3 = endpoint.stats().requests_sent;
    mapped.fetch_typed_features(views, memory_out);
    if (from_memory != typed) throw Error("host-local typed rows differ");
    if (endpoint.stats().requests_sent != sent3 || mapped.stats().host_rows != a.remote_rows)
      throw Error("host-local typed rows were requested");

    // Slots must hold ids of their type, and a featureless type no ids.
    std::vector<ArrayView<const int64_t>> wrong(3);
    std::vector<uint8_t> sink(64);
    std::vector<uint8_t*> sinks(3, sink.data());
    wrong[kField] = ArrayView<const int64_t>(ids[kPaper].data(), 1);
    EXPECT_THROW(one_round.fetch_typed_features(wrong, sinks), Error);
    const std::vector<int64_t> author{g.owned_type_range(kAuthor).first};
    std::vector<ArrayView<const int64_t>> featureless(3);
    featureless[kAuthor] = author;
    EXPECT_THROW(one_round.fetch_typed_features(featureless, sinks), Error);
    EXPECT_THROW(one_round.fetch_typed_features({}, {}), Error);
  });
}

TEST_F(TypedFetch, ATypedBatchTakesOneRoundPerHopAndOneForItsFeatures) {
  std::atomic<int64_t> checked_batches{0}, two_featured_types{0};
  on_every_rank([&](int r, const store::DistGraph& g, RpcEndpoint& endpoint) {
    sample::DistSampler sampler(g, &endpoint, sample::LocalSamplerOptions{});
    store::FeatureFetcher fetcher(g, &endpoint);
    loader::BatchPipeline pipeline(pipeline_options(), batches_of(g), sampler, fetcher);
    // The rounds each batch needs: one per hop whose frontier (the block's dst nodes) holds
    // a node of the other rank, one if any featured input node is the other rank's.
    int64_t hop_rounds = 0, feature_rounds = 0;
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      for (const sample::Block& b : batch->sampled.blocks)
        if (std::any_of(b.src_nodes.begin(), b.src_nodes.begin() + b.num_dst,
                        [&](int64_t gid) { return !g.owns(gid); }))
          ++hop_rounds;
      int remote_types = 0;
      for (int t : {kPaper, kField}) {
        const auto& pos = batch->typed_inputs[static_cast<size_t>(t)].positions;
        if (std::any_of(pos.begin(), pos.end(), [&](int64_t p) {
              return !g.owns(batch->sampled.input_nodes[static_cast<size_t>(p)]);
            }))
          ++remote_types;
      }
      if (remote_types > 0) ++feature_rounds;
      if (remote_types == 2) ++two_featured_types;
      ++checked_batches;
    }
    const int64_t sampler_requests = sampler.stats().remote_requests;
    const int64_t fetcher_requests = fetcher.stats().remote_requests;
    const std::string at = "rank " + std::to_string(r) + ": ";
    if (sampler_requests != hop_rounds)
      throw Error(at + std::to_string(sampler_requests) + " hop requests for " +
                  std::to_string(hop_rounds) + " hop rounds");
    if (fetcher_requests != feature_rounds)
      throw Error(at + std::to_string(fetcher_requests) + " feature requests for " +
                  std::to_string(feature_rounds) + " batches with remote rows");
    // Nothing else was sent (labels of owned seeds stay local).
    if (endpoint.stats().requests_sent != hop_rounds + feature_rounds)
      throw Error(at + std::to_string(endpoint.stats().requests_sent) + " requests sent for " +
                  std::to_string(hop_rounds + feature_rounds) + " rounds");
    // Not vacuous: the hop after the seeds' reaches the other rank in every batch, and every
    // batch has remote feature rows.
    const int64_t batches = static_cast<int64_t>(batches_of(g).size());
    if (feature_rounds != batches || hop_rounds < batches)
      throw Error(at + "batches without remote traffic: the count proves little");
  });
  EXPECT_GT(checked_batches.load(), 4);
  // The per-type path would have taken two feature rounds for these batches.
  EXPECT_GT(two_featured_types.load(), 0);
}

TEST_F(TypedFetch, TheTypedCacheLeavesBatchesUnchangedAndSavesItsHits) {
  on_every_rank([&](int r, const store::DistGraph& g, RpcEndpoint& endpoint) {
    const std::string at = "rank " + std::to_string(r) + ": ";
    sample::DistSampler sampler(g, &endpoint, sample::LocalSamplerOptions{});
    // Pre-sampled under another epoch, as loader/cache_warmup.cc does.
    const std::vector<std::vector<int64_t>> batches = batches_of(g);
    const std::vector<std::vector<int64_t>> presample(batches.begin(), batches.begin() + 3);
    store::FeatureFetcher filler(g, &endpoint);
    const loader::HotNodes hot = loader::hottest_remote_nodes(sampler, g, presample, fanouts(), 17,
                                                              1, loader::cache_budget(g, kRatio));
    const store::FeatureCache cache = store::FeatureCache::fetch_typed(filler, hot.ids, 7);
    if (cache.rows() != static_cast<int64_t>(hot.ids.size()) || cache.rows() == 0 ||
        cache.rows() > loader::cache_budget(g, kRatio))
      throw Error(at + "cache of " + std::to_string(cache.rows()) + " rows for " +
                  std::to_string(hot.ids.size()) + " hot ids, budget " +
                  std::to_string(loader::cache_budget(g, kRatio)));
    int64_t per_type[3] = {0, 0, 0}, bytes = 0;
    for (int64_t gid : cache.ids()) {
      if (g.owns(gid)) throw Error(at + "an owned node cached");
      const int t = g.node_type(gid);
      ++per_type[t];
      bytes += g.type_feature_row_bytes(t);
      // Its row is the owner's (the dataset's) at its type's width.
      std::vector<uint8_t> want(static_cast<size_t>(g.type_feature_row_bytes(t)));
      filler.fetch_type_features(t, std::vector<int64_t>{gid}, want.data());
      if (!std::equal(want.begin(), want.end(), cache.find(gid)))
        throw Error(at + "cached row of node " + std::to_string(gid) + " differs");
    }
    if (per_type[kAuthor] != 0) throw Error(at + "a featureless node cached");
    if (per_type[kPaper] == 0 || per_type[kField] == 0)
      throw Error(at + "the cache holds one width only (" + std::to_string(per_type[kPaper]) +
                  " papers, " + std::to_string(per_type[kField]) + " fields)");
    if (cache.row_bytes() != -1) throw Error(at + "a mixed cache claims one width");

    // The same epoch with and without the cache.
    std::vector<loader::Batch> plain, cached;
    store::FeatureFetcher without(g, &endpoint), with(g, &endpoint);
    with.set_cache(&cache);
    for (auto [fetcher, out] : {std::make_pair(&without, &plain), std::make_pair(&with, &cached)}) {
      loader::BatchPipeline pipeline(pipeline_options(), batches, sampler, *fetcher);
      while (std::optional<loader::Batch> batch = pipeline.next()) out->push_back(*batch);
    }
    if (plain.size() != cached.size() || plain.empty()) throw Error(at + "batch counts differ");
    for (size_t b = 0; b < plain.size(); ++b)
      for (int t = 0; t < 3; ++t)
        if (plain[b].typed_inputs[t].features != cached[b].typed_inputs[t].features ||
            plain[b].typed_inputs[t].positions != cached[b].typed_inputs[t].positions)
          throw Error(at + "batch " + std::to_string(b) + " type " + std::to_string(t) +
                      ": features differ with the cache");
    const store::FetchStats a = without.stats(), c = with.stats();
    if (c.cache_hits <= 0) throw Error(at + "no cache hit");
    if (a.cache_hits != 0) throw Error(at + "hits without a cache");
    if (c.remote_rows + c.cache_hits != a.remote_rows || c.local_rows != a.local_rows)
      throw Error(at + std::to_string(c.remote_rows) + " remote rows + " +
                  std::to_string(c.cache_hits) + " hits != " + std::to_string(a.remote_rows) +
                  " remote rows without the cache");
    if (c.remote_bytes >= a.remote_bytes) throw Error(at + "the cache saved no reply bytes");
  });
}

}  // namespace
}  // namespace partita
