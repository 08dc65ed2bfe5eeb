// The seams of the training loop, each on its own, in-process (ranks are threads over the
// in-process transport and collectives): GradientSync (train/gradient_sync.h), the model
// table and its adapters (model_adapter.h), NodeTask and LinkTask (train_task.h) and the
// Checkpointer (checkpointer.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "../partition/test_datasets.h"
#include "helpers/on_threads.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/core/log.h"
#include "partita/core/parameter_error.h"
#include "partita/nn/han.h"
#include "partita/partition/partition.h"
#include "partita/runtime/session.h"
#include "partita/train/checkpoint.h"
#include "partita/train/checkpointer.h"
#include "partita/train/device.h"
#include "partita/train/gradient_sync.h"
#include "partita/train/metapaths.h"
#include "partita/train/model_adapter.h"
#include "partita/train/train_task.h"
#include "train_test_util.h"

namespace partita::train {
namespace {

using testing::TempDir;

using testing::on_threads;

std::vector<std::string> none(int ranks) { return std::vector<std::string>(ranks, ""); }

// The parameter a ParameterError names, "" for any other outcome.
std::string parameter_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ParameterError& e) {
    return e.parameter();
  } catch (...) {
    return "(another error)";
  }
  return "";
}

// ------------------------------------------------------------------------ GradientSync

struct Buffers : torch::nn::Module {
  explicit Buffers(int rank) {
    f = register_buffer("f", torch::full({3}, static_cast<float>(rank)));
    i = register_buffer("i", torch::full({2}, int64_t{10} + rank, torch::kInt64));
  }
  torch::Tensor f, i;
};

TEST(GradientSync, WeightsGradientsLossAndBuffers) {
  constexpr int kRanks = 3;
  InProcessCollectiveGroup group(kRanks, 60);
  std::vector<std::vector<float>> weights(kRanks), grad_a(kRanks), grad_b(kRanks);
  std::vector<double> loss(kRanks);
  std::vector<std::vector<float>> f(kRanks);
  std::vector<std::vector<int64_t>> i(kRanks);
  const auto failures = on_threads(kRanks, [&](int r) {
    torch::Tensor a = torch::full({2, 3}, 1.0f + r).requires_grad_(true);
    torch::Tensor b = torch::arange(4, torch::kFloat32).add(10 * r).requires_grad_(true);
    // Buckets of 2 floats: the 11 values span several, the loss shares the last one.
    GradientSync sync(group.member(r), {a, b}, 2 * sizeof(float));
    sync.broadcast_initial_weights();
    for (const torch::Tensor& p : {a, b}) {
      const torch::Tensor t = p.detach().reshape(-1).to(torch::kCPU).contiguous();
      weights[r].insert(weights[r].end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    }
    (a.sum() * (r + 1)).backward();  // b has no gradient on any rank: summed as zeros
    const torch::Tensor summed = sync.sum_gradients(torch::tensor(0.5f + r));
    ASSERT_EQ(summed.numel(), 1);
    loss[r] = summed.item<double>();
    const torch::Tensor ga = a.grad().reshape(-1).contiguous();
    grad_a[r].assign(ga.data_ptr<float>(), ga.data_ptr<float>() + ga.numel());
    ASSERT_TRUE(b.grad().defined());
    const torch::Tensor gb = b.grad().reshape(-1).contiguous();
    grad_b[r].assign(gb.data_ptr<float>(), gb.data_ptr<float>() + gb.numel());
    Buffers buffers(r);
    sync.average_buffers(buffers);
    f[r].assign(buffers.f.data_ptr<float>(), buffers.f.data_ptr<float>() + 3);
    i[r].assign(buffers.i.data_ptr<int64_t>(), buffers.i.data_ptr<int64_t>() + 2);
  });
  EXPECT_EQ(failures, none(kRanks));
  const std::vector<float> rank0{1, 1, 1, 1, 1, 1, 0, 1, 2, 3};
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(weights[r], rank0) << "rank " << r << ": rank 0's initial weights";
    EXPECT_EQ(grad_a[r], std::vector<float>(6, 1 + 2 + 3)) << r;
    EXPECT_EQ(grad_b[r], std::vector<float>(4, 0)) << r;
    EXPECT_EQ(loss[r], 0.5 + 1.5 + 2.5) << r;
    EXPECT_EQ(f[r], std::vector<float>(3, 1.0f)) << r << ": float buffers averaged";
    EXPECT_EQ(i[r], std::vector<int64_t>(2, 10)) << r << ": integer buffers from rank 0";
  }
}

// One rank: the sum is the identity, so nothing is packed, copied or sent; a parameter
// without a gradient gets zeros (as the sum would give it), the loss comes back as given
// (and undefined, a rank without seeds, as 0).
TEST(GradientSync, OneRankSendsNothing) {
  InProcessCollectiveGroup group(1, 60);
  const auto failures = on_threads(1, [&](int r) {
    torch::Tensor a = torch::full({2, 3}, 1.0f).requires_grad_(true);
    torch::Tensor b = torch::arange(4, torch::kFloat32).requires_grad_(true);
    GradientSync sync(group.member(r), {a, b}, 2 * sizeof(float));
    (a * a).sum().backward();
    const torch::Tensor grad_a = a.grad();
    const torch::Tensor summed = sync.sum_gradients(torch::tensor(2.5f));
    EXPECT_EQ(group.member(r).bytes_contributed(), 0u);
    EXPECT_EQ(summed.item<float>(), 2.5f);
    EXPECT_EQ(a.grad().data_ptr(), grad_a.data_ptr()) << "the gradient itself, not a copy";
    EXPECT_TRUE(torch::equal(a.grad(), torch::full({2, 3}, 2.0f)));
    ASSERT_TRUE(b.grad().defined());
    EXPECT_TRUE(torch::equal(b.grad(), torch::zeros({4})));
    EXPECT_EQ(sync.sum_gradients(torch::Tensor()).item<float>(), 0.0f);
  });
  EXPECT_EQ(failures, none(1));
}

// --------------------------------------------------- sessions over small partitions

class Seams : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    testing::make_small_partitions(dir_->path(), {1, 2});
    testing::PlantedOptions po;
    po.undirected = true;
    partition::PartitionOptions p;
    p.out_dir = *dir_ / "link2";
    p.num_parts = 2;
    p.method = partition::Method::kRandom;
    p.seed = 1;
    p.threads = 1;
    p.edge_split.valid_fraction = 0.05;
    p.edge_split.test_fraction = 0.10;
    partition::partition_dataset(testing::planted_dataset(po), p);
    testing::TypedOptions t;
    partition::PartitionOptions tp;
    tp.out_dir = *dir_ / "typed1";
    tp.num_parts = 1;
    tp.threads = 1;
    partition::partition_dataset(testing::typed_dataset(t), tp);
  }
  static void TearDownTestSuite() { delete dir_; }

  // Runs fn(session, options) on `ranks` worker sessions over directory `name`, with
  // options' widths taken from the graph as the Trainer does.
  static std::vector<std::string> run(
      int ranks, const std::string& name, TrainOptions options,
      const std::function<void(runtime::Session&, const TrainOptions&)>& fn) {
    InProcessWorld world(ranks);
    InProcessCollectiveGroup group(ranks, 60);
    return on_threads(ranks, [&](int r) {
      runtime::SessionOptions so;
      so.parts_dir = *dir_ / name;
      so.timeout_s = 60;
      runtime::Session session(world.transport(r), group.member(r), so);
      TrainOptions o = options;
      o.model.in_dim = session.graph().feat_dim();
      if (o.model.out_dim <= 0)
        o.model.out_dim = o.task == Task::kLink ? o.model.hidden : session.graph().num_classes();
      fn(session, o);
      session.finish();
    });
  }

  static TrainOptions options(ModelKind kind = ModelKind::kSage) {
    TrainOptions o;
    o.model.kind = kind;
    o.model.hidden = 8;
    o.model.heads = 1;
    o.model.layers = 2;
    o.model.dropout = 0;
    o.loader.fanouts = {4, 4};
    o.optimizer.kind = OptimizerKind::kSgd;
    o.loader.batch_size = 64;
    o.seed = 5;
    o.loader.threads = 1;
    return o;
  }

  static TempDir* dir_;
};
TempDir* Seams::dir_ = nullptr;

std::vector<float> flat(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  std::vector<float> out;
  for (const auto& p : module.parameters()) {
    const torch::Tensor t = p.detach().reshape(-1).to(torch::kCPU).contiguous();
    out.insert(out.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  return out;
}

// ---------------------------------------------------------------------- model table

TEST_F(Seams, ModelTablePicksAdaptersAndCarriesDeviceAndPrecision) {
  std::vector<std::string> names;
  for (const ModelEntry& e : model_table()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"rgcn", "han", "link", "gnn"}));
  const auto failures =
      run(1, "p1", options(ModelKind::kGcn), [](runtime::Session& s, const TrainOptions& o) {
        const std::unique_ptr<ModelAdapter> gcn = build_model({s, o});
        ASSERT_NE(gcn->gnn(), nullptr);
        EXPECT_EQ(gcn->link(), nullptr);
        EXPECT_TRUE(gcn->needs_degrees());
        EXPECT_EQ(gcn->config_signature().size(), 8u);
        EXPECT_EQ(gcn->config_signature().back(), static_cast<int64_t>(OptimizerKind::kSgd));
        // Seeded by options.seed: the same initial weights every time.
        EXPECT_EQ(flat(gcn->module()), flat(build_model({s, o})->module()));

        TrainOptions lo = o;
        lo.task = Task::kLink;
        lo.model.kind = ModelKind::kSage;
        const std::unique_ptr<ModelAdapter> link = build_model({s, lo});
        ASSERT_NE(link->link(), nullptr);
        EXPECT_EQ(link->gnn(), &link->link()->encoder());
        EXPECT_FALSE(link->needs_degrees());
        const std::vector<int64_t> sig = link->config_signature();
        ASSERT_EQ(sig.size(), 10u);
        EXPECT_EQ(sig[8], kLinkSignatureTag);

        // The device travels to the adapter: a GPU this process cannot use is refused
        // (check_device), one it can use gets the module.
        if (cuda_device_count() == 0) {
          EXPECT_EQ(parameter_of([&] {
                      build_model({s, o, torch::Device(torch::kCUDA, 0)});
                    }),
                    "device");
        } else {
          const auto on_gpu = build_model({s, o, torch::Device(torch::kCUDA, 0)});
          EXPECT_TRUE(on_gpu->module().parameters()[0].is_cuda());
          EXPECT_EQ(flat(gcn->module()), flat(on_gpu->module())) << "the CPU's initial weights";
        }
        EXPECT_EQ(parameter_of([&] {
                    build_model({s, o, torch::Device(torch::kCUDA, 99)});
                  }),
                  "device");
        // R-GCN needs a typed partition.
        TrainOptions ro = o;
        ro.model.kind = ModelKind::kRgcn;
        EXPECT_EQ(parameter_of([&] { build_model({s, ro}); }), "model");
      });
  EXPECT_EQ(failures, none(1));

  const auto typed = run(1, "typed1", options(), [](runtime::Session& s, const TrainOptions& o) {
    EXPECT_EQ(parameter_of([&] { build_model({s, o}); }), "model") << "GNN on a typed graph";
    TrainOptions ro = o;
    ro.model.kind = ModelKind::kRgcn;
    const std::unique_ptr<ModelAdapter> rgcn = build_model({s, ro});
    EXPECT_EQ(rgcn->gnn(), nullptr);
    EXPECT_FALSE(rgcn->needs_degrees());
    ro.model.num_bases = 1000;
    EXPECT_EQ(parameter_of([&] { build_model({s, ro}); }), "num_bases");
    ro.model.num_bases = 0;
    ro.eval.mode = EvalMode::kFull;
    EXPECT_EQ(parameter_of([&] { build_model({s, ro}); }), "eval");
  });
  EXPECT_EQ(typed, none(1));
}

// A checkpoint's signature tells gatv2 from gat (its kind) and carries gatv2's heads, so a
// resume across them is refused (Checkpointer::restore) and --heads counts for both.
TEST_F(Seams, Gatv2SignatureIsNoGatsAndCarriesHeads) {
  TrainOptions o = options(ModelKind::kGatv2);
  o.model.heads = 3;
  const auto failures = run(1, "p1", o, [](runtime::Session& s, const TrainOptions& o) {
    const std::vector<int64_t> v2 = build_model({s, o})->config_signature();
    TrainOptions g = o;
    g.model.kind = ModelKind::kGat;
    const std::vector<int64_t> v1 = build_model({s, g})->config_signature();
    ASSERT_EQ(v2.size(), 8u);
    ASSERT_EQ(v1.size(), 8u);
    EXPECT_NE(v2, v1);
    EXPECT_EQ(v2[0], static_cast<int64_t>(nn::ConvKind::kGatv2));
    EXPECT_EQ(v2[5], 3) << "heads";
    EXPECT_EQ(std::vector<int64_t>(v2.begin() + 1, v2.end()),
              std::vector<int64_t>(v1.begin() + 1, v1.end()))
        << "only the kind differs";
  });
  EXPECT_EQ(failures, none(1));
}

// ------------------------------------------------------------ model han's sampling

// Model han's node task samples metapath neighbours (train/metapaths.h): its passes go
// through a MetapathSampler over the session's sampler, --fanouts names metapaths, the
// blocks' edge types are metapath ids over papers only, typed inputs hold papers only, and a
// rerun gives the same batches. Other models keep the session's sampler.
TEST_F(Seams, HanNodeTaskSamplesMetapathNeighbours) {
  TrainOptions ho = options();
  ho.model.kind = ModelKind::kHan;
  // The default adds cites and rev_cites (sample/metapath_spec.h); two paths through other
  // types keep the counts below small.
  ho.model.metapaths = "paper-author-paper,paper-field-paper";
  const auto failures = run(1, "typed1", ho, [](runtime::Session& s, const TrainOptions& base) {
    const partition::TypedMeta& meta = s.graph().typed_meta();
    TrainOptions o = base;
    const std::vector<sample::Metapath> paths = resolve_metapaths(o, meta);
    ASSERT_EQ(paths.size(), 2u);
    EXPECT_EQ(paths[1].name, "paper-field-paper");
    o.loader.fanouts = resolve_model_fanouts("3,paper-field-paper=2:1", s.graph(), o.model);
    EXPECT_EQ(o.loader.fanouts.relations.at(1), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(parameter_of([&] { resolve_model_fanouts("3,writes=2:1", s.graph(), o.model); }),
              "fanouts")
        << "han's fanouts name metapaths, not relations";
    TrainOptions rgcn = o;
    rgcn.model.kind = ModelKind::kRgcn;
    EXPECT_EQ(resolve_model_fanouts("3,writes=2:1", s.graph(), rgcn.model).relations.at(1).size(),
              6u);
    EXPECT_EQ(&make_task(s, rgcn)->sampler(), &s.sampler());
    TrainOptions bad = o;
    bad.model.metapaths = "paper-author";
    EXPECT_EQ(parameter_of([&] { make_task(s, bad); }), "metapaths");
    TrainOptions full = o;
    full.eval.mode = EvalMode::kFull;
    EXPECT_EQ(parameter_of([&] { make_task(s, full); }), "eval");

    const std::unique_ptr<TrainTask> task = make_task(s, o);
    ASSERT_NE(dynamic_cast<sample::MetapathSampler*>(&task->sampler()), nullptr);
    const std::unique_ptr<ModelAdapter> model = build_model({s, o});
    std::vector<std::vector<int64_t>> first_pass;
    for (int pass = 0; pass < 2; ++pass) {
      loader::BatchPipeline pipeline(pipeline_options(s, o, *model, true, 0), task->epoch_seeds(0),
                                     task->sampler(), s.fetcher());
      int64_t edges[2] = {0, 0};
      size_t at = 0;
      while (std::optional<loader::Batch> batch = pipeline.next()) {
        for (const sample::Block& b : batch->sampled.blocks) {
          for (int32_t e : b.etypes) ++edges[e];
          for (int64_t u : b.src_nodes) ASSERT_EQ(meta.type_of(0, u), 0) << "not a paper";
          if (pass == 0) {
            first_pass.push_back(b.src_nodes);
            first_pass.push_back(b.indices);
          } else {
            EXPECT_EQ(first_pass.at(at++), b.src_nodes);
            EXPECT_EQ(first_pass.at(at++), b.indices);
          }
        }
        ASSERT_EQ(batch->typed_inputs.size(), 3u);
        EXPECT_EQ(batch->typed_inputs[0].positions.size(), batch->sampled.input_nodes.size());
        EXPECT_EQ(batch->typed_inputs[0].features.size(),
                  batch->sampled.input_nodes.size() * s.graph().type_feature_row_bytes(0));
        EXPECT_TRUE(batch->typed_inputs[1].positions.empty());
        EXPECT_TRUE(batch->typed_inputs[2].positions.empty());
      }
      EXPECT_GT(edges[0], 0);
      EXPECT_GT(edges[1], 0);
    }
  });
  EXPECT_EQ(failures, none(1));
}

// The HAN adapter on metapath batches: logits of the seeds, a training step's flops and
// gradients, the HAN signature, and one refusal each for full-graph eval and an untyped
// partition. The typed graph's authors have no features and the session no embedding
// table: HAN's batches hold papers only, so it needs none.
TEST_F(Seams, HanAdapterTrainsOnMetapathBatches) {
  TrainOptions ho = options();
  ho.model.kind = ModelKind::kHan;
  ho.model.layers = 1;
  ho.model.heads = 2;
  ho.loader.fanouts = {4};
  const auto failures = run(1, "typed1", ho, [](runtime::Session& s, const TrainOptions& o) {
    const std::unique_ptr<TrainTask> task = make_task(s, o);
    const std::unique_ptr<ModelAdapter> han = build_model({s, o});
    EXPECT_EQ(han->gnn(), nullptr);
    EXPECT_EQ(han->config_signature().at(0), nn::HanModel::kSignatureTag);
    loader::BatchPipeline pipeline(pipeline_options(s, o, *han, true, 0), task->epoch_seeds(0),
                                   task->sampler(), s.fetcher());
    std::optional<loader::Batch> batch = pipeline.next();
    ASSERT_TRUE(batch.has_value());
    han->module().train();
    double flops = 0;
    const torch::Tensor logits = han->forward(*batch, &flops);
    EXPECT_EQ(logits.sizes(),
              (std::vector<int64_t>{static_cast<int64_t>(batch->sampled.seeds.size()), 4}));
    EXPECT_GT(flops, 0);
    logits.sum().backward();
    int64_t with_grad = 0;
    for (const torch::Tensor& p : han->module().parameters())
      with_grad += p.grad().defined() && p.grad().abs().sum().item<double>() > 0;
    EXPECT_GT(with_grad, 0);
    han->after_backward();
    han->after_gradient_sum();
    TrainOptions full = o;
    full.eval.mode = EvalMode::kFull;
    EXPECT_EQ(parameter_of([&] { build_model({s, full}); }), "eval");
  });
  EXPECT_EQ(failures, none(1));
  const auto untyped = run(1, "p1", ho, [](runtime::Session& s, const TrainOptions& o) {
    EXPECT_EQ(parameter_of([&] { build_model({s, o}); }), "model");
  });
  EXPECT_EQ(untyped, none(1));
}

// ------------------------------------------------------------------------- NodeTask

// Over 2 ranks: the same plan everywhere, the steps' shares split each global batch, a
// step's loss is the summed cross-entropy over the global batch size, and validation is
// agreed (the same on both ranks).
TEST_F(Seams, NodeTaskSeedsLossAndEvaluation) {
  std::vector<int64_t> ids(2), steps(2);
  std::vector<std::vector<std::vector<int64_t>>> seeds(2);
  std::vector<double> val(2), test(2);
  const auto failures = run(2, "p2", options(), [&](runtime::Session& s, const TrainOptions& o) {
    const int r = s.rank();
    const std::unique_ptr<TrainTask> task = make_task(s, o);
    const std::unique_ptr<ModelAdapter> model = build_model({s, o});
    EXPECT_TRUE(task->needs_labels());
    ids[r] = task->plan().num_ids();
    steps[r] = task->plan().steps();
    seeds[r] = task->epoch_seeds(0);
    loader::BatchPipeline pipeline(pipeline_options(s, o, *model, true, 0), task->epoch_seeds(0),
                                   s.sampler(), s.fetcher());
    std::optional<loader::Batch> batch = pipeline.next();
    ASSERT_TRUE(batch.has_value());
    if (!batch->sampled.seeds.empty()) {
      double flops = 0;
      const StepLoss out = task->step_loss(*batch, 0, task->plan().batch_size(0), *model, &flops);
      EXPECT_GT(flops, 0);
      EXPECT_EQ(out.total, static_cast<int64_t>(batch->sampled.seeds.size()));
      EXPECT_LE(out.correct.item<int64_t>(), out.total);
      const double per_seed = out.loss.item<double>() * task->plan().batch_size(0) / out.total;
      EXPECT_GT(per_seed, 0.5) << "an untrained model's cross-entropy over 4 classes";
      EXPECT_LT(per_seed, 5.0);
    }
    val[r] = task->validate(*model, 1000, 0);
    TrainResult result;
    task->test(*model, 1001, 0, result);
    test[r] = result.test_acc;
  });
  EXPECT_EQ(failures, none(2));
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_EQ(ids[0], 900) << "1500 nodes, 60% training";
  EXPECT_EQ(steps[0], (900 + 63) / 64);
  ASSERT_EQ(seeds[0].size(), static_cast<size_t>(steps[0]));
  ASSERT_EQ(seeds[1].size(), seeds[0].size());
  int64_t total = 0;
  std::set<int64_t> seen;
  for (size_t st = 0; st < seeds[0].size(); ++st) {
    const int64_t n = static_cast<int64_t>(seeds[0][st].size() + seeds[1][st].size());
    EXPECT_EQ(n, std::min<int64_t>(64, 900 - 64 * static_cast<int64_t>(st))) << "step " << st;
    total += n;
    for (int r = 0; r < 2; ++r) seen.insert(seeds[r][st].begin(), seeds[r][st].end());
  }
  EXPECT_EQ(total, 900);
  EXPECT_EQ(seen.size(), 900u) << "every training node once";
  EXPECT_EQ(val[0], val[1]);
  EXPECT_EQ(test[0], test[1]);
  EXPECT_GT(val[0], 0);
  EXPECT_LT(val[0], 1);
}

// ------------------------------------------------------------------------- LinkTask

TEST_F(Seams, LinkTaskStepsLossAndMetrics) {
  TrainOptions lo = options();
  lo.task = Task::kLink;
  lo.link.negatives = 2;
  std::vector<double> val(2);
  std::vector<int64_t> positives(2), pairs(2);
  std::vector<std::optional<LinkMetrics>> test(2);
  const auto failures = run(2, "link2", lo, [&](runtime::Session& s, const TrainOptions& o) {
    const int r = s.rank();
    const std::unique_ptr<TrainTask> task = make_task(s, o);
    const std::unique_ptr<ModelAdapter> model = build_model({s, o});
    EXPECT_FALSE(task->needs_labels());
    const std::vector<std::vector<int64_t>> seeds = task->epoch_seeds(0);
    ASSERT_EQ(static_cast<int64_t>(seeds.size()), task->plan().steps());
    loader::BatchPipeline pipeline(pipeline_options(s, o, *model, false, 0), seeds, s.sampler(),
                                   s.fetcher());
    std::optional<loader::Batch> batch = pipeline.next();
    ASSERT_TRUE(batch.has_value());
    if (!batch->sampled.seeds.empty()) {
      const StepLoss out = task->step_loss(*batch, 0, task->plan().batch_size(0), *model, nullptr);
      // Every positive of this rank's share and its 2 negatives were scored.
      EXPECT_EQ(out.total % 3, 0);
      positives[r] = out.total / 3;
      EXPECT_GT(out.loss.item<double>(), 0);
    }
    pairs[r] = task->plan().batch_size(0);
    val[r] = task->validate(*model, 1000, 0);
    TrainResult result;
    task->test(*model, 1001, 0, result);
    test[r] = result.test_link;
  });
  EXPECT_EQ(failures, none(2));
  EXPECT_EQ(positives[0] + positives[1], pairs[0]) << "the shares split the global step";
  EXPECT_EQ(val[0], val[1]);
  ASSERT_TRUE(test[0].has_value() && test[1].has_value());
  EXPECT_EQ(test[0]->auc, test[1]->auc);
  EXPECT_GT(test[0]->positives, 0);
  EXPECT_EQ(test[0]->negatives, test[1]->negatives);

  // The hot-feature cache is refused by name (on every rank).
  TrainOptions cached = lo;
  cached.cache.ratio = 0.1;
  std::vector<std::string> named(2);
  const auto refused = run(2, "link2", cached, [&](runtime::Session& s, const TrainOptions& o) {
    named[s.rank()] = parameter_of([&] { make_task(s, o); });
  });
  EXPECT_EQ(refused, none(2));
  EXPECT_EQ(named, std::vector<std::string>(2, "cache_ratio"));
}

// --------------------------------------------------------------------- Checkpointer

TEST_F(Seams, CheckpointerSavesRefusesAndRestores) {
  TempDir ck;
  TrainOptions co = options();
  co.checkpoint.dir = ck / "ck";
  co.epochs = 3;
  std::vector<std::string> refused(2), wrong(2);
  std::vector<int64_t> empty(2), restored(2);
  std::vector<std::vector<float>> saved(2), loaded(2);
  const auto failures = run(2, "p2", co, [&](runtime::Session& s, const TrainOptions& o) {
    const int r = s.rank();
    const std::unique_ptr<ModelAdapter> model = build_model({s, o});
    torch::optim::SGD sgd(model->module().parameters(), torch::optim::SGDOptions(0.1));
    Checkpointer checkpointer(s, o);
    ASSERT_TRUE(checkpointer.enabled());
    empty[r] = checkpointer.restore(model->module(), sgd, model->config_signature());
    checkpointer.refuse_existing();  // nothing there yet
    saved[r] = flat(model->module());
    checkpointer.save(1, model->module(), sgd, model->config_signature());
    refused[r] = parameter_of([&] { checkpointer.refuse_existing(); });
    // Other weights, then back to the saved ones.
    {
      torch::NoGradGuard no_grad;
      for (auto& p : model->module().parameters()) p.add_(1.0);
    }
    std::vector<int64_t> other = model->config_signature();
    other[2] += 1;  // another hidden width
    wrong[r] = parameter_of([&] { checkpointer.restore(model->module(), sgd, other); });
    restored[r] = checkpointer.restore(model->module(), sgd, model->config_signature());
    loaded[r] = flat(model->module());
  });
  EXPECT_EQ(failures, none(2));
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(co.checkpoint.dir, 1)));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(empty[r], 0) << r;
    EXPECT_EQ(refused[r], "checkpoint_dir") << r;
    EXPECT_EQ(wrong[r], "resume") << r;
    EXPECT_EQ(restored[r], 1) << r;
    EXPECT_EQ(loaded[r], saved[r]) << r;
  }
}

}  // namespace
}  // namespace partita::train
