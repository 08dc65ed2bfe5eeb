// The device-generic ops (src/nn/generic_ops.h) against the fused CPU kernels: aggregate
// (weights none, [E] and [E, H]), aggregate_mean, relation_mean, gat_edge_softmax, forward
// and backward, in fp32, bf16 and f64; with_self_loops and to_block_tensors on a device bit
// for bit; counter_dropout's generator masks (scale, rate, backward, repeatability); whole
// models (SAGE, GCN, GAT, R-GCN) forward and backward; and a training step of each that reads
// nothing back on the host. Every test runs twice:
//   GenericCpu/KernelEquality.*/cpu   the generic path on CPU tensors (KernelPathScope)
//   Cuda/KernelEquality.*/cuda        the public ops on CUDA tensors (skipped without CUDA)
// so `ctest -R '^Cuda/KernelEquality'` runs the kernel equality tests on a GPU. The
// reference is always the fused CPU path.
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "generic_ops.h"
#include "nn_test_util.h"
#include "partita/core/error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/block_transfer.h"
#include "partita/nn/conv.h"
#include "partita/nn/dropout.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/kernel_path.h"
#include "partita/nn/message_passing.h"
#include "partita/nn/rgcn.h"

namespace partita::nn {
namespace {

// A block with every edge case: dst 0 and 5 have no in-edges, dst 2 lists src 4 three times,
// src 7 has no out-edges.
sample::Block edge_case_block() {
  sample::Block b;
  b.num_dst = 6;
  b.num_src = 9;
  b.indptr = {0, 0, 2, 6, 7, 9, 9};
  b.indices = {1, 8, 4, 4, 0, 4, 2, 5, 6};
  b.src_nodes.resize(9);
  return b;
}

std::vector<sample::Block> untyped_blocks() {
  std::mt19937_64 rng(21);
  return {edge_case_block(), testing::tiny_block(), testing::random_block(50, 120, 7, rng),
          testing::random_block(300, 1000, 12, rng)};
}

std::vector<sample::Block> typed_blocks() {
  std::mt19937_64 rng(22);
  return {testing::random_typed_block(40, 90, 4, 3, {2}, rng),
          testing::random_typed_block(30, 50, 1, 4, {}, rng),
          testing::random_typed_block(200, 600, 5, 6, {0}, rng)};
}

const torch::ScalarType kTypes[] = {torch::kFloat32, torch::kBFloat16, torch::kFloat64};

// Tolerances of generic vs fused (relative and absolute) per feature type: fp32 sums in
// another order; bf16 results may round to the neighbouring bf16 value (2^-8).
double rtol(torch::ScalarType t) {
  return t == torch::kFloat64 ? 1e-12 : t == torch::kBFloat16 ? 1e-2 : 1e-5;
}
double atol(torch::ScalarType t) {
  return t == torch::kFloat64 ? 1e-12 : t == torch::kBFloat16 ? 1e-2 : 1e-6;
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double rel, double abs,
                  const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_TRUE(want.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.scalar_type(), want.scalar_type()) << what;
  const torch::Tensor g = got.cpu().to(torch::kFloat64);
  const torch::Tensor w = want.to(torch::kFloat64);
  const double err = g.numel() == 0 ? 0.0 : (g - w).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(g, w, rel, abs)) << what << ": max abs error " << err;
}

// Relative error of whole tensors, ||got - want|| / ||want||, for model-level results.
double rel_error(const torch::Tensor& got, const torch::Tensor& want) {
  const torch::Tensor g = got.cpu().to(torch::kFloat64);
  const torch::Tensor w = want.to(torch::kFloat64);
  return (g - w).norm().item<double>() / std::max(w.norm().item<double>(), 1e-30);
}

void expect_equal_fields(const BlockTensors& got, const BlockTensors& want,
                         const std::string& what) {
  EXPECT_EQ(got.num_dst, want.num_dst) << what;
  EXPECT_EQ(got.num_src, want.num_src) << what;
  EXPECT_EQ(got.num_relations, want.num_relations) << what;
  int fields = 0;
  for_each_tensor(
      [&](const char* name, const torch::Tensor& g, const torch::Tensor& w) {
        ++fields;
        EXPECT_EQ(g.defined(), w.defined()) << what << " " << name;
        if (!g.defined() || !w.defined()) return;
        EXPECT_EQ(g.scalar_type(), torch::kInt64) << what << " " << name;
        EXPECT_TRUE(torch::equal(g.cpu(), w)) << what << " " << name;
      },
      got, want);
  EXPECT_EQ(fields, 17) << what;
}

class KernelEquality : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    torch::set_num_threads(testing::test_torch_threads());
    torch::manual_seed(11);
    if (on_cuda() && !torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    // On the CPU the public ops take the generic path only while this lives.
    if (!on_cuda()) force_.emplace(KernelPath::kGeneric);
  }
  void TearDown() override { force_.reset(); }

  bool on_cuda() const { return std::string(GetParam()) == "cuda"; }
  torch::Device device() const {
    return on_cuda() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  }
  // A copy of a CPU tensor on the device; a leaf requiring grad if `t` does.
  torch::Tensor dev(const torch::Tensor& t) const {
    if (!t.defined()) return t;
    return t.detach().to(device()).requires_grad_(t.requires_grad());
  }
  // Runs f on the fused CPU path (the reference), whatever the fixture forces.
  template <class F>
  auto fused(F&& f) {
    const bool forced = force_.has_value();
    force_.reset();
    auto result = f();
    if (forced) force_.emplace(KernelPath::kGeneric);
    return result;
  }

 private:
  std::optional<KernelPathScope> force_;
};

TEST_P(KernelEquality, GenericPathIsTaken) {
  const BlockTensors cpu_block = to_block_tensors(edge_case_block());
  const BlockTensors block = to_block_tensors(edge_case_block(), device());
  const auto x = torch::randn({9, 4}, torch::requires_grad());
  const auto name = [](const torch::Tensor& t) { return t.grad_fn()->name(); };
  const std::string generic_fn = name(aggregate(block, dev(x)));
  const std::string fused_fn = fused([&] { return name(aggregate(cpu_block, x)); });
  EXPECT_NE(generic_fn, fused_fn);
  EXPECT_NE(generic_fn.find("CsrSumFn"), std::string::npos) << generic_fn;
}

TEST_P(KernelEquality, AggregateForwardAndBackward) {
  for (const sample::Block& raw : untyped_blocks()) {
    const BlockTensors cpu_block = to_block_tensors(raw);
    const BlockTensors block = to_block_tensors(raw, device());
    const int64_t E = cpu_block.num_edges();
    for (torch::ScalarType type : kTypes) {
      const torch::ScalarType wtype = type == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
      for (int64_t heads : {0, 1, 3}) {  // 0: no weights; 1: [E]; 3: [E, 3]
        const std::string what = "block " + std::to_string(raw.num_dst) + " " +
                                 c10::toString(type) + " heads " + std::to_string(heads);
        const auto x = torch::randn({raw.num_src, 12}).to(type).requires_grad_();
        torch::Tensor w;
        if (heads == 1) w = torch::rand({E}, wtype).requires_grad_();
        if (heads == 3) w = torch::rand({E, 3}, wtype).requires_grad_();
        const auto r = torch::randn({raw.num_dst, 12}, torch::kFloat64);
        const auto xd = dev(x), wd = dev(w);
        const torch::Tensor want = fused([&] { return aggregate(cpu_block, x, w); });
        const torch::Tensor got = aggregate(block, xd, wd);
        EXPECT_EQ(got.device(), device()) << what;
        expect_close(got, want, rtol(type), atol(type), what + " forward");
        fused([&] { return (want.to(torch::kFloat64) * r).sum().backward(), 0; });
        (got.to(torch::kFloat64) * dev(r)).sum().backward();
        expect_close(xd.grad(), x.grad(), rtol(type), atol(type), what + " x grad");
        if (heads > 0) expect_close(wd.grad(), w.grad(), rtol(type), atol(type), what + " w grad");
        // The mean, whose weights come from the block's degrees.
        const auto xm = x.detach().requires_grad_();
        const auto xmd = dev(xm);
        const torch::Tensor mean_want = fused([&] { return aggregate_mean(cpu_block, xm); });
        const torch::Tensor mean_got = aggregate_mean(block, xmd);
        expect_close(mean_got, mean_want, rtol(type), atol(type), what + " mean");
        fused([&] { return (mean_want.to(torch::kFloat64) * r).sum().backward(), 0; });
        (mean_got.to(torch::kFloat64) * dev(r)).sum().backward();
        expect_close(xmd.grad(), xm.grad(), rtol(type), atol(type), what + " mean x grad");
      }
    }
  }
}

TEST_P(KernelEquality, AggregateRejectsMixedDevices) {
  if (!on_cuda()) GTEST_SKIP() << "needs two devices";
  const BlockTensors block = to_block_tensors(edge_case_block(), device());
  EXPECT_THROW(aggregate(block, torch::randn({9, 4})), Error);
  EXPECT_THROW(aggregate(block, dev(torch::randn({9, 4})), torch::rand({block.num_edges()})),
               Error);
}

TEST_P(KernelEquality, RelationMeanForwardAndBackward) {
  for (const sample::Block& raw : typed_blocks()) {
    const BlockTensors cpu_block = to_block_tensors(raw);
    const BlockTensors block = to_block_tensors(raw, device());
    ASSERT_GT(cpu_block.num_relation_rows(), 0);
    for (torch::ScalarType type : kTypes) {
      const std::string what =
          "typed block " + std::to_string(raw.num_dst) + " " + c10::toString(type);
      const auto x = torch::randn({raw.num_src, 10}).to(type).requires_grad_();
      const auto xd = dev(x);
      const auto r = torch::randn({cpu_block.num_relation_rows(), 10}, torch::kFloat64);
      const torch::Tensor want = fused([&] { return relation_mean(cpu_block, x); });
      const torch::Tensor got = relation_mean(block, xd);
      expect_close(got, want, rtol(type), atol(type), what + " forward");
      fused([&] { return (want.to(torch::kFloat64) * r).sum().backward(), 0; });
      (got.to(torch::kFloat64) * dev(r)).sum().backward();
      expect_close(xd.grad(), x.grad(), rtol(type), atol(type), what + " x grad");
    }
  }
}

TEST_P(KernelEquality, GatSoftmaxForwardAndBackward) {
  for (const sample::Block& raw : untyped_blocks()) {
    // Looped (as GATConv runs it) and as is (dst without in-edges get nothing).
    for (bool loops : {true, false}) {
      BlockTensors cpu_block = to_block_tensors(raw);
      BlockTensors block = to_block_tensors(raw, device());
      if (loops) {
        cpu_block = fused([&] { return with_self_loops(cpu_block); });
        block = with_self_loops(block);
      }
      for (torch::ScalarType type : kTypes) {
        const torch::ScalarType out_type =
            type == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
        const std::string what = "block " + std::to_string(raw.num_dst) +
                                 (loops ? " looped " : " ") + c10::toString(type);
        const auto ss = torch::randn({raw.num_src, 4}).mul(3).to(type).requires_grad_();
        const auto sd = torch::randn({raw.num_dst, 4}).mul(3).to(type).requires_grad_();
        const auto ssd = dev(ss), sdd = dev(sd);
        const auto r = torch::randn({cpu_block.num_edges(), 4}, torch::kFloat64);
        const torch::Tensor want = fused([&] { return gat_edge_softmax(cpu_block, ss, sd, 0.2); });
        const torch::Tensor got = gat_edge_softmax(block, ssd, sdd, 0.2);
        expect_close(got, want, rtol(out_type), atol(out_type), what + " alpha");
        fused([&] { return (want.to(torch::kFloat64) * r).sum().backward(), 0; });
        (got.to(torch::kFloat64) * dev(r)).sum().backward();
        expect_close(ssd.grad(), ss.grad(), rtol(type), atol(type), what + " score_src grad");
        expect_close(sdd.grad(), sd.grad(), rtol(type), atol(type), what + " score_dst grad");
      }
    }
  }
}

TEST_P(KernelEquality, DropoutDrawsItsMaskFromTheDevicesGenerator) {
  // Off the fused path the mask comes from torch's generator, seeded with the key: every
  // element is 0 or x times the scale (rounded once to x's type), about 1 - p of them kept,
  // the same ones for the same key, others for another key, and backward applies the same
  // mask. Equal in distribution to the fused kernel's mask, not bit for bit.
  const uint64_t keys[] = {0, 42, 0xdeadbeefcafef00dULL};
  const auto same = [](const torch::Tensor& a, const torch::Tensor& b) {
    return a.sizes() == b.sizes() && a.eq(b).all().item<bool>();
  };
  for (torch::ScalarType type : kTypes) {
    const torch::ScalarType compute = type == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
    for (double p : {0.1, 0.5, 0.9}) {
      for (uint64_t key : keys) {
        const std::string what = std::string(c10::toString(type)) + " p " + std::to_string(p) +
                                 " key " + std::to_string(key);
        const auto x = (torch::rand({300, 70}) + 0.5).to(type).requires_grad_();  // no zeros
        const auto xd = dev(x);
        const torch::Tensor got = counter_dropout(xd, p, key);
        ASSERT_EQ(got.scalar_type(), type) << what;
        ASSERT_EQ(got.device(), device()) << what;
        const torch::Tensor kept = got.ne(0).cpu();
        const double scale = static_cast<float>(1.0 / (1.0 - p));
        const torch::Tensor scaled = (x.detach().to(compute) * scale).to(type);
        EXPECT_TRUE(same(got.detach().cpu(), scaled * kept)) << what;
        // Kept with probability 1 - p: within 5 standard deviations of the binomial count.
        const double n = static_cast<double>(x.numel());
        const double rate = kept.to(torch::kFloat64).mean().item<double>();
        EXPECT_LT(std::abs(rate - (1 - p)), 5 * std::sqrt(p * (1 - p) / n)) << what;
        EXPECT_TRUE(same(counter_dropout(dev(x.detach()), p, key).cpu(), got.detach().cpu()))
            << what << ": the same key draws another mask";
        EXPECT_FALSE(same(counter_dropout(dev(x.detach()), p, key + 1).ne(0).cpu(), kept))
            << what << ": another key draws the same mask";
        const auto g = torch::randn({300, 70}).to(type);
        got.backward(dev(g));
        EXPECT_TRUE(same(xd.grad().cpu(), (g.to(compute) * scale).to(type) * kept))
            << what << " grad";
      }
    }
  }
  // Empty and single-element tensors pass through.
  EXPECT_EQ(counter_dropout(dev(torch::randn({0, 5})), 0.5, 1).numel(), 0);
  EXPECT_EQ(counter_dropout(dev(torch::ones({1, 1})), 0.5, 1).sizes(), torch::IntArrayRef({1, 1}));
}

TEST_P(KernelEquality, SelfLoopsAreBitIdentical) {
  std::vector<sample::Block> raws = untyped_blocks();
  for (const sample::Block& b : typed_blocks()) raws.push_back(b);
  for (const sample::Block& raw : raws) {
    BlockTensors cpu_block = to_block_tensors(raw);
    BlockTensors block = to_block_tensors(raw, device());
    cpu_block.graph_deg = torch::arange(raw.num_src, torch::kInt64) + 3;
    block.graph_deg = dev(cpu_block.graph_deg);
    const BlockTensors want = fused([&] { return with_self_loops(cpu_block); });
    const BlockTensors got = with_self_loops(block);
    EXPECT_FALSE(got.typed());
    EXPECT_EQ(got.indptr.device(), device());
    expect_equal_fields(got, want, "self loops of block " + std::to_string(raw.num_dst));
  }
}

TEST_P(KernelEquality, BlockTensorsOnTheDeviceEqualTheCpuOnes) {
  std::mt19937_64 rng(23);
  for (bool typed : {false, true}) {
    const std::vector<sample::Block> raws =
        typed ? std::vector<sample::Block>{testing::random_typed_block(10, 30, 3, 2, {}, rng),
                                           testing::random_typed_block(30, 80, 3, 2, {1}, rng)}
              : std::vector<sample::Block>{testing::random_block(10, 30, 4, rng),
                                           testing::random_block(30, 80, 4, rng)};
    std::vector<int64_t> degrees(80);
    for (int64_t i = 0; i < 80; ++i) degrees[static_cast<size_t>(i)] = (i * 7) % 13;
    const std::vector<BlockTensors> want = fused([&] { return to_block_tensors(raws, degrees); });
    // Untyped: the index arrays copied once and the rest derived on the device; typed: built
    // on the CPU and moved in one transfer.
    std::vector<BlockTensors> got = to_block_tensors(raws, degrees, device());
    const BlockTensors single = to_block_tensors(raws[1], device());
    expect_equal_fields(single, fused([&] { return to_block_tensors(raws[1]); }), "single");
    if (typed && !on_cuda()) {
      // The packing transfer itself, to the CPU.
      got = fused([&] { return to_block_tensors(raws); });
      torch::Tensor deg = torch::tensor(degrees, torch::kInt64);
      move_blocks(got, &deg, transfer_to(device()));
      for (BlockTensors& t : got) t.graph_deg = deg.slice(0, 0, t.num_src);
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].indices.device(), device());
      expect_equal_fields(got[i], want[i], "block " + std::to_string(i));
    }
  }
}

TEST_P(KernelEquality, BlocksDerivedOnTheDeviceEqualTheCpuOnesInEdgeCases) {
  // Rows without in-edges, an src listed three times, an src without out-edges, no edges.
  std::vector<sample::Block> raws = untyped_blocks();
  sample::Block empty;
  empty.num_dst = 3;
  empty.num_src = 5;
  empty.indptr = {0, 0, 0, 0};
  empty.src_nodes.resize(5);
  raws.push_back(empty);
  for (const sample::Block& raw : raws) {
    const BlockTensors want = fused([&] { return to_block_tensors(raw); });
    expect_equal_fields(
        to_block_tensors(raw, device()), want,
        "block " + std::to_string(raw.num_dst) + " x " + std::to_string(raw.num_edges()));
  }
  // The packed form: what a caller that makes the copy itself (batch staging) unpacks.
  const std::vector<int64_t> degrees(static_cast<size_t>(raws[1].num_src), 7);
  const std::vector<sample::Block> two{raws[0], raws[1]};
  sample::Block bad = raws[1];
  bad.indices[0] = bad.num_src;
  EXPECT_THROW(pack_blocks({bad}), Error);
  const std::vector<int64_t> one_short(degrees.begin() + 1, degrees.end());
  EXPECT_NO_THROW(pack_blocks(two, &degrees));
  EXPECT_THROW(pack_blocks(two, &one_short), Error);  // a degree per input node
  const std::vector<int64_t> input_degrees(static_cast<size_t>(raws[0].num_src), 7);
  const std::vector<sample::Block> one{raws[0]};
  const PackedBlocks packed = pack_blocks(one, &input_degrees);
  const std::vector<BlockTensors> got = unpack_blocks(packed, packed.host.to(device()));
  expect_equal_fields(got[0], fused([&] { return to_block_tensors(one, input_degrees); })[0],
                      "unpacked");
}

// A fixed 2-hop batch: 16 seeds <- 40 nodes <- 100 input nodes, 8 features, 4 classes.
struct Batch {
  std::vector<sample::Block> raw;
  std::vector<int64_t> degrees;
  torch::Tensor x, y;
};

Batch make_batch() {
  std::mt19937_64 rng(42);
  Batch b;
  b.raw = {testing::random_block(16, 40, 4, rng), testing::random_block(40, 100, 4, rng)};
  for (int64_t i = 0; i < 100; ++i) b.degrees.push_back(4 + i % 9);
  b.x = torch::randn({100, 8});
  b.y = torch::randint(0, 4, {16}, torch::kInt64);
  return b;
}

// Logits and every parameter's gradient after one training forward and backward (with
// dropout) of `model` on `blocks`.
template <class Model, class Forward>
std::vector<torch::Tensor> train_step(Model& model, const torch::Tensor& y, uint64_t key,
                                      Forward&& forward) {
  model.train();
  model.zero_grad();
  model.set_dropout_key(key);
  const torch::Tensor logits = forward();
  torch::nn::functional::cross_entropy(logits, y).backward();
  std::vector<torch::Tensor> out = {logits.detach()};
  for (auto& p : model.parameters()) out.push_back(p.grad());
  return out;
}

TEST_P(KernelEquality, GnnModelsForwardAndBackward) {
  const Batch b = make_batch();
  const std::vector<BlockTensors> cpu_blocks = to_block_tensors(b.raw, b.degrees);
  const std::vector<BlockTensors> blocks = to_block_tensors(b.raw, b.degrees, device());
  for (ConvKind kind : {ConvKind::kSage, ConvKind::kGcn, ConvKind::kGat}) {
    for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
      const std::string what = std::string(kind == ConvKind::kSage  ? "sage"
                                           : kind == ConvKind::kGcn ? "gcn"
                                                                    : "gat") +
                               (precision == Precision::kBf16 ? " bf16" : " fp32");
      GnnOptions o;
      o.kind = kind;
      o.in_dim = 8;
      o.hidden = 16;
      o.out_dim = 4;
      o.layers = 2;
      o.heads = kind == ConvKind::kGat ? 4 : 1;
      o.dropout = 0;  // the generic path draws other masks (DropoutDrawsItsMask...)
      o.precision = precision;
      torch::manual_seed(7);
      GnnModel reference(o);
      torch::manual_seed(7);
      GnnModel model(o);
      model.to(device());
      const auto want = fused([&] {
        return train_step(reference, b.y, 99, [&] { return reference.forward(cpu_blocks, b.x); });
      });
      const auto got =
          train_step(model, dev(b.y), 99, [&] { return model.forward(blocks, dev(b.x)); });
      ASSERT_EQ(got.size(), want.size()) << what;
      // Through two layers, bf16 activations and (on a GPU) other matrix-product kernels.
      const double tol = precision == Precision::kBf16 ? 3e-2 : 1e-4;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].device(), device()) << what;
        EXPECT_LE(rel_error(got[i], want[i]), tol) << what << (i == 0 ? " logits" : " grad ") << i;
      }
    }
  }
}

// Ops that read device data on the host (what train --profile counts as host syncs), seen by
// a thread-local callback: on the calling thread, and on threads that inherit its torch
// state (autograd's device threads run a GPU's backward).
std::atomic<int64_t> g_host_reads{0};

std::unique_ptr<at::ObserverContext> count_host_reads(const at::RecordFunction& fn) {
  const std::string_view name(fn.name());
  if (name == "aten::_local_scalar_dense" || name == "aten::nonzero" ||
      name.rfind("aten::unique", 0) == 0 || name.rfind("aten::_unique", 0) == 0)
    g_host_reads.fetch_add(1);
  return nullptr;
}

TEST_P(KernelEquality, TrainingStepsReadNothingOnTheHost) {
  const Batch b = make_batch();
  for (ConvKind kind : {ConvKind::kSage, ConvKind::kGcn, ConvKind::kGat}) {
    GnnOptions o;
    o.kind = kind;
    o.in_dim = 8;
    o.hidden = 16;
    o.out_dim = 4;
    o.heads = kind == ConvKind::kGat ? 4 : 1;
    o.dropout = 0.5;
    GnnModel model(o);
    model.to(device());
    const torch::Tensor x = dev(b.x), y = dev(b.y);
    g_host_reads = 0;
    const uint64_t handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&count_host_reads).scopes({at::RecordScope::FUNCTION}));
    // The blocks from their index arrays, forward with dropout, loss, backward.
    const std::vector<BlockTensors> blocks = to_block_tensors(b.raw, b.degrees, device());
    train_step(model, y, 3, [&] { return model.forward(blocks, x); });
    at::removeCallback(handle);
    EXPECT_EQ(g_host_reads.load(), 0) << "model kind " << static_cast<int>(kind);
  }
}

TEST_P(KernelEquality, GatAttentionOutputOnTheDevice) {
  const Batch b = make_batch();
  const BlockTensors cpu_block = to_block_tensors(b.raw[1]);
  const BlockTensors block = to_block_tensors(b.raw[1], device());
  torch::manual_seed(8);
  GATConv reference(8, 4, 2, /*concat=*/true, /*attention_dropout=*/0.0);
  torch::manual_seed(8);
  GATConv conv(8, 4, 2, /*concat=*/true, /*attention_dropout=*/0.0);
  conv.to(device());
  torch::Tensor want_alpha, got_alpha;
  const torch::Tensor want =
      fused([&] { return reference.forward_with_attention(cpu_block, b.x, &want_alpha).detach(); });
  const torch::Tensor got = conv.forward_with_attention(block, dev(b.x), &got_alpha);
  expect_close(got, want, 1e-5, 1e-6, "gat output");
  expect_close(got_alpha, want_alpha.detach(), 1e-5, 1e-6, "gat attention");
}

TEST_P(KernelEquality, RgcnModelForwardAndBackward) {
  std::mt19937_64 rng(7);
  const std::vector<sample::Block> raw = {testing::random_typed_block(12, 30, 4, 3, {}, rng),
                                          testing::random_typed_block(30, 60, 4, 3, {3}, rng)};
  std::vector<std::vector<int64_t>> pos(3);
  for (int64_t i = 0; i < 60; ++i) pos[static_cast<size_t>(rng() % 3)].push_back(i);
  const int64_t widths[] = {5, 8, 3};
  std::vector<RgcnInput> inputs, dev_inputs;
  for (size_t t = 0; t < 3; ++t) {
    RgcnInput in;
    in.positions = torch::tensor(pos[t], torch::kInt64);
    in.x = torch::randn({static_cast<int64_t>(pos[t].size()), widths[t]});
    if (t == 1) in.x.requires_grad_();  // embedding rows
    inputs.push_back(in);
    dev_inputs.push_back({dev(in.positions), dev(in.x)});
  }
  const torch::Tensor y = torch::randint(0, 3, {12}, torch::kInt64);
  const std::vector<BlockTensors> cpu_blocks = to_block_tensors(raw);
  const std::vector<BlockTensors> blocks = to_block_tensors(raw, device());
  for (int64_t bases : {int64_t{0}, int64_t{2}}) {
    for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
      const std::string what =
          "bases " + std::to_string(bases) + (precision == Precision::kBf16 ? " bf16" : " fp32");
      RgcnOptions o;
      o.num_relations = 4;
      o.type_dims = {5, 0, 3};
      o.hidden = 8;
      o.out_dim = 3;
      o.num_bases = bases;
      o.dropout = 0;  // the generic path draws other masks
      o.precision = precision;
      torch::manual_seed(9);
      RgcnModel reference(o);
      torch::manual_seed(9);
      RgcnModel model(o);
      model.to(device());
      for (auto* in : {&inputs[1], &dev_inputs[1]})
        if (in->x.grad().defined()) in->x.mutable_grad().zero_();
      auto want = fused([&] {
        return train_step(reference, y, 5, [&] { return reference.forward(cpu_blocks, inputs); });
      });
      want.push_back(inputs[1].x.grad().clone());
      auto got = train_step(model, dev(y), 5, [&] { return model.forward(blocks, dev_inputs); });
      got.push_back(dev_inputs[1].x.grad().clone());
      ASSERT_EQ(got.size(), want.size()) << what;
      const double tol = precision == Precision::kBf16 ? 3e-2 : 1e-4;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].device(), device()) << what;
        EXPECT_LE(rel_error(got[i], want[i]), tol) << what << " result " << i;
      }
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<const char*>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(GenericCpu, KernelEquality, ::testing::Values("cpu"), param_name);
INSTANTIATE_TEST_SUITE_P(Cuda, KernelEquality, ::testing::Values("cuda"), param_name);

}  // namespace
}  // namespace partita::nn
