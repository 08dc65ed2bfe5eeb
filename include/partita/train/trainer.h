#pragma once
// Data-parallel mini-batch training of a GnnModel on one rank of a DistSession (DESIGN 7).
//
// Every rank holds the whole model. Initial weights are identical on every rank: torch is
// seeded with options.seed before the model is built (same values everywhere), and then
// rank != 0 zeroes its parameters and all ranks allreduce-sum them, which leaves rank 0's
// values on every rank.
//
// Batches. options.loader.batch_size is the GLOBAL batch: seeds per step summed over ranks.
// At
// construction every rank learns every training id (one allgather of (original id, global
// id) pairs; in replicated mode each rank already has them all). Each epoch, all N ids are
// shuffled the same way on every rank, keyed by (seed, epoch) over the ids ordered by their
// original ids (loader::GlobalBatches); step s takes positions [s*B, (s+1)*B) of that order,
// and each rank trains on the seeds of the step it owns (in replicated mode, an even share
// of the step's batch). So every rank runs steps = ceil(N / B) steps per epoch, no rank ever
// waits in a collective that another rank skips, and 1 rank and P ranks train on the same
// global batches, whatever the partitioning: with dropout 0 their losses and gradients are
// equal up to floating-point summation order. A rank with no seeds in a step takes part
// with an empty batch.
//
// Each step: forward, loss = (sum of cross-entropy over this rank's seeds) / G_s, where G_s
// is the size of global batch s (B, or less on the last step); backward; then the gradients
// and the loss are summed over ranks with bucketed allreduces over one flat buffer
// (options.bucket_bytes per bucket, all in flight at once), which yields exactly the
// gradient of the mean loss over the global batch; then the optimizer steps. Every rank
// thus applies the same update.
//
// BatchNorm: its batch statistics are each rank's own (as DDP without SyncBatchNorm); the
// running statistics are averaged over ranks after every epoch, before evaluation and
// checkpoints.
//
// HAN's semantic attention (nn/han.h) is synchronised instead, as SyncBatchNorm would: in a
// training step every HAN layer sums its semantic scores and row count over the ranks (one
// allreduce in forward, one in backward), inner layers weighting each row by 1 / (ranks
// holding that node at that hop, from one allgather per step), so HAN keeps the equality
// above at any depth. A rank without seeds makes the same collectives with zero
// contributions (ModelAdapter::idle_training_step); other models make none per step.
// Evaluation uses each rank's own mean (no collective).
//
// Randomness: shuffles and samples are keyed by (seed, epoch, step) (loader/, sample/);
// dropout masks by (seed, epoch, step, rank) (GnnModel::set_dropout_key), so with dropout
// P ranks draw other masks than 1 rank (same distribution). A run is
// reproducible from its seed, and a resumed run continues exactly as the uninterrupted
// one (checkpoint.h).
//
// Precision: options.model.precision runs the model in fp32 or bf16; parameters, Adam/SGD
// state, gradients' allreduce, the loss and its softmax stay fp32 in both.
//
// Evaluation is distributed the same way: the validation and test ids of all ranks are cut
// into global batches of loader.batch_size (shuffled under their own key), each rank classifies
// its share of each batch with the training fanouts (eval mode, no grad), and the
// correct/total counts are summed with one allreduce at the end. So accuracies too are the
// same for 1 rank and P ranks (HAN with several metapaths: close, not equal; see above).
//
// Link prediction (options.task = kLink; issue 12): the partition must hold an edge split
// (partition --edge-split). The seeds are the training pairs (loader/link_batches.h: one
// global index per pair, the same GlobalBatches plan over them, batch_size pairs per global
// step, each rank training on the pairs its part holds). A step's rank-local batch is the
// distinct endpoints of its pairs and of options.link.negatives corrupted pairs (u, w) per
// positive (u, v), sampled into blocks as node seeds; then the global step's pairs (every
// rank's) are removed from the blocks as edges (options.link.exclude,
// sample/edge_exclusion.h), so that 1 and P ranks compute the same step; the model (a
// nn::LinkModel: the GnnModel encodes, the decoder scores) scores every pair, and the loss
// is binary cross-entropy summed over the rank's pairs and divided by the global step's
// pairs (positives and negatives), so the gradients' allreduce gives the exact mean as for
// nodes. Evaluation scores the held-out pairs and their negatives (edges/*.npy; each rank
// the pairs whose destination it owns, an even share when replicated) on sampled blocks
// with the training fanouts and no exclusion (held-out edges are not in the graph), gathers
// every score and computes AUC, AP, MRR and Hits@K (train/link_metrics.h) identically on
// every rank; with eval full, every rank scores every pair on the embeddings of layer-wise
// full-graph inference instead (train/inference.h, as `partita infer`). Worker mode only,
// no host hot-feature cache (the device cache serves it), untyped partitions.
//
// Cache (options.cache.ratio > 0, partitioned mode with more than one rank): before the
// first epoch each rank pre-samples the first cache.presample_batches steps of an epoch no
// training step uses (its own shares, blocks only), counts how many of them need each
// remote node's features, fetches the rows of the most needed ones (at most cache.ratio x
// the nodes it owns) and answers those from memory from then on (store::FeatureCache).
// With edge features (options.loader.edge_features, issue 41) the same pre-sampling counts
// the remote edges of the blocks too (edges another part stores) and a second cache, keyed
// by edge id, holds the rows of the most needed ones (at most cache.ratio x the edges this
// rank's part stores; FeatureFetcher::set_edge_cache). Results do not change; only the
// traffic does.
//
// Device cache (options.cache.gpu_ratio > 0 or auto, issue 24; train/device_feature_cache.h):
// after the host cache, each rank pre-samples the same steps, keeps the rows of the input
// nodes they need most, local or remote (at most gpu_ratio x the nodes it owns; auto: as many
// as fit in kGpuCacheAutoShare of the device's free memory, every owned row when they all
// fit), on the model's device, and its batch pipelines (training and sampled evaluation)
// skip fetching them;
// forward() assembles the input matrix from the cached and the fetched rows. Losses do not
// change, bit for bit; local gathers, requests and copies to the device do. Untyped
// partitions, worker mode (or one process); node and link tasks.
//
// Sampling on the device (options.loader.sample_on, train/device_sampling.h): a node task
// whose rank holds the whole topology (a 1-part directory, or runtime::Topology::kFull)
// samples its training and sampled-evaluation batches on the model's device; the blocks are
// the host pipeline's, bit for bit, so results do not change on the CPU. The cache warm-ups
// pre-sample on the host (the same samples).
//
// Checkpoints (options.checkpoint.dir): after every epoch rank 0 writes the model,
// optimizer, epochs done and seed (checkpoint.h), keeping the two latest; only rank 0
// reads or writes the directory, so it need not be shared between hosts. With
// options.checkpoint.resume, train() starts from the latest checkpoint there (rank 0 reads it and
// broadcasts it), or from scratch when there is none; without it, a directory that already
// holds checkpoints is refused (ParameterError on checkpoint_dir) rather than mixed with another
// run's.
//
// Server-client mode (runtime/session.h, Roles): only the session's trainers build a
// Trainer; "rank" above means a trainer (session.rank() of session.size(), over the
// trainers' collectives). The ids come from the session (job_ids(), gathered from the
// servers), each trainer takes an even share of every global batch (as in replicated mode)
// and fetches and samples everything remotely. The global batches are the same as in worker
// mode, so with the same seed, options and dropout 0 the losses equal worker mode's up to
// floating-point summation order. No hot-feature cache (its budget is a share of the nodes
// a rank owns: none).
//
// Collective contract: the constructor and train() are collective; every rank of
// the session that trains must call them in the same order with the same options.
// Callbacks run on every such rank.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/link_batches.h"
#include "partita/loader/seeds.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/link_model.h"
#include "partita/nn/rgcn.h"
#include "partita/runtime/session.h"
#include "partita/sample/edge_exclusion.h"
#include "partita/store/feature_cache.h"
#include "partita/train/link_metrics.h"
#include "partita/train/step_profile.h"
#include "partita/train/train_options.h"

namespace partita::loader {
struct CacheWarmupOptions;
}

namespace partita::train {

// The value of the chosen link metric (options.link.metric).
double link_metric_value(const LinkTaskOptions& link, const LinkMetrics& metrics);

// `spec` (sample/fanout_spec.h, e.g. "25,cites=10:20") resolved against the relation names
// of `graph` (none for an untyped one): what TrainOptions::loader.fanouts holds on a typed
// graph. Throws ParameterError("fanouts", ...).
sample::Fanouts resolve_fanouts(const std::string& spec, const store::DistGraph& graph);

// A progress record after a training step (every options.log_every steps and after the
// last step of an epoch), identical on every rank except elapsed_s.
struct StepRecord {
  int64_t epoch = 0;  // 1-based
  int64_t step = 0;   // 1-based
  int64_t steps = 0;  // steps of the epoch
  // The mean over the steps since the previous record of the epoch of each step's loss (the
  // mean cross-entropy over its global batch): with log_every 1, this step's loss.
  double loss = 0;
  int64_t seeds_done = 0;  // global seeds trained on so far in the epoch (N after the last)
  double elapsed_s = 0;    // since the epoch started
};

// Figures of one epoch, identical on every rank (reduced) except the timings, which are
// this rank's. loss: mean over steps, averaged across ranks.
struct EpochRecord {
  int64_t epoch = 0;  // 1-based
  int64_t steps = 0;
  int64_t seeds = 0;       // global seeds trained on: every training id once (fewer with max_steps)
  double loss = 0;         // mean over the steps of StepRecord::loss
  double train_acc = 0;    // on the training batches of the epoch, while training
  bool validated = false;  // val_acc was measured after this epoch (options.eval.every)
  // After the epoch: accuracy (node task; 0 when there are no valid ids), or the link
  // task's validation metric (LinkTaskOptions::metric).
  double val_acc = 0;
  double epoch_s = 0;    // wall time of the epoch (training steps only)
  double sample_s = 0;   // sampler-thread time building blocks (summed over steps)
  double fetch_s = 0;    // sampler-thread time fetching features and labels
  double compute_s = 0;  // forward + backward + optimizer step
  // This rank's matrix-product work in the training steps (nn::GnnModel::
  // training_matmul_flops), in GFLOP: with compute_s, the achieved GFLOP/s.
  double matmul_gflop = 0;
  double allreduce_s = 0;   // gradient averaging
  double wait_s = 0;        // waiting for the next batch from the pipeline
  double eval_s = 0;        // validation
  double checkpoint_s = 0;  // writing the checkpoint
  // This rank's traffic during the epoch (training steps and validation): bytes it sent to
  // other ranks as sampling/feature requests and replies, and bytes it contributed to
  // collectives (gradients' allreduce).
  int64_t request_bytes = 0;
  int64_t collective_bytes = 0;
  // This rank's remote feature rows in the epoch: fetched over the wire, and answered by
  // the hot-feature cache instead.
  int64_t remote_rows = 0;
  int64_t cache_hits = 0;
  // Of this rank's remote edge feature rows in the epoch (options.loader.edge_features), the
  // ones answered by the edge cache (store::FetchStats::edge_cache_hits; the rows fetched
  // over the wire are in remote_rows with the node rows).
  int64_t edge_cache_hits = 0;
  // This rank's reply bytes received for the feature, label and degree requests of the
  // epoch, training steps and validation (store::FetchStats::remote_bytes): what crossed
  // the wire towards it.
  int64_t remote_bytes = 0;
  // The device cache (options.cache.gpu_ratio): this rank's input feature rows of the epoch
  // (training steps and validation) looked up in it, found there (neither gathered,
  // fetched nor copied to the device), and of those the ones other ranks own. All 0
  // without it.
  int64_t gpu_cache_lookups = 0;
  int64_t gpu_cache_hits = 0;
  int64_t gpu_cache_remote_hits = 0;
  // This rank's process at the end of the epoch (after validation and checkpoint), to see
  // growth across epochs: resident memory, threads, open file descriptors.
  int64_t rss_bytes = 0;
  int64_t threads = 0;
  int64_t open_fds = 0;
};

// This rank's hot-feature cache, when options.cache.ratio > 0.
struct CacheReport {
  int64_t rows = 0;               // cached remote rows
  int64_t bytes = 0;              // memory they take
  double presample_s = 0;         // choosing and fetching them
  int64_t presample_batches = 0;  // batches pre-sampled
  // Share of the pre-sampled batches' remote rows the cache covers (its expected hit rate).
  double expected_hit_rate = 0;
  // The edge cache (options.loader.edge_features): cached remote edge feature rows, the
  // memory they take and the share of the pre-sampled batches' remote edge rows they cover.
  int64_t edge_rows = 0;
  int64_t edge_bytes = 0;
  double edge_expected_hit_rate = 0;
};

// This rank's device feature cache, when options.cache.gpu_ratio > 0.
struct DeviceCacheReport {
  std::string device;             // where the rows live ("cpu", "cuda:0")
  int64_t rows = 0;               // cached rows, local and remote
  int64_t remote_rows = 0;        // of which other ranks own
  int64_t bytes = 0;              // device memory they take
  double presample_s = 0;         // choosing, fetching and placing them
  int64_t presample_batches = 0;  // batches pre-sampled
  // Share of the pre-sampled batches' input rows the cache covers (its expected hit rate),
  // and of their remote input rows.
  double expected_hit_rate = 0;
  double expected_remote_hit_rate = 0;
  // gpu_cache_ratio auto: the device's free memory when the cache was sized, and the row
  // budget it gave (train_options.h auto_cache_rows); 0 otherwise.
  int64_t free_bytes = 0;
  int64_t budget_rows = 0;
};

struct TrainResult {
  CacheReport cache;
  DeviceCacheReport device_cache;
  const char* eval = "sampled";          // how val_acc and test_acc were measured: sampled, full
  int64_t resumed_epochs = 0;            // epochs done before, restored from a checkpoint
  std::vector<EpochRecord> epochs;       // the epochs run by this call
  double test_acc = 0;                   // node task
  std::optional<LinkMetrics> test_link;  // link task: every metric on the test pairs
  double train_s = 0;  // wall time of this call's epochs, evaluation and checkpoints
  // Where the batches were sampled: host, or device (options.loader.sample_on resolved).
  const char* sample_on = "host";
  // options.profile: this rank's profile of every training step of this call (its stages
  // and torch ops; step_profile.h), evaluation excluded.
  std::optional<StepProfileReport> profile;
};

class TrainTask;
class ModelAdapter;
class DeviceFeatureCache;
class GradientSync;
class Checkpointer;

// The epoch loop over the seams of training: the task (train_task.h: seeds, loss,
// evaluation), the model (model_adapter.h), gradient sync (gradient_sync.h) and
// checkpoints (checkpointer.h); the hot-feature cache is loader/cache_warmup.h's.
class Trainer {
 public:
  // Builds the task's plans, the model and optimizer and synchronizes the initial weights
  // (collective). Throws Error/ParameterError on bad options (fanouts.size() != model.layers, ...).
  Trainer(runtime::Session& session, const TrainOptions& options);
  ~Trainer();  // detaches the caches from the session's fetcher and the model
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Runs the epochs not done yet (all of them, unless resumed), calling on_epoch_start with
  // the epoch (1-based) as each begins (no read of the device), on_step after every
  // options.log_every-th step and the last of each epoch (each call reads the device's loss
  // sum on the host once) and on_epoch after each epoch (after validation and checkpoint),
  // then measures test accuracy. Throws Error when no rank has training ids, FormatError/UsageError
  // on a checkpoint that does not fit.
  TrainResult train(const std::function<void(const EpochRecord&)>& on_epoch = {},
                    const std::function<void(const StepRecord&)>& on_step = {},
                    const std::function<void(int64_t)>& on_epoch_start = {});

  // A fingerprint of all parameters (sum of value * (1 + flat index % 7), in double) to
  // compare ranks' weights. Local (no collective).
  double parameter_checksum() const;

  // The model: GnnModel (a link model's encoder), or Error for R-GCN (model kind rgcn).
  nn::GnnModel& model();
  torch::nn::Module& module();
  const CacheReport& cache_report() const { return cache_report_; }
  const DeviceCacheReport& device_cache_report() const { return device_cache_report_; }

  // Global steps per epoch (see Batches above), and training ids over all ranks.
  int64_t steps_per_epoch() const;
  int64_t num_train_ids() const;

 private:
  // The device cache of options.cache.gpu_ratio (none for 0; auto: sized by the device's free
  // memory): `options` are the host cache's pre-sampling options.
  void warm_device_cache(const loader::CacheWarmupOptions& options);
  // epoch: 0-based. Calls on_step after each step.
  EpochRecord run_epoch(int64_t epoch, const std::function<void(const StepRecord&)>& on_step);

  runtime::Session& session_;
  TrainOptions options_;  // resolved against the graph; the seams below refer to it
  std::unique_ptr<TrainTask> task_;
  std::unique_ptr<ModelAdapter> model_;
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<StepProfile> profile_;  // options.profile only
  store::FeatureCache cache_;
  store::FeatureCache edge_cache_;  // empty unless options.loader.edge_features
  CacheReport cache_report_;
  std::unique_ptr<DeviceFeatureCache> device_cache_;  // options.cache.gpu_ratio > 0 only
  DeviceCacheReport device_cache_report_;
  // Changes whenever the weights do (optimizer steps, a restored checkpoint).
  int64_t weight_updates_ = 0;
};

}  // namespace partita::train
