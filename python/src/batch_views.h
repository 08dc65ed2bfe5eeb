#pragma once
// The tensors of a batch as the Python loaders hand them out: views over the C++ batch's
// memory that keep it alive (no copy) where the type allows, the parts every loader's batch
// has (BatchHead), and the homogeneous blocks and batch the node and link loaders share
// (partita._C.Block, BlockBatch). Conversions need no GIL; the bind_* helpers do.
#include <torch/extension.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "partita/core/npy.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/nn/block_tensors.h"
#include "partita/sample/block_builder.h"
#include "partita/train/batch_staging.h"

namespace partita::python {

// A tensor over `values` that keeps `owner` alive (no copy).
template <class T>
torch::Tensor view_of(std::vector<T>& values, const std::shared_ptr<const void>& owner,
                      torch::ScalarType type) {
  return torch::from_blob(
      values.data(), {static_cast<int64_t>(values.size())}, [owner](void*) {},
      torch::TensorOptions().dtype(type));
}

// `rows` feature rows of `dim` values stored as `dtype` in `bytes` (owned by `owner`), as
// float32 [rows, dim]: a view when stored as float32, else a widened copy.
torch::Tensor float_rows(uint8_t* bytes, int64_t rows, int64_t dim, DType dtype,
                         const std::shared_ptr<const void>& owner);

// What every batch of a loader carries.
struct BatchHead {
  int64_t step = 0;
  int64_t global_size = 0;  // seeds (link: pairs) of the whole global batch, all ranks
  double sample_s = 0, fetch_s = 0;
  torch::Tensor seeds, input_nodes;  // int64 global ids
};

// The head of `batch` (views over it).
BatchHead head_of(const std::shared_ptr<loader::Batch>& batch, int64_t global_size);

// One block of a homogeneous batch: its tensors (for the fused kernels) and its global src
// ids.
struct Block {
  nn::BlockTensors tensors;
  torch::Tensor src_nodes;  // [num_src] global ids; the first num_dst are the dst nodes
};

// `sampled` (hop order, as sampled) input layer first (DGL order), with `tensors` its
// nn::to_block_tensors and the src ids viewed in `sampled` (owned by `owner`).
std::vector<Block> input_layer_first(std::vector<sample::Block>& sampled,
                                     std::vector<nn::BlockTensors> tensors,
                                     const std::shared_ptr<const void>& owner);

// A homogeneous batch: the input nodes' features and the blocks, input layer first
// (blocks[0].src = input_nodes; empty when the batch has no seeds).
struct BlockBatch : BatchHead {
  torch::Tensor x;  // float32 [input nodes, feat_dim]
  std::vector<Block> blocks;
};

// `batch` of a homogeneous graph whose features are `feat_dim` wide, stored as `dtype`, as
// tensors on the CPU (every block with its graph degrees when the batch fetched them).
void fill_block_batch(const std::shared_ptr<loader::Batch>& batch, int64_t global_size,
                      int64_t feat_dim, DType dtype, BlockBatch& out);

// Per sampled block of `batch` (hop order, as batch->sampled.blocks), float32 [its edges,
// edge_dim]: its rows of the batch's edge features (loader::Batch::edge_features, hop order,
// stored as `dtype`; views when float32, widened copies when 16-bit). edge_dim 0: undefined
// tensors. Throws partita::Error if the batch holds another number of bytes.
std::vector<torch::Tensor> block_edge_rows(const std::shared_ptr<loader::Batch>& batch,
                                           int64_t edge_dim, DType dtype);

// Sets every block of `out` (filled from `batch` by fill_block_batch, input layer first)
// its tensors.edge_feat (Block::edge_attr): its block_edge_rows. edge_dim 0: nothing
// (edge_attr stays None).
void set_edge_attrs(const std::shared_ptr<loader::Batch>& batch, int64_t edge_dim, DType dtype,
                    BlockBatch& out);

// The head's, x's and the blocks' tensors of `batch` copied to staging's device (call
// staging.ready() once every tensor of the batch is issued).
void to_device(BlockBatch& batch, train::BatchStaging& staging);

// Registers partita._C.Block.
void bind_block(pybind11::module_& m);

// Binds BatchHead's fields (and num_seeds) on batch class B.
template <class B>
void bind_head(pybind11::class_<B>& c) {
  c.def_readonly("step", &B::step)
      .def_readonly("global_size", &B::global_size)
      .def_readonly("sample_s", &B::sample_s)
      .def_readonly("fetch_s", &B::fetch_s)
      .def_readonly("seeds", &B::seeds)
      .def_readonly("input_nodes", &B::input_nodes)
      .def_property_readonly("num_seeds", [](const B& b) { return b.seeds.size(0); });
}

// Binds BlockBatch's fields (the head's too) on batch class B.
template <class B>
void bind_block_batch(pybind11::class_<B>& c) {
  bind_head(c);
  c.def_readonly("x", &B::x).def_readonly("blocks", &B::blocks);
}

}  // namespace partita::python
