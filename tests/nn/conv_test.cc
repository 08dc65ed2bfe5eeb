// Each conv against a brute-force per-node computation with the same weights.
#include "partita/nn/conv.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"

namespace partita::nn {
namespace {

using testing::tiny_block;

struct Edges {
  std::vector<std::vector<int64_t>> in;  // in-neighbors (src ids) of each dst
  std::vector<int64_t> deg_src;
};

Edges edges_of(const sample::Block& b) {
  Edges e;
  e.in.resize(b.num_dst);
  e.deg_src.assign(b.num_src, 0);
  for (int64_t i = 0; i < b.num_dst; ++i) {
    for (int64_t k = b.indptr[i]; k < b.indptr[i + 1]; ++k) {
      e.in[i].push_back(b.indices[k]);
      ++e.deg_src[b.indices[k]];
    }
  }
  return e;
}

class ConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(7);
    block_ = tiny_block();
    bt_ = to_block_tensors(block_);
    x_ = torch::randn({block_.num_src, 4});
  }
  sample::Block block_;
  BlockTensors bt_;
  torch::Tensor x_;
};

TEST_F(ConvTest, BlockTensorsMatchBlock) {
  EXPECT_TRUE(torch::equal(bt_.edge_dst, torch::tensor({0, 0, 1, 1, 1}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(bt_.deg_dst, torch::tensor({2, 3, 0}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(bt_.deg_src, torch::tensor({1, 1, 0, 2, 1}, torch::kInt64)));
  EXPECT_EQ(bt_.num_edges(), 5);
}

TEST_F(ConvTest, BlockTensorsRejectBadBlocks) {
  sample::Block b = tiny_block();
  b.indices[0] = 5;
  EXPECT_THROW(to_block_tensors(b), Error);
  b = tiny_block();
  b.indptr = {0, 2, 5};
  EXPECT_THROW(to_block_tensors(b), Error);
  b = tiny_block();
  b.indptr = {0, 3, 2, 5};
  EXPECT_THROW(to_block_tensors(b), Error);
}

TEST_F(ConvTest, SageMatchesBruteForce) {
  SAGEConv conv(4, 3);
  torch::NoGradGuard no_grad;
  auto out = conv.forward(bt_, x_);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{3, 3}));
  Edges e = edges_of(block_);
  auto wn = conv.lin_neigh->weight, bn = conv.lin_neigh->bias, wr = conv.lin_root->weight;
  for (int64_t i = 0; i < block_.num_dst; ++i) {
    auto mean = torch::zeros({4});
    for (int64_t j : e.in[i]) mean += x_[j];
    if (!e.in[i].empty()) mean /= static_cast<double>(e.in[i].size());
    auto expect = wn.matmul(mean) + bn + wr.matmul(x_[i]);
    EXPECT_TRUE(torch::allclose(out[i], expect, 1e-5, 1e-5)) << "dst " << i;
  }
}

TEST_F(ConvTest, GcnMatchesHandFormula) {
  GCNConv conv(4, 3);
  torch::NoGradGuard no_grad;
  conv.bias.uniform_(-1, 1);
  auto out = conv.forward(bt_, x_);
  Edges e = edges_of(block_);
  auto w = conv.lin->weight;
  for (int64_t i = 0; i < block_.num_dst; ++i) {
    std::vector<int64_t> nbrs = e.in[i];
    nbrs.push_back(i);  // self loop
    double dd = static_cast<double>(e.in[i].size());
    auto expect = conv.bias.clone();
    for (int64_t j : nbrs) {
      expect += w.matmul(x_[j]) / std::sqrt((dd + 1) * (e.deg_src[j] + 1));
    }
    EXPECT_TRUE(torch::allclose(out[i], expect, 1e-5, 1e-5)) << "dst " << i;
  }
}

TEST_F(ConvTest, GatAttentionSumsToOnePerDst) {
  GATConv conv(4, 2, 3);
  torch::NoGradGuard no_grad;
  torch::Tensor alpha;
  auto out = conv.forward_with_attention(bt_, x_, &alpha);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{3, 6}));
  ASSERT_EQ(alpha.sizes(), (std::vector<int64_t>{5 + 3, 3}));
  auto dst = torch::cat({bt_.edge_dst, torch::arange(3, torch::kInt64)});
  auto sums = torch::zeros({3, 3}).index_add_(0, dst, alpha);
  EXPECT_TRUE(torch::allclose(sums, torch::ones({3, 3}), 1e-5, 1e-5));
  // dst 2 has only its self loop.
  EXPECT_TRUE(torch::allclose(alpha[5 + 2], torch::ones({3})));
}

TEST_F(ConvTest, GatOneHeadMatchesBruteForce) {
  GATConv conv(4, 3, 1);
  torch::NoGradGuard no_grad;
  conv.bias.uniform_(-1, 1);
  torch::Tensor alpha;
  auto out = conv.forward_with_attention(bt_, x_, &alpha);
  Edges e = edges_of(block_);
  auto h = conv.lin->forward(x_);  // [5, 3]
  auto a_src = conv.att_src[0], a_dst = conv.att_dst[0];
  int64_t k = 0;
  for (int64_t i = 0; i < block_.num_dst; ++i) {
    std::vector<int64_t> nbrs = e.in[i];
    nbrs.push_back(i);
    std::vector<double> s;
    double mx = -1e300;
    for (int64_t j : nbrs) {
      double v = (a_dst.dot(h[i]) + a_src.dot(h[j])).item<double>();
      v = v > 0 ? v : 0.2 * v;
      s.push_back(v);
      mx = std::max(mx, v);
    }
    double z = 0;
    for (double& v : s) z += (v = std::exp(v - mx));
    auto expect = conv.bias.clone();
    for (size_t t = 0; t < nbrs.size(); ++t) {
      double a = s[t] / z;
      int64_t row = t + 1 < nbrs.size() ? k + static_cast<int64_t>(t) : 5 + i;
      EXPECT_NEAR(alpha[row][0].item<double>(), a, 1e-5) << "dst " << i << " nbr " << t;
      expect += a * h[nbrs[t]];
    }
    k += static_cast<int64_t>(e.in[i].size());
    EXPECT_TRUE(torch::allclose(out[i], expect, 1e-5, 1e-5)) << "dst " << i;
  }
}

TEST_F(ConvTest, BlockWithoutEdges) {
  sample::Block b;
  b.num_dst = 2;
  b.num_src = 3;
  b.indptr = {0, 0, 0};
  b.src_nodes = {1, 2, 3};
  BlockTensors t = to_block_tensors(b);
  EXPECT_TRUE(torch::equal(t.deg_src, torch::zeros({3}, torch::kInt64)));
  torch::NoGradGuard no_grad;
  auto x = torch::randn({3, 4});
  SAGEConv sage(4, 3);
  GCNConv gcn(4, 3);
  GATConv gat(4, 3, 2);
  // Only the dst's own row contributes.
  EXPECT_TRUE(torch::allclose(sage.forward(t, x),
                              sage.lin_root->forward(x.slice(0, 0, 2)) + sage.lin_neigh->bias));
  EXPECT_TRUE(torch::allclose(gcn.forward(t, x), gcn.lin->forward(x.slice(0, 0, 2))));
  EXPECT_TRUE(torch::allclose(gat.forward(t, x), gat.lin->forward(x.slice(0, 0, 2))));
}

TEST_F(ConvTest, RejectsWrongInputShape) {
  SAGEConv conv(4, 3);
  EXPECT_THROW(conv.forward(bt_, torch::randn({4, 4})), Error);
  EXPECT_THROW(conv.forward(bt_, torch::randn({5, 3})), Error);
}

}  // namespace
}  // namespace partita::nn
