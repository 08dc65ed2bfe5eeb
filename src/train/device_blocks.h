#pragma once
// Internal to train/: the nn::BlockTensors of a block sampled on the device
// (device_sampler.cc), built there with torch ops, every field equal to what
// nn::to_block_tensors builds on the CPU from the same sample::Block.
#include <torch/types.h>

#include <cstdint>

#include "partita/nn/block_tensors.h"

namespace partita::train {

// One sampled block as the sampler leaves it, on its device; int64 tensors.
struct DeviceCsc {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  torch::Tensor indptr;   // [num_dst + 1]
  torch::Tensor indices;  // [E] local src ids, edges grouped by dst
  // Typed blocks (etypes defined): the relation of each edge, its position inside its
  // (dst, relation) run, and the edges per (dst, relation) as [num_dst, R] (R: the graph's
  // relations); with the counts the hop's host read gave: the (dst, relation) pairs that
  // have edges, and 1 + the largest relation id of an edge (0 without edges).
  torch::Tensor etypes;
  torch::Tensor run_entry;
  torch::Tensor run_counts;
  int64_t relation_rows = 0;
  int64_t num_relations = 0;
};

// Every field of the block's tensors but graph_deg (left undefined).
nn::BlockTensors device_block_tensors(const DeviceCsc& csc);

}  // namespace partita::train
