#pragma once
// Every option of training (train::Trainer), as one typed tree with its defaults: the
// defaults of `partita train`, declared here once. The command line binds its flags onto
// these fields (src/cli/cmd_train.cc) and shows these defaults in --help; the enums' names
// are the tables next to each enum. No torch, no CLI: check_options throws
// ParameterError(parameter, detail) (core/parameter_error.h) naming the parameter in the
// library's words (`batch_size`, `fanouts`, `cache_ratio`), which a front end renames.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "partita/core/name_table.h"
#include "partita/loader/link_batches.h"
#include "partita/nn/kernel_path.h"
#include "partita/nn/precision.h"
#include "partita/sample/edge_exclusion.h"
#include "partita/sample/fanouts.h"
#include "partita/sample/local_sampler.h"

namespace partita::nn {
enum class ConvKind;
enum class LinkDecoder;
struct GnnOptions;
}  // namespace partita::nn

namespace partita::train {

// The model a Trainer builds: a GnnModel of one conv kind, an R-GCN (nn/rgcn.h), or a HAN
// (metapath attention, nn/han.h) over metapath blocks (sample/metapath_sampler.h).
enum class ModelKind { kSage, kGcn, kGat, kRgcn, kHan, kGine, kGatv2 };
const NameTable<ModelKind>& model_kind_names();  // sage, gcn, gat, gatv2, gine, rgcn, han

// The GnnModel's conv of `kind`; nullopt for kRgcn and kHan.
std::optional<nn::ConvKind> conv_kind(ModelKind kind);
ModelKind model_kind(nn::ConvKind conv);

// Whether a model of `kind` reads edge features (ModelOptions::edge_dim > 0, train
// --edge-features): gat and gine do (nn::takes_edge_features); sage, gcn, rgcn and han do
// not. needs_edge_features: gine cannot train without them.
bool takes_edge_features(ModelKind kind);
bool needs_edge_features(ModelKind kind);

// Where a model, its batches and its loss live (device): the CPU, or a CUDA GPU. Parsed from
// "cpu", "cuda" or "cuda:N" by parse_device, the one parser of every front end. Whether the
// device can be used in this process is train/device.h's (check_device, with torch).
struct DeviceSpec {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  // kCuda: the GPU's ordinal among the ones this process sees (CUDA_VISIBLE_DEVICES
  // renumbered 0..n-1); -1: "cuda" without an index, which the caller resolves (the command
  // line: by local rank, gpu_for_local_rank; else GPU 0).
  int index = -1;
  bool is_cpu() const { return kind == Kind::kCpu; }
  bool operator==(const DeviceSpec& o) const { return kind == o.kind && index == o.index; }
};

// "cpu", "cuda", "cuda:N" (N a non-negative integer) as a DeviceSpec; anything else is a
// ParameterError(device). Checks the text only, not whether the device exists.
DeviceSpec parse_device(std::string_view text);
// The text parse_device reads back: "cpu", "cuda", "cuda:1".
std::string device_text(const DeviceSpec& device);

// `model` (--model ...): GraphSAGE, 2 layers of width 64, dropout 0.5 unless told otherwise.
struct ModelOptions {
  ModelKind kind = ModelKind::kSage;  // model; rgcn on typed partitions only
  int64_t in_dim = 0;                 // <= 0: the graph's feature width
  int64_t out_dim = 0;                // <= 0: the classes (node task) or `hidden` (link task)
  int64_t layers = 2;                 // >= 1, = the hops of the fanouts
  int64_t hidden = 64;                // width of a hidden layer (GAT: per head), >= 1
  int64_t heads = 4;                  // GAT's heads per hidden layer, >= 1
  double dropout = 0.5;               // on the input of every layer, in [0, 1)
  double attention_dropout = -1;      // GAT, in [0, 1); -1: = dropout
  nn::Precision precision = nn::Precision::kFp32;  // activations and matrix products
  // R-GCN: relation weights as combinations of this many shared bases; 0: one weight per
  // relation. >= 0.
  int64_t num_bases = 0;
  // HAN: the metapaths, comma-separated, each named by its relations joined with '-' or by
  // its node types (sample/metapath_spec.h); empty: the default derived from the schema.
  std::string metapaths;
  // Width of the partition's edge features when training uses them (--edge-features); 0:
  // the model takes no edge features. Set by the trainer from the partition, not a flag.
  // > 0 only with a model that takes them (takes_edge_features); gine needs > 0.
  int64_t edge_dim = 0;
};

// The nn::GnnOptions of a GNN model (throws Error for kRgcn, which is no GnnModel).
nn::GnnOptions gnn_options(const ModelOptions& model);

enum class OptimizerKind { kAdam, kSgd };
const NameTable<OptimizerKind>& optimizer_kind_names();  // adam, sgd

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;  // optimizer
  double lr = 0.003;                          // lr, > 0
  double weight_decay = 0;                    // weight_decay, >= 0
};

// Where a batch's neighbours are sampled and its blocks built (train/device_sampling.h):
// on the model's device from the whole topology held there, or on the host by the
// session's sampler (the loader threads). Both give the same blocks.
enum class SampleOn {
  kAuto,    // kDevice with a CUDA device where the rank holds the topology it samples and
            // the task supports it (node classification, not han); else kHost
  kDevice,  // on the device (a CPU device: the same torch pipeline on the CPU)
  kHost,
};
const NameTable<SampleOn>& sample_on_names();  // auto, device, host

// How batches are sampled and fed (loader/batch_pipeline.h).
struct LoaderOptions {
  int64_t batch_size = 1024;  // >= 1, global: seeds per step over all ranks
  // Steps per epoch at most (0: every step of the plan), for quick runs and benchmarks: an
  // epoch then trains on the first max_steps global batches of its shuffle only.
  int64_t max_steps = 0;
  // One hop per layer (-1: all neighbors); on a typed graph optionally per relation
  // (sample/fanout_spec.h resolves `25,cites=10:20` against the graph's relation names).
  sample::Fanouts fanouts{10, 10};
  int threads = 1;   // sampler threads of the batch pipeline, in [1, 256]
  int prefetch = 2;  // batches ahead, in [1, 1024]
  // sample_on: where batches are sampled (train/device_sampling.h).
  SampleOn sample_on = SampleOn::kAuto;
  // edge_features: sample with edge ids and fetch every block's edge_feat rows
  // (loader::BatchPipelineOptions::edge_feature_row_bytes) into nn::BlockTensors::edge_feat;
  // the model is built with ModelOptions::edge_dim = the partition's edge_feat width.
  bool edge_features = false;
};

// How validation and test accuracy are measured: on sampled blocks with the training
// fanouts, or by layer-wise full-neighbourhood inference (train/inference.h, as `partita
// infer`; sage, gcn, gat, gatv2 and gine in worker mode).
enum class EvalMode { kSampled, kFull };
const NameTable<EvalMode>& eval_mode_names();  // sampled, full

struct EvalOptions {
  EvalMode mode = EvalMode::kSampled;  // eval
  int64_t every = 1;  // eval_every: after every K-th epoch and after the last; 0: never
};

struct CheckpointOptions {
  std::string dir;      // checkpoint_dir; empty: no checkpoints
  bool resume = false;  // resume: start from the latest checkpoint in `dir`
  // Written into every checkpoint as CheckpointMeta::settings (the caller's record of the
  // run's settings, read back before a resume or an inference; checkpoint.h).
  std::vector<std::pair<std::string, std::string>> settings;
};

// The hot-feature cache (trainer.h, Cache).
struct CacheOptions {
  // cache_ratio: at most ratio x (nodes this rank owns) remote rows, in [0, 1]; 0: none.
  double ratio = 0;
  int64_t presample_batches = 10;  // cache_presample: steps pre-sampled to choose them, >= 1
  // gpu_cache_ratio: the device feature cache (train/device_feature_cache.h): at most
  // gpu_ratio x (nodes this rank owns) of the hottest input rows, local or remote, kept on
  // the model's device, in [0, 1]; 0: none; kGpuCacheAuto: as many rows as fit in
  // kGpuCacheAutoShare of the device's free memory (auto_cache_rows). Chosen with the same
  // presample_batches.
  double gpu_ratio = 0;
};

// CacheOptions::gpu_ratio's "auto" (the command line's default with a GPU device).
constexpr double kGpuCacheAuto = -1;
// The share of the device's free memory (at the cache's construction, after the model and
// its optimizer state) that gpu_ratio auto fills with feature rows: the rest is left to a
// step's activations, gradients and the allocator's slack.
constexpr double kGpuCacheAutoShare = 0.5;

// The device cache's row budget for gpu_ratio auto: as many rows of `row_bytes` as fit in
// `share` of `free_bytes`, at most `rows` (the candidates), at least 0. Pure.
int64_t auto_cache_rows(int64_t free_bytes, int64_t row_bytes, int64_t rows,
                        double share = kGpuCacheAutoShare);

// The learned embeddings of the node types without features (models rgcn and han:
// store/dist_embedding.h; the tables a run's session holds: train/session_embeddings.h).
struct LearnedEmbeddingOptions {
  // embed_lr: their sparse optimizer's learning rate (the sparse form of `optimizer`), >= 0;
  // 0: 2 x `lr`, as DGL's R-GCN example (--sparse-lr 0.02 beside --lr 0.01): a row moves only
  // in the steps that sample it, and each step moves it by about lr (Adam) against an initial
  // spread of `init`.
  double lr = 0;
  double init = 1;  // embed_init: initial rows uniform in [-init, init), in (0, 1e6]
};

enum class Task { kNode, kLink };
const NameTable<Task>& task_names();  // node, link

enum class LinkMetricKind { kAuc, kAp, kMrr, kHits };
// auc, ap, mrr, hits (named "hits@K" with its K: link_metric_name).
const NameTable<LinkMetricKind>& link_metric_kind_names();

// Link prediction (task link; trainer.h, Link prediction).
struct LinkTaskOptions {
  int64_t negatives = 1;  // corrupted pairs per positive, in [1, 1000]
  loader::NegativeKind negative_kind = loader::NegativeKind::kUniform;  // negatives_by
  sample::Exclude exclude = sample::Exclude::kReverse;                  // exclude
  nn::LinkDecoder decoder{};                     // decoder: kDot (nn/link_model.h)
  LinkMetricKind metric = LinkMetricKind::kAuc;  // the validation metric (metric)
  int64_t hits_k = 50;                           // K of Hits@K (metric hits@K), >= 1
};

// "auc", "ap", "mrr" or "hits@K": the name of a link metric in output and metrics files.
std::string link_metric_name(const LinkTaskOptions& link);

struct TrainOptions {
  Task task = Task::kNode;
  ModelOptions model;
  OptimizerOptions optimizer;
  LoaderOptions loader;
  EvalOptions eval;
  CheckpointOptions checkpoint;
  CacheOptions cache;
  LinkTaskOptions link;                // task link only
  LearnedEmbeddingOptions embeddings;  // models rgcn and han
  int64_t epochs = 5;                  // >= 1; total, including epochs resumed from
  uint64_t seed = 0;                   // of weights, shuffles, samples and dropout
  int torch_threads = 1;  // torch intra-op threads (DESIGN 10: cores per rank), [1, 1024]
  // Row-normalize input features (each row divided by its sum; all-zero rows stay zero),
  // as in the GCN paper's preprocessing. A row whose sum is <= 0 (and is not all zeros) is
  // a ParameterError: it would be scaled without bound.
  bool normalize_features = false;
  size_t bucket_bytes = size_t{4} << 20;  // gradient allreduce bucket size, >= 4
  // device: the model, its optimizer state, every batch's tensors and the loss live there
  // (train/batch_staging.h moves the batches). Not part of a run's identity: a checkpoint
  // holds CPU tensors and resumes on any device.
  DeviceSpec device;
  // profile: time every training step's stages and torch ops (train/step_profile.h) into
  // TrainResult::profile. Off: nothing is registered with torch, and nothing is timed
  // beyond the EpochRecord's figures.
  bool profile = false;
  // kernels: which implementation nn's ops run (nn/kernel_path.h): auto (fused kernels on
  // the CPU, device-generic ops on a GPU) or generic (the device-generic ops on the CPU too:
  // what a GPU runs, for tests and the CPU proxies of `profile`). Results equal within
  // floating-point tolerance; dropout masks are drawn differently (nn/dropout.h).
  nn::KernelPath kernels = nn::KernelPath::kAuto;
  // log_every: steps between progress records (Trainer::train's on_step), each one host
  // read of the device's loss sum; 0: only the last step of each epoch. >= 0. Losses and
  // accuracies accumulate on the model's device and are read at these records and at the end
  // of an epoch, never per step otherwise.
  int64_t log_every = 1;
};

// A model's own defaults: the values a run of that model takes for the options its caller
// leaves unset, where they differ from the defaults of the tree above (nullopt: the tree's).
// A front end applies them once the model is known, to every option not given (the command
// line: not given as a flag, nor taken from a checkpoint by --resume), and says so in its
// help. Only han has any: the recipe of the HAN paper (Wang et al. 2019) and of DGL's HAN
// example, which reaches the published accuracy on the HeCo graphs where the tree's
// defaults (2 layers of 64, 4 heads, lr 0.003) lose 4 points on Freebase (docs/training.md,
// "HAN"): 1 layer of 8 heads of width 8, 20 metapath neighbours, dropout 0.6, attention
// dropout 0.5, lr 0.01, and learned embeddings starting in [-0.1, 0.1) (a featureless
// labelled type: with rows as wide as 1 the model tells its training nodes apart by them).
struct ModelDefaults {
  std::optional<int64_t> layers;
  std::optional<int64_t> hidden;
  std::optional<int64_t> heads;
  std::optional<double> dropout;
  std::optional<double> attention_dropout;
  std::optional<double> lr;
  std::optional<sample::Fanouts> fanouts;
  std::optional<double> embed_init;
};
const ModelDefaults& model_defaults(ModelKind kind);

// Throws ParameterError naming the parameter on an option out of range (the same checks on
// every rank; the command line calls it before starting MPI, the Trainer again). Parameter
// names: layers, hidden, heads, dropout, attention_dropout, num_bases, fanouts, epochs,
// embed_lr, embed_init,
// batch_size, max_steps, lr, weight_decay, threads, prefetch, torch_threads, eval_every,
// bucket_bytes, resume, cache_ratio, cache_presample, gpu_cache_ratio, negatives, metric, task,
// precision, log_every, device (train/device.h check_device: CUDA missing from this torch, no GPU
// visible, or an index out of range).
void check_options(const TrainOptions& options);

// The sampling rule of a run (runtime::SessionOptions::sampling: temporal, weighted) against
// its training options. Names for the command line and the run record: temporal_strategy_names
// (uniform, recent: Temporal::kUniform, kRecent) and sample_weight_names (none, edge_weight).
const NameTable<sample::Temporal>& temporal_strategy_names();
const NameTable<sample::Weighting>& sample_weight_names();
// Throws ParameterError (sample::check_sampling_options first) for what training does not do
// with these options yet: temporal sampling with `eval` full (full-neighbourhood inference
// takes every edge, later ones too). `model` han samples temporally too (its metapath walks
// at the seed's time, sample/metapath_sampler.h).
// Pure; the Trainer calls it, a front end may call it first.
void check_sampling_rule(const TrainOptions& options, const sample::LocalSamplerOptions& sampling);

}  // namespace partita::train
