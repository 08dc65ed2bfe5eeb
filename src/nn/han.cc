// HAN: see han.h. Node-level attention runs on the fused GAT kernels (gat_edge_softmax,
// aggregate) over one self-looped block per metapath.
#include "partita/nn/han.h"

#include <torch/torch.h>

#include <limits>
#include <string>

#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/nn/conv.h"
#include "partita/nn/dropout.h"
#include "partita/nn/message_passing.h"
#include "tensor_types.h"

namespace partita::nn {
namespace {

// A RankSum carried from forward to backward in the autograd context.
struct RankSumHolder : torch::CustomClassHolder {
  explicit RankSumHolder(RankSum s) : sum(std::move(s)) {}
  RankSum sum;
};

// t (any dtype and device) summed over the ranks through the host, in float64.
torch::Tensor host_rank_sum(const torch::Tensor& t, const RankSum& sum) {
  const torch::Tensor host = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  std::vector<double> values(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
  sum(values);
  PARTITA_CHECK(static_cast<int64_t>(values.size()) == host.numel(), Error,
                "internal: a rank sum returned {} values for {}", values.size(), host.numel());
  return torch::tensor(values, torch::kFloat64).view(t.sizes()).to(t.device(), t.scalar_type());
}

class RankSumFunction : public torch::autograd::Function<RankSumFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               RankSum sum) {
    torch::Tensor out = host_rank_sum(x, sum);
    ctx->saved_data["sum"] =
        c10::IValue::make_capsule(c10::make_intrusive<RankSumHolder>(std::move(sum)));
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto holder =
        c10::static_intrusive_pointer_cast<RankSumHolder>(ctx->saved_data["sum"].toCapsule());
    // Undefined grads arrive as zeros (materialized), so every rank sums the same count.
    return {host_rank_sum(grads[0], holder->sum), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor sum_over_ranks(const torch::Tensor& x, const RankSum& sum) {
  PARTITA_CHECK(sum != nullptr, Error, "sum_over_ranks: no rank sum");
  return RankSumFunction::apply(x, sum);
}

std::vector<BlockTensors> split_by_relation(const BlockTensors& block, int64_t num_metapaths) {
  PARTITA_CHECK(block.typed() || block.num_edges() == 0, Error,
                "HAN: needs a typed block (metapath ids)");
  PARTITA_CHECK(block.num_relations <= num_metapaths, Error,
                "HAN: the block has metapath id {}, the model {} metapaths",
                block.num_relations - 1, num_metapaths);
  const int64_t n = block.num_dst;
  const torch::Tensor indptr_t = block.indptr.cpu().contiguous();
  const torch::Tensor indices_t = block.indices.cpu().contiguous();
  const torch::Tensor etypes_t =
      block.typed() ? block.etypes.cpu().contiguous() : torch::empty({0}, torch::kInt64);
  const int64_t* indptr = indptr_t.data_ptr<int64_t>();
  const int64_t* indices = indices_t.data_ptr<int64_t>();
  const int64_t* etypes = etypes_t.data_ptr<int64_t>();
  std::vector<sample::Block> parts(static_cast<size_t>(num_metapaths));
  for (sample::Block& p : parts) {
    p.num_dst = n;
    p.num_src = block.num_src;
    p.indptr.reserve(static_cast<size_t>(n + 1));
    p.indptr.push_back(0);
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
      parts[static_cast<size_t>(etypes[k])].indices.push_back(indices[k]);
    for (sample::Block& p : parts) p.indptr.push_back(p.num_edges());
  }
  // One transfer for all metapaths off the CPU.
  return to_block_tensors(parts, block.indptr.device());
}

HanConv::HanConv(int64_t in_dim, int64_t head_dim, int64_t heads, int64_t num_metapaths,
                 int64_t semantic_dim, double attention_dropout)
    : in_dim_(in_dim),
      head_dim_(head_dim),
      heads_(heads),
      num_metapaths_(num_metapaths),
      attention_dropout_(attention_dropout) {
  PARTITA_CHECK(in_dim > 0 && head_dim > 0 && heads > 0 && num_metapaths > 0 && semantic_dim > 0,
                Error,
                "HanConv: dimensions and counts must be positive (in {}, head {}, heads {}, "
                "metapaths {}, semantic {})",
                in_dim, head_dim, heads, num_metapaths, semantic_dim);
  PARTITA_CHECK(attention_dropout >= 0 && attention_dropout < 1, Error,
                "HanConv: attention dropout must be in [0, 1), got {}", attention_dropout);
  const int64_t width = heads * head_dim;
  lin = register_module("lin",
                        torch::nn::Linear(torch::nn::LinearOptions(in_dim, width).bias(false)));
  att_src = register_parameter("att_src", torch::empty({num_metapaths, heads, head_dim}));
  att_dst = register_parameter("att_dst", torch::empty({num_metapaths, heads, head_dim}));
  bias = register_parameter("bias", torch::zeros({num_metapaths, width}));
  semantic = register_module("semantic", torch::nn::Linear(width, semantic_dim));
  semantic_q = register_parameter("semantic_q", torch::empty({semantic_dim}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(lin->weight);
  for (int64_t m = 0; m < num_metapaths; ++m) {
    torch::nn::init::xavier_uniform_(att_src[m]);
    torch::nn::init::xavier_uniform_(att_dst[m]);
  }
  torch::nn::init::xavier_uniform_(semantic->weight);
  const double bound = std::sqrt(6.0 / static_cast<double>(semantic_dim + 1));
  semantic_q.uniform_(-bound, bound);
}

double HanConv::matmul_flops(const BlockTensors& block) const {
  const double width = static_cast<double>(out_dim());
  return 2.0 * static_cast<double>(block.num_src) * static_cast<double>(in_dim_) * width +
         2.0 * static_cast<double>(num_metapaths_ * block.num_dst) * width *
             static_cast<double>(semantic->options.out_features());
}

torch::Tensor HanConv::forward(const BlockTensors& block, const torch::Tensor& x_src,
                               torch::Tensor* beta, const torch::Tensor& dst_weight) {
  PARTITA_CHECK(x_src.dim() == 2 && x_src.size(0) == block.num_src && x_src.size(1) == in_dim_,
                Error, "HanConv: x_src must be [{}, {}], got dim {} size(0) {}", block.num_src,
                in_dim_, x_src.dim(), x_src.dim() > 0 ? x_src.size(0) : 0);
  const std::vector<BlockTensors> parts = split_by_relation(block, num_metapaths_);
  const auto type = x_src.scalar_type();
  const auto score_type = compute_type(type);
  const int64_t n = block.num_dst;
  PARTITA_CHECK(!dst_weight.defined() || (dst_weight.dim() == 1 && dst_weight.size(0) == n), Error,
                "HanConv: dst_weight must be [{}]", n);
  const bool sync = syncs_scores();
  torch::Tensor c;  // the rows' weights in the score type, when summed over ranks
  if (sync) {
    c = dst_weight.defined() ? dst_weight.to(x_src.device(), score_type)
                             : torch::ones({n}, torch::dtype(score_type).device(x_src.device()));
  }
  const torch::Tensor h = linear_as_input(lin, x_src);  // [num_src, K * D]
  const torch::Tensor hv = h.view({block.num_src, heads_, head_dim_});
  const torch::Tensor hv_dst = hv.slice(0, 0, n);
  std::vector<torch::Tensor> z, w;
  for (int64_t m = 0; m < num_metapaths_; ++m) {
    const auto score_src = (hv * att_src[m].to(type)).sum(-1);      // [num_src, K]
    const auto score_dst = (hv_dst * att_dst[m].to(type)).sum(-1);  // [n, K]
    const BlockTensors looped = with_self_loops(parts[static_cast<size_t>(m)]);
    torch::Tensor a = gat_edge_softmax(looped, score_src, score_dst, 0.2);
    if (is_training() && attention_dropout_ > 0)
      a = counter_dropout(a, attention_dropout_,
                          stream_key(dropout_key_, static_cast<uint64_t>(m)));
    torch::Tensor zm = torch::elu(aggregate(looped, h, a) + bias[m].to(type));  // [n, K * D]
    // Semantic score of metapath m: the mean over the dst rows (synchronised: this rank's
    // weighted sum, divided below), in the score type.
    const torch::Tensor zs = zm.to(score_type);
    const torch::Tensor proj = torch::nn::functional::linear(zs, semantic->weight.to(score_type),
                                                             semantic->bias.to(score_type));
    const torch::Tensor scores = torch::mv(torch::tanh(proj), semantic_q.to(score_type));
    w.push_back(sync ? torch::dot(scores, c) : scores.mean());
    z.push_back(zm);
  }
  torch::Tensor b;
  if (sync) {
    // [sums of the M scores, the rows' weight] over every rank; all zero only when no rank
    // has a row (then beta is uniform, as for n = 0 below).
    w.push_back(c.sum());
    const torch::Tensor global = sum_over_ranks(torch::stack(w), rank_sum_);
    const torch::Tensor count =
        global[num_metapaths_].clamp_min(static_cast<double>(std::numeric_limits<float>::min()));
    b = torch::softmax(global.slice(0, 0, num_metapaths_) / count, 0);
  } else {
    // With no dst rows the means are NaN; the output has no rows either way.
    b = n > 0 ? torch::softmax(torch::stack(w), 0)
              : torch::full({num_metapaths_}, 1.0 / static_cast<double>(num_metapaths_),
                            torch::dtype(score_type).device(x_src.device()));
  }
  if (beta != nullptr) *beta = b;
  const torch::Tensor bt = b.to(type);
  torch::Tensor out = z[0] * bt[0];
  for (int64_t m = 1; m < num_metapaths_; ++m) out = out + z[static_cast<size_t>(m)] * bt[m];
  return out;
}

HanModel::HanModel(const HanOptions& options) : options_(options) {
  const HanOptions& o = options_;
  PARTITA_CHECK(o.num_metapaths > 0 && o.in_dim > 0 && o.head_dim > 0 && o.heads > 0 &&
                    o.semantic_dim > 0 && o.out_dim > 0,
                Error,
                "HanModel: dimensions and counts must be positive (metapaths {}, in {}, head {}, "
                "heads {}, semantic {}, out {})",
                o.num_metapaths, o.in_dim, o.head_dim, o.heads, o.semantic_dim, o.out_dim);
  PARTITA_CHECK(o.layers >= 1, Error, "HanModel: layers must be >= 1, got {}", o.layers);
  PARTITA_CHECK(o.dropout >= 0.0 && o.dropout < 1.0, Error,
                "HanModel: dropout must be in [0, 1), got {}", o.dropout);
  int64_t in = o.in_dim;
  for (int64_t l = 0; l < o.layers; ++l) {
    auto conv = std::make_shared<HanConv>(in, o.head_dim, o.heads, o.num_metapaths, o.semantic_dim,
                                          o.attention_dropout);
    register_module("han" + std::to_string(l), conv);
    convs_.push_back(conv);
    in = conv->out_dim();
  }
  classifier_ = register_module("classifier", torch::nn::Linear(in, o.out_dim));
}

void HanModel::set_rank_sum(RankSum sum) {
  rank_sum_ = std::move(sum);
  for (const auto& conv : convs_) conv->set_rank_sum(rank_sum_);
}

void HanModel::idle_training_step() {
  if (rank_sum_ == nullptr || !is_training()) return;
  // Each layer's forward sum (M scores and the weight), layer 0 first; then the backward
  // sums of their gradients, in the reverse order autograd reaches them.
  const size_t values = static_cast<size_t>(options_.num_metapaths + 1);
  for (int64_t l = 0; l < 2 * options_.layers; ++l) {
    std::vector<double> zeros(values, 0.0);
    rank_sum_(zeros);
  }
}

torch::Tensor HanModel::forward(const std::vector<BlockTensors>& blocks, const RgcnInput& input,
                                const std::vector<torch::Tensor>& dst_weights) {
  const HanOptions& o = options_;
  const int64_t L = o.layers;
  PARTITA_CHECK(static_cast<int64_t>(blocks.size()) == L, Error,
                "HanModel: got {} blocks for {} layers", blocks.size(), L);
  PARTITA_CHECK(dst_weights.empty() || dst_weights.size() == blocks.size(), Error,
                "HanModel: got {} dst weights for {} blocks", dst_weights.size(), blocks.size());
  const int64_t num_input = blocks.back().num_src;
  PARTITA_CHECK(
      input.positions.defined() && input.x.defined() && input.positions.dim() == 1 &&
          input.positions.scalar_type() == torch::kInt64 && input.positions.size(0) == num_input &&
          input.x.dim() == 2 && input.x.size(0) == num_input && input.x.size(1) == o.in_dim,
      Error, "HanModel: needs int64 positions [{}] and x [{}, {}]", num_input, num_input, o.in_dim);
  // The positions must be a permutation of the input rows (checked on the host).
  const torch::Tensor pos = input.positions.cpu().contiguous();
  const int64_t* p = pos.data_ptr<int64_t>();
  std::vector<char> seen(static_cast<size_t>(num_input), 0);
  for (int64_t k = 0; k < num_input; ++k) {
    PARTITA_CHECK(p[k] >= 0 && p[k] < num_input && !seen[static_cast<size_t>(p[k])], Error,
                  "HanModel: input row {} out of [0, {}) or given twice", p[k], num_input);
    seen[static_cast<size_t>(p[k])] = 1;
  }
  const bool bf16 = o.precision == Precision::kBf16;
  torch::Tensor x = input.x.to(bf16 ? torch::kBFloat16 : input.x.scalar_type());
  // Row k of x belongs at input row positions[k]: put every row in input order.
  const torch::Tensor positions = input.positions.to(x.device());
  x = torch::zeros_like(x).index_copy(0, positions, x);

  const uint64_t key = dropout_key_;
  if (is_training()) dropout_key_ = mix64(dropout_key_ + 1);
  for (int64_t l = 0; l < L; ++l) {
    const BlockTensors& block = blocks[static_cast<size_t>(L - 1 - l)];
    PARTITA_CHECK(x.size(0) == block.num_src, Error,
                  "HanModel: layer {} gets {} rows, its block has {} src nodes", l, x.size(0),
                  block.num_src);
    if (o.dropout > 0.0 && is_training())
      x = counter_dropout(x, o.dropout, stream_key(key, static_cast<uint64_t>(l), 0));
    convs_[static_cast<size_t>(l)]->set_dropout_key(stream_key(key, static_cast<uint64_t>(l), 1));
    const size_t hop = static_cast<size_t>(L - 1 - l);
    x = convs_[static_cast<size_t>(l)]->forward(
        block, x, nullptr, dst_weights.empty() ? torch::Tensor() : dst_weights[hop]);
  }
  // The classifier (seed rows only) in fp32, as the other models' output layers.
  if (x.scalar_type() == torch::kBFloat16) x = x.to(torch::kFloat32);
  return linear_as_input(classifier_, x);
}

double HanModel::training_matmul_flops(const std::vector<BlockTensors>& blocks) const {
  // Forward, weight gradient and input gradient of every product (layer 0's input gradient
  // feeds the embeddings, when there are any; counted always, as RgcnModel does).
  double flops = 0;
  const auto L = static_cast<int64_t>(convs_.size());
  for (int64_t l = 0; l < L && l < static_cast<int64_t>(blocks.size()); ++l)
    flops +=
        3.0 * convs_[static_cast<size_t>(l)]->matmul_flops(blocks[static_cast<size_t>(L - 1 - l)]);
  if (!blocks.empty()) {
    flops += 3.0 * 2.0 * static_cast<double>(blocks[0].num_dst) *
             static_cast<double>(classifier_->options.in_features()) *
             static_cast<double>(options_.out_dim);
  }
  return flops;
}

std::vector<int64_t> HanModel::config_signature() const {
  const HanOptions& o = options_;
  return {kSignatureTag, o.num_metapaths, o.in_dim,  o.head_dim,
          o.heads,       o.semantic_dim,  o.out_dim, o.layers};
}

}  // namespace partita::nn
