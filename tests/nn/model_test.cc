// GnnModel: layer/block pairing, gradients to every parameter, overfitting a fixed batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/gnn_model.h"

namespace partita::nn {
namespace {

// A fixed 2-hop batch: 16 seeds <- 40 nodes <- 100 input nodes, 8 features, 4 classes.
struct Batch {
  std::vector<BlockTensors> blocks;
  torch::Tensor x, y;
};

Batch make_batch() {
  std::mt19937_64 rng(42);
  std::vector<sample::Block> blocks = {testing::random_block(16, 40, 4, rng),
                                       testing::random_block(40, 100, 4, rng)};
  Batch b;
  b.blocks = to_block_tensors(blocks);
  b.x = torch::randn({100, 8});
  b.y = torch::randint(0, 4, {16}, torch::kInt64);
  return b;
}

GnnOptions options(ConvKind kind, NormKind norm = NormKind::kNone) {
  GnnOptions o;
  o.kind = kind;
  o.in_dim = 8;
  o.hidden = 32;
  o.out_dim = 4;
  o.layers = 2;
  o.heads = kind == ConvKind::kGat ? 4 : 1;
  o.norm = norm;
  return o;
}

std::string name(ConvKind k) {
  return k == ConvKind::kSage ? "sage" : k == ConvKind::kGcn ? "gcn" : "gat";
}

const ConvKind kKinds[] = {ConvKind::kSage, ConvKind::kGcn, ConvKind::kGat};

class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(3);
  }
};

TEST_F(ModelTest, LogitsHaveSeedRows) {
  Batch b = make_batch();
  for (ConvKind k : kKinds) {
    GnnModel model(options(k));
    auto out = model.forward(b.blocks, b.x);
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{16, 4})) << name(k);
  }
}

TEST_F(ModelTest, RejectsWrongBlockCountAndOptions) {
  Batch b = make_batch();
  GnnModel model(options(ConvKind::kSage));
  std::vector<BlockTensors> one = {b.blocks[0]};
  EXPECT_THROW(model.forward(one, b.x), Error);
  EXPECT_THROW(model.forward(b.blocks, torch::randn({40, 8})), Error);
  GnnOptions bad = options(ConvKind::kGat);
  bad.attention_dropout = 1.0;
  EXPECT_THROW(GnnModel{bad}, Error);
  bad = options(ConvKind::kSage);
  bad.layers = 0;
  EXPECT_THROW(GnnModel{bad}, Error);
}

TEST_F(ModelTest, GradientsReachEveryParameter) {
  Batch b = make_batch();
  for (ConvKind k : kKinds) {
    for (NormKind n : {NormKind::kNone, NormKind::kBatch, NormKind::kLayer}) {
      GnnOptions o = options(k, n);
      o.dropout = 0.5;
      GnnModel model(o);
      model.train();
      auto loss = torch::nn::functional::cross_entropy(model.forward(b.blocks, b.x), b.y);
      loss.backward();
      for (const auto& p : model.named_parameters()) {
        ASSERT_TRUE(p.value().grad().defined()) << name(k) << " " << p.key();
        EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0)
            << name(k) << " norm " << static_cast<int>(n) << " " << p.key();
      }
    }
  }
}

TEST_F(ModelTest, OverfitsOneBatch) {
  Batch b = make_batch();
  for (ConvKind k : kKinds) {
    torch::manual_seed(11);
    GnnModel model(options(k));
    torch::optim::Adam opt(model.parameters(), torch::optim::AdamOptions(0.01));
    double first = 0, last = 0;
    for (int step = 0; step < 200; ++step) {
      opt.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model.forward(b.blocks, b.x), b.y);
      loss.backward();
      opt.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    EXPECT_LT(last, 0.1 * first) << name(k) << ": " << first << " -> " << last;
  }
}

TEST_F(ModelTest, EvalIsDeterministic) {
  Batch b = make_batch();
  GnnOptions o = options(ConvKind::kGat, NormKind::kBatch);
  o.dropout = 0.5;
  GnnModel model(o);
  model.eval();
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(model.forward(b.blocks, b.x), model.forward(b.blocks, b.x)));
}

TEST_F(ModelTest, Bf16LogitsAreCloseToFp32) {
  Batch b = make_batch();
  for (ConvKind kind : kKinds) {
    GnnOptions o = options(kind);
    torch::manual_seed(1);
    GnnModel fp32(o);
    o.precision = Precision::kBf16;
    torch::manual_seed(1);
    GnnModel bf16(o);
    fp32.eval();
    bf16.eval();
    torch::NoGradGuard no_grad;
    const auto exact = fp32.forward(b.blocks, b.x);
    const auto half = bf16.forward(b.blocks, b.x);
    ASSERT_EQ(half.scalar_type(), torch::kFloat32) << name(kind) << ": logits stay fp32";
    const double err = (half - exact).abs().max().item<double>();
    const double scale = exact.abs().max().item<double>();
    EXPECT_LT(err, 0.05 * scale) << name(kind);
    EXPECT_GT(err, 0) << name(kind) << ": bf16 path not taken";
  }
}

TEST_F(ModelTest, DropoutKeyDecidesTheMasks) {
  Batch b = make_batch();
  for (ConvKind kind : kKinds) {
    GnnOptions o = options(kind);
    o.dropout = 0.5;
    GnnModel model(o);
    model.train();
    torch::NoGradGuard no_grad;
    model.set_dropout_key(5);
    const auto first = model.forward(b.blocks, b.x);
    const auto next = model.forward(b.blocks, b.x);  // the key moved on
    model.set_dropout_key(5);
    const auto again = model.forward(b.blocks, b.x);
    EXPECT_TRUE(torch::equal(first, again)) << name(kind);
    EXPECT_FALSE(torch::equal(first, next)) << name(kind);
  }
}

TEST_F(ModelTest, GatHiddenWidthIsPerHead) {
  GnnOptions o = options(ConvKind::kGat);  // hidden 32, 4 heads
  GnnModel model(o);
  const auto params = model.named_parameters();
  // Hidden layer: 4 heads of 32 features; output layer: one head of 4 classes.
  EXPECT_EQ(params["conv0.lin.weight"].sizes(), (std::vector<int64_t>{128, 8}));
  EXPECT_EQ(params["conv1.lin.weight"].sizes(), (std::vector<int64_t>{4, 128}));
  EXPECT_EQ(params["conv1.att_src"].sizes(), (std::vector<int64_t>{1, 4}));
}

}  // namespace
}  // namespace partita::nn
