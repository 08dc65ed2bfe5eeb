// Trainer: see partita/train/trainer.h.
#include "partita/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include "partita/core/error.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/seeds.h"
#include "partita/nn/block_tensors.h"

namespace partita::train {
namespace {

// Sampling-key epochs of evaluation passes, far from training epochs.
constexpr uint64_t kEvalTagBase = uint64_t{1} << 40;

torch::Tensor features_tensor(loader::Batch& batch, int64_t feat_dim, bool normalize) {
  const int64_t rows = static_cast<int64_t>(batch.sampled.input_nodes.size());
  torch::Tensor x = torch::from_blob(batch.features.data(), {rows, feat_dim}, torch::kFloat32);
  if (!normalize) return x;
  return x / x.sum(1, /*keepdim=*/true).clamp_min(1e-12);
}

torch::Tensor labels_tensor(loader::Batch& batch) {
  return torch::from_blob(batch.labels.data(), {static_cast<int64_t>(batch.labels.size())},
                          torch::kInt64);
}

// Concatenation of every parameter's gradient (zeros where undefined), contiguous float.
torch::Tensor flat_grads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> parts;
  parts.reserve(params.size());
  for (const auto& p : params)
    parts.push_back(p.grad().defined() ? p.grad().reshape(-1) : torch::zeros({p.numel()}));
  return torch::cat(parts).contiguous();
}

}  // namespace

struct Trainer::Impl {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<torch::Tensor> params;
};

Trainer::Trainer(loader::DistSession& session, const TrainOptions& options)
    : session_(session), options_(options), impl_(std::make_unique<Impl>()) {
  const store::DistGraph& graph = session_.graph();
  nn::GnnOptions& m = options_.model;
  if (m.in_dim <= 0) m.in_dim = graph.feat_dim();
  if (m.out_dim <= 0) m.out_dim = graph.num_classes();
  PARTITA_CHECK(static_cast<int64_t>(options_.fanouts.size()) == m.layers, UsageError,
                "--layers ({}) must equal the number of --fanouts ({})", m.layers,
                options_.fanouts.size());
  for (int64_t k : options_.fanouts)
    PARTITA_CHECK(k >= 1 || k == -1, UsageError, "--fanouts: {} is not a fanout", k);
  PARTITA_CHECK(options_.epochs >= 1, UsageError, "--epochs: must be >= 1, got {}",
                options_.epochs);
  PARTITA_CHECK(options_.batch_size >= 1, UsageError, "--batch-size: must be >= 1, got {}",
                options_.batch_size);
  PARTITA_CHECK(options_.lr > 0, UsageError, "--lr: must be > 0, got {}", options_.lr);
  PARTITA_CHECK(options_.weight_decay >= 0, UsageError, "--weight-decay: must be >= 0, got {}",
                options_.weight_decay);
  PARTITA_CHECK(options_.threads >= 1, UsageError, "--threads: must be >= 1, got {}",
                options_.threads);
  PARTITA_CHECK(options_.prefetch >= 1, UsageError, "--prefetch: must be >= 1, got {}",
                options_.prefetch);
  torch::set_num_threads(std::max(1, options_.torch_threads));

  // Same seed on every rank: the same initial values; sync_initial_weights makes sure.
  torch::manual_seed(options_.seed);
  model_ = std::make_shared<nn::GnnModel>(m);
  impl_->params = model_->parameters();
  sync_initial_weights();
  // Dropout masks: reproducible per (seed, rank), different across ranks.
  torch::manual_seed(options_.seed * 1000003 + static_cast<uint64_t>(session_.rank()) + 1);

  if (options_.optimizer == OptimizerKind::kAdam) {
    impl_->optimizer = std::make_unique<torch::optim::Adam>(
        impl_->params, torch::optim::AdamOptions(options_.lr).weight_decay(options_.weight_decay));
  } else {
    impl_->optimizer = std::make_unique<torch::optim::SGD>(
        impl_->params, torch::optim::SGDOptions(options_.lr).weight_decay(options_.weight_decay));
  }
}

Trainer::~Trainer() = default;

// Collectives has no broadcast: rank != 0 contributes zeros to an allreduce sum, so every
// rank ends with rank 0's values.
void Trainer::sync_initial_weights() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (const auto& p : impl_->params) parts.push_back(p.detach().reshape(-1));
  torch::Tensor flat = torch::cat(parts).contiguous();
  if (session_.rank() != 0) flat.zero_();
  session_.collectives().allreduce(flat.data_ptr<float>(), static_cast<size_t>(flat.numel()));
  int64_t offset = 0;
  for (auto& p : impl_->params) {
    p.copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

void Trainer::average_gradients() {
  torch::NoGradGuard no_grad;
  torch::Tensor flat = flat_grads(impl_->params);
  session_.collectives().allreduce(flat.data_ptr<float>(), static_cast<size_t>(flat.numel()));
  flat.div_(static_cast<double>(session_.size()));
  int64_t offset = 0;
  for (auto& p : impl_->params) {
    torch::Tensor g = flat.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(g);
    else
      p.mutable_grad() = g.clone();
    offset += p.numel();
  }
}

std::vector<int64_t> Trainer::local_ids(ArrayView<const int64_t> ids) const {
  if (session_.graph().replicated())
    return loader::even_share(ids, session_.rank(), session_.size());
  return std::vector<int64_t>(ids.begin(), ids.end());
}

EpochRecord Trainer::run_epoch(int64_t epoch) {
  const store::DistGraph& graph = session_.graph();
  Collectives& coll = session_.collectives();
  EpochRecord rec;
  rec.epoch = epoch;
  const std::vector<int64_t> mine = local_ids(graph.train_ids());
  std::vector<int64_t> seeds =
      loader::epoch_seeds(ArrayView<const int64_t>(mine.data(), mine.size()), options_.seed, epoch);
  const int64_t local_steps =
      loader::steps_per_epoch(static_cast<int64_t>(seeds.size()), options_.batch_size);
  rec.steps = coll.allreduce_one(local_steps, ReduceOp::kMax);
  PARTITA_CHECK(rec.steps == 0 || !seeds.empty(), Error,
                "rank {} owns no training nodes while others do; repartition", session_.rank());

  loader::BatchPipelineOptions po;
  po.threads = options_.threads;
  po.prefetch = options_.prefetch;
  po.fanouts = options_.fanouts;
  po.seed = options_.seed;
  po.epoch = static_cast<uint64_t>(epoch);
  po.batch_size = options_.batch_size;
  po.feat_dim = graph.feat_dim();

  model_->train();
  Stopwatch epoch_watch;
  double loss_sum = 0;
  int64_t correct = 0, total = 0;
  loader::BatchPipeline pipeline(po, std::move(seeds), session_.sampler(), session_.fetcher(),
                                 rec.steps);
  for (;;) {
    Stopwatch watch;
    std::optional<loader::Batch> batch = pipeline.next();
    rec.wait_s += watch.seconds();
    if (!batch) break;
    rec.sample_s += batch->sample_s;
    rec.fetch_s += batch->fetch_s;
    watch.restart();
    const auto blocks = nn::to_block_tensors(batch->sampled.blocks);
    const torch::Tensor x = features_tensor(*batch, graph.feat_dim(), options_.normalize_features);
    const torch::Tensor y = labels_tensor(*batch);
    impl_->optimizer->zero_grad();
    const torch::Tensor logits = model_->forward(blocks, x);
    const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    loss.backward();
    loss_sum += loss.item<double>();
    correct += logits.argmax(1).eq(y).sum().item<int64_t>();
    total += y.size(0);
    rec.compute_s += watch.seconds();
    watch.restart();
    average_gradients();
    rec.allreduce_s += watch.seconds();
    watch.restart();
    impl_->optimizer->step();
    rec.compute_s += watch.seconds();
  }
  rec.epoch_s = epoch_watch.seconds();
  std::vector<double> sums{rec.steps > 0 ? loss_sum / static_cast<double>(rec.steps) : 0.0,
                           static_cast<double>(correct), static_cast<double>(total)};
  coll.allreduce_sum(sums);
  rec.loss = sums[0] / session_.size();
  rec.train_acc = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  Stopwatch eval_watch;
  rec.val_acc = evaluate(graph.valid_ids(), kEvalTagBase + static_cast<uint64_t>(epoch));
  rec.eval_s = eval_watch.seconds();
  return rec;
}

double Trainer::evaluate(ArrayView<const int64_t> ids, uint64_t tag) {
  const store::DistGraph& graph = session_.graph();
  std::vector<int64_t> seeds = local_ids(ids);
  loader::BatchPipelineOptions po;
  po.threads = options_.threads;
  po.prefetch = options_.prefetch;
  po.fanouts = options_.fanouts;
  po.seed = options_.seed;
  po.epoch = tag;
  po.batch_size = options_.batch_size;
  po.feat_dim = graph.feat_dim();
  const int64_t steps = loader::steps_per_epoch(static_cast<int64_t>(seeds.size()), po.batch_size);
  int64_t correct = 0, total = 0;
  {
    torch::NoGradGuard no_grad;
    model_->eval();
    // No collective per batch: ranks may run different numbers of eval batches.
    loader::BatchPipeline pipeline(po, std::move(seeds), session_.sampler(), session_.fetcher(),
                                   steps);
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      const torch::Tensor logits = model_->forward(nn::to_block_tensors(batch->sampled.blocks),
                                                   features_tensor(*batch, graph.feat_dim(), options_.normalize_features));
      const torch::Tensor y = labels_tensor(*batch);
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      total += y.size(0);
    }
    model_->train();
  }
  std::vector<int64_t> counts{correct, total};
  session_.collectives().allreduce_sum(counts);
  return counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
}

TrainResult Trainer::train(const std::function<void(const EpochRecord&)>& on_epoch) {
  TrainResult result;
  for (int64_t e = 0; e < options_.epochs; ++e) {
    result.epochs.push_back(run_epoch(e));
    if (on_epoch) on_epoch(result.epochs.back());
  }
  result.test_acc = evaluate(session_.graph().test_ids(), kEvalTagBase - 1);
  return result;
}

double Trainer::parameter_checksum() const {
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (const auto& p : impl_->params) {
    torch::Tensor flat = p.detach().reshape(-1).to(torch::kFloat64);
    torch::Tensor w = torch::arange(flat.numel(), torch::kInt64).remainder(7).add(1);
    sum += (flat * w.to(torch::kFloat64)).sum().item<double>();
  }
  return sum;
}

}  // namespace partita::train
