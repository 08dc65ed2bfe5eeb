#pragma once
// A sample::Block as torch tensors, converted once per block and shared by every layer
// that runs on it. All index tensors are int64 on `device`.
//
// On the CPU (fused kernels, nn/kernel_path.h) every field is built by C++ loops. Where nn's
// ops take the device-generic path (another device, or the CPU under
// KernelPathScope(kGeneric)), an untyped block's index arrays (indptr, indices, and the
// input degrees when given) are packed into one host buffer, copied in one transfer
// (through pinned memory and non-blocking when CUDA is available, on the device's current
// stream: work on another stream must wait for that one), and the other fields are derived
// there by torch ops, with no host round trip; the CPU thread returns before the copy ends.
// Typed blocks are built on the CPU and moved in one transfer. Either way every field
// equals the CPU build's.
#include <torch/types.h>

#include <array>
#include <cstdint>
#include <vector>

#include "partita/sample/block_builder.h"

namespace partita::nn {

struct BlockTensors {
  int64_t num_dst = 0;
  int64_t num_src = 0;     // >= num_dst; src rows [0, num_dst) are the dst nodes
  torch::Tensor indptr;    // [num_dst + 1] CSC offsets
  torch::Tensor indices;   // [E] local src id of each edge, edges grouped by dst
  torch::Tensor edge_dst;  // [E] dst id of each edge (repeat_interleave of deg_dst)
  torch::Tensor deg_dst;   // [num_dst] in-degree of each dst in the block
  torch::Tensor deg_src;   // [num_src] out-degree of each src (edges with it as source)
  // The transposed block (rows = src nodes), for backward passes without atomics: the
  // edges of src j are t_indptr[j] .. t_indptr[j+1] in increasing edge id; t_dst holds
  // their dst and t_eid their edge id (position in indices).
  torch::Tensor t_indptr;  // [num_src + 1]
  torch::Tensor t_dst;     // [E]
  torch::Tensor t_eid;     // [E]
  // [num_src] in-degree of each src node in the whole graph (its dst rows first), when the
  // loader fetched it; undefined otherwise. GCNConv normalizes with it when defined.
  torch::Tensor graph_deg;
  // [E, d_e] float32 features of each edge, aligned with indices (row k: the edge of
  // indices[k]), when the loader fetched edge features (train --edge-features); undefined
  // otherwise. Layers built with an edge_dim (GnnOptions::edge_dim) read them.
  torch::Tensor edge_feat;

  // Typed blocks only (sample::Block::etypes non-empty); 0 and undefined otherwise.
  // Relations r >= num_relations have no edge in this block.
  int64_t num_relations = 0;  // 1 + the largest relation id of an edge (0 without edges)
  torch::Tensor etypes;       // [E] relation of each edge, aligned with indices
  // The "relation rows": the S pairs (dst i, relation r) with at least one edge, ordered by
  // relation, then dst. Relation r's rows are rel_offsets[r] .. rel_offsets[r + 1]. Row s
  // holds the entries rel_indptr[s] .. rel_indptr[s + 1] (its edges, in edge order), whose
  // src ids are rel_src. Rows of relation_mean (message_passing.h).
  torch::Tensor rel_offsets;  // [R + 1], R = num_relations
  torch::Tensor rel_row_dst;  // [S] the dst of each relation row
  torch::Tensor rel_indptr;   // [S + 1]
  torch::Tensor rel_src;      // [E] src id of each entry
  // Aligned with t_dst: the relation row of that edge and its entry's position, for the
  // backward pass through the transposed block.
  torch::Tensor t_rel_row;    // [E]
  torch::Tensor t_rel_entry;  // [E]

  int64_t num_edges() const { return indices.size(0); }
  int64_t num_relation_rows() const { return typed() ? rel_row_dst.size(0) : 0; }
  bool typed() const { return etypes.defined(); }
};

// Converts `block`, with the relation fields when block.etypes is non-empty. Throws
// partita::Error if the block is inconsistent (indptr size or monotonicity, num_src <
// num_dst, an src id out of range, etypes not aligned with indices, a negative relation
// id, relation ids decreasing inside a dst row).
BlockTensors to_block_tensors(const sample::Block& block, torch::Device device = torch::kCPU);

// The same block with one self loop per dst added as the first edge of its row (src i ->
// dst i), for layers that attend over N(i) ∪ {i} (GAT). graph_deg is kept. Runs on the
// block's device (torch ops off the CPU), every field equal to what the CPU builds.
// With edge_feat defined, a self loop's feature is the mean of its row's edge features
// (zeros for a row without edges), as PyG's add_self_loops(fill_value="mean").
// A self loop has no relation: the result of a typed block is untyped (its relation
// fields are left empty), so relation-blind layers (GAT) still run on typed blocks.
BlockTensors with_self_loops(const BlockTensors& block);

// Converts every block, keeping hop order (result[0] has dst = seeds); off the CPU, all of
// them in one transfer.
std::vector<BlockTensors> to_block_tensors(const std::vector<sample::Block>& blocks,
                                           torch::Device device = torch::kCPU);

// As above, also setting every block's graph_deg from `input_degrees`, the graph in-degree
// of each input node (blocks.back().src_nodes, of which every block's src nodes are a
// prefix). Throws partita::Error if input_degrees.size() != blocks.back().num_src.
std::vector<BlockTensors> to_block_tensors(const std::vector<sample::Block>& blocks,
                                           const std::vector<int64_t>& input_degrees,
                                           torch::Device device = torch::kCPU);

// The two halves of to_block_tensors off the CPU, for a caller that makes the copy itself
// (train/batch_staging.h, on its side stream). pack_blocks checks every block as
// to_block_tensors does and packs each block's indptr, then its indices, then the input
// degrees when given (as above), into `host`: int64, on the CPU, pinned when `pin`. Throws
// partita::Error on a typed block (their relation fields are built on the CPU).
struct PackedBlocks {
  torch::Tensor host;
  std::vector<std::array<int64_t, 3>> shapes;  // num_dst, num_src, edges of each block
  bool degrees = false;                        // input degrees follow the blocks
};
PackedBlocks pack_blocks(const std::vector<sample::Block>& blocks,
                         const std::vector<int64_t>* input_degrees = nullptr, bool pin = false);

// The blocks of `packed` from `data`, a copy of packed.host on any device: every field
// derived there by torch ops (no host read of device data), equal to to_block_tensors'.
std::vector<BlockTensors> unpack_blocks(const PackedBlocks& packed, const torch::Tensor& data);

}  // namespace partita::nn
