// Trainer: see partita/train/trainer.h.
#include "partita/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "feature_tensors.h"
#include "link_data.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seeds.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/precision.h"
#include "partita/train/checkpoint.h"
#include "partita/train/inference.h"
#include "typed_inputs.h"

namespace partita::train {
namespace {

// Sampling-key epochs of evaluation passes, far from training epochs.
constexpr uint64_t kEvalTagBase = uint64_t{1} << 40;
// Sampling-key epoch of the cache's pre-sampling, apart from training and evaluation.
constexpr uint64_t kCacheTag = kEvalTagBase - 2;  // the test pass uses kEvalTagBase - 1
// Stream tag of the per-step dropout keys.
constexpr uint64_t kDropoutStream = 0x64726f706f7574ULL;
constexpr int kCheckpointsKept = 2;

// The model input of a batch. Features stay in their stored type until here: float32 (no
// copy), or 16-bit rows widened to float32, except bfloat16 rows for a bf16 model, which
// take them as they are. Normalizing works in float32.
torch::Tensor features_tensor(loader::Batch& batch, const store::DistGraph& graph, bool normalize,
                              bool bf16_model) {
  const int64_t rows = static_cast<int64_t>(batch.sampled.input_nodes.size());
  torch::Tensor x = torch::from_blob(batch.features.data(), {rows, graph.feat_dim()},
                                     torch_type_of(graph.feature_dtype()));
  const bool keep = !normalize && bf16_model && graph.feature_dtype() == DType::kBFloat16;
  if (!keep) x = x.to(torch::kFloat32);
  if (!normalize) return x;
  return row_normalized(x, [&batch](int64_t row, double sum) {
    return fmt::format(
        "normalize_features: the features of node {} (partition id) sum to {:g}; row "
        "normalization divides each row by its sum and needs non-negative features (as "
        "bag-of-words); leave it off for these features",
        batch.sampled.input_nodes[static_cast<size_t>(row)], sum);
  });
}

torch::Tensor labels_tensor(loader::Batch& batch) {
  return torch::from_blob(batch.labels.data(), {static_cast<int64_t>(batch.labels.size())},
                          torch::kInt64);
}

}  // namespace

struct Trainer::EmbeddingRows {
  TypedBatchInputs last;  // inputs of the last training forward (R-GCN)
};

struct Trainer::Impl {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<torch::Tensor> params;
};

Trainer::Trainer(runtime::Session& session, const TrainOptions& options)
    : session_(session), options_(options), impl_(std::make_unique<Impl>()) {
  const store::DistGraph& graph = session_.graph();
  ModelOptions& m = options_.model;
  if (m.in_dim <= 0) m.in_dim = graph.feat_dim();
  // Link prediction: the output layer gives the node embeddings, as wide as the hidden ones.
  if (m.out_dim <= 0) m.out_dim = options_.task == Task::kLink ? m.hidden : graph.num_classes();
  check_options(options_);
  check_model_fits(graph);
  torch::set_num_threads(std::max(1, options_.torch_threads));

  // The batch plans (see the header): every rank learns every id of every split.
  if (options_.task == Task::kLink) {
    setup_link_task();
  } else {
    plan_ = std::make_unique<loader::GlobalBatches>(all_ids(runtime::Split::kTrain),
                                                    options_.loader.batch_size);
    PARTITA_CHECK(plan_->num_ids() > 0, Error, "{}: the partition has no training nodes",
                  graph.dir());
    valid_plan_ = std::make_unique<loader::GlobalBatches>(all_ids(runtime::Split::kValid),
                                                          options_.loader.batch_size);
    test_plan_ = std::make_unique<loader::GlobalBatches>(all_ids(runtime::Split::kTest),
                                                         options_.loader.batch_size);
  }

  // Same seed on every rank: the same initial values; sync_initial_weights makes sure.
  // Torch's generator is process-wide: ranks that are threads of one process (in-process
  // runs) build their models one at a time so each draws exactly the seeded values.
  {
    static std::mutex generator_mutex;
    std::lock_guard<std::mutex> lock(generator_mutex);
    torch::manual_seed(options_.seed);
    if (options_.model.kind == ModelKind::kRgcn) {
      rgcn_ = std::make_shared<nn::RgcnModel>(rgcn_options(graph));
      module_ = rgcn_;
    } else if (options_.task == Task::kLink) {
      link_ = std::make_shared<nn::LinkModel>(gnn_options(m), options_.link.decoder);
      model_ = link_->encoder_ptr();
      module_ = link_;
    } else {
      model_ = std::make_shared<nn::GnnModel>(gnn_options(m));
      module_ = model_;
    }
  }
  embedding_rows_ = std::make_unique<EmbeddingRows>();
  impl_->params = module_->parameters();
  sync_initial_weights();
  build_cache();

  if (options_.optimizer.kind == OptimizerKind::kAdam) {
    impl_->optimizer = std::make_unique<torch::optim::Adam>(
        impl_->params, torch::optim::AdamOptions(options_.optimizer.lr)
                           .weight_decay(options_.optimizer.weight_decay));
  } else {
    impl_->optimizer = std::make_unique<torch::optim::SGD>(
        impl_->params, torch::optim::SGDOptions(options_.optimizer.lr)
                           .weight_decay(options_.optimizer.weight_decay));
  }
}

Trainer::~Trainer() { session_.fetcher().set_cache(nullptr); }

nn::GnnModel& Trainer::model() {
  PARTITA_CHECK(model_ != nullptr, Error, "internal: model() of an R-GCN trainer");
  return *model_;
}

void Trainer::check_model_fits(const store::DistGraph& graph) const {
  const bool rgcn = options_.model.kind == ModelKind::kRgcn;
  PARTITA_CHECK_PARAM(!rgcn || graph.typed(), "model",
                      "rgcn needs node and edge types, and {} is not a typed (heterogeneous) "
                      "partition (use `model` sage, gcn or gat)",
                      graph.dir());
  PARTITA_CHECK_PARAM(rgcn || !graph.typed(), "model",
                      "{} is a typed (heterogeneous) partition: use `model` rgcn", graph.dir());
  PARTITA_CHECK_PARAM(options_.model.num_bases >= 0, "num_bases", "must be >= 0, got {}",
                      options_.model.num_bases);
  if (graph.typed()) {
    const int relations = graph.typed_meta().num_relations();
    PARTITA_CHECK_PARAM(options_.model.num_bases <= relations, "num_bases",
                        "{} bases for {} relations; use at most {} (or 0: one weight per "
                        "relation)",
                        options_.model.num_bases, relations, relations);
  }
  PARTITA_CHECK_PARAM(
      options_.eval.mode != EvalMode::kFull || (!rgcn && session_.role() == runtime::Role::kWorker),
      "eval",
      "full-graph inference (full) supports GraphSAGE, GCN and GAT in worker "
      "mode (not `model` rgcn, not `servers`); use `eval` sampled");
  PARTITA_CHECK_PARAM(!graph.typed() || options_.cache.ratio == 0, "cache_ratio",
                      "the hot-feature cache does not support typed partitions yet");
  if (options_.task == Task::kLink) {
    PARTITA_CHECK_PARAM(!graph.typed() && !rgcn, "task",
                        "link: {} is a typed (heterogeneous) partition; link prediction "
                        "supports homogeneous partitions",
                        graph.dir());
    PARTITA_CHECK_PARAM(session_.role() == runtime::Role::kWorker, "task",
                        "link is not possible in server-client mode (`servers`); run in worker "
                        "mode");
    PARTITA_CHECK_PARAM(options_.cache.ratio == 0, "cache_ratio",
                        "the hot-feature cache does not support `task` link yet");
  }
  const sample::Fanouts& fanouts = options_.loader.fanouts;
  if (fanouts.per_relation()) {
    PARTITA_CHECK_PARAM(fanouts.relations.size() == fanouts.num_hops(), "fanouts",
                        "{} hops of relation fanouts for {} hops", fanouts.relations.size(),
                        fanouts.num_hops());
  }
  if (graph.typed()) {
    for (const std::vector<int64_t>& hop : fanouts.relations) {
      PARTITA_CHECK_PARAM(
          hop.empty() || static_cast<int>(hop.size()) == graph.typed_meta().num_relations(),
          "fanouts", "a hop gives fanouts for {} relations, the graph has {}", hop.size(),
          graph.typed_meta().num_relations());
    }
  }
}

nn::RgcnOptions Trainer::rgcn_options(const store::DistGraph& graph) const {
  const partition::TypedMeta& typed = graph.typed_meta();
  nn::RgcnOptions r;
  r.num_relations = typed.num_relations();
  for (const partition::TypedNodeType& t : typed.node_types) r.type_dims.push_back(t.feat_dim);
  r.hidden = options_.model.hidden;
  r.out_dim = options_.model.out_dim;
  r.layers = options_.model.layers;
  r.num_bases = options_.model.num_bases;
  r.dropout = options_.model.dropout;
  r.precision = options_.model.precision;
  return r;
}

void Trainer::build_cache() {
  const store::DistGraph& graph = session_.graph();
  // A trainer of server-client mode owns no node: its budget (a share of them) is 0.
  if (options_.cache.ratio <= 0 || graph.replicated() || graph.client() || session_.size() == 1)
    return;
  Stopwatch watch;
  std::vector<std::vector<int64_t>> batches =
      plan_->epoch_batches(options_.seed, kCacheTag,
                           [this](const std::vector<int64_t>& batch) { return share_of(batch); });
  if (static_cast<int64_t>(batches.size()) > options_.cache.presample_batches)
    batches.resize(static_cast<size_t>(options_.cache.presample_batches));
  const loader::HotNodes hot = loader::hottest_remote_nodes(
      session_.sampler(), graph, batches, options_.loader.fanouts, options_.seed, kCacheTag,
      loader::cache_budget(graph, options_.cache.ratio));
  cache_ = store::FeatureCache::fetch(session_.fetcher(), hot.ids, graph.feature_row_bytes());
  session_.fetcher().set_cache(&cache_);
  cache_report_.rows = cache_.rows();
  cache_report_.bytes = cache_.bytes();
  cache_report_.presample_batches = hot.batches;
  cache_report_.expected_hit_rate =
      hot.remote_appearances > 0
          ? static_cast<double>(hot.covered) / static_cast<double>(hot.remote_appearances)
          : 0.0;
  cache_report_.presample_s = watch.seconds();
}

// Rank != 0 contributes zeros to an allreduce sum, so every rank ends with rank 0's values.
// BatchNorm's running statistics: each rank saw only its own seeds. Floating-point
// buffers are averaged over ranks (so evaluation and checkpoints use the same values on
// every rank); integer ones (batch counters) take rank 0's value.
void Trainer::average_buffers() {
  torch::NoGradGuard no_grad;
  Collectives& coll = session_.collectives();
  for (torch::Tensor& b : module_->buffers()) {
    if (!b.defined() || b.numel() == 0) continue;
    if (b.is_floating_point()) {
      torch::Tensor flat = b.detach().to(torch::kFloat64).reshape(-1).contiguous();
      coll.allreduce(flat.data_ptr<double>(), static_cast<size_t>(flat.numel()));
      b.copy_(flat.div_(coll.size()).view(b.sizes()));
    } else {
      torch::Tensor flat = b.detach().to(torch::kInt64).reshape(-1).contiguous();
      coll.broadcast(flat.data_ptr<int64_t>(), static_cast<size_t>(flat.numel()), 0);
      b.copy_(flat.view(b.sizes()));
    }
  }
}

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

double Trainer::sum_gradients(double loss) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  parts.reserve(impl_->params.size() + 1);
  for (const auto& p : impl_->params)
    parts.push_back(p.grad().defined() ? p.grad().reshape(-1) : torch::zeros({p.numel()}));
  parts.push_back(torch::full({1}, loss, torch::kFloat32));
  torch::Tensor flat = torch::cat(parts).contiguous();
  session_.collectives().allreduce_bucketed(flat.data_ptr<float>(),
                                            static_cast<size_t>(flat.numel()),
                                            options_.bucket_bytes / sizeof(float));
  int64_t offset = 0;
  for (auto& p : impl_->params) {
    torch::Tensor g = flat.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(g);
    else
      p.mutable_grad() = g.clone();
    offset += p.numel();
  }
  return flat[offset].item<double>();
}

std::vector<std::vector<int64_t>> Trainer::epoch_seed_batches(int64_t epoch) {
  if (options_.task == Task::kLink) return link_epoch_seeds(epoch);
  return plan_->epoch_batches(
      options_.seed, static_cast<uint64_t>(epoch),
      [this](const std::vector<int64_t>& batch) { return share_of(batch); });
}

std::vector<loader::SeedId> Trainer::all_ids(runtime::Split split) {
  const store::DistGraph& graph = session_.graph();
  std::vector<loader::SeedId> mine;
  // Server-client mode: the session gathered every id from the servers.
  if (session_.role() == runtime::Role::kTrainer) {
    const std::vector<runtime::SplitId>& job = session_.job_ids(split);
    mine.reserve(job.size());
    for (const runtime::SplitId& id : job) mine.push_back({id.original, id.global});
    return mine;
  }
  const ArrayView<const int64_t> ids = split == runtime::Split::kTrain   ? graph.train_ids()
                                       : split == runtime::Split::kValid ? graph.valid_ids()
                                                                         : graph.test_ids();
  mine.reserve(static_cast<size_t>(ids.size()));
  for (int64_t gid : ids) mine.push_back({graph.original_ids()[gid - graph.first_node()], gid});
  // Replicated: every rank already holds every id.
  if (graph.replicated()) return mine;
  return session_.collectives().allgather(mine);
}

std::vector<int64_t> Trainer::share_of(const std::vector<int64_t>& global_batch) const {
  const store::DistGraph& graph = session_.graph();
  // Replicated mode, and trainers of server-client mode (which own nothing): an even share
  // among the ranks that train.
  if (graph.replicated() || graph.client())
    return loader::even_share(global_batch, session_.rank(), session_.size());
  std::vector<int64_t> mine;
  for (int64_t gid : global_batch)
    if (graph.owns(gid)) mine.push_back(gid);
  return mine;
}

loader::BatchPipelineOptions Trainer::pipeline_options(uint64_t epoch_key) const {
  loader::BatchPipelineOptions po;
  po.threads = options_.loader.threads;
  po.prefetch = options_.loader.prefetch;
  po.fanouts = options_.loader.fanouts;
  po.seed = options_.seed;
  po.epoch = epoch_key;
  po.feature_row_bytes = session_.graph().feature_row_bytes();
  po.fetch_degrees = options_.model.kind == ModelKind::kGcn;
  po.fetch_labels = options_.task == Task::kNode;
  po.typed = session_.graph().typed();
  return po;
}

torch::Tensor Trainer::forward(loader::Batch& batch, double* flops) {
  const auto blocks = batch.degrees.empty()
                          ? nn::to_block_tensors(batch.sampled.blocks)
                          : nn::to_block_tensors(batch.sampled.blocks, batch.degrees);
  if (rgcn_ != nullptr) {
    TypedBatchInputs inputs =
        typed_inputs(batch, session_, rgcn_->is_training(), options_.normalize_features);
    if (flops != nullptr) *flops += rgcn_->training_matmul_flops(blocks, inputs.inputs);
    torch::Tensor logits = rgcn_->forward(blocks, inputs.inputs);
    embedding_rows_->last = std::move(inputs);
    return logits;
  }
  if (flops != nullptr) *flops += model_->training_matmul_flops(blocks);
  return model_->forward(blocks,
                         features_tensor(batch, session_.graph(), options_.normalize_features,
                                         options_.model.precision == nn::Precision::kBf16));
}

EpochRecord Trainer::run_epoch(int64_t epoch,
                               const std::function<void(const StepRecord&)>& on_step) {
  Collectives& coll = session_.collectives();
  EpochRecord rec;
  rec.epoch = epoch + 1;
  const int64_t steps = options_.loader.max_steps > 0
                            ? std::min(plan_->steps(), options_.loader.max_steps)
                            : plan_->steps();
  rec.steps = steps;

  loader::BatchPipeline pipeline(pipeline_options(static_cast<uint64_t>(epoch)),
                                 epoch_seed_batches(epoch), session_.sampler(), session_.fetcher());
  module_->train();
  const bool embeddings = has_embeddings(session_);
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
    impl_->optimizer->zero_grad();
    double local_loss = 0;
    // Dropout masks: a function of (seed, epoch, step, rank), so a resumed run repeats them.
    set_dropout_key(stream_key(options_.seed, static_cast<uint64_t>(epoch),
                               static_cast<uint64_t>(step), static_cast<uint64_t>(session_.rank()),
                               kDropoutStream));
    // The exact mean over this step's global batch, the last (shorter) one included.
    const int64_t global_batch = plan_->batch_size(step);
    rec.sample_s += batch->sample_s;
    rec.fetch_s += batch->fetch_s;
    if (!batch->sampled.seeds.empty() && options_.task == Task::kLink) {
      double flops = 0;
      const torch::Tensor loss = link_loss(*batch, step, global_batch, &correct, &total, &flops);
      rec.matmul_gflop += flops * 1e-9;
      loss.backward();
      local_loss = loss.item<double>();
    } else if (!batch->sampled.seeds.empty()) {
      double flops = 0;
      const torch::Tensor logits = forward(*batch, &flops);
      rec.matmul_gflop += flops * 1e-9;
      const torch::Tensor y = labels_tensor(*batch);
      const torch::Tensor loss =
          torch::nn::functional::cross_entropy(
              logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
          static_cast<double>(global_batch);
      loss.backward();
      if (embeddings) push_embedding_gradients(embedding_rows_->last, session_);
      embedding_rows_->last = {};
      local_loss = loss.item<double>();
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      total += y.size(0);
    }
    rec.compute_s += watch.seconds();
    watch.restart();
    const double step_loss = sum_gradients(local_loss);
    // Every push of the step has arrived (the allreduce is a barrier): apply them.
    if (embeddings) apply_embedding_updates(session_);
    rec.allreduce_s += watch.seconds();
    watch.restart();
    impl_->optimizer->step();
    ++weight_updates_;
    rec.compute_s += watch.seconds();
    loss_sum += step_loss;
    seeds_done += global_batch;
    if (on_step) {
      on_step(StepRecord{rec.epoch, step + 1, steps, step_loss, seeds_done, epoch_watch.seconds()});
    }
  }
  average_buffers();
  rec.epoch_s = epoch_watch.seconds();
  rec.loss = steps > 0 ? loss_sum / static_cast<double>(steps) : 0.0;
  rec.seeds = seeds_done;
  std::vector<int64_t> counts{correct, total};
  coll.allreduce_sum(counts);
  rec.train_acc =
      counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
  return rec;
}

double Trainer::evaluate_full(const loader::GlobalBatches& plan, uint64_t tag) {
  const store::DistGraph& graph = session_.graph();
  // Validation after the last epoch and the test then see the same weights: one pass.
  if (full_predictions_version_ != weight_updates_) {
    InferenceOptions inference;
    inference.normalize_features = options_.normalize_features;
    torch::NoGradGuard no_grad;
    full_predictions_ = infer_full_graph(session_, *model_, inference).predictions;
    full_predictions_version_ = weight_updates_;
    module_->train();
  }
  // This rank's ids of the plan (the ones it owns; an even share when replicated), each
  // compared with the prediction of its original id.
  std::vector<int64_t> mine;
  for (const std::vector<int64_t>& batch : plan.epoch_batches(
           options_.seed, tag, [this](const std::vector<int64_t>& b) { return share_of(b); }))
    mine.insert(mine.end(), batch.begin(), batch.end());
  std::vector<int64_t> labels(mine.size());
  session_.fetcher().fetch_labels(mine, labels.data());
  int64_t correct = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    const int64_t original = graph.original_ids()[mine[i] - graph.first_node()];
    correct += full_predictions_[static_cast<size_t>(original)] == labels[i] ? 1 : 0;
  }
  std::vector<int64_t> counts{correct, static_cast<int64_t>(mine.size())};
  session_.collectives().allreduce_sum(counts);
  return counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
}

double Trainer::evaluate(const loader::GlobalBatches& plan, uint64_t tag) {
  if (options_.eval.mode == EvalMode::kFull) return evaluate_full(plan, tag);
  int64_t correct = 0, total = 0;
  {
    torch::NoGradGuard no_grad;
    module_->eval();
    // No collective per batch: ranks skip their empty batches.
    loader::BatchPipeline pipeline(
        pipeline_options(tag),
        plan.epoch_batches(options_.seed, tag,
                           [this](const std::vector<int64_t>& batch) { return share_of(batch); }),
        session_.sampler(), session_.fetcher());
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      if (batch->sampled.seeds.empty()) continue;
      const torch::Tensor logits = forward(*batch);
      const torch::Tensor y = labels_tensor(*batch);
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      total += y.size(0);
    }
    module_->train();
  }
  std::vector<int64_t> counts{correct, total};
  session_.collectives().allreduce_sum(counts);
  return counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
}

TrainResult Trainer::train(const std::function<void(const EpochRecord&)>& on_epoch,
                           const std::function<void(const StepRecord&)>& on_step) {
  TrainResult result;
  result.cache = cache_report_;
  result.eval = name_of(eval_mode_names(), options_.eval.mode).c_str();
  Stopwatch watch;
  if (options_.checkpoint.resume) {
    result.resumed_epochs = restore_checkpoint();
  } else if (!options_.checkpoint.dir.empty()) {
    refuse_existing_checkpoints();
  }
  for (int64_t e = result.resumed_epochs; e < options_.epochs; ++e) {
    const uint64_t requests_before = session_.request_bytes_sent();
    const store::FetchStats fetch_before = session_.fetcher().stats();
    const uint64_t collectives_before = session_.collectives().bytes_contributed();
    EpochRecord rec = run_epoch(e, on_step);
    const bool last = e + 1 == options_.epochs;
    if (options_.eval.every > 0 && ((e + 1) % options_.eval.every == 0 || last)) {
      Stopwatch eval_watch;
      rec.validated = true;
      const uint64_t tag = kEvalTagBase + static_cast<uint64_t>(e);
      rec.val_acc = options_.task == Task::kLink
                        ? link_metric_value(options_.link, evaluate_link(false, tag))
                        : evaluate(*valid_plan_, tag);
      rec.eval_s = eval_watch.seconds();
    }
    rec.request_bytes = static_cast<int64_t>(session_.request_bytes_sent() - requests_before);
    rec.collective_bytes =
        static_cast<int64_t>(session_.collectives().bytes_contributed() - collectives_before);
    const store::FetchStats fetch_after = session_.fetcher().stats();
    rec.remote_rows = fetch_after.remote_rows - fetch_before.remote_rows;
    rec.cache_hits = fetch_after.cache_hits - fetch_before.cache_hits;
    if (!options_.checkpoint.dir.empty()) {
      Stopwatch checkpoint_watch;
      save_checkpoint(e + 1);
      rec.checkpoint_s = checkpoint_watch.seconds();
    }
    rec.rss_bytes = current_rss_bytes();
    rec.threads = thread_count();
    rec.open_fds = open_fd_count();
    result.epochs.push_back(rec);
    if (on_epoch) on_epoch(result.epochs.back());
  }
  if (options_.task == Task::kLink)
    result.test_link = evaluate_link(true, kEvalTagBase - 1);
  else
    result.test_acc = evaluate(*test_plan_, kEvalTagBase - 1);
  result.train_s = watch.seconds();
  return result;
}

void Trainer::set_dropout_key(uint64_t key) {
  if (rgcn_ != nullptr)
    rgcn_->set_dropout_key(key);
  else
    model_->set_dropout_key(key);
}

std::vector<int64_t> Trainer::config_signature() const {
  if (rgcn_ != nullptr) {
    std::vector<int64_t> signature = rgcn_->config_signature();
    signature.push_back(static_cast<int64_t>(options_.optimizer.kind));
    return signature;
  }
  const nn::GnnOptions& m = model_->options();
  const int64_t heads = m.kind == nn::ConvKind::kGat ? m.heads : 1;  // only GAT reads it
  std::vector<int64_t> signature{static_cast<int64_t>(m.kind),
                                 m.in_dim,
                                 m.hidden,
                                 m.out_dim,
                                 m.layers,
                                 heads,
                                 static_cast<int64_t>(m.norm),
                                 static_cast<int64_t>(options_.optimizer.kind)};
  if (link_ != nullptr) {
    signature.push_back(kLinkSignatureTag);
    signature.push_back(static_cast<int64_t>(link_->decoder()));
  }
  return signature;
}

void Trainer::save_checkpoint(int64_t epochs_done) {
  const std::string path = checkpoint_path(options_.checkpoint.dir, epochs_done);
  // The embeddings first: a checkpoint file implies its embeddings are there too.
  save_embeddings(epochs_done);
  // Every rank learns the outcome, so no rank goes on while rank 0 fails.
  run_agreed(session_.collectives(), fmt::format("rank 0 could not write checkpoint {}", path),
             [&] {
               if (session_.rank() != 0) return;
               CheckpointMeta meta{epochs_done, options_.seed, config_signature(),
                                   options_.checkpoint.settings};
               write_file_atomic(path, serialize_checkpoint(*module_, *impl_->optimizer, meta));
               prune_checkpoints(options_.checkpoint.dir, kCheckpointsKept);
             });
}

void Trainer::refuse_existing_checkpoints() {
  // found: 1 = the directory holds a checkpoint, -1 = rank 0 could not look.
  int64_t found = 0;
  std::string latest;
  std::exception_ptr error;
  if (session_.rank() == 0) {
    try {
      if (std::optional<std::string> path = latest_checkpoint(options_.checkpoint.dir)) {
        found = 1;
        latest = *path;
      }
    } catch (...) {
      error = std::current_exception();
      found = -1;
    }
  }
  session_.collectives().broadcast(&found, 1, 0);
  if (error) std::rethrow_exception(error);
  PARTITA_CHECK(found >= 0, Error, "rank 0 could not list {}", options_.checkpoint.dir);
  PARTITA_CHECK_PARAM(found == 0, "checkpoint_dir",
                      "{} already holds checkpoints{}: pass `resume` to continue from the "
                      "latest, or choose another directory",
                      options_.checkpoint.dir, latest.empty() ? "" : " (" + latest + ")");
}

int64_t Trainer::restore_checkpoint() {
  const SharedCheckpoint checkpoint =
      broadcast_latest_checkpoint(session_.collectives(), options_.checkpoint.dir);
  if (!checkpoint.found) {
    if (session_.rank() == 0)
      log_info("no checkpoint in {}: starting from epoch 1", options_.checkpoint.dir);
    return 0;
  }
  const std::string& bytes = checkpoint.bytes;
  const std::string& source = checkpoint.source;
  const CheckpointMeta meta = read_checkpoint_meta(bytes, source);
  PARTITA_CHECK_PARAM(meta.signature == config_signature(), "resume",
                      "{} was written for another model or optimizer (`model`, `layers`, "
                      "`hidden`, `heads`, `optimizer` or the dataset differ)",
                      source);
  load_checkpoint(bytes, source, *module_, *impl_->optimizer);
  ++weight_updates_;  // new weights: full-graph predictions made before are stale
  restore_embeddings(meta.epochs_done);
  // Nothing left to train (epochs_done >= epochs) is the caller's to report, in its words
  // (TrainResult::resumed_epochs).
  if (session_.rank() == 0) log_info("resuming from {} ({} epochs done)", source, meta.epochs_done);
  return meta.epochs_done;
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
