// Edge ids and edge features across ranks (issue 41): on 1, 2 and 3 in-process ranks the
// blocks' edge ids are edges of the partition at those slots (brute force over the parts'
// files concatenated), name the same edges as the single-process sampler on the whole
// dataset (same dst, same position in its row), and the fetched edge_feat rows equal the
// files' rows and the dataset's; the same with every part mapped here (--topology full),
// where nothing is requested; and through the batch pipeline. The edge cache (issue 41):
// the pre-sampling's hottest remote edges, cached, give the same rows and are hit; a fetcher
// with an edge cache returns the same bytes as without for own, cached and uncached remote
// edges mixed, and requests none of the cached ones.
#include <gtest/gtest.h>

#include <cstring>

#include "helpers/test_paths.h"
#include "partita/comm/rpc.h"
#include "partita/core/npy.h"
#include "partita/data/dataset.h"
#include "partita/data/edge_arrays.h"
#include "partita/data/generate.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/local_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_cache.h"
#include "partita/store/feature_store.h"
#include "partita/store/host_parts.h"
#include "serving_ranks.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

constexpr int64_t kEdgeDim = 3;

// The parts' CSC concatenated: every edge at its global id (docs/partition-format.md).
struct WholeParts {
  std::vector<int64_t> indptr{0}, indices;
  std::vector<float> feat;  // [edges, kEdgeDim]
};

WholeParts read_parts(const std::string& dir, int parts) {
  WholeParts w;
  for (int p = 0; p < parts; ++p) {
    const std::string part = dir + "/part" + std::to_string(p) + "/";
    const std::vector<int64_t> indptr = read_npy_vector<int64_t>(part + "indptr.npy");
    const std::vector<int64_t> indices = read_npy_vector<int64_t>(part + "indices.npy");
    const std::vector<float> feat = read_npy_vector<float>(part + "edge_feat.npy", 2);
    const int64_t base = static_cast<int64_t>(w.indices.size());
    for (size_t i = 1; i < indptr.size(); ++i) w.indptr.push_back(base + indptr[i]);
    w.indices.insert(w.indices.end(), indices.begin(), indices.end());
    w.feat.insert(w.feat.end(), feat.begin(), feat.end());
  }
  return w;
}

class EdgeFeatureDist : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    data::GenerateOptions g;
    g.nodes = 1500;
    g.avg_degree = 6;
    g.feat_dim = 2;
    g.classes = 3;
    g.seed = 12;
    g.edge_feat_dim = kEdgeDim;
    g.out_dir = *dir_ / "ds";
    data::generate_synthetic(g);
    dataset_ = new data::Dataset(data::load_dataset(g.out_dir, {}));
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }
  static TempDir* dir_;
  static data::Dataset* dataset_;
};
TempDir* EdgeFeatureDist::dir_ = nullptr;
data::Dataset* EdgeFeatureDist::dataset_ = nullptr;

TEST_P(EdgeFeatureDist, IdsAndRowsMatchTheFilesAndOneProcess) {
  const int ranks = GetParam();
  const std::string parts = *dir_ / ("p" + std::to_string(ranks));
  partition::PartitionOptions p;
  p.num_parts = ranks;
  p.seed = 5;
  p.out_dir = parts;
  partition::partition_dataset(*dataset_, p);
  const WholeParts whole = read_parts(parts, ranks);
  const data::ExtraArray* dataset_feat = data::find_array(dataset_->edge_arrays, "edge_feat");
  ASSERT_NE(dataset_feat, nullptr);
  const float* dataset_rows = reinterpret_cast<const float*>(dataset_feat->values.data());

  sample::LocalSamplerOptions sampling;
  sampling.edge_ids = true;
  sample::LocalSampler reference(sample::csc_view_of(dataset_->in_edges), sampling);
  const sample::Fanouts fanouts{4, 3};

  const std::vector<int64_t> node_map = testing::read_node_map(parts);

  std::vector<int64_t> remote_rows(ranks, 0);
  testing::run_serving_ranks(
      parts, ranks, sampling, [&](int r, const store::DistGraph& graph, RpcEndpoint* endpoint) {
        if (graph.edge_feat_dim() != kEdgeDim || graph.edge_feat_dtype() != DType::kFloat32)
          throw Error("edge_feat not mapped");
        RpcEndpoint* remote = ranks > 1 ? endpoint : nullptr;
        sample::DistSampler sampler(graph, remote, sampling);
        store::FeatureFetcher fetcher(graph, remote);
        std::vector<std::vector<int64_t>> batches = loader::chunk(
            std::vector<int64_t>(graph.train_ids().begin(), graph.train_ids().end()), 48);
        batches.resize(std::min<size_t>(batches.size(), 4));
        // Every batch's edge ids and rows; returns the batches' edge ids.
        const auto check = [&](const std::string& pass) {
          std::vector<std::vector<int64_t>> all_ids;
          for (uint64_t b = 0; b < batches.size(); ++b) {
            const std::string at = pass + "batch " + std::to_string(b) + ": ";
            sample::BlockOptions options;
            options.fanouts = fanouts;
            options.key = {7, 1, b};
            const sample::SampledBatch got = sample::sample_blocks(batches[b], options, sampler);
            const sample::SampledBatch want =
                sample::sample_blocks(testing::map_ids(batches[b], node_map), options, reference);
            const std::string diff = testing::compare_batches(got, want, node_map);
            if (!diff.empty()) throw Error(at + diff);
            std::vector<int64_t> ids;
            for (size_t l = 0; l < got.blocks.size(); ++l) {
              const sample::Block& block = got.blocks[l];
              const sample::Block& ref = want.blocks[l];
              if (block.edge_ids.size() != block.indices.size()) throw Error(at + "no edge ids");
              for (int64_t d = 0; d < block.num_dst; ++d) {
                const int64_t dst = block.src_nodes[d];
                for (int64_t k = block.indptr[d]; k < block.indptr[d + 1]; ++k) {
                  const int64_t e = block.edge_ids[k];
                  if (e < whole.indptr[dst] || e >= whole.indptr[dst + 1])
                    throw Error(at + "edge " + std::to_string(e) + " is not in its dst's row");
                  if (whole.indices[e] != block.src_nodes[block.indices[k]])
                    throw Error(at + "edge " + std::to_string(e) + " has another source");
                  // The same edge as one process: same position in the dst's row.
                  const int64_t orig = node_map[dst];
                  if (e - whole.indptr[dst] != ref.edge_ids[k] - dataset_->in_edges.indptr[orig])
                    throw Error(at + "edge " + std::to_string(e) + " differs from one process");
                }
              }
              ids.insert(ids.end(), block.edge_ids.begin(), block.edge_ids.end());
            }
            std::vector<float> rows(ids.size() * kEdgeDim);
            fetcher.fetch_edge_features(ids, rows.data());
            // The reference's edge ids index the dataset's rows (in_edges order).
            std::vector<int64_t> ref_ids;
            for (const sample::Block& block : want.blocks)
              ref_ids.insert(ref_ids.end(), block.edge_ids.begin(), block.edge_ids.end());
            for (size_t j = 0; j < ids.size(); ++j) {
              if (std::memcmp(&rows[j * kEdgeDim], &whole.feat[ids[j] * kEdgeDim],
                              kEdgeDim * sizeof(float)) != 0)
                throw Error(at + "row of edge " + std::to_string(ids[j]) + " differs from files");
              if (std::memcmp(&rows[j * kEdgeDim], dataset_rows + ref_ids[j] * kEdgeDim,
                              kEdgeDim * sizeof(float)) != 0)
                throw Error(at + "row of edge " + std::to_string(ids[j]) + " differs from dataset");
            }
            all_ids.push_back(std::move(ids));
          }
          return all_ids;
        };
        const std::vector<std::vector<int64_t>> routed = check("");
        remote_rows[r] = fetcher.stats().remote_rows;

        // Through the batch pipeline: the same rows, block 0's edges first.
        loader::BatchPipelineOptions po;
        po.fanouts = fanouts;
        po.seed = 7;
        po.epoch = 1;
        po.feature_row_bytes = graph.feature_row_bytes();
        po.edge_feature_row_bytes = graph.edge_feat_row_bytes();
        loader::BatchPipeline pipeline(po, batches, sampler, fetcher);
        for (size_t b = 0; b < batches.size(); ++b) {
          std::optional<loader::Batch> batch = pipeline.next();
          if (!batch) throw Error("pipeline ended early");
          if (batch->edge_features.size() != routed[b].size() * kEdgeDim * sizeof(float))
            throw Error("pipeline: edge feature bytes");
          for (size_t j = 0; j < routed[b].size(); ++j)
            if (std::memcmp(batch->edge_features.data() + j * kEdgeDim * sizeof(float),
                            &whole.feat[routed[b][j] * kEdgeDim], kEdgeDim * sizeof(float)) != 0)
              throw Error("pipeline: row of edge " + std::to_string(routed[b][j]));
        }

        // Every part mapped here (--topology full): the same ids and rows, nothing requested.
        if (ranks > 1) {
          const store::HostParts all = store::HostParts::map_every_part(graph, 0);
          sampler.set_host_parts(&all);
          fetcher.set_host_parts(&all);
          const int64_t before = fetcher.stats().remote_requests;
          if (check("all parts mapped: ") != routed) throw Error("edge ids differ when mapped");
          if (fetcher.stats().remote_requests != before) throw Error("requested mapped rows");
          if (fetcher.stats().host_rows == 0) throw Error("no mapped row read");
          sampler.set_host_parts(nullptr);
          fetcher.set_host_parts(nullptr);
        }

        // The edge cache: the hottest remote edges of the first 3 batches, chosen twice
        // alike, none stored here, within the budget; the rows unchanged and the cache hit.
        if (ranks > 1) {
          const std::vector<std::vector<int64_t>> presample(
              batches.begin(), batches.begin() + std::min<size_t>(3, batches.size()));
          const int64_t budget = loader::edge_cache_budget(graph, 0.5);
          loader::HotNodes hot, again;
          loader::hottest_remote_nodes(sampler, graph, presample, fanouts, 7, 99, 0,
                                       sample::Temporal::kNone, &hot, budget);
          loader::hottest_remote_nodes(sampler, graph, presample, fanouts, 7, 99, 0,
                                       sample::Temporal::kNone, &again, budget);
          if (hot.ids != again.ids) throw Error("hot edges differ between two identical calls");
          if (hot.ids.empty() || static_cast<int64_t>(hot.ids.size()) > budget)
            throw Error("hot edges: " + std::to_string(hot.ids.size()) + " for budget " +
                        std::to_string(budget));
          if (hot.remote_appearances <= 0 || hot.covered > hot.remote_appearances)
            throw Error("hot edges: covered " + std::to_string(hot.covered) + " of " +
                        std::to_string(hot.remote_appearances));
          for (int64_t e : hot.ids)
            if (e >= graph.first_edge() &&
                e < graph.first_edge() + static_cast<int64_t>(graph.indices().size()))
              throw Error("cached an edge stored here");
          const store::FeatureCache cache = store::FeatureCache::fetch_edges(fetcher, hot.ids, 7);
          fetcher.set_edge_cache(&cache);
          const store::FetchStats before = fetcher.stats();
          if (check("with the edge cache: ") != routed) throw Error("edge ids differ (cache)");
          const store::FetchStats after = fetcher.stats();
          fetcher.set_edge_cache(nullptr);
          if (after.edge_cache_hits <= before.edge_cache_hits)
            throw Error("the edge cache was never hit");
          if (after.cache_hits != before.cache_hits) throw Error("edge hits counted as nodes'");
        }
      });
  if (ranks > 1) {
    int64_t remote = 0;
    for (int64_t n : remote_rows) remote += n;
    EXPECT_GT(remote, 0) << "no remote edge row: test is vacuous";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, EdgeFeatureDist, ::testing::Values(1, 2, 3));

// Own, cached and uncached remote edges mixed: the same bytes with the edge cache as
// without, the cached ids never requested (rows crossing the wire = the uncached ones; a
// fetch of own and cached ids only sends no request).
TEST_F(EdgeFeatureDist, EdgeCacheGivesTheSameBytesAndRequestsNoCachedId) {
  const std::string parts = *dir_ / "cache2";
  partition::PartitionOptions p;
  p.num_parts = 2;
  p.seed = 5;
  p.out_dir = parts;
  partition::partition_dataset(*dataset_, p);
  sample::LocalSamplerOptions sampling;
  sampling.edge_ids = true;
  testing::run_serving_ranks(
      parts, 2, sampling, [&](int r, const store::DistGraph& graph, RpcEndpoint* endpoint) {
        const int other = 1 - r;
        const int64_t own_first = graph.first_edge();
        const int64_t own_end = own_first + static_cast<int64_t>(graph.indices().size());
        const int64_t far_first = graph.edge_id_start(other);
        const int64_t far_end = graph.edge_id_start(other + 1);
        if (own_end - own_first < 40 || far_end - far_first < 40)
          throw Error("too few edges per part");
        std::vector<int64_t> own, cached, uncached;
        for (int64_t k = 0; k < 20; ++k) {
          own.push_back(own_first + k * 2);
          (k % 2 == 0 ? cached : uncached).push_back(far_first + k * 2);
        }
        // Interleaved, with repeats of a cached and an uncached id.
        std::vector<int64_t> mixed;
        for (size_t k = 0; k < 10; ++k) {
          mixed.push_back(cached[k]);
          mixed.push_back(own[k]);
          mixed.push_back(uncached[k]);
          mixed.push_back(own[10 + k]);
        }
        mixed.push_back(cached[3]);
        mixed.push_back(uncached[4]);
        const int64_t width = graph.edge_feat_row_bytes();
        store::FeatureFetcher plain(graph, endpoint);
        std::vector<uint8_t> want(mixed.size() * width);
        plain.fetch_edge_features(mixed, want.data());

        store::FeatureFetcher fetcher(graph, endpoint);
        const store::FeatureCache cache = store::FeatureCache::fetch_edges(fetcher, cached, 4);
        if (cache.rows() != 10 || cache.row_bytes() != width) throw Error("cache size");
        fetcher.set_edge_cache(&cache);
        const store::FetchStats before = fetcher.stats();
        std::vector<uint8_t> got(mixed.size() * width, 0xab);
        fetcher.fetch_edge_features(mixed, got.data());
        const store::FetchStats after = fetcher.stats();
        if (got != want) throw Error("rank " + std::to_string(r) + ": bytes differ with cache");
        // 11 uncached remote positions cross the wire, the 11 cached ones do not.
        if (after.remote_rows - before.remote_rows != 11)
          throw Error("remote rows " + std::to_string(after.remote_rows - before.remote_rows));
        if (after.edge_cache_hits - before.edge_cache_hits != 11)
          throw Error("edge cache hits " +
                      std::to_string(after.edge_cache_hits - before.edge_cache_hits));
        if (after.local_rows - before.local_rows != 20) throw Error("local rows");

        std::vector<int64_t> no_request(own.begin(), own.end());
        no_request.insert(no_request.end(), cached.begin(), cached.end());
        std::vector<uint8_t> rows(no_request.size() * width), plain_rows(rows.size());
        const int64_t requests = fetcher.stats().remote_requests;
        fetcher.fetch_edge_features(no_request, rows.data());
        if (fetcher.stats().remote_requests != requests)
          throw Error("requested rows the edge cache holds");
        plain.fetch_edge_features(no_request, plain_rows.data());
        if (rows != plain_rows) throw Error("own and cached rows differ");
        fetcher.set_edge_cache(nullptr);
      });
}

TEST(EdgeFeatures, RefusedWithoutFilesOrOutsideTheEdges) {
  TempDir dir;
  data::GenerateOptions g;
  g.nodes = 200;
  g.avg_degree = 4;
  g.feat_dim = 2;
  g.classes = 2;
  g.out_dir = dir / "ds";
  data::generate_synthetic(g);
  partition::PartitionOptions p;
  p.num_parts = 1;
  p.out_dir = dir / "p";
  partition::run_partition(g.out_dir, {}, p);
  const store::DistGraph plain = store::DistGraph::open(dir / "p", 0, 1);
  EXPECT_FALSE(plain.has_edge_features());
  store::FeatureFetcher fetcher(plain, nullptr);
  const std::vector<int64_t> ids{0};
  float row[1];
  EXPECT_THROW(fetcher.fetch_edge_features(ids, row), Error);
  EXPECT_EQ(plain.first_edge(), 0);
  EXPECT_EQ(plain.edge_id_start(1), plain.meta().num_edges);
  EXPECT_THROW(plain.edge_owner(plain.meta().num_edges), Error);
  EXPECT_THROW(plain.edge_owner(-1), Error);
}

}  // namespace
}  // namespace partita
