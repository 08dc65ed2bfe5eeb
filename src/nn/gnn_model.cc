#include "partita/nn/gnn_model.h"

#include <torch/torch.h>

#include <string>

#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/nn/dropout.h"

namespace partita::nn {

namespace {

std::shared_ptr<BlockConv> make_conv(const GnnOptions& o, int64_t in, bool last) {
  int64_t out = last ? o.out_dim : o.hidden;
  switch (o.kind) {
    case ConvKind::kSage:
      return std::make_shared<SAGEConv>(in, out);
    case ConvKind::kGcn:
      return std::make_shared<GCNConv>(in, out);
    case ConvKind::kGat: {
      const double attention = o.attention_dropout < 0 ? o.dropout : o.attention_dropout;
      return last ? std::make_shared<GATConv>(in, out, 1, /*concat=*/false, attention, o.edge_dim)
                  : std::make_shared<GATConv>(in, out, o.heads, /*concat=*/true, attention,
                                              o.edge_dim);
    }
    case ConvKind::kGatv2: {
      const double attention = o.attention_dropout < 0 ? o.dropout : o.attention_dropout;
      return last ? std::make_shared<GATv2Conv>(in, out, 1, /*concat=*/false, attention, o.edge_dim)
                  : std::make_shared<GATv2Conv>(in, out, o.heads, /*concat=*/true, attention,
                                                o.edge_dim);
    }
    case ConvKind::kGine:
      return std::make_shared<GINEConv>(in, out, o.edge_dim);
  }
  throw Error("GnnModel: unknown conv kind");
}

const char* conv_name(ConvKind kind) {
  switch (kind) {
    case ConvKind::kSage:
      return "sage";
    case ConvKind::kGcn:
      return "gcn";
    case ConvKind::kGat:
      return "gat";
    case ConvKind::kGatv2:
      return "gatv2";
    case ConvKind::kGine:
      return "gine";
  }
  return "?";
}

}  // namespace

bool takes_edge_features(ConvKind kind) {
  switch (kind) {
    case ConvKind::kGat:
    case ConvKind::kGatv2:
    case ConvKind::kGine:
      return true;
    case ConvKind::kSage:
    case ConvKind::kGcn:
      break;
  }
  return false;
}

bool needs_edge_features(ConvKind kind) { return kind == ConvKind::kGine; }

GnnModel::GnnModel(const GnnOptions& options) : options_(options) {
  const GnnOptions& o = options_;
  PARTITA_CHECK(o.in_dim > 0 && o.out_dim > 0 && (o.layers == 1 || o.hidden > 0), Error,
                "GnnModel: dimensions must be positive (in {}, hidden {}, out {})", o.in_dim,
                o.hidden, o.out_dim);
  PARTITA_CHECK(o.layers >= 1, Error, "GnnModel: layers must be >= 1, got {}", o.layers);
  PARTITA_CHECK(o.heads >= 1, Error, "GnnModel: heads must be >= 1, got {}", o.heads);
  PARTITA_CHECK(o.dropout >= 0.0 && o.dropout < 1.0, Error,
                "GnnModel: dropout must be in [0, 1), got {}", o.dropout);
  PARTITA_CHECK(o.attention_dropout < 1.0, Error, "GnnModel: attention dropout must be < 1, got {}",
                o.attention_dropout);
  PARTITA_CHECK(o.edge_dim >= 0, Error, "GnnModel: edge_dim must be >= 0, got {}", o.edge_dim);
  PARTITA_CHECK(o.edge_dim == 0 || takes_edge_features(o.kind), Error,
                "GnnModel: {} takes no edge features (edge_dim {}); train without "
                "--edge-features, or with a model that reads them (gat, gatv2, gine)",
                conv_name(o.kind), o.edge_dim);
  PARTITA_CHECK(o.edge_dim > 0 || !needs_edge_features(o.kind), Error,
                "GnnModel: {} needs edge features; train it with --edge-features on a partition "
                "that has them",
                conv_name(o.kind));
  int64_t in = o.in_dim;
  for (int64_t l = 0; l < o.layers; ++l) {
    bool last = l + 1 == o.layers;
    auto conv = make_conv(o, in, last);
    register_module("conv" + std::to_string(l), conv);
    convs_.push_back(conv);
    in = conv->out_dim();
    if (last || o.norm == NormKind::kNone) continue;
    torch::nn::AnyModule norm;
    if (o.norm == NormKind::kBatch) {
      norm = torch::nn::AnyModule(torch::nn::BatchNorm1d(in));
    } else {
      norm = torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({in})));
    }
    register_module("norm" + std::to_string(l), norm.ptr());
    norms_.push_back(std::move(norm));
  }
}

double GnnModel::training_matmul_flops(const std::vector<BlockTensors>& blocks) const {
  const auto L = static_cast<int64_t>(convs_.size());
  double flops = 0;
  for (int64_t l = 0; l < L && l < static_cast<int64_t>(blocks.size()); ++l)
    flops += (l == 0 ? 2.0 : 3.0) * convs_[l]->matmul_flops(blocks[L - 1 - l]);
  return flops;
}

torch::Tensor GnnModel::forward(const std::vector<BlockTensors>& blocks,
                                const torch::Tensor& x_input) {
  const int64_t L = options_.layers;
  PARTITA_CHECK(static_cast<int64_t>(blocks.size()) == L, Error,
                "GnnModel: got {} blocks for {} layers", blocks.size(), L);
  PARTITA_CHECK(x_input.dim() == 2 && x_input.size(0) == blocks.back().num_src &&
                    x_input.size(1) == options_.in_dim,
                Error, "GnnModel: x_input must be [{}, {}]", blocks.back().num_src,
                options_.in_dim);
  const bool bf16 = options_.precision == Precision::kBf16;
  torch::Tensor x = bf16 ? x_input.to(torch::kBFloat16) : x_input;
  const uint64_t key = dropout_key_;
  if (is_training()) dropout_key_ = mix64(dropout_key_ + 1);
  for (int64_t l = 0; l < L; ++l) {
    const BlockTensors& block = blocks[L - 1 - l];
    PARTITA_CHECK(x.size(0) == block.num_src, Error,
                  "GnnModel: layer {} gets {} rows, its block has {} src nodes", l, x.size(0),
                  block.num_src);
    x = run_layer(l, block, x, key);
  }
  return x;
}

torch::Tensor GnnModel::run_layer(int64_t l, const BlockTensors& block, torch::Tensor x,
                                  uint64_t key) {
  const int64_t L = options_.layers;
  const auto layer = static_cast<uint64_t>(l);
  if (options_.dropout > 0.0 && is_training())
    x = counter_dropout(x, options_.dropout, stream_key(key, layer, 0));
  if (auto* gat = dynamic_cast<GATConv*>(convs_[l].get()))
    gat->set_dropout_key(stream_key(key, layer, 1));
  if (auto* gat = dynamic_cast<GATv2Conv*>(convs_[l].get()))
    gat->set_dropout_key(stream_key(key, layer, 1));
  // The output layer runs in fp32 even in bf16: its rows are the seeds only (cheap), and
  // logits rounded to bf16 would lose resolution the loss needs.
  if (l + 1 == L) x = x.to(torch::kFloat32);
  x = convs_[l]->forward(block, x);
  if (l + 1 == L) return x;
  if (!norms_.empty()) x = norms_[l].forward(x.to(torch::kFloat32)).to(x.scalar_type());
  const bool attention = options_.kind == ConvKind::kGat || options_.kind == ConvKind::kGatv2;
  return attention ? torch::elu(x) : torch::relu(x);
}

int64_t GnnModel::layer_in_dim(int64_t l) const {
  PARTITA_CHECK(l >= 0 && l < options_.layers, Error, "GnnModel: no layer {} of {}", l,
                options_.layers);
  return l == 0 ? options_.in_dim : convs_[l - 1]->out_dim();
}

torch::Tensor GnnModel::forward_layer(int64_t l, const BlockTensors& block,
                                      const torch::Tensor& x) {
  PARTITA_CHECK(!is_training(), Error, "GnnModel::forward_layer: eval mode only");
  PARTITA_CHECK(x.dim() == 2 && x.size(0) == block.num_src && x.size(1) == layer_in_dim(l), Error,
                "GnnModel: layer {} input must be [{}, {}]", l, block.num_src, layer_in_dim(l));
  // forward() casts the features to bf16 once before layer 0; later layers' inputs are
  // already in the model's precision.
  const bool bf16 = options_.precision == Precision::kBf16;
  return run_layer(l, block, bf16 && l + 1 < options_.layers ? x.to(torch::kBFloat16) : x,
                   dropout_key_);
}

}  // namespace partita::nn
