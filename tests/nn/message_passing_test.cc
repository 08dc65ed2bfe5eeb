// The fused kernels (aggregate, gat_edge_softmax, counter_dropout) against the
// operator-based formulas they replaced (index_select + index_add_), against per-node brute
// force, and against central finite differences in double; plus edge cases (dst without
// in-edges, src without out-edges, duplicate sources) and thread-count invariance.
#include "partita/nn/message_passing.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/block_transfer.h"
#include "partita/nn/dropout.h"

namespace partita::nn {
namespace {

// A block with every edge case: dst 0 and 5 have no in-edges, dst 2 lists src 4 three times,
// src 7 has no out-edges; plus random rows.
sample::Block edge_case_block() {
  sample::Block b;
  b.num_dst = 6;
  b.num_src = 9;
  b.indptr = {0, 0, 2, 6, 7, 9, 9};
  b.indices = {1, 8, 4, 4, 0, 4, 2, 5, 6};
  b.src_nodes.resize(9);
  return b;
}

// The operator-based aggregation the fused kernel replaces (per-edge rows materialized).
torch::Tensor reference_aggregate(const BlockTensors& b, const torch::Tensor& x,
                                  const torch::Tensor& w) {
  const int64_t heads = w.dim() == 2 ? w.size(1) : 1;
  const int64_t width = x.size(1);
  auto rows = x.index_select(0, b.indices).view({b.num_edges(), heads, width / heads});
  auto weighted = (rows * w.view({b.num_edges(), heads, 1})).view({b.num_edges(), width});
  return torch::zeros({b.num_dst, width}, x.options()).index_add(0, b.edge_dst, weighted);
}

// The operator-based GAT softmax the fused kernel replaces.
torch::Tensor reference_softmax(const BlockTensors& b, const torch::Tensor& ss,
                                const torch::Tensor& sd) {
  auto e = torch::leaky_relu(ss.index_select(0, b.indices) + sd.index_select(0, b.edge_dst), 0.2);
  auto max =
      torch::full({b.num_dst, ss.size(1)}, -std::numeric_limits<double>::infinity(), e.options())
          .index_reduce(0, b.edge_dst, e.detach(), "amax", true);
  auto ex = (e - max.index_select(0, b.edge_dst)).exp();
  auto denom = torch::zeros({b.num_dst, ss.size(1)}, e.options()).index_add(0, b.edge_dst, ex);
  return ex / denom.index_select(0, b.edge_dst);
}

// Central finite differences of f (a scalar function of `x`, double) at every element.
torch::Tensor numeric_grad(const std::function<double(const torch::Tensor&)>& f,
                           const torch::Tensor& x, double eps = 1e-6) {
  torch::NoGradGuard no_grad;
  torch::Tensor g = torch::zeros_like(x);
  torch::Tensor xc = x.detach().clone();
  auto flat = xc.view(-1);
  auto gflat = g.view(-1);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const double v = flat[i].item<double>();
    flat[i] = v + eps;
    const double up = f(xc);
    flat[i] = v - eps;
    const double down = f(xc);
    flat[i] = v;
    gflat[i] = (up - down) / (2 * eps);
  }
  return g;
}

class MessagePassingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(5);
    block_ = to_block_tensors(edge_case_block());
  }
  BlockTensors block_;
};

TEST_F(MessagePassingTest, TransposedBlockListsEveryEdgeBySrc) {
  // src 0, 1, 2 have one edge each, src 3 none; src 4 is the source of edges 2, 3, 5 (in
  // that order); src 7 of none.
  const auto ptr = block_.t_indptr;
  EXPECT_EQ(ptr[4].item<int64_t>(), 3);
  EXPECT_EQ(ptr[5].item<int64_t>() - ptr[4].item<int64_t>(), 3);
  EXPECT_TRUE(torch::equal(block_.t_eid.slice(0, 3, 6), torch::tensor({2, 3, 5})));
  EXPECT_TRUE(torch::equal(block_.t_dst.slice(0, 3, 6), torch::tensor({2, 2, 2})));
  EXPECT_EQ(ptr[8].item<int64_t>(), ptr[7].item<int64_t>());
  EXPECT_EQ(ptr[9].item<int64_t>(), block_.num_edges());
}

TEST_F(MessagePassingTest, AggregateMatchesBruteForce) {
  const auto x = torch::randn({9, 5});
  const auto w = torch::rand({block_.num_edges()});
  const auto out = aggregate(block_, x, w);
  const auto b = edge_case_block();
  for (int64_t i = 0; i < b.num_dst; ++i) {
    auto expect = torch::zeros({5});
    for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k) expect += w[k] * x[b.indices[k]];
    EXPECT_TRUE(torch::allclose(out[i], expect, 1e-6, 1e-6)) << "dst " << i;
  }
  EXPECT_TRUE(torch::equal(out[0], torch::zeros({5})));  // no in-edges
  const auto mean = aggregate_mean(block_, x);
  EXPECT_TRUE(torch::allclose(mean[2], (3 * x[4] + x[0]) / 4, 1e-6, 1e-6));
  EXPECT_TRUE(torch::equal(mean[5], torch::zeros({5})));
}

TEST_F(MessagePassingTest, AggregateMatchesOperatorsValuesAndGradients) {
  std::mt19937_64 rng(9);
  for (const auto& b : {block_, to_block_tensors(testing::random_block(50, 120, 7, rng))}) {
    for (int64_t heads : {1, 3}) {
      auto x = torch::randn({b.num_src, 6}, torch::requires_grad());
      auto w = heads == 1 ? torch::rand({b.num_edges()}, torch::requires_grad())
                          : torch::rand({b.num_edges(), heads}, torch::requires_grad());
      auto x2 = x.detach().clone().requires_grad_();
      auto w2 = w.detach().clone().requires_grad_();
      const auto r = torch::randn({b.num_dst, 6});
      auto got = aggregate(b, x, w);
      auto want = reference_aggregate(b, x2, w2);
      EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6)) << "heads " << heads;
      (got * r).sum().backward();
      (want * r).sum().backward();
      EXPECT_TRUE(torch::allclose(x.grad(), x2.grad(), 1e-5, 1e-6)) << "heads " << heads;
      EXPECT_TRUE(torch::allclose(w.grad(), w2.grad(), 1e-5, 1e-6)) << "heads " << heads;
    }
  }
}

TEST_F(MessagePassingTest, AggregateGradientsMatchFiniteDifferencesInDouble) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  const auto x = torch::randn({9, 4}, opts);
  const auto w = torch::rand({block_.num_edges(), 2}, opts);
  const auto r = torch::randn({6, 4}, opts);
  auto xg = x.clone().requires_grad_();
  auto wg = w.clone().requires_grad_();
  (aggregate(block_, xg, wg) * r).sum().backward();
  auto fx = [&](const torch::Tensor& v) {
    return (aggregate(block_, v, w) * r).sum().item<double>();
  };
  auto fw = [&](const torch::Tensor& v) {
    return (aggregate(block_, x, v) * r).sum().item<double>();
  };
  EXPECT_TRUE(torch::allclose(xg.grad(), numeric_grad(fx, x), 1e-6, 1e-7));
  EXPECT_TRUE(torch::allclose(wg.grad(), numeric_grad(fw, w), 1e-6, 1e-7));
}

TEST_F(MessagePassingTest, GatSoftmaxMatchesOperatorsAndFiniteDifferences) {
  // Self loops first: every dst has an in-edge, as GATConv uses it.
  const BlockTensors looped = with_self_loops(block_);
  ASSERT_EQ(looped.num_edges(), block_.num_edges() + block_.num_dst);
  for (auto type : {torch::kFloat32, torch::kFloat64}) {
    const auto opts = torch::TensorOptions().dtype(type);
    auto ss = torch::randn({9, 3}, opts).requires_grad_();
    auto sd = torch::randn({6, 3}, opts).requires_grad_();
    auto ss2 = ss.detach().clone().requires_grad_();
    auto sd2 = sd.detach().clone().requires_grad_();
    const auto r = torch::randn({looped.num_edges(), 3}, opts);
    auto got = gat_edge_softmax(looped, ss, sd, 0.2);
    auto want = reference_softmax(looped, ss2, sd2);
    EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6));
    (got * r).sum().backward();
    (want * r).sum().backward();
    EXPECT_TRUE(torch::allclose(ss.grad(), ss2.grad(), 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(sd.grad(), sd2.grad(), 1e-5, 1e-6));
    if (type != torch::kFloat64) continue;
    const auto s0 = ss.detach(), d0 = sd.detach();
    auto fs = [&](const torch::Tensor& v) {
      return (gat_edge_softmax(looped, v, d0, 0.2) * r).sum().item<double>();
    };
    auto fd = [&](const torch::Tensor& v) {
      return (gat_edge_softmax(looped, s0, v, 0.2) * r).sum().item<double>();
    };
    EXPECT_TRUE(torch::allclose(ss.grad(), numeric_grad(fs, s0), 1e-6, 1e-7));
    EXPECT_TRUE(torch::allclose(sd.grad(), numeric_grad(fd, d0), 1e-6, 1e-7));
  }
}

TEST_F(MessagePassingTest, Bf16AggregateIsCloseToFp32) {
  std::mt19937_64 rng(3);
  const auto b = to_block_tensors(testing::random_block(200, 500, 10, rng));
  const auto x = torch::randn({500, 64});
  const auto exact = aggregate_mean(b, x);
  const auto half = aggregate_mean(b, x.to(torch::kBFloat16));
  ASSERT_EQ(half.scalar_type(), torch::kBFloat16);
  // bf16 inputs carry 8 bits of mantissa: relative error ~ 2^-8 per term.
  EXPECT_TRUE(torch::allclose(half.to(torch::kFloat32), exact, 2e-2, 2e-2));
  EXPECT_FALSE(torch::equal(half.to(torch::kFloat32), exact)) << "bf16 path not taken";
}

TEST_F(MessagePassingTest, ResultsDoNotDependOnThreadCount) {
  std::mt19937_64 rng(4);
  const auto b = to_block_tensors(testing::random_block(3000, 5000, 12, rng));
  const auto x = torch::randn({5000, 32});
  const auto w = torch::rand({b.num_edges()});
  auto run = [&](int threads) {
    torch::set_num_threads(threads);
    auto xg = x.clone().requires_grad_();
    auto out = aggregate(b, xg, w);
    out.pow(2).sum().backward();
    auto drop = counter_dropout(x, 0.3, 77);
    return std::vector<torch::Tensor>{out.detach(), xg.grad(), drop};
  };
  const auto one = run(1);
  for (int threads : {2, 3}) {
    const auto many = run(threads);
    torch::set_num_threads(1);
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(torch::equal(one[i], many[i])) << i << ", " << threads << " threads";
  }
}

TEST_F(MessagePassingTest, BlockTensorsDoNotDependOnThreadCount) {
  // 300 K edges: the transpose splits them into one chunk per thread (up to 9 chunks).
  std::mt19937_64 rng(6);
  const sample::Block raw = testing::random_block(30000, 40000, 10, rng);
  auto build = [&](int threads) {
    torch::set_num_threads(threads);
    return to_block_tensors(raw);
  };
  const BlockTensors one = build(1);
  torch::set_num_threads(1);
  // Every src row lists its edges in increasing edge id, each edge once.
  const int64_t* ptr = one.t_indptr.data_ptr<int64_t>();
  const int64_t* eid = one.t_eid.data_ptr<int64_t>();
  ASSERT_EQ(ptr[one.num_src], one.num_edges());
  for (int64_t j = 0; j < one.num_src; ++j)
    for (int64_t k = ptr[j] + 1; k < ptr[j + 1]; ++k) ASSERT_LT(eid[k - 1], eid[k]) << j;
  for (int threads : {2, 3, 4}) {
    const BlockTensors many = build(threads);
    torch::set_num_threads(1);
    for (auto [a, b] : {std::pair{one.edge_dst, many.edge_dst},
                        {one.deg_src, many.deg_src},
                        {one.t_indptr, many.t_indptr},
                        {one.t_dst, many.t_dst},
                        {one.t_eid, many.t_eid},
                        {one.deg_dst, many.deg_dst}})
      EXPECT_TRUE(torch::equal(a, b)) << threads << " threads";
  }
}

// for_each_tensor visits each of BlockTensors' 17 tensors once, by name; move_blocks moves
// every defined one (typed fields and the extra tensor included) as views of one buffer,
// values unchanged, and refuses what is not int64 on the CPU.
TEST(BlockRoute, MoveBlocksPacksEveryDefinedFieldIntoOneBuffer) {
  std::mt19937_64 rng(7);
  const std::vector<sample::Block> raws = {testing::random_typed_block(6, 20, 3, 2, {}, rng),
                                           testing::random_typed_block(20, 50, 3, 2, {1}, rng)};
  const std::vector<BlockTensors> want = to_block_tensors(raws);
  std::vector<BlockTensors> got = want;
  std::vector<std::string> names;
  for_each_tensor([&names](const char* name, const torch::Tensor&) { names.push_back(name); },
                  want[0]);
  EXPECT_EQ(names.size(), 17u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 17u);
  torch::Tensor extra = torch::arange(50, torch::kInt64);
  move_blocks(got, &extra, transfer_to(torch::kCPU));
  EXPECT_TRUE(torch::equal(extra, torch::arange(50, torch::kInt64)));
  int moved = 0;
  for (size_t b = 0; b < got.size(); ++b) {
    for_each_tensor(
        [&](const char* name, const torch::Tensor& g, const torch::Tensor& w) {
          ASSERT_EQ(g.defined(), w.defined()) << name;
          if (!g.defined()) return;
          ++moved;
          EXPECT_TRUE(g.is_alias_of(extra)) << name << " not in the one buffer";
          EXPECT_NE(g.data_ptr(), w.data_ptr()) << name;
          EXPECT_TRUE(torch::equal(g, w)) << name;
        },
        got[b], want[b]);
  }
  EXPECT_EQ(moved, 2 * 15) << "every field but graph_deg";
  std::vector<BlockTensors> floats = {want[0]};
  floats[0].graph_deg = torch::ones({want[0].num_src});
  EXPECT_THROW(move_blocks(floats, nullptr, transfer_to(torch::kCPU)), Error);
}

TEST_F(MessagePassingTest, RejectsBadShapes) {
  EXPECT_THROW(aggregate(block_, torch::randn({8, 4})), Error);
  EXPECT_THROW(aggregate(block_, torch::randn({9, 4}), torch::rand({block_.num_edges() + 1})),
               Error);
  EXPECT_THROW(aggregate(block_, torch::randn({9, 4}), torch::rand({block_.num_edges(), 3})),
               Error);
  EXPECT_THROW(aggregate(block_, torch::randint(0, 3, {9, 4}, torch::kInt64)), Error);
  EXPECT_THROW(gat_edge_softmax(block_, torch::randn({9, 2}), torch::randn({6, 3})), Error);
}

TEST(CounterDropout, MaskIsAFunctionOfKeyAndKeepsOneMinusP) {
  const auto x = torch::ones({1000, 1000});
  const auto a = counter_dropout(x, 0.3, 1);
  const auto b = counter_dropout(x, 0.3, 1);
  const auto c = counter_dropout(x, 0.3, 2);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, c));
  const double kept = a.ne(0).to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(kept, 0.7, 0.002);  // 10^6 draws: 4.6 standard deviations
  // Kept values are scaled by 1 / (1 - p); the others are 0.
  EXPECT_TRUE(torch::allclose(a.masked_select(a.ne(0)), torch::full({1}, 1 / 0.7f)));
  // Two keys' masks are uncorrelated: P(both kept) ~ 0.49.
  const double both = (a.ne(0) & c.ne(0)).to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(both, 0.49, 0.003);
  EXPECT_TRUE(torch::equal(counter_dropout(x, 0.0, 1), x));
  EXPECT_THROW(counter_dropout(x, 1.0, 1), Error);
}

TEST(CounterDropout, BackwardUsesTheForwardMaskInEveryPrecision) {
  for (auto type : {torch::kFloat32, torch::kBFloat16, torch::kFloat64}) {
    // No zero inputs, so y != 0 exactly where kept (randn draws an exact 0 now and then).
    const auto sign = torch::randint(0, 2, {300, 70}).mul(2).sub(1);
    auto x = (torch::rand({300, 70}) + 0.5).mul(sign).to(type).requires_grad_();
    auto y = counter_dropout(x, 0.5, 42);
    y.backward(torch::ones_like(y));
    // d y / d x = 2 where kept, 0 where dropped; y = 2x where kept.
    EXPECT_TRUE(torch::equal(x.grad().ne(0), y.ne(0))) << c10::toString(type);
    EXPECT_TRUE(torch::equal(y, x.detach() * x.grad())) << c10::toString(type);
  }
  // The same key drops the same positions in fp32 and bf16.
  const auto x = torch::rand({100, 100}) + 1;
  EXPECT_TRUE(torch::equal(counter_dropout(x, 0.5, 9).ne(0),
                           counter_dropout(x.to(torch::kBFloat16), 0.5, 9).ne(0)));
}

}  // namespace
}  // namespace partita::nn
