// HAN (nn/han.h): HanConv against a brute-force reference written edge by edge with scalar
// torch ops (forward, and gradients through autograd on the reference in double), the
// metapath split, dst rows without edges of a metapath, HanModel's input permutation,
// bit-identical reruns under dropout, bf16 close to fp32, and the semantic scores summed
// over ranks (two threads as two ranks give the whole block's beta and gradients).
#include "partita/nn/han.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"

namespace partita::nn {
namespace {

using testing::random_typed_block;

struct HanParams {
  torch::Tensor w, att_src, att_dst, bias, sem_w, sem_b, q;
};

HanParams params_of(HanConv& conv, torch::ScalarType type, bool grad) {
  auto p = [&](const torch::Tensor& t) {
    return t.detach().to(type).clone().set_requires_grad(grad);
  };
  return {p(conv.lin->weight),      p(conv.att_src),        p(conv.att_dst),   p(conv.bias),
          p(conv.semantic->weight), p(conv.semantic->bias), p(conv.semantic_q)};
}

// The layer by its definition, one dst, metapath and head at a time, every neighbour list
// written out (self loop first): differentiable in x and in the parameters.
torch::Tensor reference_conv(const sample::Block& b, const torch::Tensor& x, const HanParams& p,
                             int64_t M, int64_t K, int64_t D, torch::Tensor* beta = nullptr) {
  const torch::Tensor h = torch::mm(x, p.w.t());  // [num_src, K * D]
  std::vector<torch::Tensor> z, w;
  for (int64_t m = 0; m < M; ++m) {
    std::vector<torch::Tensor> rows;
    for (int64_t i = 0; i < b.num_dst; ++i) {
      std::vector<int64_t> nbrs{i};
      for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k)
        if (b.etypes[k] == m) nbrs.push_back(b.indices[k]);
      std::vector<torch::Tensor> heads;
      for (int64_t k = 0; k < K; ++k) {
        const torch::Tensor hi = h[i].slice(0, k * D, (k + 1) * D);
        std::vector<torch::Tensor> e, hj;
        for (int64_t j : nbrs) {
          hj.push_back(h[j].slice(0, k * D, (k + 1) * D));
          e.push_back(torch::leaky_relu(
              torch::dot(p.att_dst[m][k], hi) + torch::dot(p.att_src[m][k], hj.back()), 0.2));
        }
        const torch::Tensor alpha = torch::softmax(torch::stack(e), 0);
        heads.push_back(torch::mv(torch::stack(hj).t(), alpha));
      }
      rows.push_back(torch::elu(torch::cat(heads) + p.bias[m]));
    }
    const torch::Tensor zm = torch::stack(rows);
    w.push_back(torch::mv(torch::tanh(torch::addmm(p.sem_b, zm, p.sem_w.t())), p.q).mean());
    z.push_back(zm);
  }
  const torch::Tensor bt = torch::softmax(torch::stack(w), 0);
  if (beta != nullptr) *beta = bt;
  torch::Tensor out = z[0] * bt[0];
  for (int64_t m = 1; m < M; ++m) out = out + z[m] * bt[m];
  return out;
}

class HanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(7);
  }
};

// 3 metapaths, metapath 2 without any edge, rows 0 and 5 without edges at all.
sample::Block test_block(std::mt19937_64& rng) {
  return random_typed_block(/*num_dst=*/7, /*num_src=*/12, /*num_relations=*/3,
                            /*max_per_relation=*/3, /*empty=*/{2}, rng);
}

TEST_F(HanTest, SplitByRelationKeepsEachMetapathsEdges) {
  std::mt19937_64 rng(1);
  const sample::Block b = random_typed_block(9, 15, 3, 4, {}, rng);
  const std::vector<BlockTensors> parts = split_by_relation(to_block_tensors(b), 4);
  ASSERT_EQ(parts.size(), 4u);
  for (int64_t m = 0; m < 4; ++m) {
    const BlockTensors& p = parts[m];
    EXPECT_FALSE(p.typed());
    EXPECT_EQ(p.num_dst, 9);
    EXPECT_EQ(p.num_src, 15);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      std::vector<int64_t> expected;
      for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k)
        if (b.etypes[k] == m) expected.push_back(b.indices[k]);
      const int64_t begin = p.indptr[i].item<int64_t>(), end = p.indptr[i + 1].item<int64_t>();
      std::vector<int64_t> got;
      for (int64_t k = begin; k < end; ++k) got.push_back(p.indices[k].item<int64_t>());
      EXPECT_EQ(got, expected) << "metapath " << m << " dst " << i;
    }
  }
  EXPECT_THROW(split_by_relation(to_block_tensors(b), 2), Error);  // 3 metapaths in the block
}

TEST_F(HanTest, ForwardMatchesReference) {
  std::mt19937_64 rng(2);
  const sample::Block b = test_block(rng);
  const int64_t M = 3, K = 2, D = 3;
  HanConv conv(5, D, K, M, 4, 0.0);
  const torch::Tensor x = torch::randn({b.num_src, 5});
  torch::Tensor beta;
  const torch::Tensor out = conv.forward(to_block_tensors(b), x, &beta);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{7, K * D}));
  torch::Tensor ref_beta;
  const torch::Tensor ref = reference_conv(
      b, x.to(torch::kFloat64), params_of(conv, torch::kFloat64, false), M, K, D, &ref_beta);
  EXPECT_TRUE(torch::allclose(out.to(torch::kFloat64), ref, 1e-5, 1e-5))
      << (out.to(torch::kFloat64) - ref).abs().max();
  EXPECT_TRUE(torch::allclose(beta.to(torch::kFloat64), ref_beta, 1e-5, 1e-6));
  EXPECT_NEAR(beta.sum().item<double>(), 1.0, 1e-6);
}

TEST_F(HanTest, GradientsMatchReferenceInDouble) {
  std::mt19937_64 rng(3);
  const sample::Block b = test_block(rng);
  const int64_t M = 3, K = 2, D = 2;
  HanConv conv(4, D, K, M, 3, 0.0);
  conv.to(torch::kFloat64);
  const torch::Tensor x0 = torch::randn({b.num_src, 4}, torch::kFloat64);
  const torch::Tensor r = torch::randn({b.num_dst, K * D}, torch::kFloat64);
  const torch::Tensor x = x0.clone().set_requires_grad(true);
  (conv.forward(to_block_tensors(b), x) * r).sum().backward();

  const HanParams p = params_of(conv, torch::kFloat64, true);
  const torch::Tensor xr = x0.clone().set_requires_grad(true);
  (reference_conv(b, xr, p, M, K, D) * r).sum().backward();
  auto close = [](const torch::Tensor& a, const torch::Tensor& e) {
    return torch::allclose(a, e, 1e-9, 1e-10);
  };
  EXPECT_TRUE(close(x.grad(), xr.grad()));
  EXPECT_TRUE(close(conv.lin->weight.grad(), p.w.grad()));
  EXPECT_TRUE(close(conv.att_src.grad(), p.att_src.grad()));
  EXPECT_TRUE(close(conv.att_dst.grad(), p.att_dst.grad()));
  EXPECT_TRUE(close(conv.bias.grad(), p.bias.grad()));
  EXPECT_TRUE(close(conv.semantic->weight.grad(), p.sem_w.grad()));
  EXPECT_TRUE(close(conv.semantic->bias.grad(), p.sem_b.grad()));
  EXPECT_TRUE(close(conv.semantic_q.grad(), p.q.grad()));
  // Metapath 2 has no edges: its attention vectors see no gradient (self loops only).
  EXPECT_EQ(conv.att_src.grad()[2].abs().max().item<double>(), 0.0);
}

TEST_F(HanTest, DstWithoutEdgesOfAMetapathKeepsItsOwnRow) {
  // One dst, one metapath, no edges: z = ELU(h_0 + b), beta = 1.
  sample::Block b;
  b.num_dst = 1;
  b.num_src = 2;
  b.indptr = {0, 0};
  b.src_nodes = {0, 1};
  HanConv conv(3, 2, 2, 1, 4, 0.0);
  const torch::Tensor x = torch::randn({2, 3});
  const torch::Tensor out = conv.forward(to_block_tensors(b), x);
  const torch::Tensor expected = torch::elu(conv.lin->forward(x.slice(0, 0, 1)) + conv.bias[0]);
  EXPECT_TRUE(torch::allclose(out, expected, 1e-6, 1e-6));
}

struct TwoHops {
  std::vector<sample::Block> blocks;
  std::vector<BlockTensors> tensors;
};

TwoHops two_hops(std::mt19937_64& rng) {
  TwoHops t;
  t.blocks.push_back(random_typed_block(6, 14, 3, 3, {}, rng));
  t.blocks.push_back(random_typed_block(14, 30, 3, 3, {1}, rng));
  t.tensors = to_block_tensors(t.blocks);
  return t;
}

HanOptions model_options() {
  HanOptions o;
  o.num_metapaths = 3;
  o.in_dim = 5;
  o.head_dim = 4;
  o.heads = 2;
  o.semantic_dim = 6;
  o.out_dim = 3;
  o.layers = 2;
  o.dropout = 0.3;
  o.attention_dropout = 0.3;
  return o;
}

TEST_F(HanTest, ModelPermutesInputsAndMatchesItsLayers) {
  std::mt19937_64 rng(4);
  const TwoHops t = two_hops(rng);
  HanModel model(model_options());
  model.eval();
  const torch::Tensor x = torch::randn({30, 5});
  const torch::Tensor perm = torch::randperm(30, torch::kInt64);
  // Rows given in the order perm: row k belongs at input row perm[k].
  const torch::Tensor logits = model.forward(t.tensors, {perm, x.index_select(0, perm)});
  const torch::Tensor h = model.layer(0).forward(t.tensors[1], x);
  const torch::Tensor expected =
      model.classifier()->forward(model.layer(1).forward(t.tensors[0], h));
  EXPECT_TRUE(torch::allclose(logits, expected, 1e-6, 1e-6));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{6, 3}));
  // A position twice is refused.
  torch::Tensor bad = perm.clone();
  bad[0] = bad[1];
  EXPECT_THROW(model.forward(t.tensors, {bad, x}), Error);
  EXPECT_THROW(model.forward({t.tensors[0]}, {perm, x}), Error);
}

TEST_F(HanTest, TrainingRerunsAreBitIdentical) {
  std::mt19937_64 rng(5);
  const TwoHops t = two_hops(rng);
  const torch::Tensor x = torch::randn({30, 5});
  const torch::Tensor pos = torch::arange(30, torch::kInt64);
  auto run = [&](uint64_t key) {
    torch::manual_seed(11);
    HanModel model(model_options());
    model.train();
    model.set_dropout_key(key);
    torch::Tensor loss = model.forward(t.tensors, {pos, x}).pow(2).sum();
    loss.backward();
    return std::make_pair(loss.detach(), model.layer(0).lin->weight.grad().clone());
  };
  const auto a = run(42), b = run(42), c = run(43);
  EXPECT_TRUE(torch::equal(a.first, b.first));
  EXPECT_TRUE(torch::equal(a.second, b.second));
  EXPECT_FALSE(torch::equal(a.first, c.first));  // another key, other masks
}

TEST_F(HanTest, Bf16IsCloseToFp32) {
  std::mt19937_64 rng(6);
  const TwoHops t = two_hops(rng);
  const torch::Tensor x = torch::randn({30, 5});
  const torch::Tensor pos = torch::arange(30, torch::kInt64);
  HanOptions o = model_options();
  torch::manual_seed(3);
  HanModel fp32(o);
  o.precision = Precision::kBf16;
  torch::manual_seed(3);
  HanModel bf16(o);
  fp32.eval();
  bf16.eval();
  const torch::Tensor a = fp32.forward(t.tensors, {pos, x});
  const torch::Tensor b = bf16.forward(t.tensors, {pos, x});
  EXPECT_EQ(b.scalar_type(), torch::kFloat32);
  EXPECT_FALSE(torch::equal(a, b));  // it did run in bf16
  EXPECT_TRUE(torch::allclose(a, b, 0.05, 0.05)) << (a - b).abs().max();
}

TEST_F(HanTest, RefusesBadOptions) {
  HanOptions o = model_options();
  o.layers = 0;
  EXPECT_THROW(HanModel{o}, Error);
  o = model_options();
  o.dropout = 1.0;
  EXPECT_THROW(HanModel{o}, Error);
  EXPECT_THROW(HanConv(4, 2, 2, 3, 4, 1.0), Error);
  EXPECT_THROW(HanConv(4, 2, 0, 3, 4, 0.0), Error);
}

// A RankSum for two threads as two ranks: each call waits for the other rank's call of the
// same round and returns rank 0's values plus rank 1's.
class TwoRankSum {
 public:
  RankSum of_rank(int r) {
    return [this, r](std::vector<double>& values) { exchange(r, values); };
  }

 private:
  void exchange(int r, std::vector<double>& values) {
    std::unique_lock<std::mutex> lock(mutex_);
    const int64_t round = round_;
    parts_[r] = values;
    if (++arrived_ == 2) {
      ASSERT_EQ(parts_[0].size(), parts_[1].size()) << "the ranks' sums differ in size";
      sum_ = parts_[0];
      for (size_t i = 0; i < sum_.size(); ++i) sum_[i] += parts_[1][i];
      arrived_ = 0;
      ++round_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return round_ != round; });
    }
    values = sum_;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<double> parts_[2];
  std::vector<double> sum_;
  int arrived_ = 0;
  int64_t round_ = 0;
};

// The block of a rank that holds dst rows `rows` of b: those rows first (as its dst), then
// every other src node of b; src_of[k] is b's src index of the rank's src k.
struct RankBlock {
  sample::Block block;
  std::vector<int64_t> src_of;
};

RankBlock rank_block(const sample::Block& b, const std::vector<int64_t>& rows) {
  RankBlock r;
  std::vector<int64_t> local(static_cast<size_t>(b.num_src), -1);
  r.src_of = rows;
  for (size_t i = 0; i < rows.size(); ++i) local[rows[i]] = static_cast<int64_t>(i);
  for (int64_t v = 0; v < b.num_src; ++v) {
    if (local[v] >= 0) continue;
    local[v] = static_cast<int64_t>(r.src_of.size());
    r.src_of.push_back(v);
  }
  sample::Block& s = r.block;
  s.num_dst = static_cast<int64_t>(rows.size());
  s.num_src = b.num_src;
  s.indptr.push_back(0);
  for (int64_t row : rows) {
    for (int64_t k = b.indptr[row]; k < b.indptr[row + 1]; ++k) {
      s.indices.push_back(local[b.indices[k]]);
      s.etypes.push_back(b.etypes[k]);
    }
    s.indptr.push_back(s.num_edges());
  }
  for (int64_t v : r.src_of) s.src_nodes.push_back(b.src_nodes[v]);
  return r;
}

TEST_F(HanTest, ScoresSummedOverTwoRanksGiveTheWholeBlocksBetaAndGradients) {
  // Rank 0 holds dst rows 0-3, rank 1 rows 3-6: row 3 on both, with weight 1/2 on each
  // (its loss counted on rank 0 only). In float64, so the comparison is tight.
  std::mt19937_64 rng(8);
  const sample::Block b = test_block(rng);
  const int64_t M = 3, K = 2, D = 3;
  const std::vector<std::vector<int64_t>> rows{{0, 1, 2, 3}, {3, 4, 5, 6}};
  const std::vector<std::vector<double>> weights{{1, 1, 1, 0.5}, {0.5, 1, 1, 1}};
  const std::vector<std::vector<double>> counted{{1, 1, 1, 1}, {0, 1, 1, 1}};
  const torch::Tensor x = torch::randn({b.num_src, 5}, torch::kFloat64);
  const torch::Tensor r = torch::randn({b.num_dst, K * D}, torch::kFloat64);
  auto make_conv = [&] {
    torch::manual_seed(9);
    auto conv = std::make_shared<HanConv>(5, D, K, M, 4, 0.0);
    conv->to(torch::kFloat64);
    conv->train();
    return conv;
  };

  // One process, every row once.
  const auto whole = make_conv();
  const torch::Tensor xw = x.clone().set_requires_grad(true);
  torch::Tensor beta;
  const torch::Tensor out = whole->forward(to_block_tensors(b), xw, &beta);
  (out * r).sum().backward();

  TwoRankSum sum;
  std::vector<std::shared_ptr<HanConv>> convs{make_conv(), make_conv()};
  std::vector<torch::Tensor> outs(2), betas(2), xs(2);
  std::vector<RankBlock> blocks{rank_block(b, rows[0]), rank_block(b, rows[1])};
  auto run_rank = [&](int k) {
    HanConv& conv = *convs[k];
    conv.set_rank_sum(sum.of_rank(k));
    const torch::Tensor src = torch::tensor(blocks[k].src_of, torch::kInt64);
    const torch::Tensor dst = torch::tensor(rows[k], torch::kInt64);
    xs[k] = x.index_select(0, src).set_requires_grad(true);
    outs[k] = conv.forward(to_block_tensors(blocks[k].block), xs[k], &betas[k],
                           torch::tensor(weights[k], torch::kFloat64));
    const torch::Tensor mask = torch::tensor(counted[k], torch::kFloat64).unsqueeze(1);
    (outs[k] * r.index_select(0, dst) * mask).sum().backward();
  };
  std::thread other(run_rank, 1);
  run_rank(0);
  other.join();

  auto close = [](const torch::Tensor& a, const torch::Tensor& e) {
    return torch::allclose(a, e, 1e-10, 1e-12);
  };
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(close(betas[k], beta)) << "rank " << k << ": " << betas[k] << " vs " << beta;
    EXPECT_TRUE(close(outs[k], out.index_select(0, torch::tensor(rows[k], torch::kInt64))));
  }
  // The parameters' gradients summed over the ranks (the trainer's allreduce) are the whole
  // block's, and so are the inputs' (each rank's input rows added where they came from).
  auto summed = [&](auto grad_of) { return grad_of(*convs[0]) + grad_of(*convs[1]); };
  EXPECT_TRUE(
      close(summed([](HanConv& c) { return c.lin->weight.grad(); }), whole->lin->weight.grad()));
  EXPECT_TRUE(close(summed([](HanConv& c) { return c.att_src.grad(); }), whole->att_src.grad()));
  EXPECT_TRUE(close(summed([](HanConv& c) { return c.att_dst.grad(); }), whole->att_dst.grad()));
  EXPECT_TRUE(close(summed([](HanConv& c) { return c.bias.grad(); }), whole->bias.grad()));
  EXPECT_TRUE(close(summed([](HanConv& c) { return c.semantic->weight.grad(); }),
                    whole->semantic->weight.grad()));
  EXPECT_TRUE(close(summed([](HanConv& c) { return c.semantic->bias.grad(); }),
                    whole->semantic->bias.grad()));
  EXPECT_TRUE(
      close(summed([](HanConv& c) { return c.semantic_q.grad(); }), whole->semantic_q.grad()));
  torch::Tensor x_grad = torch::zeros_like(x);
  for (int k = 0; k < 2; ++k)
    x_grad.index_add_(0, torch::tensor(blocks[k].src_of, torch::kInt64), xs[k].grad());
  EXPECT_TRUE(close(x_grad, xw.grad()));
}

TEST_F(HanTest, IdleStepMakesATrainingStepsRankSums) {
  // One rank: the sum is the identity; record the size of every call.
  std::vector<size_t> calls;
  RankSum record = [&calls](std::vector<double>& values) { calls.push_back(values.size()); };
  std::mt19937_64 rng(10);
  const TwoHops t = two_hops(rng);
  const torch::Tensor x = torch::randn({30, 5});
  const torch::Tensor pos = torch::arange(30, torch::kInt64);
  HanOptions o = model_options();
  o.dropout = 0;
  o.attention_dropout = 0;
  torch::manual_seed(12);
  HanModel plain(o);
  torch::manual_seed(12);
  HanModel model(o);
  model.set_rank_sum(record);
  model.train();
  plain.train();
  const torch::Tensor logits = model.forward(t.tensors, {pos, x});
  // On one rank the summed scores are the local mean.
  EXPECT_TRUE(torch::allclose(logits, plain.forward(t.tensors, {pos, x}), 1e-5, 1e-6));
  const std::vector<size_t> forward_calls = calls;
  logits.pow(2).sum().backward();
  // M + 1 values per layer in forward, then as many per layer in backward.
  EXPECT_EQ(calls, std::vector<size_t>(4, 4));
  EXPECT_EQ(forward_calls.size(), 2u);
  const std::vector<size_t> step = calls;
  calls.clear();
  model.idle_training_step();
  EXPECT_EQ(calls, step);
  // Eval mode sums nothing, and neither does an idle step.
  calls.clear();
  model.eval();
  model.forward(t.tensors, {pos, x});
  model.idle_training_step();
  EXPECT_TRUE(calls.empty());
}

}  // namespace
}  // namespace partita::nn
