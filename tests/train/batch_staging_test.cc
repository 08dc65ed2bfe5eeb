// BatchStaging (partita/train/batch_staging.h) on the CPU moves nothing: every tensor comes
// back as itself (same memory), so `--device cpu` computes on exactly the tensors of a run
// without the flag. With a GPU, the same batch arrives there with the same values.
#include "partita/train/batch_staging.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory_resource>
#include <utility>
#include <vector>

#include "host_tensor_memory.h"
#include "partita/nn/kernel_path.h"
#include "partita/train/device.h"

namespace partita::train {
namespace {

sample::Block small_block() {
  sample::Block b;
  b.num_dst = 2;
  b.num_src = 3;
  b.src_nodes = {10, 11, 12};
  b.indptr = {0, 2, 3};
  b.indices = {1, 2, 0};
  return b;
}

TEST(BatchStaging, CpuCopiesNothing) {
  BatchStaging staging(torch::kCPU);
  EXPECT_TRUE(staging.on_cpu());
  const torch::Tensor t = torch::arange(6, torch::kInt64);
  EXPECT_EQ(staging.to_device(t).data_ptr(), t.data_ptr());
  EXPECT_FALSE(staging.to_device(torch::Tensor()).defined());
  staging.ready();  // nothing pending, no stream: a no-op

  const nn::BlockTensors host = nn::to_block_tensors(small_block());
  const nn::BlockTensors same = staging.to_device(host);
  EXPECT_EQ(same.indptr.data_ptr(), host.indptr.data_ptr());
  EXPECT_EQ(same.indices.data_ptr(), host.indices.data_ptr());
  EXPECT_EQ(same.t_eid.data_ptr(), host.t_eid.data_ptr());
  EXPECT_FALSE(same.graph_deg.defined());

  loader::Batch batch;
  batch.sampled.blocks = {small_block()};
  batch.degrees = {3, 1, 2};
  const std::vector<nn::BlockTensors> blocks = staging.blocks(batch);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_TRUE(torch::equal(blocks[0].graph_deg, torch::tensor({3, 1, 2}, torch::kInt64)));
}

// Where nn's ops take the device-generic path (a GPU; here the CPU under a KernelPathScope),
// the blocks are derived from their index arrays on the device: the same fields as the
// CPU build's, graph degrees included.
TEST(BatchStaging, GenericPathDerivesTheSameBlocks) {
  loader::Batch batch;
  sample::Block second = small_block();
  second.num_dst = 3;
  second.num_src = 4;
  second.indptr = {0, 1, 1, 4};
  second.indices = {3, 0, 3, 3};
  batch.sampled.blocks = {small_block(), second};
  batch.degrees = {3, 1, 2, 5};
  const std::vector<nn::BlockTensors> want =
      nn::to_block_tensors(batch.sampled.blocks, batch.degrees);
  BatchStaging staging(torch::kCPU);
  EXPECT_EQ(staging.feature_memory(), nullptr) << "nothing to pin on the CPU";
  nn::KernelPathScope generic(nn::KernelPath::kGeneric);
  const std::vector<nn::BlockTensors> got = staging.blocks(batch);
  ASSERT_EQ(got.size(), want.size());
  for (size_t b = 0; b < got.size(); ++b) {
    const std::pair<torch::Tensor, torch::Tensor> fields[] = {
        {got[b].indptr, want[b].indptr},      {got[b].indices, want[b].indices},
        {got[b].edge_dst, want[b].edge_dst},  {got[b].deg_dst, want[b].deg_dst},
        {got[b].deg_src, want[b].deg_src},    {got[b].t_indptr, want[b].t_indptr},
        {got[b].t_dst, want[b].t_dst},        {got[b].t_eid, want[b].t_eid},
        {got[b].graph_deg, want[b].graph_deg}};
    for (const auto& [g, w] : fields) EXPECT_TRUE(torch::equal(g, w)) << "block " << b;
  }
}

// The loader's feature memory: blocks of host tensors (pinned on a GPU run), found again by
// their first byte so that a copy reads the allocator's own block.
TEST(HostTensorMemory, BlocksAreTensorsFoundByTheirData) {
  HostTensorMemory memory(/*pinned=*/false);
  {
    std::pmr::vector<uint8_t> rows(&memory);
    rows.resize(64);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(memory.live_blocks(), 1u);
    const torch::Tensor t = memory.tensor_of(rows.data(), 64);
    ASSERT_TRUE(t.defined());
    EXPECT_EQ(t.data_ptr(), static_cast<void*>(rows.data()));
    EXPECT_EQ(t.numel(), 64);
    EXPECT_EQ(t[63].item<int64_t>(), 63);
    EXPECT_FALSE(memory.tensor_of(rows.data() + 1, 8).defined()) << "not a block's start";
    EXPECT_FALSE(memory.tensor_of(rows.data(), 65).defined()) << "past the block";
  }
  EXPECT_EQ(memory.live_blocks(), 0u);
}

TEST(BatchStaging, GpuGetsTheSameValues) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU in this process";
  BatchStaging staging(torch::Device(torch::kCUDA, 0));
  const torch::Tensor t = torch::randn({1000, 17});
  const torch::Tensor on_gpu = staging.to_device(t);
  const nn::BlockTensors blocks = staging.to_device(nn::to_block_tensors(small_block()));
  staging.ready();
  EXPECT_TRUE(on_gpu.is_cuda());
  EXPECT_TRUE(torch::equal(on_gpu.cpu(), t));
  EXPECT_TRUE(blocks.indptr.is_cuda() && blocks.t_dst.is_cuda());
  EXPECT_TRUE(torch::equal(blocks.indices.cpu(), torch::tensor({1, 2, 0}, torch::kInt64)));
}

}  // namespace
}  // namespace partita::train
