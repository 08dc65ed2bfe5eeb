// BatchPipeline over a small generated one-part graph, all local (no endpoint): batches come
// in step order, equal to building them directly, whatever the thread count and prefetch;
// stop() mid-epoch and worker exceptions end cleanly.
#include "partita/loader/batch_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <memory_resource>
#include <thread>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/sample_key.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"

namespace partita::loader {
namespace {

using partita::testing::TempDir;

constexpr int64_t kFeatDim = 5;

// Delegates to another sampler; records the highest step seen at hop 0, optionally sleeps,
// and throws at hop 0 of step `throw_at`.
class ProbeSampler final : public sample::NeighborSampler {
 public:
  ProbeSampler(sample::NeighborSampler& inner, const BatchPipelineOptions& o, int64_t steps)
      : inner_(inner) {
    for (int64_t s = 0; s < steps; ++s)
      keys_.push_back(sample::hop_key({o.seed, o.epoch, static_cast<uint64_t>(s)}, 0));
  }
  void sample_hop(const sample::HopRequest& request, sample::NeighborSample* out) override {
    if (request.hop == 0) {
      const int64_t step = std::find(keys_.begin(), keys_.end(), request.hop_key) - keys_.begin();
      int64_t seen = max_step_.load();
      while (step > seen && !max_step_.compare_exchange_weak(seen, step)) {
      }
      if (step == throw_at) throw Error("probe: failing step " + std::to_string(step));
      if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    }
    inner_.sample_hop(request, out);
  }
  int64_t max_step() const { return max_step_.load(); }

  int64_t throw_at = -1;
  int sleep_ms = 0;

 private:
  sample::NeighborSampler& inner_;
  std::vector<uint64_t> keys_;
  std::atomic<int64_t> max_step_{-1};
};

class BatchPipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    data::GenerateOptions g;
    g.nodes = 2000;
    g.avg_degree = 6;
    g.feat_dim = kFeatDim;
    g.classes = 4;
    g.seed = 3;
    g.out_dir = *dir_ / "ds";
    data::generate_synthetic(g);
    data::Dataset dataset = data::load_dataset(g.out_dir, {});
    partition::PartitionOptions p;
    p.num_parts = 1;
    p.method = partition::Method::kRandom;
    p.seed = 1;
    p.out_dir = *dir_ / "p1";
    partition::partition_dataset(dataset, p);
    graph_ = new store::DistGraph(store::DistGraph::open(p.out_dir, 0, 1));
    sampler_ = new sample::DistSampler(*graph_, nullptr, {});
    fetcher_ = new store::FeatureFetcher(*graph_, nullptr);
  }
  static void TearDownTestSuite() {
    delete fetcher_;
    delete sampler_;
    delete graph_;
    delete dir_;
  }

  static BatchPipelineOptions options(int threads, int prefetch) {
    BatchPipelineOptions o;
    o.threads = threads;
    o.prefetch = prefetch;
    o.fanouts = {4, 3};
    o.seed = 9;
    o.epoch = 2;
    o.feature_row_bytes = kFeatDim * 4;  // float32
    return o;
  }
  // `steps` batches of 32 of the shuffled training ids, cycling through them again as
  // needed; with `empty_step_3`, step 3 has no seeds (a rank with none of a global batch's
  // seeds).
  static std::vector<std::vector<int64_t>> batches(const BatchPipelineOptions& o, int64_t steps,
                                                   bool empty_step_3 = false) {
    const std::vector<int64_t> seeds = epoch_seeds(graph_->train_ids(), o.seed, o.epoch);
    std::vector<std::vector<int64_t>> all = chunk(seeds, 32);
    std::vector<std::vector<int64_t>> out;
    for (int64_t s = 0; s < steps; ++s) out.push_back(all[static_cast<size_t>(s) % all.size()]);
    if (empty_step_3 && steps > 3) out[3].clear();
    return out;
  }

  static TempDir* dir_;
  static store::DistGraph* graph_;
  static sample::DistSampler* sampler_;
  static store::FeatureFetcher* fetcher_;
};
TempDir* BatchPipelineTest::dir_ = nullptr;
store::DistGraph* BatchPipelineTest::graph_ = nullptr;
sample::DistSampler* BatchPipelineTest::sampler_ = nullptr;
store::FeatureFetcher* BatchPipelineTest::fetcher_ = nullptr;

void expect_same_batch(const sample::SampledBatch& a, const sample::SampledBatch& b) {
  ASSERT_EQ(a.seeds, b.seeds);
  ASSERT_EQ(a.input_nodes, b.input_nodes);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    EXPECT_EQ(a.blocks[i].num_dst, b.blocks[i].num_dst);
    EXPECT_EQ(a.blocks[i].indptr, b.blocks[i].indptr);
    EXPECT_EQ(a.blocks[i].indices, b.blocks[i].indices);
    EXPECT_EQ(a.blocks[i].src_nodes, b.blocks[i].src_nodes);
  }
}

TEST_F(BatchPipelineTest, InOrderAndIdenticalToDirectBuildForAnyThreadsAndPrefetch) {
  const BatchPipelineOptions base = options(1, 1);
  const int64_t steps = 9;
  const std::vector<std::vector<int64_t>> seeds = batches(base, steps, /*empty_step_3=*/true);

  std::vector<sample::SampledBatch> want;
  sample::BlockBuilder builder;
  for (int64_t s = 0; s < steps; ++s) {
    sample::BlockOptions bo;
    bo.fanouts = base.fanouts;
    bo.key = {base.seed, base.epoch, static_cast<uint64_t>(s)};
    want.push_back(seeds[s].empty() ? sample::SampledBatch{}
                                    : builder.build(seeds[s], bo, *sampler_));
  }

  const auto features = graph_->features();
  const auto labels = graph_->labels();
  for (int threads : {1, 3}) {
    for (int prefetch : {1, 4}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + " prefetch " + std::to_string(prefetch));
      BatchPipeline pipeline(options(threads, prefetch), seeds, *sampler_, *fetcher_);
      for (int64_t s = 0; s < steps; ++s) {
        std::optional<Batch> batch = pipeline.next();
        ASSERT_TRUE(batch.has_value()) << s;
        ASSERT_EQ(batch->step, s);
        expect_same_batch(batch->sampled, want[s]);
        ASSERT_EQ(batch->sampled.seeds, seeds[s]);
        const auto& input = batch->sampled.input_nodes;
        ASSERT_EQ(batch->features.size(), input.size() * kFeatDim * 4);
        for (size_t i = 0; i < input.size(); ++i) {
          const int64_t row = input[i] - graph_->first_node();
          for (int64_t c = 0; c < kFeatDim * 4; ++c)
            ASSERT_EQ(batch->features[i * kFeatDim * 4 + c], features[row * kFeatDim * 4 + c]);
        }
        ASSERT_EQ(batch->labels.size(), batch->sampled.seeds.size());
        for (size_t i = 0; i < batch->labels.size(); ++i)
          ASSERT_EQ(batch->labels[i], labels[batch->sampled.seeds[i] - graph_->first_node()]);
        EXPECT_GE(batch->sample_s, 0);
        EXPECT_GE(batch->fetch_s, 0);
      }
      EXPECT_FALSE(pipeline.next().has_value());
      EXPECT_FALSE(pipeline.next().has_value());
    }
  }
}

// Counts what a pipeline allocates from it (from several worker threads).
class CountingMemory final : public std::pmr::memory_resource {
 public:
  std::atomic<int64_t> live{0}, allocated{0};

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    ++live;
    allocated += static_cast<int64_t>(bytes);
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    --live;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override {
    return this == &o;
  }
};

// options.feature_memory (pinned host memory on a GPU run): every batch's feature rows live
// there, the same bytes as with the default memory, and go back to it with the batch.
TEST_F(BatchPipelineTest, FeatureRowsComeFromTheGivenMemory) {
  const int64_t steps = 4;
  const std::vector<std::vector<int64_t>> seeds = batches(options(2, 2), steps, false);
  CountingMemory memory;
  BatchPipelineOptions o = options(2, 2);
  o.feature_memory = &memory;
  BatchPipeline plain(options(2, 2), seeds, *sampler_, *fetcher_);
  {
    BatchPipeline pipeline(o, seeds, *sampler_, *fetcher_);
    for (int64_t s = 0; s < steps; ++s) {
      std::optional<Batch> batch = pipeline.next();
      std::optional<Batch> want = plain.next();
      ASSERT_TRUE(batch.has_value() && want.has_value());
      EXPECT_EQ(batch->features.get_allocator().resource(), &memory) << s;
      ASSERT_FALSE(batch->features.empty());
      EXPECT_TRUE(std::equal(batch->features.begin(), batch->features.end(), want->features.begin(),
                             want->features.end()))
          << s;
      EXPECT_GE(memory.live.load(), 1);
    }
  }
  EXPECT_GT(memory.allocated.load(), 0);
  EXPECT_EQ(memory.live.load(), 0) << "every batch gave its rows back";
}

TEST_F(BatchPipelineTest, ZeroStepsEndsAtOnce) {
  BatchPipeline pipeline(options(2, 2), {}, *sampler_, *fetcher_);
  EXPECT_FALSE(pipeline.next().has_value());
}

TEST_F(BatchPipelineTest, RejectsBadOptions) {
  const auto seeds = batches(options(1, 1), 3);
  // Named in the library's words (parameter_errors_test.cc has the messages).
  EXPECT_THROW(BatchPipeline(options(0, 1), seeds, *sampler_, *fetcher_), ParameterError);
  EXPECT_THROW(BatchPipeline(options(1, 0), seeds, *sampler_, *fetcher_), ParameterError);
}

// Waits (bounded) until the probe has seen step `want`, then a little longer so that a
// worker running ahead of the bound would show.
int64_t settle(const ProbeSampler& probe, int64_t want) {
  for (int i = 0; i < 500 && probe.max_step() < want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return probe.max_step();
}

TEST_F(BatchPipelineTest, StaysWithinPrefetchOfTheConsumer) {
  const BatchPipelineOptions o = options(4, 3);
  ProbeSampler probe(*sampler_, o, 50);
  BatchPipeline pipeline(o, batches(o, 50), probe, *fetcher_);
  ASSERT_TRUE(pipeline.next().has_value());
  // The consumer wants step 1 next: steps 1, 2, 3 at most may be claimed.
  EXPECT_EQ(settle(probe, 3), 3);
  ASSERT_TRUE(pipeline.next().has_value());
  EXPECT_EQ(settle(probe, 4), 4);
}

TEST_F(BatchPipelineTest, StopMidEpochReturnsPromptly) {
  for (bool explicit_stop : {true, false}) {
    const BatchPipelineOptions o = options(3, 4);
    ProbeSampler probe(*sampler_, o, 50);
    probe.sleep_ms = 20;
    Stopwatch watch;
    {
      BatchPipeline pipeline(o, batches(o, 50), probe, *fetcher_);
      ASSERT_EQ(pipeline.next()->step, 0);
      ASSERT_EQ(pipeline.next()->step, 1);
      if (explicit_stop) {
        pipeline.stop();
        EXPECT_FALSE(pipeline.next().has_value());
        pipeline.stop();  // idempotent
      }
    }  // the destructor stops (again) and joins
    EXPECT_LT(watch.seconds(), 5.0);
    EXPECT_LT(probe.max_step(), 2 + 4);
  }
}

TEST_F(BatchPipelineTest, WorkerExceptionIsRethrownAndStopsThePipeline) {
  for (int threads : {1, 3}) {
    const BatchPipelineOptions o = options(threads, 2);
    ProbeSampler probe(*sampler_, o, 50);
    probe.throw_at = 5;
    BatchPipeline pipeline(o, batches(o, 50), probe, *fetcher_);
    int64_t got = 0;
    bool thrown = false;
    try {
      while (pipeline.next()) ++got;
    } catch (const Error& e) {
      thrown = true;
      EXPECT_NE(std::string(e.what()).find("failing step 5"), std::string::npos);
    }
    EXPECT_TRUE(thrown);
    EXPECT_LE(got, 5);
    EXPECT_THROW(pipeline.next(), Error);  // stays failed
    EXPECT_LE(probe.max_step(), 5 + 2);
  }
}

}  // namespace
}  // namespace partita::loader
