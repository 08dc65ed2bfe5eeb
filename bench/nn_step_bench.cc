// Benchmark of the nn/ layer alone: one GraphSAGE training step (forward, backward) on a
// fixed random 3-hop batch shaped like synth200k's with fanouts 15,10,5 and 1024 seeds
// (block sizes measured with sample-bench: 1024 <- 16 K <- 95 K <- 170 K nodes, 575 K
// edges), in fp32 and bf16, plus its parts in isolation: dropout, the fused mean
// aggregation (forward and backward), and the matrix products. Plus one R-GCN step on a
// 2-hop typed batch shaped like ogbn-mag's (see make_typed_block) and its relation_mean.
// Prints one JSON object (medians over --runs). Never fails because a machine is slow.
//
//   build/bench/nn_step_bench [--runs 7] [--threads 1] [--hidden 256] [--feat 100]
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/nn/dropout.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/message_passing.h"
#include "partita/nn/precision.h"
#include "partita/nn/rgcn.h"

using namespace partita;
using namespace partita::nn;

namespace {

// dst nodes <- fanout picks among num_src (power-law-ish: low ids more likely, as hubs).
sample::Block make_block(int64_t num_dst, int64_t num_src, int64_t fanout, std::mt19937_64& rng) {
  sample::Block b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.indptr.reserve(num_dst + 1);
  b.indptr.push_back(0);
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t i = 0; i < num_dst; ++i) {
    for (int64_t k = 0; k < fanout; ++k) {
      const double r = u(rng);
      b.indices.push_back(std::min<int64_t>(num_src - 1, static_cast<int64_t>(r * r * num_src)));
    }
    b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
  }
  b.src_nodes.resize(num_src);
  return b;
}

// A typed block shaped like ogbn-mag's 8 relations (4 + reverses): dst i has type i % 4
// (paper, author, institution, field), which receives 4, 2, 1 and 1 of the relations; each
// incoming relation gets `fanout` src picks (power-law-ish, as make_block).
sample::Block make_typed_block(int64_t num_dst, int64_t num_src, int64_t fanout,
                               std::mt19937_64& rng) {
  static const std::vector<std::vector<int32_t>> kIncoming = {{0, 1, 2, 3}, {4, 5}, {6}, {7}};
  sample::Block b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.indptr.push_back(0);
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t i = 0; i < num_dst; ++i) {
    for (int32_t r : kIncoming[static_cast<size_t>(i % 4)]) {
      for (int64_t k = 0; k < fanout; ++k) {
        const double x = u(rng);
        b.indices.push_back(std::min<int64_t>(num_src - 1, static_cast<int64_t>(x * x * num_src)));
        b.etypes.push_back(r);
      }
    }
    b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
  }
  b.src_nodes.resize(num_src);
  return b;
}

template <class F>
double median_seconds(int runs, F&& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 7, threads = 1;
  int64_t hidden = 256, feat = 100, classes = 47;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--runs")
      runs = static_cast<int>(value);
    else if (flag == "--threads")
      threads = static_cast<int>(value);
    else if (flag == "--hidden")
      hidden = value;
    else if (flag == "--feat")
      feat = value;
    else {
      std::fprintf(stderr, "error: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  // As `partita train`: keep freed memory for reuse, no fresh pages every step.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  std::mt19937_64 rng(1);
  const std::vector<sample::Block> raw = {make_block(1024, 16000, 15, rng),
                                          make_block(16000, 95000, 10, rng),
                                          make_block(95000, 170000, 5, rng)};
  const std::vector<BlockTensors> blocks = to_block_tensors(raw);
  const torch::Tensor x = torch::randn({170000, feat});
  const torch::Tensor y = torch::randint(0, classes, {1024}, torch::kInt64);
  nlohmann::ordered_json out;
  out["benchmark"] = "nn_step_bench";
  out["threads"] = threads;
  out["runs"] = runs;
  out["blocks"] = {{1024, 16000, 15360}, {16000, 95000, 160000}, {95000, 170000, 475000}};
  out["bf16_supported"] = cpu_supports_bf16();

  // The index work every training step does before its forward (transposed blocks).
  out["to_block_tensors_s"] = median_seconds(runs, [&] { to_block_tensors(raw); });
  const torch::Tensor h = torch::randn({95000, hidden});
  const torch::Tensor h_bf16 = h.to(torch::kBFloat16);
  out["dropout_fp32_95k_x_hidden_s"] = median_seconds(runs, [&] { counter_dropout(h, 0.5, 1); });
  out["dropout_bf16_95k_x_hidden_s"] =
      median_seconds(runs, [&] { counter_dropout(h_bf16, 0.5, 1); });
  out["torch_dropout_fp32_95k_x_hidden_s"] =
      median_seconds(runs, [&] { torch::dropout(h, 0.5, true); });
  for (const auto& [name, t] :
       {std::pair<const char*, torch::Tensor>{"fp32", h}, {"bf16", h_bf16}}) {
    const torch::Tensor hs = torch::randn({170000, hidden}).to(t.scalar_type()).requires_grad_();
    out[std::string("aggregate_mean_fwd_") + name + "_block2_s"] = median_seconds(runs, [&] {
      torch::NoGradGuard g;
      aggregate_mean(blocks[2], hs);
    });
    out[std::string("aggregate_mean_fwd_bwd_") + name + "_block2_s"] =
        median_seconds(runs, [&] { aggregate_mean(blocks[2], hs).sum().backward(); });
    const torch::Tensor w = torch::randn({hidden, hidden}).to(t.scalar_type());
    out[std::string("mm_") + name + "_95k_x_hidden_x_hidden_gflops"] =
        2.0 * 95000 * hidden * hidden / 1e9 / median_seconds(runs, [&] { torch::mm(t, w); });
  }
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    if (p == Precision::kBf16 && !cpu_supports_bf16()) continue;
    GnnOptions o;
    o.kind = ConvKind::kSage;
    o.in_dim = feat;
    o.hidden = hidden;
    o.out_dim = classes;
    o.layers = 3;
    o.dropout = 0.5;
    o.precision = p;
    GnnModel model(o);
    model.train();
    const double fwd = median_seconds(runs, [&] {
      torch::NoGradGuard g;
      model.forward(blocks, x);
    });
    const double step = median_seconds(runs, [&] {
      model.zero_grad();
      torch::nn::functional::cross_entropy(model.forward(blocks, x), y).backward();
    });
    const std::string tag = precision_name(p);
    out["sage_forward_" + tag + "_s"] = fwd;
    out["sage_step_" + tag + "_s"] = step;
  }
  {
    // R-GCN: 1024 seeds <- 20 K <- 150 K input nodes, 10 picks per incoming relation per
    // hop; input nodes typed round-robin, papers with `feat` features, the other three
    // types featureless (embedding rows of width hidden, gradients wanted).
    const std::vector<sample::Block> typed_raw = {make_typed_block(1024, 20000, 10, rng),
                                                  make_typed_block(20000, 150000, 10, rng)};
    const std::vector<BlockTensors> typed = to_block_tensors(typed_raw);
    std::vector<RgcnInput> inputs(4);
    for (int64_t t = 0; t < 4; ++t) {
      inputs[t].positions = torch::arange(t, 150000, 4, torch::kInt64);
      const int64_t n = inputs[t].positions.size(0);
      inputs[t].x = t == 0 ? torch::randn({n, feat}) : torch::randn({n, 64}).requires_grad_();
    }
    const torch::Tensor labels = torch::randint(0, 349, {1024}, torch::kInt64);
    out["rgcn_blocks"] = {{1024, 20000, typed[0].num_edges()},
                          {20000, 150000, typed[1].num_edges()}};
    const torch::Tensor hs = torch::randn({150000, 64}).requires_grad_();
    out["rgcn_relation_mean_fwd_bwd_fp32_block1_hidden64_s"] =
        median_seconds(runs, [&] { relation_mean(typed[1], hs).sum().backward(); });
    for (Precision p : {Precision::kFp32, Precision::kBf16}) {
      if (p == Precision::kBf16 && !cpu_supports_bf16()) continue;
      RgcnOptions o;
      o.num_relations = 8;
      o.type_dims = {feat, 0, 0, 0};
      o.hidden = 64;
      o.out_dim = 349;
      o.layers = 2;
      o.dropout = 0.5;
      o.precision = p;
      RgcnModel model(o);
      model.train();
      out[std::string("rgcn_step_") + precision_name(p) + "_hidden64_s"] =
          median_seconds(runs, [&] {
            model.zero_grad();
            torch::nn::functional::cross_entropy(model.forward(typed, inputs), labels).backward();
          });
      out["rgcn_step_matmul_gflop"] = model.training_matmul_flops(typed, inputs) * 1e-9;
    }
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
