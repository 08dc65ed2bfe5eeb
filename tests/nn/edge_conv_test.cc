// Convs that read edge features (GAT and GATv2 with edge_dim, GINE) against brute-force torch
// autograd references written per dst node, on both kernel paths (the fused CPU kernels and the
// device-generic ops under KernelPathScope(kGeneric)): values and every gradient.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/conv.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/kernel_path.h"
#include "partita/nn/message_passing.h"

namespace partita::nn {
namespace {

using torch::indexing::Slice;

// tiny_block (a dst without edges) followed by a random block's rows: 3 + 5 dst, 12 src.
sample::Block test_block() {
  std::mt19937_64 rng(11);
  sample::Block b = testing::random_block(8, 12, 3, rng);
  const sample::Block tiny = testing::tiny_block();
  // Rows 0..2 as tiny_block's (dst 2 has no in-edges), then 5 random rows.
  sample::Block out;
  out.num_dst = 8;
  out.num_src = 12;
  out.indptr = tiny.indptr;
  out.indices = tiny.indices;
  for (int64_t i = 3; i < 8; ++i) {
    out.indices.insert(out.indices.end(), b.indices.begin() + b.indptr[i],
                       b.indices.begin() + b.indptr[i + 1]);
    out.indptr.push_back(static_cast<int64_t>(out.indices.size()));
  }
  out.src_nodes = b.src_nodes;
  return out;
}

// `b` as tensors with random float32 edge features of width 3.
BlockTensors with_edges(const sample::Block& b) {
  BlockTensors t = to_block_tensors(b);
  t.edge_feat = torch::randn({t.num_edges(), 3});
  return t;
}

// A copy of `t` as a float64 leaf that records gradients.
torch::Tensor leaf64(const torch::Tensor& t) {
  return t.detach().to(torch::kFloat64).clone().set_requires_grad(true);
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol,
                  const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double err = (got.to(torch::kFloat64) - want).abs().max().item<double>();
  EXPECT_LE(err, tol) << what;
}

class EdgeConvTest : public ::testing::TestWithParam<KernelPath> {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(5);
    block_ = test_block();
    bt_ = to_block_tensors(block_);
    x_ = torch::randn({block_.num_src, kIn}, torch::kFloat64);
    ef_ = torch::randn({bt_.num_edges(), kEdgeDim}, torch::kFloat64);
    bt_.edge_feat = ef_;
    path_.emplace(GetParam());
  }

  // Self loop of dst i: the mean of its edge features, zeros without edges.
  torch::Tensor self_feat(int64_t i, const torch::Tensor& ef) const {
    const int64_t lo = block_.indptr[i], hi = block_.indptr[i + 1];
    if (lo == hi) return torch::zeros({ef.size(1)}, ef.options());
    return ef.index({Slice(lo, hi)}).mean(0);
  }

  static constexpr int64_t kIn = 5;
  static constexpr int64_t kEdgeDim = 3;
  sample::Block block_;
  BlockTensors bt_;
  torch::Tensor x_, ef_;
  std::optional<KernelPathScope> path_;
};

TEST_P(EdgeConvTest, SelfLoopsCarryTheMeanOfTheirRow) {
  const BlockTensors looped = with_self_loops(bt_);
  ASSERT_TRUE(looped.edge_feat.defined());
  ASSERT_EQ(looped.edge_feat.sizes(), (std::vector<int64_t>{bt_.num_edges() + 8, kEdgeDim}));
  for (int64_t i = 0; i < block_.num_dst; ++i) {
    const int64_t row = looped.indptr[i].item<int64_t>();
    expect_close(looped.edge_feat[row], self_feat(i, ef_), 1e-12, "self loop " + std::to_string(i));
    for (int64_t k = block_.indptr[i]; k < block_.indptr[i + 1]; ++k)
      EXPECT_TRUE(torch::equal(looped.edge_feat[k + i + 1], ef_[k])) << "edge " << k;
  }
  // dst 2 has no in-edges: zeros.
  EXPECT_TRUE(torch::equal(looped.edge_feat[looped.indptr[2].item<int64_t>()],
                           torch::zeros({kEdgeDim}, torch::kFloat64)));
  // Without edge features, none.
  BlockTensors plain = bt_;
  plain.edge_feat = torch::Tensor();
  EXPECT_FALSE(with_self_loops(plain).edge_feat.defined());
}

// GAT with edge features, per dst and head, by hand.
struct GatParams {
  torch::Tensor w, a_src, a_dst, w_e, a_edge, bias;
};

torch::Tensor reference_gat(const sample::Block& b, const torch::Tensor& x, const torch::Tensor& ef,
                            const GatParams& p, int64_t heads, int64_t head_dim, bool concat,
                            const std::function<torch::Tensor(int64_t)>& self_feat) {
  const torch::Tensor h = x.matmul(p.w.t()).view({b.num_src, heads, head_dim});
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < b.num_dst; ++i) {
    std::vector<int64_t> src{i};
    std::vector<torch::Tensor> feats{self_feat(i)};
    for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k) {
      src.push_back(b.indices[k]);
      feats.push_back(ef[k]);
    }
    std::vector<torch::Tensor> logits, values;
    for (size_t s = 0; s < src.size(); ++s) {
      const torch::Tensor he = p.w_e.matmul(feats[s]).view({heads, head_dim});
      const torch::Tensor e = (p.a_src * h[src[s]]).sum(-1) + (p.a_dst * h[i]).sum(-1) +
                              (p.a_edge * he).sum(-1);  // [heads]
      logits.push_back(torch::leaky_relu(e, 0.2));
      values.push_back(h[src[s]]);
    }
    const torch::Tensor alpha = torch::softmax(torch::stack(logits), 0);      // [n, heads]
    torch::Tensor out = (alpha.unsqueeze(-1) * torch::stack(values)).sum(0);  // [heads, D]
    rows.push_back(concat ? out.reshape({heads * head_dim}) : out.mean(0));
  }
  return torch::stack(rows) + p.bias;
}

TEST_P(EdgeConvTest, GatWithEdgeDimMatchesBruteForce) {
  for (const bool concat : {true, false}) {
    const int64_t heads = 3, head_dim = 2;
    GATConv conv(kIn, head_dim, heads, concat, /*attention_dropout=*/0.0, kEdgeDim);
    {
      torch::NoGradGuard no_grad;
      conv.bias.uniform_(-1, 1);
    }
    const torch::Tensor x = x_.clone().set_requires_grad(true);
    const torch::Tensor ef = ef_.clone().set_requires_grad(true);
    BlockTensors block = bt_;
    block.edge_feat = ef;
    const torch::Tensor out = conv.forward(block, x);
    const torch::Tensor weight = torch::randn(out.sizes(), torch::kFloat64);
    (out * weight).sum().backward();

    GatParams p{leaf64(conv.lin->weight),      leaf64(conv.att_src),  leaf64(conv.att_dst),
                leaf64(conv.lin_edge->weight), leaf64(conv.att_edge), leaf64(conv.bias)};
    const torch::Tensor rx = leaf64(x_), ref = leaf64(ef_);
    const torch::Tensor want =
        reference_gat(block_, rx, ref, p, heads, head_dim, concat, [&](int64_t i) {
          const int64_t lo = block_.indptr[i], hi = block_.indptr[i + 1];
          return lo == hi ? torch::zeros({kEdgeDim}, torch::kFloat64)
                          : ref.index({Slice(lo, hi)}).mean(0);
        });
    (want * weight).sum().backward();

    const std::string c = concat ? "concat " : "mean ";
    expect_close(out, want, 1e-6, c + "out");
    expect_close(x.grad(), rx.grad(), 1e-6, c + "grad x");
    expect_close(ef.grad(), ref.grad(), 1e-6, c + "grad edge_feat");
    // Parameters are float32: their gradients accumulate in float32.
    expect_close(conv.lin->weight.grad(), p.w.grad(), 1e-4, c + "grad W");
    expect_close(conv.att_src.grad(), p.a_src.grad(), 1e-4, c + "grad a_src");
    expect_close(conv.att_dst.grad(), p.a_dst.grad(), 1e-4, c + "grad a_dst");
    expect_close(conv.lin_edge->weight.grad(), p.w_e.grad(), 1e-4, c + "grad W_e");
    expect_close(conv.att_edge.grad(), p.a_edge.grad(), 1e-4, c + "grad a_edge");
    expect_close(conv.bias.grad(), p.bias.grad(), 1e-4, c + "grad bias");
  }
}

TEST_P(EdgeConvTest, GatWithEdgeDimInFloat32MatchesFloat64) {
  GATConv conv(kIn, 2, 3, true, 0.0, kEdgeDim);
  torch::NoGradGuard no_grad;
  const torch::Tensor want = conv.forward(bt_, x_);
  BlockTensors block = bt_;
  block.edge_feat = ef_.to(torch::kFloat32);
  const torch::Tensor got = conv.forward(block, x_.to(torch::kFloat32));
  EXPECT_EQ(got.scalar_type(), torch::kFloat32);
  expect_close(got, want, 1e-4, "float32");
}

TEST_P(EdgeConvTest, GatWithoutEdgeDimIgnoresEdgeFeatures) {
  // edge_dim 0 builds the same layer as before (same parameters from the same seed) and
  // reads no edge features: equal bit for bit with and without them on the block.
  torch::manual_seed(3);
  GATConv plain(kIn, 2, 3);
  torch::manual_seed(3);
  GATConv zero(kIn, 2, 3, true, 0.0, /*edge_dim=*/0);
  EXPECT_FALSE(zero.lin_edge);
  EXPECT_FALSE(zero.att_edge.defined());
  EXPECT_EQ(zero.parameters().size(), plain.parameters().size());
  EXPECT_TRUE(torch::equal(zero.lin->weight, plain.lin->weight));
  EXPECT_TRUE(torch::equal(zero.att_src, plain.att_src));
  torch::NoGradGuard no_grad;
  BlockTensors without = bt_;
  without.edge_feat = torch::Tensor();
  EXPECT_TRUE(torch::equal(zero.forward(bt_, x_), plain.forward(without, x_)));
}

TEST_P(EdgeConvTest, GatWithEdgeDimRefusesBlocksWithoutThem) {
  GATConv conv(kIn, 2, 3, true, 0.0, kEdgeDim);
  BlockTensors without = bt_;
  without.edge_feat = torch::Tensor();
  EXPECT_THROW(conv.forward(without, x_), Error);
  BlockTensors wrong = bt_;
  wrong.edge_feat = torch::randn({bt_.num_edges(), kEdgeDim + 1}, torch::kFloat64);
  EXPECT_THROW(conv.forward(wrong, x_), Error);
}

TEST_P(EdgeConvTest, GnnModelRefusesEdgeDimWhereItsConvTakesNone) {
  EXPECT_TRUE(takes_edge_features(ConvKind::kGat));
  EXPECT_FALSE(takes_edge_features(ConvKind::kSage));
  EXPECT_FALSE(takes_edge_features(ConvKind::kGcn));
  GnnOptions o;
  o.in_dim = kIn;
  o.hidden = 4;
  o.out_dim = 3;
  o.layers = 1;
  o.edge_dim = kEdgeDim;
  for (ConvKind kind : {ConvKind::kSage, ConvKind::kGcn}) {
    o.kind = kind;
    EXPECT_THROW(GnnModel{o}, Error);
  }
  o.kind = ConvKind::kGat;
  o.edge_dim = -1;
  EXPECT_THROW(GnnModel{o}, Error);
  o.edge_dim = kEdgeDim;
  GnnModel model(o);
  torch::NoGradGuard no_grad;
  model.eval();
  const torch::Tensor out = model.forward({bt_}, x_.to(torch::kFloat32));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{8, 3}));
}

// GINE by hand: per dst, x_i + sum_j ReLU(x_j + W_e e_ji + b_e), then the 2-layer MLP.
TEST_P(EdgeConvTest, GineMatchesBruteForce) {
  GINEConv conv(kIn, 4, kEdgeDim);
  EXPECT_EQ(conv.out_dim(), 4);
  const torch::Tensor x = x_.clone().set_requires_grad(true);
  const torch::Tensor ef = ef_.clone().set_requires_grad(true);
  BlockTensors block = bt_;
  block.edge_feat = ef;
  const torch::Tensor out = conv.forward(block, x);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{8, 4}));
  const torch::Tensor weight = torch::randn(out.sizes(), torch::kFloat64);
  (out * weight).sum().backward();

  const torch::Tensor we = leaf64(conv.lin_edge->weight), be = leaf64(conv.lin_edge->bias);
  const torch::Tensor w1 = leaf64(conv.mlp1->weight), b1 = leaf64(conv.mlp1->bias);
  const torch::Tensor w2 = leaf64(conv.mlp2->weight), b2 = leaf64(conv.mlp2->bias);
  const torch::Tensor rx = leaf64(x_), ref = leaf64(ef_);
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < block_.num_dst; ++i) {
    torch::Tensor h = rx[i];  // (1 + eps) x_i with eps = 0
    for (int64_t k = block_.indptr[i]; k < block_.indptr[i + 1]; ++k)
      h = h + torch::relu(rx[block_.indices[k]] + we.matmul(ref[k]) + be);
    rows.push_back(w2.matmul(torch::relu(w1.matmul(h) + b1)) + b2);
  }
  const torch::Tensor want = torch::stack(rows);
  (want * weight).sum().backward();

  expect_close(out, want, 1e-6, "out");
  expect_close(x.grad(), rx.grad(), 1e-6, "grad x");
  expect_close(ef.grad(), ref.grad(), 1e-6, "grad edge_feat");
  expect_close(conv.lin_edge->weight.grad(), we.grad(), 1e-4, "grad W_e");
  expect_close(conv.lin_edge->bias.grad(), be.grad(), 1e-4, "grad b_e");
  expect_close(conv.mlp1->weight.grad(), w1.grad(), 1e-4, "grad W_1");
  expect_close(conv.mlp1->bias.grad(), b1.grad(), 1e-4, "grad b_1");
  expect_close(conv.mlp2->weight.grad(), w2.grad(), 1e-4, "grad W_2");
  expect_close(conv.mlp2->bias.grad(), b2.grad(), 1e-4, "grad b_2");
}

TEST_P(EdgeConvTest, GineSumInFloat32AndBf16MatchesFloat64) {
  const torch::Tensor ex = torch::randn({bt_.num_edges(), kIn}, torch::kFloat64);
  const torch::Tensor want = gine_sum(bt_, x_, ex);
  expect_close(gine_sum(bt_, x_.to(torch::kFloat32), ex.to(torch::kFloat32)), want, 1e-5, "f32");
  const torch::Tensor bf = gine_sum(bt_, x_.to(torch::kBFloat16), ex.to(torch::kBFloat16));
  EXPECT_EQ(bf.scalar_type(), torch::kBFloat16);
  expect_close(bf, want, 0.1, "bf16");
  // dst 2 has no in-edges.
  EXPECT_TRUE(torch::equal(want[2], torch::zeros({kIn}, torch::kFloat64)));
  EXPECT_THROW(gine_sum(bt_, x_, ex.to(torch::kFloat32)), Error);
  EXPECT_THROW(gine_sum(bt_, x_, ex.slice(0, 1)), Error);
}

TEST_P(EdgeConvTest, GineNeedsEdgeFeatures) {
  EXPECT_THROW(GINEConv(kIn, 4, 0), Error);
  GINEConv conv(kIn, 4, kEdgeDim);
  BlockTensors without = bt_;
  without.edge_feat = torch::Tensor();
  EXPECT_THROW(conv.forward(without, x_), Error);
  GnnOptions o;
  o.kind = ConvKind::kGine;
  o.in_dim = kIn;
  o.hidden = 4;
  o.out_dim = 3;
  o.layers = 2;
  EXPECT_TRUE(takes_edge_features(ConvKind::kGine));
  EXPECT_TRUE(needs_edge_features(ConvKind::kGine));
  EXPECT_FALSE(needs_edge_features(ConvKind::kGat));
  try {
    GnnModel model(o);
    ADD_FAILURE() << "gine without edge_dim was built";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--edge-features"), std::string::npos) << e.what();
  }
  // With edge features, two layers train: every parameter gets a gradient.
  o.edge_dim = kEdgeDim;
  GnnModel model(o);
  std::mt19937_64 rng(3);
  const std::vector<BlockTensors> blocks{with_edges(testing::random_block(3, 8, 2, rng)), bt_};
  const torch::Tensor out = model.forward(blocks, torch::randn({12, kIn}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 3}));
  out.sum().backward();
  for (const auto& p : model.named_parameters()) EXPECT_TRUE(p.value().grad().defined()) << p.key();
}

// The output layer's MLP is as wide as its input, not as narrow as the classes: squeezed
// through out_dim ReLUs it died early in training (2-layer gine stuck at chance).
TEST_P(EdgeConvTest, GineMlpIsNeverNarrowerThanItsInput) {
  GINEConv last(/*in_dim=*/16, /*out_dim=*/3, kEdgeDim);
  EXPECT_EQ(last.mlp1->options.out_features(), 16);
  EXPECT_EQ(last.mlp2->options.in_features(), 16);
  EXPECT_EQ(last.out_dim(), 3);
  GINEConv hidden(/*in_dim=*/3, /*out_dim=*/16, kEdgeDim);
  EXPECT_EQ(hidden.mlp1->options.out_features(), 16);
}

// Two GINE layers learn: on a tiny generated two-hop sample whose labels are a function of
// the edge features of the seeds' in-edges, a few full-batch Adam steps take the loss far
// below ln(classes) (the old 2-layer stack sat at ln(classes), its logits constant).
TEST_P(EdgeConvTest, TwoLayerGineLearns) {
  torch::manual_seed(7);
  std::mt19937_64 rng(7);
  const int64_t seeds = 48, classes = kEdgeDim, width = 8;
  std::vector<BlockTensors> blocks{to_block_tensors(testing::random_block(seeds, 160, 8, rng)),
                                   to_block_tensors(testing::random_block(160, 400, 8, rng))};
  for (BlockTensors& b : blocks) b.edge_feat = torch::randn({b.num_edges(), kEdgeDim}).abs();
  // Label of a seed: the largest column of its in-edges' summed edge features, which no
  // node feature tells.
  const torch::Tensor x = torch::randn({400, width}).abs();
  const torch::Tensor sums =
      torch::zeros({seeds, kEdgeDim}).index_add_(0, blocks[0].edge_dst, blocks[0].edge_feat);
  const torch::Tensor label = sums.argmax(1);
  GnnOptions o;
  o.kind = ConvKind::kGine;
  o.in_dim = width;
  o.hidden = 16;
  o.out_dim = classes;
  o.layers = 2;
  o.edge_dim = kEdgeDim;
  GnnModel model(o);
  torch::optim::Adam adam(model.parameters(), torch::optim::AdamOptions(0.01));
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(model.forward(blocks, x), label);
    loss.backward();
    adam.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  const double chance = std::log(static_cast<double>(classes));
  EXPECT_GT(first, 0.8 * chance) << "the task is not trivial at the start";
  EXPECT_LT(last, 0.35 * chance) << "2-layer gine did not learn (first loss " << first << ")";
}

// GATv2 with or without edge features, per dst and head, by hand (w_e undefined: none).
struct Gatv2Params {
  torch::Tensor w_src, w_dst, att, w_e, bias;
};

torch::Tensor reference_gatv2(const sample::Block& b, const torch::Tensor& x,
                              const torch::Tensor& ef, const Gatv2Params& p, int64_t heads,
                              int64_t head_dim, bool concat,
                              const std::function<torch::Tensor(int64_t)>& self_feat) {
  const torch::Tensor hs = x.matmul(p.w_src.t()).view({b.num_src, heads, head_dim});
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < b.num_dst; ++i) {
    const torch::Tensor hd = p.w_dst.matmul(x[i]).view({heads, head_dim});
    std::vector<int64_t> src{i};
    std::vector<torch::Tensor> feats{p.w_e.defined() ? self_feat(i) : torch::Tensor()};
    for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k) {
      src.push_back(b.indices[k]);
      feats.push_back(p.w_e.defined() ? ef[k] : torch::Tensor());
    }
    std::vector<torch::Tensor> logits, values;
    for (size_t s = 0; s < src.size(); ++s) {
      torch::Tensor pre = hs[src[s]] + hd;  // [heads, D]
      if (p.w_e.defined()) pre = pre + p.w_e.matmul(feats[s]).view({heads, head_dim});
      logits.push_back((p.att * torch::leaky_relu(pre, 0.2)).sum(-1));  // [heads]
      values.push_back(hs[src[s]]);
    }
    const torch::Tensor alpha = torch::softmax(torch::stack(logits), 0);      // [n, heads]
    torch::Tensor out = (alpha.unsqueeze(-1) * torch::stack(values)).sum(0);  // [heads, D]
    rows.push_back(concat ? out.reshape({heads * head_dim}) : out.mean(0));
  }
  return torch::stack(rows) + p.bias;
}

TEST_P(EdgeConvTest, Gatv2MatchesBruteForce) {
  for (const int64_t edge_dim : {int64_t{0}, kEdgeDim}) {
    for (const bool concat : {true, false}) {
      const int64_t heads = 3, head_dim = 2;
      GATv2Conv conv(kIn, head_dim, heads, concat, /*attention_dropout=*/0.0, edge_dim);
      EXPECT_EQ(conv.out_dim(), concat ? heads * head_dim : head_dim);
      EXPECT_EQ(static_cast<bool>(conv.lin_edge), edge_dim > 0);
      {
        torch::NoGradGuard no_grad;
        conv.bias.uniform_(-1, 1);
      }
      const torch::Tensor x = x_.clone().set_requires_grad(true);
      const torch::Tensor ef = ef_.clone().set_requires_grad(true);
      BlockTensors block = bt_;
      block.edge_feat = ef;
      const torch::Tensor out = conv.forward(block, x);
      const torch::Tensor weight = torch::randn(out.sizes(), torch::kFloat64);
      (out * weight).sum().backward();

      Gatv2Params p{leaf64(conv.lin_src->weight), leaf64(conv.lin_dst->weight), leaf64(conv.att),
                    edge_dim > 0 ? leaf64(conv.lin_edge->weight) : torch::Tensor(),
                    leaf64(conv.bias)};
      const torch::Tensor rx = leaf64(x_), ref = leaf64(ef_);
      const torch::Tensor want =
          reference_gatv2(block_, rx, ref, p, heads, head_dim, concat, [&](int64_t i) {
            const int64_t lo = block_.indptr[i], hi = block_.indptr[i + 1];
            return lo == hi ? torch::zeros({kEdgeDim}, torch::kFloat64)
                            : ref.index({Slice(lo, hi)}).mean(0);
          });
      (want * weight).sum().backward();

      const std::string c =
          std::string(concat ? "concat " : "mean ") + "edge_dim " + std::to_string(edge_dim) + " ";
      expect_close(out, want, 1e-6, c + "out");
      expect_close(x.grad(), rx.grad(), 1e-6, c + "grad x");
      if (edge_dim > 0) {
        expect_close(ef.grad(), ref.grad(), 1e-6, c + "grad edge_feat");
        expect_close(conv.lin_edge->weight.grad(), p.w_e.grad(), 1e-4, c + "grad W_e");
      } else {
        EXPECT_FALSE(ef.grad().defined()) << c << "edge features read without edge_dim";
      }
      // Parameters are float32: their gradients accumulate in float32.
      expect_close(conv.lin_src->weight.grad(), p.w_src.grad(), 1e-4, c + "grad W_src");
      expect_close(conv.lin_dst->weight.grad(), p.w_dst.grad(), 1e-4, c + "grad W_dst");
      expect_close(conv.att.grad(), p.att.grad(), 1e-4, c + "grad att");
      expect_close(conv.bias.grad(), p.bias.grad(), 1e-4, c + "grad bias");
    }
  }
}

TEST_P(EdgeConvTest, Gatv2InFloat32MatchesFloat64) {
  GATv2Conv conv(kIn, 2, 3, true, 0.0, kEdgeDim);
  torch::NoGradGuard no_grad;
  const torch::Tensor want = conv.forward(bt_, x_);
  BlockTensors block = bt_;
  block.edge_feat = ef_.to(torch::kFloat32);
  const torch::Tensor got = conv.forward(block, x_.to(torch::kFloat32));
  EXPECT_EQ(got.scalar_type(), torch::kFloat32);
  expect_close(got, want, 1e-4, "float32");
}

TEST_P(EdgeConvTest, Gatv2WithEdgeDimRefusesBlocksWithoutThem) {
  GATv2Conv conv(kIn, 2, 3, true, 0.0, kEdgeDim);
  BlockTensors without = bt_;
  without.edge_feat = torch::Tensor();
  EXPECT_THROW(conv.forward(without, x_), Error);
  BlockTensors wrong = bt_;
  wrong.edge_feat = torch::randn({bt_.num_edges(), kEdgeDim + 1}, torch::kFloat64);
  EXPECT_THROW(conv.forward(wrong, x_), Error);
  EXPECT_THROW(GATv2Conv(kIn, 2, 3, true, 0.0, /*edge_dim=*/-1), Error);
  // edge_dim 0 runs without them.
  GATv2Conv plain(kIn, 2, 3);
  torch::NoGradGuard no_grad;
  EXPECT_EQ(plain.forward(without, x_).sizes(), (std::vector<int64_t>{8, 6}));
}

TEST_P(EdgeConvTest, GnnModelBuildsGatv2WithAndWithoutEdgeFeatures) {
  EXPECT_TRUE(takes_edge_features(ConvKind::kGatv2));
  EXPECT_FALSE(needs_edge_features(ConvKind::kGatv2));
  GnnOptions o;
  o.kind = ConvKind::kGatv2;
  o.in_dim = kIn;
  o.hidden = 4;
  o.heads = 2;
  o.out_dim = 3;
  o.layers = 2;
  std::mt19937_64 rng(3);
  const BlockTensors top = with_edges(testing::random_block(3, 8, 2, rng));
  for (const int64_t edge_dim : {int64_t{0}, kEdgeDim}) {
    o.edge_dim = edge_dim;
    GnnModel model(o);
    EXPECT_EQ(model.layer_in_dim(1), 8) << "hidden x heads";
    BlockTensors first = top, second = bt_;
    if (edge_dim == 0) first.edge_feat = second.edge_feat = torch::Tensor();
    const torch::Tensor out = model.forward({first, second}, torch::randn({12, kIn}));
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 3}));
    out.sum().backward();
    for (const auto& p : model.named_parameters())
      EXPECT_TRUE(p.value().grad().defined()) << p.key();
  }
}

std::string path_name(const ::testing::TestParamInfo<KernelPath>& info) {
  return info.param == KernelPath::kAuto ? "fused" : "generic";
}

INSTANTIATE_TEST_SUITE_P(Paths, EdgeConvTest,
                         ::testing::Values(KernelPath::kAuto, KernelPath::kGeneric), path_name);

}  // namespace
}  // namespace partita::nn
