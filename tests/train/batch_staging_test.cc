// BatchStaging (partita/train/batch_staging.h) on the CPU moves nothing: every tensor comes
// back as itself (same memory), so `--device cpu` computes on exactly the tensors of a run
// without the flag. With a GPU, the same batch arrives there with the same values.
#include "partita/train/batch_staging.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

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
