#include "partita/nn/block_tensors.h"

#include "partita/core/error.h"

namespace partita::nn {

namespace {

torch::Tensor to_tensor(const std::vector<int64_t>& v) {
  // from_blob does not own the data: clone before the vector can go away.
  return torch::from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kInt64)
      .clone();
}

}  // namespace

BlockTensors to_block_tensors(const sample::Block& block, torch::Device device) {
  PARTITA_CHECK(block.num_dst >= 0 && block.num_src >= block.num_dst, Error,
                "block: num_src {} < num_dst {}", block.num_src, block.num_dst);
  PARTITA_CHECK(static_cast<int64_t>(block.indptr.size()) == block.num_dst + 1, Error,
                "block: indptr has {} entries, expected num_dst + 1 = {}", block.indptr.size(),
                block.num_dst + 1);
  PARTITA_CHECK(block.indptr.front() == 0 && block.indptr.back() == block.num_edges(), Error,
                "block: indptr must run from 0 to {} edges", block.num_edges());
  for (int64_t i = 0; i < block.num_dst; ++i) {
    PARTITA_CHECK(block.indptr[i] <= block.indptr[i + 1], Error,
                  "block: indptr decreases at dst {}", i);
  }
  for (int64_t s : block.indices) {
    PARTITA_CHECK(s >= 0 && s < block.num_src, Error, "block: src id {} out of [0, {})", s,
                  block.num_src);
  }
  BlockTensors t;
  t.num_dst = block.num_dst;
  t.num_src = block.num_src;
  t.indptr = to_tensor(block.indptr);
  t.indices = to_tensor(block.indices);
  t.deg_dst = t.indptr.slice(0, 1) - t.indptr.slice(0, 0, block.num_dst);
  t.edge_dst = torch::repeat_interleave(torch::arange(block.num_dst, torch::kInt64), t.deg_dst, 0,
                                        block.num_edges());
  t.deg_src = torch::bincount(t.indices, {}, block.num_src);
  if (block.num_edges() == 0) t.deg_src = torch::zeros({block.num_src}, torch::kInt64);
  if (device != torch::Device(torch::kCPU)) {
    t.indptr = t.indptr.to(device);
    t.indices = t.indices.to(device);
    t.edge_dst = t.edge_dst.to(device);
    t.deg_dst = t.deg_dst.to(device);
    t.deg_src = t.deg_src.to(device);
  }
  return t;
}

std::vector<BlockTensors> to_block_tensors(const std::vector<sample::Block>& blocks,
                                           torch::Device device) {
  std::vector<BlockTensors> out;
  out.reserve(blocks.size());
  for (const sample::Block& b : blocks) out.push_back(to_block_tensors(b, device));
  return out;
}

std::vector<BlockTensors> to_block_tensors(const std::vector<sample::Block>& blocks,
                                           const std::vector<int64_t>& input_degrees,
                                           torch::Device device) {
  std::vector<BlockTensors> out = to_block_tensors(blocks, device);
  const int64_t num_input = blocks.empty() ? 0 : blocks.back().num_src;
  PARTITA_CHECK(static_cast<int64_t>(input_degrees.size()) == num_input, Error,
                "block: {} input degrees for {} input nodes", input_degrees.size(), num_input);
  const torch::Tensor degrees = to_tensor(input_degrees).to(device);
  for (BlockTensors& t : out) t.graph_deg = degrees.slice(0, 0, t.num_src);
  return out;
}

}  // namespace partita::nn
