// Node classification (see partita/train/train_task.h and trainer.h, "Batches",
// "Evaluation"): the seeds are the training nodes, the loss is cross-entropy over their
// labels, evaluation is accuracy over the validation and test nodes.
#include <optional>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/loader/seed_plans.h"
#include "partita/runtime/split_ids.h"
#include "partita/train/batch_staging.h"
#include "partita/train/device_sampling.h"
#include "partita/train/inference.h"
#include "partita/train/metapaths.h"
#include "partita/train/train_task.h"

namespace partita::train {
namespace {

// The labels of the batch's seeds on the model's device (after its forward: the compute
// stream waits for their copy).
torch::Tensor labels_tensor(loader::Batch& batch, ModelAdapter& model) {
  BatchStaging& staging = model.staging();
  const torch::Tensor y = staging.to_device(torch::from_blob(
      batch.labels.data(), {static_cast<int64_t>(batch.labels.size())}, torch::kInt64));
  staging.ready();
  return y;
}

double ratio(std::vector<int64_t>& counts, Collectives& coll) {
  coll.allreduce_sum(counts);
  return counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
}

class NodeTask final : public TrainTask {
 public:
  NodeTask(runtime::Session& session, const TrainOptions& options)
      : session_(session),
        options_(options),
        share_(session.graph(), session.rank(), session.size()),
        sampler_(session, options) {
    PARTITA_CHECK_PARAM(
        options.eval.mode != EvalMode::kFull || session.role() == runtime::Role::kWorker, "eval",
        "full-graph inference (full) supports sage, gcn, gat, gatv2 and gine in worker mode (not "
        "`model` rgcn, not `servers`); use `eval` sampled");
    PARTITA_CHECK_PARAM(
        options.eval.mode != EvalMode::kFull || options.model.kind != ModelKind::kHan, "eval",
        "full-graph inference (full) does not support `model` han (its blocks are sampled "
        "metapath neighbours); use `eval` sampled");
    check_node_seed_times(session);
    plan_.emplace(all_ids(runtime::Split::kTrain), options.loader.batch_size);
    PARTITA_CHECK(plan_->num_ids() > 0, Error, "{}: the partition has no training nodes",
                  session.graph().dir());
    valid_plan_.emplace(all_ids(runtime::Split::kValid), options.loader.batch_size);
    test_plan_.emplace(all_ids(runtime::Split::kTest), options.loader.batch_size);
    device_source_ = make_device_block_source(session, options);
  }

  const loader::GlobalBatches& plan() const override { return *plan_; }

  std::vector<std::vector<int64_t>> epoch_seeds(int64_t epoch) override {
    return plan_->epoch_batches(options_.seed, static_cast<uint64_t>(epoch), share_);
  }

  bool needs_labels() const override { return true; }

  sample::NeighborSampler& sampler() override { return sampler_.get(); }
  loader::BlockSource* block_source() override { return device_source_.get(); }

  StepLoss step_loss(loader::Batch& batch, int64_t /*step*/, int64_t global_batch,
                     ModelAdapter& model, double* flops) override {
    StepLoss out;
    const torch::Tensor logits = model.forward(batch, flops);
    const torch::Tensor y = labels_tensor(batch, model);
    out.loss =
        torch::nn::functional::cross_entropy(
            logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
        static_cast<double>(global_batch);
    out.correct = logits.argmax(1).eq(y).sum();
    out.total = y.size(0);
    return out;
  }

  double validate(ModelAdapter& model, uint64_t tag, int64_t version) override {
    return evaluate(model, *valid_plan_, tag, version);
  }

  void test(ModelAdapter& model, uint64_t tag, int64_t version, TrainResult& result) override {
    result.test_acc = evaluate(model, *test_plan_, tag, version);
  }

 private:
  // Every id of a split over all ranks (runtime/split_ids.h; collective in worker mode).
  std::vector<loader::SeedId> all_ids(runtime::Split split) {
    return runtime::split_ids(session_, split);
  }

  // Exact accuracy over every id of `plan` (0 when it has none). Collective only at the end.
  double evaluate(ModelAdapter& model, const loader::GlobalBatches& plan, uint64_t tag,
                  int64_t version) {
    if (options_.eval.mode == EvalMode::kFull) return evaluate_full(model, plan, tag, version);
    std::vector<int64_t> counts{0, 0};
    {
      torch::NoGradGuard no_grad;
      torch::Tensor correct;  // summed on the device, read once at the end
      model.module().eval();
      // No collective per batch: ranks skip their empty batches.
      loader::BatchPipeline pipeline(
          pipeline_options(session_, options_, model, true, tag, block_source()),
          plan.epoch_batches(options_.seed, tag, share_), sampler_.get(), session_.fetcher());
      while (std::optional<loader::Batch> batch = pipeline.next()) {
        if (batch->sampled.seeds.empty()) continue;
        const torch::Tensor logits = model.forward(*batch);
        const torch::Tensor y = labels_tensor(*batch, model);
        const torch::Tensor right = logits.argmax(1).eq(y).sum();
        correct = correct.defined() ? correct + right : right;
        counts[1] += y.size(0);
      }
      if (correct.defined()) counts[0] = correct.item<int64_t>();
      model.module().train();
    }
    return ratio(counts, session_.collectives());
  }

  // The same accuracy from full-graph inference (eval mode full). Collective.
  double evaluate_full(ModelAdapter& model, const loader::GlobalBatches& plan, uint64_t tag,
                       int64_t version) {
    const store::DistGraph& graph = session_.graph();
    // Validation after the last epoch and the test then see the same weights: one pass.
    if (predictions_version_ != version) {
      InferenceOptions inference;
      inference.normalize_features = options_.normalize_features;
      torch::NoGradGuard no_grad;
      predictions_ = infer_full_graph(session_, *model.gnn(), inference).predictions;
      predictions_version_ = version;
      model.module().train();
    }
    // This rank's ids of the plan (the ones it owns; an even share when replicated), each
    // compared with the prediction of its original id.
    std::vector<int64_t> mine;
    for (const std::vector<int64_t>& batch : plan.epoch_batches(options_.seed, tag, share_))
      mine.insert(mine.end(), batch.begin(), batch.end());
    std::vector<int64_t> labels(mine.size());
    session_.fetcher().fetch_labels(mine, labels.data());
    int64_t correct = 0;
    for (size_t i = 0; i < mine.size(); ++i) {
      const int64_t original = graph.original_ids()[mine[i] - graph.first_node()];
      correct += predictions_[static_cast<size_t>(original)] == labels[i] ? 1 : 0;
    }
    std::vector<int64_t> counts{correct, static_cast<int64_t>(mine.size())};
    return ratio(counts, session_.collectives());
  }

  runtime::Session& session_;
  const TrainOptions& options_;
  loader::SeedShare share_;
  TaskSampler sampler_;                               // model han: metapath neighbours
  std::unique_ptr<DeviceBlockSource> device_source_;  // sampling on the device, or null
  std::optional<loader::GlobalBatches> plan_, valid_plan_, test_plan_;
  // eval mode full: every node's predicted class (by original id) under the weights of version
  // predictions_version_ (-1: none yet).
  std::vector<int64_t> predictions_;
  int64_t predictions_version_ = -1;
};

}  // namespace

loader::BatchPipelineOptions pipeline_options(runtime::Session& session,
                                              const TrainOptions& options, ModelAdapter& model,
                                              bool needs_labels, uint64_t epoch_key,
                                              loader::BlockSource* source) {
  return pipeline_options(session, options, model.needs_degrees(), needs_labels, epoch_key,
                          model.resident_rows(), source, model.staging().feature_memory());
}

loader::BatchPipelineOptions pipeline_options(runtime::Session& session,
                                              const TrainOptions& options, bool needs_degrees,
                                              bool needs_labels, uint64_t epoch_key,
                                              const store::ResidentRows* resident,
                                              loader::BlockSource* source,
                                              std::pmr::memory_resource* feature_memory) {
  loader::BatchPipelineOptions po;
  po.threads = options.loader.threads;
  po.prefetch = options.loader.prefetch;
  po.fanouts = options.loader.fanouts;
  po.seed = options.seed;
  po.epoch = epoch_key;
  po.feature_row_bytes = session.graph().feature_row_bytes();
  po.fetch_degrees = needs_degrees;
  po.fetch_labels = needs_labels;
  po.typed = session.graph().typed();
  po.resident = resident;
  po.feature_memory = feature_memory;
  po.block_source = source;
  po.temporal = session.sampler().options().temporal != sample::Temporal::kNone;
  // Edge features: the sampler returns edge ids (the session's sampling rule).
  po.edge_feature_row_bytes =
      options.loader.edge_features ? session.graph().edge_feat_row_bytes() : 0;
  return po;
}

void check_node_seed_times(const runtime::Session& session) {
  // A partition split by time samples temporally without node_time (the link task's seed
  // times are its pairs'); the node task's are node times.
  PARTITA_CHECK_PARAM(session.sampler().options().temporal == sample::Temporal::kNone ||
                          session.graph().has_node_times(),
                      "temporal",
                      "{} holds no node times (node_time.npy: a seed node's time); partition "
                      "a dataset with node_time.npy, e.g. from `generate --node-time`",
                      session.graph().dir());
}

std::unique_ptr<TrainTask> make_node_task(runtime::Session& session, const TrainOptions& options) {
  return std::make_unique<NodeTask>(session, options);
}

std::unique_ptr<TrainTask> make_task(runtime::Session& session, const TrainOptions& options) {
  return options.task == Task::kLink ? make_link_task(session, options)
                                     : make_node_task(session, options);
}

}  // namespace partita::train
