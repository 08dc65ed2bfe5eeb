#pragma once
// The one route of blocks (nn::BlockTensors, block_tensors.h) to a device, and the one list
// of their tensors. to_block_tensors(..., device) and train::BatchStaging (its side stream)
// both move blocks through blocks_on_device / move_blocks; whatever treats every tensor of a
// block alike (moving, marking the streams that use them, comparing) visits them with
// for_each_tensor.
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/sample/block_builder.h"

namespace partita::nn {

// Calls f(name, blocks.field...) for each tensor field of BlockTensors, in declaration order,
// defined or not. `blocks` are BlockTensors, const or not; f takes the field's name, then
// that field of each block.
template <typename F, typename... Blocks>
void for_each_tensor(F&& f, Blocks&... blocks) {
  f("indptr", blocks.indptr...);
  f("indices", blocks.indices...);
  f("edge_dst", blocks.edge_dst...);
  f("deg_dst", blocks.deg_dst...);
  f("deg_src", blocks.deg_src...);
  f("t_indptr", blocks.t_indptr...);
  f("t_dst", blocks.t_dst...);
  f("t_eid", blocks.t_eid...);
  f("graph_deg", blocks.graph_deg...);
  f("edge_feat", blocks.edge_feat...);
  f("etypes", blocks.etypes...);
  f("rel_offsets", blocks.rel_offsets...);
  f("rel_row_dst", blocks.rel_row_dst...);
  f("rel_indptr", blocks.rel_indptr...);
  f("rel_src", blocks.rel_src...);
  f("t_rel_row", blocks.t_rel_row...);
  f("t_rel_entry", blocks.t_rel_entry...);
}
// BlockTensors holds 3 counts and 17 tensors: a field added to it must join the list above.
static_assert(sizeof(BlockTensors) == 3 * sizeof(int64_t) + 17 * sizeof(torch::Tensor),
              "a field of BlockTensors is missing from for_each_tensor");

// How blocks_on_device and move_blocks copy their one host buffer (int64, on the CPU, pinned
// when `pin`) to `device`: `copy` returns the buffer's copy there, ready for the device's
// current stream to read (train/batch_staging.h: on its side stream, then ready()); null:
// host.to(device, non_blocking = pin), on the current stream.
struct BlockTransfer {
  torch::Device device = torch::kCPU;
  bool pin = false;
  std::function<torch::Tensor(const torch::Tensor& host)> copy;
};

// To `device` on its current stream, through pinned memory when it is CUDA and CUDA is
// available: what to_block_tensors(..., device) uses.
BlockTransfer transfer_to(const torch::Device& device);

// The blocks as to_block_tensors builds them, with graph_deg from `input_degrees` when given,
// on transfer.device. Untyped blocks where nn's ops take the device-generic path
// (kernel_path.h): their index arrays packed (pack_blocks), copied once, the rest derived
// there (unpack_blocks). Otherwise built on the CPU and, off the CPU, moved in one copy
// (move_blocks). Throws as to_block_tensors.
std::vector<BlockTensors> blocks_on_device(const std::vector<sample::Block>& blocks,
                                           const std::vector<int64_t>* input_degrees,
                                           const BlockTransfer& transfer);

// Moves every defined tensor of `blocks` (for_each_tensor), and `extra` when given and
// defined, to transfer.device in one copy: packed into one host buffer, copied, and each
// replaced by a view of the copy. They must be int64 on the CPU (Error otherwise). A CPU
// device still packs (what the tests check).
void move_blocks(std::vector<BlockTensors>& blocks, torch::Tensor* extra,
                 const BlockTransfer& transfer);

}  // namespace partita::nn
