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
#include "partita/nn/precision.h"

namespace partita::nn {

// Appended only: a checkpoint's signature holds the value (gatv2 = 4 is no gat = 2).
enum class ConvKind { kSage, kGcn, kGat, kGine, kGatv2 };
enum class NormKind { kNone, kBatch, kLayer };

// Whether a conv of `kind` reads edge features (GnnOptions::edge_dim > 0): GAT and GATv2
// may (PyG's GATConv / GATv2Conv edge_dim), GINE must; GraphSAGE and GCN do not. The one
// table of it (train's takes_edge_features maps its models here).
bool takes_edge_features(ConvKind kind);
// Whether a conv of `kind` cannot run without edge features (GINE).
bool needs_edge_features(ConvKind kind);

struct GnnOptions {
  ConvKind kind = ConvKind::kSage;
  int64_t in_dim = 0;
  // Width of every hidden layer's output; for GAT and GATv2 the width of one head, so that
  // a hidden layer outputs hidden * heads features (its heads concatenated), as in the paper.
  int64_t hidden = 0;
  int64_t out_dim = 0;   // number of classes
  int64_t layers = 2;    // L >= 1
  int64_t heads = 1;     // GAT, GATv2: heads of the hidden layers; the output layer has one
  double dropout = 0.0;  // on the input of every layer (as in the GCN and GAT papers),
                         // in training mode only
  // GAT, GATv2: dropout on the attention coefficients, in training mode; < 0: = dropout.
  double attention_dropout = -1.0;
  NormKind norm = NormKind::kNone;  // on each hidden layer's output, before the activation
  // Activations and matrix products in fp32 or bf16 (parameters stay fp32; precision.h).
  Precision precision = Precision::kFp32;
  // Width of the edge features every block carries (BlockTensors::edge_feat); 0: none.
  // Convs that take edge features (takes_edge_features: GAT's and GATv2's edge_dim, GINE)
  // use them; GnnModel refuses > 0 with the others, and 0 with GINE (needs_edge_features).
  int64_t edge_dim = 0;
};

class GnnModel : public torch::nn::Module {
 public:
  // Throws partita::Error on a non-positive dimension, layers < 1, heads < 1, dropout
  // outside [0, 1), attention_dropout >= 1, edge_dim < 0, edge_dim > 0 with a conv that
  // takes no edge features, or edge_dim 0 with one that needs them (GINE).
  explicit GnnModel(const GnnOptions& options);

  // blocks in hop order (blocks[0].dst = seeds), x_input [blocks.back().num_src, in_dim]
  // (float32; cast to bf16 first with Precision::kBf16, where every layer but the output
  // layer runs in bf16: the output layer, on the seeds only, stays fp32).
  // Layer 0 runs on blocks.back(), layer L-1 on blocks[0]; every layer's input goes
  // through dropout, hidden layers are followed by norm and the activation (ELU for GAT and
  // GATv2, as in the paper; ReLU otherwise).
  // Returns float32 logits [blocks[0].num_dst, out_dim].
  // Throws partita::Error if blocks.size() != layers or x_input has the wrong shape.
  torch::Tensor forward(const std::vector<BlockTensors>& blocks, const torch::Tensor& x_input);

  // Layer l alone, exactly as forward() runs it (the same precision casts, norm and
  // activation after a hidden layer), for layer-wise inference (train/inference.h): x
  // [block.num_src, width of layer l's input] -> [block.num_dst, width of its output]
  // (float32 for the output layer, else the model's precision). Eval mode only: throws
  // partita::Error in training mode (no dropout), on l out of [0, layers) or a wrong shape.
  torch::Tensor forward_layer(int64_t l, const BlockTensors& block, const torch::Tensor& x);
  // Width of layer l's input (in_dim for l = 0; hidden x heads for the later layers of GAT
  // and GATv2).
  int64_t layer_in_dim(int64_t l) const;

  // Dropout masks (nn/dropout.h) of the next training forward are keyed by `key` (and the
  // layer); every training forward then moves the key on, so consecutive forwards draw
  // new masks whether or not the caller sets keys. A trainer that sets a key per step from
  // (seed, epoch, step, rank) gets masks that a resumed run repeats exactly.
  void set_dropout_key(uint64_t key) { dropout_key_ = key; }

  // Floating-point operations of the matrix products of one training step (forward and
  // backward) on `blocks`: forward, plus the weights' gradients, plus the inputs' gradients
  // for every layer but the first (its input, the features, needs none).
  double training_matmul_flops(const std::vector<BlockTensors>& blocks) const;

  const GnnOptions& options() const { return options_; }

 private:
  // Layer l of forward() on x (already checked against the block); dropout keyed by `key`
  // in training mode.
  torch::Tensor run_layer(int64_t l, const BlockTensors& block, torch::Tensor x, uint64_t key);

  GnnOptions options_;
  std::vector<std::shared_ptr<BlockConv>> convs_;
  std::vector<torch::nn::AnyModule> norms_;  // one per hidden layer when norm != kNone
  uint64_t dropout_key_ = 0;
};

}  // namespace partita::nn
