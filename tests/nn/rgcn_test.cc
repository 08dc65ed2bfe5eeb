// R-GCN: typed BlockTensors, relation_mean, RelGraphConv and RgcnModel against brute-force
// loops over edges and against autograd through a plain-torch implementation; edge cases
// (relations without edges, dst without in-edges, one relation, basis decomposition), bf16,
// and bit-identical results for any thread count.
#include "partita/nn/rgcn.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/message_passing.h"

namespace partita::nn {
namespace {

using testing::random_typed_block;

// Per-relation means with explicit loops over the edges, in double: [num_dst, R, F].
torch::Tensor loop_relation_means(const sample::Block& b, const torch::Tensor& x, int64_t R) {
  const torch::Tensor xd = x.to(torch::kFloat64);
  torch::Tensor out = torch::zeros({b.num_dst, R, x.size(1)}, torch::kFloat64);
  for (int64_t i = 0; i < b.num_dst; ++i) {
    for (int64_t r = 0; r < R; ++r) {
      torch::Tensor sum = torch::zeros({x.size(1)}, torch::kFloat64);
      int64_t n = 0;
      for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k) {
        if (b.etypes[k] != r) continue;
        sum += xd[b.indices[k]];
        ++n;
      }
      if (n > 0) out[i][r] = sum / static_cast<double>(n);
    }
  }
  return out;
}

// The layer by its definition, in double: out_i = x_i W_self + sum_r mean_r(i) W_r + b.
torch::Tensor loop_conv(const sample::Block& b, const torch::Tensor& x, RelGraphConv& conv) {
  torch::NoGradGuard no_grad;
  const torch::Tensor w = conv.relation_weights().to(torch::kFloat64);  // [R, in, out]
  const torch::Tensor means = loop_relation_means(b, x, w.size(0));
  torch::Tensor out = torch::zeros({b.num_dst, w.size(2)}, torch::kFloat64);
  for (int64_t i = 0; i < b.num_dst; ++i) {
    torch::Tensor row = conv.bias.to(torch::kFloat64).clone();
    if (conv.self_weight.defined())
      row += torch::mv(conv.self_weight.to(torch::kFloat64).t(), x[i].to(torch::kFloat64));
    for (int64_t r = 0; r < w.size(0); ++r) row += torch::mv(w[r].t(), means[i][r]);
    out[i] = row;
  }
  return out;
}

// The layer with plain torch operators (per-edge rows, index_add), differentiable in x and
// in the conv's parameters: the autograd reference for gradients.
torch::Tensor torch_conv(const BlockTensors& b, const torch::Tensor& x, RelGraphConv& conv) {
  const torch::Tensor w = conv.relation_weights();  // [R, in, out]
  const int64_t R = w.size(0), F = x.size(1);
  const torch::Tensor seg = b.edge_dst * R + b.etypes;
  const torch::Tensor count = torch::zeros({b.num_dst * R}, x.options())
                                  .index_add(0, seg, torch::ones({b.num_edges()}, x.options()));
  const torch::Tensor sums =
      torch::zeros({b.num_dst * R, F}, x.options()).index_add(0, seg, x.index_select(0, b.indices));
  const torch::Tensor means = (sums / count.clamp_min(1).unsqueeze(1)).view({b.num_dst, R, F});
  torch::Tensor out = torch::einsum("nri,rio->no", {means, w}) + conv.bias;
  if (conv.self_weight.defined()) out = out + x.slice(0, 0, b.num_dst).mm(conv.self_weight);
  return out;
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double rel,
                  const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double scale = std::max(1.0, want.abs().max().item<double>());
  const double err =
      (got.to(torch::kFloat64) - want.to(torch::kFloat64)).abs().max().item<double>();
  EXPECT_LE(err, rel * scale) << what;
}

class RgcnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(5);
  }
};

TEST_F(RgcnTest, TypedBlockTensorsSplitRowsByRelation) {
  std::mt19937_64 rng(1);
  const sample::Block b = random_typed_block(20, 35, 4, 3, /*empty=*/{1}, rng);
  const BlockTensors t = to_block_tensors(b);
  ASSERT_TRUE(t.typed());
  EXPECT_EQ(t.num_relations, 4);
  // Every (dst, relation) pair with edges is one relation row, relation-major, dst
  // increasing inside a relation, holding exactly the pair's edges in edge order.
  const int64_t* offsets = t.rel_offsets.data_ptr<int64_t>();
  const int64_t* row_dst = t.rel_row_dst.data_ptr<int64_t>();
  const int64_t* ptr = t.rel_indptr.data_ptr<int64_t>();
  const int64_t* src = t.rel_src.data_ptr<int64_t>();
  int64_t row = 0, entry = 0;
  std::vector<int64_t> entry_of_edge(static_cast<size_t>(b.num_edges()), -1);
  std::vector<int64_t> row_of_edge(static_cast<size_t>(b.num_edges()), -1);
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(offsets[r], row);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      std::vector<int64_t> edges;
      for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k)
        if (b.etypes[k] == r) edges.push_back(k);
      if (edges.empty()) continue;
      ASSERT_LT(row, t.num_relation_rows());
      EXPECT_EQ(row_dst[row], i);
      ASSERT_EQ(ptr[row + 1] - ptr[row], static_cast<int64_t>(edges.size()));
      for (int64_t k : edges) {
        EXPECT_EQ(src[entry], b.indices[k]);
        entry_of_edge[k] = entry++;
        row_of_edge[k] = row;
      }
      ++row;
    }
  }
  EXPECT_EQ(offsets[4], row);
  EXPECT_EQ(t.num_relation_rows(), row);
  EXPECT_EQ(entry, b.num_edges());
  EXPECT_EQ(offsets[2], offsets[1]) << "relation 1 has no edges, so no rows";
  // The transposed block's entries point back at the same rows and entries.
  for (int64_t k = 0; k < b.num_edges(); ++k) {
    const int64_t e = t.t_eid[k].item<int64_t>();
    EXPECT_EQ(t.t_rel_row[k].item<int64_t>(), row_of_edge[e]);
    EXPECT_EQ(t.t_rel_entry[k].item<int64_t>(), entry_of_edge[e]);
  }
  // A relation past the largest id in the block is not counted.
  const sample::Block c = random_typed_block(20, 35, 4, 3, /*empty=*/{3}, rng);
  EXPECT_EQ(to_block_tensors(c).num_relations, 3);
  // Untyped blocks stay untyped; self loops drop the relations.
  EXPECT_FALSE(to_block_tensors(testing::tiny_block()).typed());
  const BlockTensors looped = with_self_loops(t);
  EXPECT_FALSE(looped.typed());
  EXPECT_EQ(looped.num_edges(), t.num_edges() + t.num_dst);
  // Every overload fills them.
  std::vector<int64_t> degrees(35, 1);
  EXPECT_TRUE(to_block_tensors(std::vector<sample::Block>{b})[0].typed());
  EXPECT_TRUE(to_block_tensors(std::vector<sample::Block>{b}, degrees)[0].typed());
}

TEST_F(RgcnTest, RejectsInconsistentRelationIds) {
  std::mt19937_64 rng(2);
  sample::Block b = random_typed_block(6, 9, 3, 3, {}, rng);
  sample::Block short_ids = b;
  short_ids.etypes.pop_back();
  EXPECT_THROW(to_block_tensors(short_ids), Error);
  sample::Block negative = b;
  negative.etypes[0] = -1;
  EXPECT_THROW(to_block_tensors(negative), Error);
  // Dst 1 lists relation 2 before relation 0.
  sample::Block unsorted;
  unsorted.num_dst = 2;
  unsorted.num_src = 3;
  unsorted.indptr = {0, 1, 3};
  unsorted.indices = {2, 0, 1};
  unsorted.etypes = {0, 2, 0};
  EXPECT_THROW(to_block_tensors(unsorted), Error);
  unsorted.etypes = {2, 0, 2};  // decreasing across rows is fine
  EXPECT_NO_THROW(to_block_tensors(unsorted));
}

// relation_mean's rows as [num_dst, R, F], zeros where a pair has no row.
torch::Tensor dense_means(const BlockTensors& t, const torch::Tensor& rows, int64_t R) {
  const torch::Tensor rel = torch::repeat_interleave(
      t.rel_offsets.slice(0, 1) - t.rel_offsets.slice(0, 0, -1));  // relation of each row
  return torch::zeros({t.num_dst * R, rows.size(1)}, rows.options())
      .index_add(0, t.rel_row_dst * R + rel, rows)
      .view({t.num_dst, R, rows.size(1)});
}

TEST_F(RgcnTest, RelationMeanEqualsLoopsAndItsGradientTheOperators) {
  std::mt19937_64 rng(3);
  for (int R : {1, 3, 5}) {
    const sample::Block b =
        random_typed_block(25, 40, R, 4, R == 5 ? std::vector<int>{0, 2} : std::vector<int>{}, rng);
    const BlockTensors t = to_block_tensors(b);
    const torch::Tensor x = torch::randn({40, 7}).requires_grad_();
    const torch::Tensor got = relation_mean(t, x);
    ASSERT_EQ(got.sizes(), (std::vector<int64_t>{t.num_relation_rows(), 7}));
    expect_close(dense_means(t, got.detach(), R), loop_relation_means(b, x.detach(), R), 1e-6,
                 "R=" + std::to_string(R));
    const torch::Tensor g = torch::randn({t.num_relation_rows(), 7});
    (got * g).sum().backward();
    const torch::Tensor fused_grad = x.grad().clone();
    x.mutable_grad().zero_();
    // The operators: per-edge rows summed into [num_dst * R] and divided by the counts.
    const torch::Tensor seg = t.edge_dst * R + t.etypes;
    const torch::Tensor count =
        torch::zeros({25 * R}).index_add(0, seg, torch::ones({t.num_edges()}));
    const torch::Tensor ref =
        torch::zeros({25 * R, 7}).index_add(0, seg, x.index_select(0, t.indices)) /
        count.clamp_min(1).unsqueeze(1);
    (ref.view({25, R, 7}) * dense_means(t, g, R)).sum().backward();
    expect_close(fused_grad, x.grad(), 1e-6, "grad R=" + std::to_string(R));
  }
  EXPECT_THROW(relation_mean(to_block_tensors(testing::tiny_block()), torch::randn({5, 2})), Error);
}

TEST_F(RgcnTest, RelationMeanIsBitIdenticalForAnyThreadCount) {
  std::mt19937_64 rng(13);
  const BlockTensors t = to_block_tensors(random_typed_block(3000, 5000, 6, 4, {4}, rng));
  const torch::Tensor x = torch::randn({5000, 16});
  const torch::Tensor g = torch::randn({t.num_relation_rows(), 16});
  std::vector<torch::Tensor> results;
  for (int threads : {1, 2, 1}) {
    torch::set_num_threads(threads);
    const torch::Tensor xg = x.clone().requires_grad_();
    const torch::Tensor out = relation_mean(t, xg);
    (out * g).sum().backward();
    results.push_back(out.detach());
    results.push_back(xg.grad());
  }
  torch::set_num_threads(1);
  for (size_t k = 2; k < results.size(); ++k)
    EXPECT_TRUE(torch::equal(results[k], results[k % 2])) << k;
}

struct ConvCase {
  std::string name;
  int block_relations;
  std::vector<int> empty;
  int64_t layer_relations;
  int64_t bases;
  bool self_loop;
};

const ConvCase kConvCases[] = {
    {"many relations, one empty", 4, {2}, 4, 0, true},
    {"single relation", 1, {}, 1, 0, true},
    {"basis decomposition", 5, {0}, 5, 2, true},
    {"no self loop", 3, {}, 3, 0, false},
    {"block with fewer relations than the layer", 2, {}, 6, 3, true},
};

TEST_F(RgcnTest, ConvEqualsLoopsOverEdges) {
  std::mt19937_64 rng(4);
  for (const ConvCase& c : kConvCases) {
    const sample::Block b = random_typed_block(30, 50, c.block_relations, 4, c.empty, rng);
    const BlockTensors t = to_block_tensors(b);
    RelGraphConv conv(6, 5, c.layer_relations, c.bases, c.self_loop);
    torch::NoGradGuard no_grad;
    conv.bias.uniform_(-1, 1);  // non-zero, so that the bias term is checked too
    const torch::Tensor x = torch::randn({50, 6});
    const torch::Tensor got = conv.forward(t, x);
    expect_close(got, loop_conv(b, x, conv), 1e-5, c.name);
    // Dst rows with no in-edges (multiples of 5) get the self term and the bias only.
    const torch::Tensor lonely =
        c.self_loop ? x[0].matmul(conv.self_weight) + conv.bias : conv.bias;
    expect_close(got[0], lonely, 1e-6, c.name + ": dst without in-edges");
  }
}

TEST_F(RgcnTest, ConvGradientsEqualAutogradThroughOperators) {
  std::mt19937_64 rng(5);
  for (const ConvCase& c : kConvCases) {
    const sample::Block b = random_typed_block(30, 50, c.block_relations, 4, c.empty, rng);
    const BlockTensors t = to_block_tensors(b);
    RelGraphConv conv(6, 5, c.layer_relations, c.bases, c.self_loop);
    const torch::Tensor x = torch::randn({50, 6}).requires_grad_();
    const torch::Tensor g = torch::randn({30, 5});
    (conv.forward(t, x) * g).sum().backward();
    std::vector<torch::Tensor> fused = {x.grad().clone()};
    for (auto& p : conv.parameters()) fused.push_back(p.grad().clone());
    x.mutable_grad().zero_();
    conv.zero_grad();
    (torch_conv(t, x, conv) * g).sum().backward();
    std::vector<torch::Tensor> ref = {x.grad()};
    for (auto& p : conv.parameters()) ref.push_back(p.grad());
    ASSERT_EQ(fused.size(), ref.size());
    for (size_t k = 0; k < fused.size(); ++k)
      expect_close(fused[k], ref[k], 1e-5, c.name + " gradient " + std::to_string(k));
  }
}

TEST_F(RgcnTest, ConvOnABlockWithoutEdges) {
  // No sampled edge at all: Block::etypes is empty, so the block is untyped.
  sample::Block b;
  b.num_dst = 3;
  b.num_src = 4;
  b.indptr = {0, 0, 0, 0};
  b.src_nodes = {1, 2, 3, 4};
  const BlockTensors t = to_block_tensors(b);
  RelGraphConv conv(4, 2, 3);
  const torch::Tensor x = torch::randn({4, 4});
  expect_close(conv.forward(t, x), x.slice(0, 0, 3).mm(conv.self_weight) + conv.bias, 1e-6,
               "self term only");
}

TEST_F(RgcnTest, ConvRejectsUntypedAndForeignBlocks) {
  std::mt19937_64 rng(6);
  RelGraphConv conv(4, 3, 2);
  EXPECT_THROW(conv.forward(to_block_tensors(testing::tiny_block()), torch::randn({5, 4})), Error);
  const BlockTensors three = to_block_tensors(random_typed_block(8, 12, 3, 2, {}, rng));
  EXPECT_THROW(conv.forward(three, torch::randn({12, 4})), Error);
  EXPECT_THROW(RelGraphConv(4, 3, 0), Error);
  EXPECT_THROW(RelGraphConv(4, 3, 2, -1), Error);
}

// A 2-hop typed batch: 12 seeds <- 30 <- 60 input nodes of 3 types (type 0: 5 features,
// type 1: featureless, type 2: 3 features), 4 relations (relation 3 unused in hop 2).
struct Batch {
  std::vector<sample::Block> raw;
  std::vector<BlockTensors> blocks;
  std::vector<RgcnInput> inputs;
  torch::Tensor y;
};

RgcnOptions model_options() {
  RgcnOptions o;
  o.num_relations = 4;
  o.type_dims = {5, 0, 3};
  o.hidden = 8;
  o.out_dim = 3;
  o.layers = 2;
  return o;
}

Batch make_batch(uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  Batch b;
  b.raw = {random_typed_block(12, 30, 4, 3, {}, rng), random_typed_block(30, 60, 4, 3, {3}, rng)};
  b.blocks = to_block_tensors(b.raw);
  std::vector<std::vector<int64_t>> pos(3);
  for (int64_t i = 0; i < 60; ++i) pos[static_cast<size_t>(rng() % 3)].push_back(i);
  const int64_t widths[] = {5, 8, 3};
  for (size_t t = 0; t < 3; ++t) {
    const auto n = static_cast<int64_t>(pos[t].size());
    RgcnInput in;
    in.positions = torch::tensor(pos[t], torch::kInt64);
    in.x = torch::randn({n, widths[t]});
    if (t == 1) in.x.requires_grad_();  // embedding rows: the caller reads their gradient
    b.inputs.push_back(in);
  }
  b.y = torch::randint(0, 3, {12}, torch::kInt64);
  return b;
}

TEST_F(RgcnTest, ModelEqualsHandAssembledReference) {
  for (int64_t bases : {int64_t{0}, int64_t{2}}) {
    Batch b = make_batch();
    RgcnOptions o = model_options();
    o.num_bases = bases;
    RgcnModel model(o);
    model.eval();
    const torch::Tensor logits = model.forward(b.blocks, b.inputs);
    ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{12, 3}));
    ASSERT_EQ(logits.scalar_type(), torch::kFloat32);
    const torch::Tensor g = torch::randn({12, 3});
    (logits * g).sum().backward();
    const torch::Tensor emb_grad = b.inputs[1].x.grad().clone();
    std::vector<torch::Tensor> param_grads;
    for (auto& p : model.parameters()) param_grads.push_back(p.grad().clone());
    b.inputs[1].x.mutable_grad().zero_();
    model.zero_grad();

    // By hand: each input row from its type, then conv, ReLU, conv with plain operators.
    auto params = model.named_parameters();
    std::vector<torch::Tensor> rows(60);
    for (size_t t = 0; t < 3; ++t) {
      torch::Tensor x = b.inputs[t].x;
      if (t != 1) {
        const std::string proj = "proj" + std::to_string(t);
        x = x.mm(params[proj + ".weight"].t()) + params[proj + ".bias"];
      }
      const auto pos = b.inputs[t].positions;
      for (int64_t k = 0; k < pos.size(0); ++k)
        rows[static_cast<size_t>(pos[k].item<int64_t>())] = x[k];
    }
    auto* conv0 = dynamic_cast<RelGraphConv*>(model.named_children()["conv0"].get());
    auto* conv1 = dynamic_cast<RelGraphConv*>(model.named_children()["conv1"].get());
    ASSERT_NE(conv0, nullptr);
    const torch::Tensor h = torch::relu(torch_conv(b.blocks[1], torch::stack(rows), *conv0));
    const torch::Tensor ref = torch_conv(b.blocks[0], h, *conv1);
    expect_close(logits, ref, 1e-5, "logits, bases " + std::to_string(bases));
    (ref * g).sum().backward();
    expect_close(emb_grad, b.inputs[1].x.grad(), 1e-5, "embedding gradient");
    EXPECT_GT(emb_grad.abs().sum().item<double>(), 0);
    const auto ps = model.parameters();
    for (size_t k = 0; k < ps.size(); ++k)
      expect_close(param_grads[k], ps[k].grad(), 1e-5, "parameter " + std::to_string(k));
  }
}

TEST_F(RgcnTest, ModelRejectsBadInputs) {
  Batch b = make_batch();
  RgcnModel model(model_options());
  EXPECT_THROW(model.forward({b.blocks[0]}, b.inputs), Error);
  EXPECT_THROW(model.forward(b.blocks, {b.inputs[0], b.inputs[1]}), Error);
  auto twice = b.inputs;
  twice[2].positions = twice[2].positions.clone();
  twice[2].positions[0] = b.inputs[0].positions[0];
  EXPECT_THROW(model.forward(b.blocks, twice), Error);
  auto wide = b.inputs;
  wide[0].x = torch::randn({wide[0].x.size(0), 6});
  EXPECT_THROW(model.forward(b.blocks, wide), Error);
  auto missing = b.inputs;
  missing[2] = RgcnInput{};
  EXPECT_THROW(model.forward(b.blocks, missing), Error);
  RgcnOptions o = model_options();
  o.type_dims.clear();
  EXPECT_THROW(RgcnModel{o}, Error);
  o = model_options();
  o.dropout = 1.0;
  EXPECT_THROW(RgcnModel{o}, Error);
}

// Logits and every gradient, after one training forward and backward with dropout.
std::vector<torch::Tensor> train_step(RgcnModel& model, Batch& b, uint64_t key) {
  model.train();
  model.zero_grad();
  if (b.inputs[1].x.grad().defined()) b.inputs[1].x.mutable_grad().zero_();
  model.set_dropout_key(key);
  const torch::Tensor logits = model.forward(b.blocks, b.inputs);
  torch::nn::functional::cross_entropy(logits, b.y).backward();
  std::vector<torch::Tensor> out = {logits.detach().clone(), b.inputs[1].x.grad().clone()};
  for (auto& p : model.parameters()) out.push_back(p.grad().clone());
  return out;
}

TEST_F(RgcnTest, BitIdenticalForAnyThreadCount) {
  Batch b = make_batch();
  RgcnOptions o = model_options();
  o.dropout = 0.5;
  o.num_bases = 2;
  RgcnModel model(o);
  const auto first = train_step(model, b, 9);
  const auto again = train_step(model, b, 9);
  torch::set_num_threads(2);
  const auto two = train_step(model, b, 9);
  torch::set_num_threads(1);
  const auto other_key = train_step(model, b, 10);
  for (size_t k = 0; k < first.size(); ++k) {
    EXPECT_TRUE(torch::equal(first[k], again[k])) << k;
    EXPECT_TRUE(torch::equal(first[k], two[k])) << k;
  }
  EXPECT_FALSE(torch::equal(first[0], other_key[0])) << "the key decides the masks";
}

TEST_F(RgcnTest, Bf16LogitsAreCloseToFp32) {
  Batch b = make_batch();
  RgcnOptions o = model_options();
  torch::manual_seed(1);
  RgcnModel fp32(o);
  o.precision = Precision::kBf16;
  torch::manual_seed(1);
  RgcnModel bf16(o);
  fp32.eval();
  bf16.eval();
  torch::NoGradGuard no_grad;
  const auto exact = fp32.forward(b.blocks, b.inputs);
  const auto half = bf16.forward(b.blocks, b.inputs);
  ASSERT_EQ(half.scalar_type(), torch::kFloat32);
  const double err = (half - exact).abs().max().item<double>();
  EXPECT_LT(err, 0.05 * exact.abs().max().item<double>());
  EXPECT_GT(err, 0) << "bf16 path not taken";
}

TEST_F(RgcnTest, OverfitsOneBatchAndUpdatesEmbeddings) {
  Batch b = make_batch();
  RgcnModel model(model_options());
  torch::Tensor emb = b.inputs[1].x;
  std::vector<torch::Tensor> params = model.parameters();
  params.push_back(emb);
  torch::optim::Adam opt(params, torch::optim::AdamOptions(0.02));
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model.forward(b.blocks, b.inputs), b.y);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.1 * first) << first << " -> " << last;
}

TEST_F(RgcnTest, SignatureAndFlopsFollowTheShape) {
  RgcnOptions o = model_options();
  RgcnModel a(o);
  o.num_bases = 2;
  RgcnModel with_bases(o);
  o = model_options();
  o.type_dims = {5, 0, 4};
  RgcnModel other_dims(o);
  EXPECT_EQ(a.config_signature()[0], RgcnModel::kSignatureTag);
  EXPECT_NE(a.config_signature(), with_bases.config_signature());
  EXPECT_NE(a.config_signature(), other_dims.config_signature());
  Batch b = make_batch();
  // Projections 2 * 2 * n_t * D_t * hidden; each layer 3 * 2 * (relation rows + num_dst
  // self rows) * in * out.
  double want = 0;
  want += 4.0 * static_cast<double>(b.inputs[0].positions.numel()) * 5 * 8;
  want += 4.0 * static_cast<double>(b.inputs[2].positions.numel()) * 3 * 8;
  want += 6.0 * static_cast<double>(b.blocks[1].num_relation_rows() + 30) * 8 * 8;
  want += 6.0 * static_cast<double>(b.blocks[0].num_relation_rows() + 12) * 8 * 3;
  EXPECT_DOUBLE_EQ(a.training_matmul_flops(b.blocks, b.inputs), want);
}

}  // namespace
}  // namespace partita::nn
