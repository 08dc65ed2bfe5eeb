// Trainer: the epoch loop over the seams of training (see partita/train/trainer.h).
#include "partita/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/cache_warmup.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seed_plans.h"
#include "partita/nn/precision.h"
#include "partita/train/checkpointer.h"
#include "partita/train/gradient_sync.h"
#include "partita/train/model_adapter.h"
#include "partita/train/train_task.h"
#include "resolved_options.h"

namespace partita::train {
namespace {

// Sampling-key epochs of evaluation passes, far from training epochs.
constexpr uint64_t kEvalTagBase = uint64_t{1} << 40;
// Sampling-key epoch of the cache's pre-sampling, apart from training and evaluation.
constexpr uint64_t kCacheTag = kEvalTagBase - 2;  // the test pass uses kEvalTagBase - 1
// Stream tag of the per-step dropout keys.
constexpr uint64_t kDropoutStream = 0x64726f706f7574ULL;

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o,
                                                        const std::vector<torch::Tensor>& params) {
  if (o.optimizer == OptimizerKind::kAdam)
    return std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(o.lr).weight_decay(o.weight_decay));
}

}  // namespace

void check_options(const TrainOptions& o) {
  const nn::GnnOptions& m = o.model;
  PARTITA_CHECK(m.layers >= 1, UsageError, "--layers: must be >= 1, got {}", m.layers);
  PARTITA_CHECK(m.hidden >= 1, UsageError, "--hidden: must be >= 1, got {}", m.hidden);
  PARTITA_CHECK(m.heads >= 1, UsageError, "--heads: must be >= 1, got {}", m.heads);
  PARTITA_CHECK(m.dropout >= 0 && m.dropout < 1, UsageError, "--dropout: must be in [0, 1), got {}",
                m.dropout);
  PARTITA_CHECK(m.attention_dropout == -1 || (m.attention_dropout >= 0 && m.attention_dropout < 1),
                UsageError,
                "--attention-dropout: must be in [0, 1) (or -1: same as --dropout), got {}",
                m.attention_dropout);
  PARTITA_CHECK(static_cast<int64_t>(o.fanouts.size()) == o.model.layers, UsageError,
                "--layers ({}) must equal the number of --fanouts ({})", o.model.layers,
                o.fanouts.size());
  for (size_t h = 0; h < o.fanouts.size(); ++h) {
    // A hop given per relation was checked by sample::resolve_fanouts (its default may be
    // 0 beside named relations).
    if (h < o.relation_fanouts.size() && !o.relation_fanouts[h].empty()) continue;
    const int64_t k = o.fanouts[h];
    PARTITA_CHECK(k >= 1 || k == -1, UsageError, "--fanouts: {} is not a fanout", k);
  }
  PARTITA_CHECK(o.epochs >= 1, UsageError, "--epochs: must be >= 1, got {}", o.epochs);
  PARTITA_CHECK(o.batch_size >= 1, UsageError, "--batch-size: must be >= 1, got {}", o.batch_size);
  PARTITA_CHECK(o.max_steps >= 0, UsageError, "--max-steps: must be >= 0 (0: every step), got {}",
                o.max_steps);
  PARTITA_CHECK(o.lr > 0, UsageError, "--lr: must be > 0, got {}", o.lr);
  PARTITA_CHECK(o.weight_decay >= 0, UsageError, "--weight-decay: must be >= 0, got {}",
                o.weight_decay);
  PARTITA_CHECK(o.threads >= 1 && o.threads <= 256, UsageError,
                "--threads: must be in [1, 256], got {}", o.threads);
  PARTITA_CHECK(o.prefetch >= 1 && o.prefetch <= 1024, UsageError,
                "--prefetch: must be in [1, 1024], got {}", o.prefetch);
  PARTITA_CHECK(o.torch_threads >= 1 && o.torch_threads <= 1024, UsageError,
                "--torch-threads: must be in [1, 1024], got {}", o.torch_threads);
  PARTITA_CHECK(o.eval_every >= 0, UsageError, "--eval-every: must be >= 0, got {}", o.eval_every);
  PARTITA_CHECK(o.bucket_bytes >= sizeof(float), UsageError,
                "allreduce bucket of {} bytes is too small", o.bucket_bytes);
  PARTITA_CHECK(!o.resume || !o.checkpoint_dir.empty(), UsageError,
                "--resume needs --checkpoint-dir");
  loader::check_cache_options(o.cache_ratio, o.cache_presample_batches);
  PARTITA_CHECK(o.link.negatives >= 1 && o.link.negatives <= 1000, UsageError,
                "--negatives: must be in [1, 1000] corrupted pairs per positive, got {}",
                o.link.negatives);
  PARTITA_CHECK(o.link.hits_k >= 1, UsageError, "--metric hits@K: K must be >= 1, got {}",
                o.link.hits_k);
  PARTITA_CHECK(o.task == Task::kNode || !o.rgcn, UsageError,
                "--task link: not with --model rgcn (link prediction runs on homogeneous "
                "partitions with sage, gcn or gat)");
  PARTITA_CHECK(o.model.precision != nn::Precision::kBf16 || nn::cpu_supports_bf16(), UsageError,
                "--precision bf16: this CPU has no native bfloat16 arithmetic (AVX512-BF16 or "
                "AMX-BF16); use --precision fp32");
}

Trainer::Trainer(runtime::Session& session, const TrainOptions& options)
    : session_(session), options_(resolved_options(session.graph(), options)) {
  check_options(options_);
  torch::set_num_threads(std::max(1, options_.torch_threads));
  // The batch plans (see the header): every rank learns every id of every split.
  task_ = make_task(session_, options_);
  model_ = build_model(model_context(session_, options_));
  sync_ = std::make_unique<GradientSync>(session_.collectives(), model_->module().parameters(),
                                         options_.bucket_bytes);
  sync_->broadcast_initial_weights();

  loader::CacheWarmupOptions cw;
  cw.ratio = options_.cache_ratio;
  cw.presample_batches = options_.cache_presample_batches;
  cw.fanouts = options_.fanouts;
  cw.seed = options_.seed;
  cw.epoch = kCacheTag;
  cw.trainers = session_.size();
  loader::CacheWarmup warm = loader::warm_feature_cache(
      session_.sampler(), session_.fetcher(), session_.graph(), task_->plan(),
      loader::SeedShare(session_.graph(), session_.rank(), session_.size()), cw);
  if (warm.built) {
    cache_ = std::move(warm.cache);
    session_.fetcher().set_cache(&cache_);
    cache_report_ = {cache_.rows(), cache_.bytes(), warm.seconds, warm.presample_batches,
                     warm.expected_hit_rate};
  }
  optimizer_ = make_optimizer(options_, sync_->params());
  checkpointer_ = std::make_unique<Checkpointer>(session_, options_);
}

Trainer::~Trainer() { session_.fetcher().set_cache(nullptr); }

nn::GnnModel& Trainer::model() {
  PARTITA_CHECK(model_->gnn() != nullptr, Error, "internal: model() of an R-GCN trainer");
  return *model_->gnn();
}

torch::nn::Module& Trainer::module() { return model_->module(); }
int64_t Trainer::steps_per_epoch() const { return task_->plan().steps(); }
int64_t Trainer::num_train_ids() const { return task_->plan().num_ids(); }

EpochRecord Trainer::run_epoch(int64_t epoch,
                               const std::function<void(const StepRecord&)>& on_step) {
  const loader::GlobalBatches& plan = task_->plan();
  EpochRecord rec;
  rec.epoch = epoch + 1;
  const int64_t steps =
      options_.max_steps > 0 ? std::min(plan.steps(), options_.max_steps) : plan.steps();
  rec.steps = steps;

  loader::BatchPipeline pipeline(
      pipeline_options(session_, options_, model_->needs_degrees(), task_->needs_labels(),
                       static_cast<uint64_t>(epoch)),
      task_->epoch_seeds(epoch), session_.sampler(), session_.fetcher());
  model_->module().train();
  Stopwatch epoch_watch;
  double loss_sum = 0;
  int64_t correct = 0, total = 0, seeds_done = 0;
  for (int64_t step = 0; step < steps; ++step) {
    Stopwatch watch;
    std::optional<loader::Batch> batch = pipeline.next();
    PARTITA_CHECK(batch.has_value(), Error, "internal: batch pipeline ended at step {} of {}", step,
                  steps);
    rec.wait_s += watch.seconds();
    watch.restart();
    optimizer_->zero_grad();
    double local_loss = 0;
    // Dropout masks: a function of (seed, epoch, step, rank), so a resumed run repeats them.
    model_->set_dropout_key(stream_key(options_.seed, static_cast<uint64_t>(epoch),
                                       static_cast<uint64_t>(step),
                                       static_cast<uint64_t>(session_.rank()), kDropoutStream));
    // The exact mean over this step's global batch, the last (shorter) one included.
    const int64_t global_batch = plan.batch_size(step);
    rec.sample_s += batch->sample_s;
    rec.fetch_s += batch->fetch_s;
    if (!batch->sampled.seeds.empty()) {
      double flops = 0;
      const StepLoss out = task_->step_loss(*batch, step, global_batch, *model_, &flops);
      rec.matmul_gflop += flops * 1e-9;
      out.loss.backward();
      model_->after_backward();
      local_loss = out.loss.item<double>();
      correct += out.correct;
      total += out.total;
    }
    rec.compute_s += watch.seconds();
    watch.restart();
    const double step_loss = sync_->sum_gradients(local_loss);
    model_->after_gradient_sum();
    rec.allreduce_s += watch.seconds();
    watch.restart();
    optimizer_->step();
    ++weight_updates_;
    rec.compute_s += watch.seconds();
    loss_sum += step_loss;
    seeds_done += global_batch;
    if (on_step) {
      on_step(StepRecord{rec.epoch, step + 1, steps, step_loss, seeds_done, epoch_watch.seconds()});
    }
  }
  sync_->average_buffers(model_->module());
  rec.epoch_s = epoch_watch.seconds();
  rec.loss = steps > 0 ? loss_sum / static_cast<double>(steps) : 0.0;
  rec.seeds = seeds_done;
  std::vector<int64_t> counts{correct, total};
  session_.collectives().allreduce_sum(counts);
  rec.train_acc =
      counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
  return rec;
}

TrainResult Trainer::train(const std::function<void(const EpochRecord&)>& on_epoch,
                           const std::function<void(const StepRecord&)>& on_step) {
  TrainResult result;
  result.cache = cache_report_;
  result.eval = options_.eval_full ? "full" : "sampled";
  Stopwatch watch;
  if (options_.resume) {
    result.resumed_epochs =
        checkpointer_->restore(model_->module(), *optimizer_, model_->config_signature());
    ++weight_updates_;  // new weights: full-graph predictions made before are stale
  } else if (checkpointer_->enabled()) {
    checkpointer_->refuse_existing();
  }
  for (int64_t e = result.resumed_epochs; e < options_.epochs; ++e) {
    const uint64_t requests_before = session_.request_bytes_sent();
    const store::FetchStats fetch_before = session_.fetcher().stats();
    const uint64_t collectives_before = session_.collectives().bytes_contributed();
    EpochRecord rec = run_epoch(e, on_step);
    const bool last = e + 1 == options_.epochs;
    if (options_.eval_every > 0 && ((e + 1) % options_.eval_every == 0 || last)) {
      Stopwatch eval_watch;
      rec.validated = true;
      rec.val_acc =
          task_->validate(*model_, kEvalTagBase + static_cast<uint64_t>(e), weight_updates_);
      rec.eval_s = eval_watch.seconds();
    }
    rec.request_bytes = static_cast<int64_t>(session_.request_bytes_sent() - requests_before);
    rec.collective_bytes =
        static_cast<int64_t>(session_.collectives().bytes_contributed() - collectives_before);
    const store::FetchStats fetch_after = session_.fetcher().stats();
    rec.remote_rows = fetch_after.remote_rows - fetch_before.remote_rows;
    rec.cache_hits = fetch_after.cache_hits - fetch_before.cache_hits;
    if (checkpointer_->enabled()) {
      Stopwatch checkpoint_watch;
      checkpointer_->save(e + 1, model_->module(), *optimizer_, model_->config_signature());
      rec.checkpoint_s = checkpoint_watch.seconds();
    }
    rec.rss_bytes = current_rss_bytes();
    rec.threads = thread_count();
    rec.open_fds = open_fd_count();
    result.epochs.push_back(rec);
    if (on_epoch) on_epoch(result.epochs.back());
  }
  task_->test(*model_, kEvalTagBase - 1, weight_updates_, result);
  result.train_s = watch.seconds();
  return result;
}

double Trainer::parameter_checksum() const {
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (const auto& p : sync_->params()) {
    torch::Tensor flat = p.detach().reshape(-1).to(torch::kFloat64);
    torch::Tensor w = torch::arange(flat.numel(), torch::kInt64).remainder(7).add(1);
    sum += (flat * w.to(torch::kFloat64)).sum().item<double>();
  }
  return sum;
}

}  // namespace partita::train
