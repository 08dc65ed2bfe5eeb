// On a GPU (scripts/device-check.sh, phase gpu-sampling, filter DeviceSamplerCuda.*): the
// device sampler's temporal sampling (train/device_sampler.h, `--temporal`) on CUDA equals
// the same sampler on the CPU, which device_sampler_temporal_test.cc holds equal to the host
// pipeline: uniform and recent, strict and not, untyped and typed, the topology in two
// views. Compiles everywhere; skips without a CUDA device.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "device_sampler_test_util.h"
#include "partita/core/random.h"
#include "partita/train/device_sampler.h"

namespace partita::train {
namespace {

using namespace device_test;  // the shared test helpers

// `g` with a time in [0, 40) on every entry.
TestGraph with_times(TestGraph g, uint64_t seed) {
  Rng rng(seed);
  for (size_t e = 0; e < g.indices.size(); ++e)
    g.times.push_back(static_cast<int64_t>(rng.below(40)));
  return g;
}

// `tensors` moved to the CPU, so that blocks compare field by field.
nn::BlockTensors on_cpu(nn::BlockTensors block) {
  nn::for_each_tensor(
      [](const char*, torch::Tensor& x) {
        if (x.defined()) x = x.to(torch::kCPU);
      },
      block);
  return block;
}

TEST(DeviceSamplerCuda, TemporalEqualsTheCpuSampler) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const torch::Device gpu(torch::kCUDA, 0);
  for (const int relations : {0, 4}) {
    const TestGraph g = with_times(random_graph(20000, relations, 300, 70 + relations), 71);
    const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 1024, 72);
    std::vector<int64_t> seed_times;
    Rng rng(73);
    for (size_t i = 0; i < seeds.size(); ++i)
      seed_times.push_back(static_cast<int64_t>(rng.below(44)));  // some allow every edge
    const sample::Fanouts fanouts = relations == 0 ? sample::Fanouts({15, 10, 5})
                                                   : sample::Fanouts({15, 10}, {{5, 0, -1, 3}, {}});
    sample::BlockOptions options = block_options(fanouts);
    options.seed_times = seed_times;
    const DeviceTopology cpu({g.view()}, g.num_relations, torch::kCPU, false, /*times=*/true);
    const DeviceTopology cuda({g.rows(0, 7000), g.rows(7000, 20000)}, g.num_relations, gpu, false,
                              /*times=*/true);
    for (const auto temporal : {sample::Temporal::kUniform, sample::Temporal::kRecent}) {
      for (const bool strict : {false, true}) {
        const std::string what = std::string(relations == 0 ? "untyped " : "typed ") +
                                 (temporal == sample::Temporal::kRecent ? "recent" : "uniform") +
                                 (strict ? " strict" : "");
        DeviceSampleOptions so;
        so.temporal = temporal;
        so.strict = strict;
        so.degrees = true;
        so.edge_ids = true;
        so.seed_times = ids(seed_times);
        const DeviceSample want = DeviceSampler(cpu).sample(ids(seeds), options, so);
        so.seed_times = so.seed_times.to(gpu);
        const DeviceSample got = DeviceSampler(cuda).sample(ids(seeds).to(gpu), options, so);
        EXPECT_GT(want.num_edges, 0) << what;
        EXPECT_EQ(got.num_edges, want.num_edges) << what;
        EXPECT_EQ(to_vector(got.input_nodes), to_vector(want.input_nodes)) << what;
        EXPECT_EQ(to_vector(got.input_times), to_vector(want.input_times)) << what;
        EXPECT_EQ(to_vector(got.edge_ids), to_vector(want.edge_ids)) << what;
        ASSERT_EQ(got.blocks.size(), want.blocks.size()) << what;
        for (size_t b = 0; b < got.blocks.size(); ++b)
          expect_same_block(on_cpu(got.blocks[b]), want.blocks[b],
                            what + " cuda block " + std::to_string(b));
      }
    }
  }
}

}  // namespace
}  // namespace partita::train
