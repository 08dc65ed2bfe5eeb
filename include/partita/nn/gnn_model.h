#pragma once
// A stack of L block convolutions for node classification on sampled blocks.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/nn/conv.h"

namespace partita::nn {

enum class ConvKind { kSage, kGcn, kGat };
enum class NormKind { kNone, kBatch, kLayer };

struct GnnOptions {
  ConvKind kind = ConvKind::kSage;
  int64_t in_dim = 0;
  int64_t hidden = 0;    // width of every hidden layer's output (all heads together for GAT)
  int64_t out_dim = 0;   // number of classes
  int64_t layers = 2;    // L >= 1
  int64_t heads = 1;     // GAT only; hidden % heads == 0; the last layer averages its heads
  double dropout = 0.0;  // on the input of every layer (as in the GCN and GAT papers),
                         // in training mode only
  NormKind norm = NormKind::kNone;  // on each hidden layer's output, before ReLU
};

class GnnModel : public torch::nn::Module {
 public:
  // Throws partita::Error on a non-positive dimension, layers < 1, heads < 1, or (GAT)
  // hidden not divisible by heads.
  explicit GnnModel(const GnnOptions& options);

  // blocks in hop order (blocks[0].dst = seeds), x_input [blocks.back().num_src, in_dim].
  // Layer 0 runs on blocks.back(), layer L-1 on blocks[0]; every layer's input goes
  // through dropout, hidden layers are followed by norm and ReLU.
  // Returns logits [blocks[0].num_dst, out_dim].
  // Throws partita::Error if blocks.size() != layers or x_input has the wrong shape.
  torch::Tensor forward(const std::vector<BlockTensors>& blocks, const torch::Tensor& x_input);

  const GnnOptions& options() const { return options_; }

 private:
  GnnOptions options_;
  std::vector<std::shared_ptr<BlockConv>> convs_;
  std::vector<torch::nn::AnyModule> norms_;  // one per hidden layer when norm != kNone
};

}  // namespace partita::nn
