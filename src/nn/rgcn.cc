#include "partita/nn/rgcn.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/nn/dropout.h"
#include "partita/nn/message_passing.h"

namespace partita::nn {

namespace {

// Glorot-uniform values for a [fan_in, fan_out] map (each slice of a stack of them).
torch::Tensor glorot(std::vector<int64_t> shape, int64_t fan_in, int64_t fan_out) {
  const double bound = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return torch::empty(shape).uniform_(-bound, bound);
}

// rows.index_select(0, inverse) where `inverse` is a permutation with inverse `perm`: the
// gradient is one gather too (grad.index_select(0, perm)), not index_select's general
// scatter-add backward.
struct PermuteRowsFn : torch::autograd::Function<PermuteRowsFn> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& rows,
                               const torch::Tensor& perm, const torch::Tensor& inverse) {
    RECORD_USER_SCOPE("partita::permute_rows_forward");
    ctx->save_for_backward({perm});
    return rows.index_select(0, inverse);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    RECORD_USER_SCOPE("partita::permute_rows_backward");
    return {grads[0].index_select(0, ctx->get_saved_variables()[0]), {}, {}};
  }
};

}  // namespace

RelGraphConv::RelGraphConv(int64_t in_dim, int64_t out_dim, int64_t num_relations,
                           int64_t num_bases, bool self_loop)
    : in_dim_(in_dim), out_dim_(out_dim), num_relations_(num_relations), num_bases_(num_bases) {
  PARTITA_CHECK(in_dim > 0 && out_dim > 0 && num_relations > 0, Error,
                "RelGraphConv: dimensions and relation count must be positive (in {}, out {}, "
                "relations {})",
                in_dim, out_dim, num_relations);
  PARTITA_CHECK(num_bases >= 0, Error, "RelGraphConv: num_bases must be >= 0, got {}", num_bases);
  if (num_bases == 0) {
    weight =
        register_parameter("weight", glorot({num_relations, in_dim, out_dim}, in_dim, out_dim));
  } else {
    basis = register_parameter("basis", glorot({num_bases, in_dim, out_dim}, in_dim, out_dim));
    comp = register_parameter("comp", glorot({num_relations, num_bases}, num_relations, num_bases));
  }
  if (self_loop)
    self_weight = register_parameter("self_weight", glorot({in_dim, out_dim}, in_dim, out_dim));
  bias = register_parameter("bias", torch::zeros({out_dim}));
}

torch::Tensor RelGraphConv::relation_weights() const {
  if (num_bases_ == 0) return weight;
  return torch::mm(comp, basis.view({num_bases_, in_dim_ * out_dim_}))
      .view({num_relations_, in_dim_, out_dim_});
}

double RelGraphConv::matmul_flops(const BlockTensors& block) const {
  const double rows = static_cast<double>(block.num_relation_rows()) +
                      (self_weight.defined() ? static_cast<double>(block.num_dst) : 0.0);
  return 2.0 * rows * static_cast<double>(in_dim_) * static_cast<double>(out_dim_);
}

torch::Tensor RelGraphConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  PARTITA_CHECK(x_src.dim() == 2 && x_src.size(0) == block.num_src && x_src.size(1) == in_dim_,
                Error, "RelGraphConv: x_src must be [{}, {}], got dim {} size(0) {}", block.num_src,
                in_dim_, x_src.dim(), x_src.dim() > 0 ? x_src.size(0) : 0);
  // A block without edges has no relation ids to carry (sample::Block::etypes is empty).
  PARTITA_CHECK(block.typed() || block.num_edges() == 0, Error,
                "RelGraphConv: needs a typed block (relation ids)");
  PARTITA_CHECK(block.num_relations <= num_relations_, Error,
                "RelGraphConv: the block has relation id {}, the layer {} relations",
                block.num_relations - 1, num_relations_);
  const auto type = x_src.scalar_type();
  torch::Tensor out =
      self_weight.defined()
          ? torch::addmm(bias.to(type), x_src.slice(0, 0, block.num_dst), self_weight.to(type))
          : bias.to(type).expand({block.num_dst, out_dim_}).contiguous();
  if (block.num_relation_rows() > 0) {
    // Relation r's rows are a contiguous slice of the means: one product each, then every
    // product row is added to its dst (in relation order, deterministic).
    const torch::Tensor means = relation_mean(block, x_src);  // [S, in]
    const torch::Tensor w = relation_weights().to(type);      // [R, in, out]
    const torch::Tensor offsets = block.rel_offsets.cpu();
    const int64_t* off = offsets.data_ptr<int64_t>();
    std::vector<torch::Tensor> products;
    for (int64_t r = 0; r < block.num_relations; ++r) {
      if (off[r + 1] > off[r]) products.push_back(means.slice(0, off[r], off[r + 1]).mm(w[r]));
    }
    out = out.index_add(0, block.rel_row_dst, torch::cat(products));
  }
  return out;
}

RgcnModel::RgcnModel(const RgcnOptions& options) : options_(options) {
  const RgcnOptions& o = options_;
  PARTITA_CHECK(!o.type_dims.empty(), Error, "RgcnModel: no node types");
  for (int64_t d : o.type_dims)
    PARTITA_CHECK(d >= 0, Error, "RgcnModel: negative feature width {}", d);
  PARTITA_CHECK(o.hidden > 0 && o.out_dim > 0 && o.num_relations > 0, Error,
                "RgcnModel: dimensions must be positive (hidden {}, out {}, relations {})",
                o.hidden, o.out_dim, o.num_relations);
  PARTITA_CHECK(o.layers >= 1, Error, "RgcnModel: layers must be >= 1, got {}", o.layers);
  PARTITA_CHECK(o.num_bases >= 0, Error, "RgcnModel: num_bases must be >= 0, got {}", o.num_bases);
  PARTITA_CHECK(o.dropout >= 0.0 && o.dropout < 1.0, Error,
                "RgcnModel: dropout must be in [0, 1), got {}", o.dropout);
  for (size_t t = 0; t < o.type_dims.size(); ++t) {
    torch::nn::Linear proj{nullptr};
    if (o.type_dims[t] > 0)
      proj =
          register_module("proj" + std::to_string(t), torch::nn::Linear(o.type_dims[t], o.hidden));
    projections_.push_back(proj);
  }
  for (int64_t l = 0; l < o.layers; ++l) {
    const int64_t out = l + 1 == o.layers ? o.out_dim : o.hidden;
    auto conv =
        std::make_shared<RelGraphConv>(o.hidden, out, o.num_relations, o.num_bases, o.self_loop);
    register_module("conv" + std::to_string(l), conv);
    convs_.push_back(conv);
  }
}

torch::Tensor RgcnModel::forward(const std::vector<BlockTensors>& blocks,
                                 const std::vector<RgcnInput>& inputs) {
  const RgcnOptions& o = options_;
  const int64_t L = o.layers;
  PARTITA_CHECK(static_cast<int64_t>(blocks.size()) == L, Error,
                "RgcnModel: got {} blocks for {} layers", blocks.size(), L);
  PARTITA_CHECK(inputs.size() == o.type_dims.size(), Error,
                "RgcnModel: got inputs for {} node types, the model has {}", inputs.size(),
                o.type_dims.size());
  const bool bf16 = o.precision == Precision::kBf16;
  const auto type = bf16 ? torch::kBFloat16 : torch::kFloat32;
  const int64_t num_input = blocks.back().num_src;

  // The input rows: every node once, its type's projected features or embedding row. The
  // types' rows are concatenated, then permuted into input order.
  std::vector<char> seen(static_cast<size_t>(num_input), 0);
  std::vector<torch::Tensor> parts, part_positions;
  for (size_t t = 0; t < inputs.size(); ++t) {
    const RgcnInput& in = inputs[t];
    if (!in.positions.defined() || in.positions.numel() == 0) continue;
    const int64_t width = o.type_dims[t] > 0 ? o.type_dims[t] : o.hidden;
    PARTITA_CHECK(in.positions.dim() == 1 && in.positions.scalar_type() == torch::kInt64 &&
                      in.x.defined() && in.x.dim() == 2 && in.x.size(0) == in.positions.size(0) &&
                      in.x.size(1) == width,
                  Error, "RgcnModel: node type {} needs int64 positions [n] and x [n, {}] ({})", t,
                  width, o.type_dims[t] > 0 ? "features" : "embedding rows");
    // Checked on the host; the positions then index rows on the features' device.
    const torch::Tensor pos = in.positions.cpu().contiguous();
    const int64_t* p = pos.data_ptr<int64_t>();
    for (int64_t k = 0; k < pos.numel(); ++k) {
      PARTITA_CHECK(p[k] >= 0 && p[k] < num_input && !seen[static_cast<size_t>(p[k])], Error,
                    "RgcnModel: node type {} names input row {}, out of [0, {}) or given twice", t,
                    p[k], num_input);
      seen[static_cast<size_t>(p[k])] = 1;
    }
    torch::Tensor rows = in.x.to(type);
    if (projections_[t]) rows = linear_as_input(projections_[t], rows);
    parts.push_back(rows);
    part_positions.push_back(in.positions.to(rows.device()));
  }
  const torch::Device device = blocks.back().indptr.device();
  const torch::Tensor perm = part_positions.empty()
                                 ? torch::empty({0}, torch::dtype(torch::kInt64).device(device))
                                 : torch::cat(part_positions);
  PARTITA_CHECK(perm.numel() == num_input, Error,
                "RgcnModel: the inputs cover {} of the {} input nodes", perm.numel(), num_input);
  // Row k of the concatenation belongs at input row perm[k]: inverse[perm[k]] = k.
  const torch::Tensor inverse =
      torch::empty_like(perm).index_put_({perm}, torch::arange(num_input, perm.options()));
  torch::Tensor x = parts.empty() ? torch::zeros({0, o.hidden}, torch::dtype(type).device(device))
                                  : PermuteRowsFn::apply(torch::cat(parts), perm, inverse);

  const uint64_t key = dropout_key_;
  if (is_training()) dropout_key_ = mix64(dropout_key_ + 1);
  for (int64_t l = 0; l < L; ++l) {
    const BlockTensors& block = blocks[L - 1 - l];
    PARTITA_CHECK(x.size(0) == block.num_src, Error,
                  "RgcnModel: layer {} gets {} rows, its block has {} src nodes", l, x.size(0),
                  block.num_src);
    if (o.dropout > 0.0 && is_training())
      x = counter_dropout(x, o.dropout, stream_key(key, static_cast<uint64_t>(l), 0));
    // As GnnModel: the output layer (seed rows only) runs in fp32.
    if (l + 1 == L) x = x.to(torch::kFloat32);
    x = convs_[l]->forward(block, x);
    if (l + 1 < L) x = torch::relu(x);
  }
  return x;
}

double RgcnModel::training_matmul_flops(const std::vector<BlockTensors>& blocks,
                                        const std::vector<RgcnInput>& inputs) const {
  double flops = 0;
  for (size_t t = 0; t < inputs.size() && t < projections_.size(); ++t) {
    if (!projections_[t] || !inputs[t].positions.defined()) continue;
    flops += 2.0 * 2.0 * static_cast<double>(inputs[t].positions.numel()) *
             static_cast<double>(options_.type_dims[t]) * static_cast<double>(options_.hidden);
  }
  // Every layer's input needs its gradient: layer 0's feeds the projections and embeddings.
  const auto L = static_cast<int64_t>(convs_.size());
  for (int64_t l = 0; l < L && l < static_cast<int64_t>(blocks.size()); ++l)
    flops += 3.0 * convs_[l]->matmul_flops(blocks[L - 1 - l]);
  return flops;
}

std::vector<int64_t> RgcnModel::config_signature() const {
  const RgcnOptions& o = options_;
  std::vector<int64_t> sig = {kSignatureTag,
                              o.num_relations,
                              o.hidden,
                              o.out_dim,
                              o.layers,
                              o.num_bases,
                              o.self_loop ? 1 : 0,
                              static_cast<int64_t>(o.type_dims.size())};
  sig.insert(sig.end(), o.type_dims.begin(), o.type_dims.end());
  return sig;
}

}  // namespace partita::nn
