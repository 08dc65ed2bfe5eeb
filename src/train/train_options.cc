// TrainOptions' names and checks: see partita/train/train_options.h.
#include "partita/train/train_options.h"

#include <cmath>

#include "partita/core/parameter_error.h"
#include "partita/loader/hot_nodes.h"
#include "partita/nn/gnn_model.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/relation_names.h"
#include "partita/train/device.h"
#include "partita/train/trainer.h"

namespace partita::train {

const NameTable<ModelKind>& model_kind_names() {
  static const NameTable<ModelKind> names{{"sage", ModelKind::kSage}, {"gcn", ModelKind::kGcn},
                                          {"gat", ModelKind::kGat},   {"gatv2", ModelKind::kGatv2},
                                          {"gine", ModelKind::kGine}, {"rgcn", ModelKind::kRgcn},
                                          {"han", ModelKind::kHan}};
  return names;
}

std::optional<nn::ConvKind> conv_kind(ModelKind kind) {
  switch (kind) {
    case ModelKind::kSage:
      return nn::ConvKind::kSage;
    case ModelKind::kGcn:
      return nn::ConvKind::kGcn;
    case ModelKind::kGat:
      return nn::ConvKind::kGat;
    case ModelKind::kGatv2:
      return nn::ConvKind::kGatv2;
    case ModelKind::kGine:
      return nn::ConvKind::kGine;
    case ModelKind::kRgcn:
    case ModelKind::kHan:
      break;
  }
  return std::nullopt;
}

ModelKind model_kind(nn::ConvKind conv) {
  switch (conv) {
    case nn::ConvKind::kGcn:
      return ModelKind::kGcn;
    case nn::ConvKind::kGat:
      return ModelKind::kGat;
    case nn::ConvKind::kGatv2:
      return ModelKind::kGatv2;
    case nn::ConvKind::kGine:
      return ModelKind::kGine;
    case nn::ConvKind::kSage:
      break;
  }
  return ModelKind::kSage;
}

bool takes_edge_features(ModelKind kind) {
  const std::optional<nn::ConvKind> conv = conv_kind(kind);
  return conv.has_value() && nn::takes_edge_features(*conv);
}

bool needs_edge_features(ModelKind kind) {
  const std::optional<nn::ConvKind> conv = conv_kind(kind);
  return conv.has_value() && nn::needs_edge_features(*conv);
}

nn::GnnOptions gnn_options(const ModelOptions& model) {
  const std::optional<nn::ConvKind> conv = conv_kind(model.kind);
  PARTITA_CHECK(conv.has_value(), Error, "internal: an R-GCN is no GnnModel");
  nn::GnnOptions g;
  g.kind = *conv;
  g.in_dim = model.in_dim;
  g.hidden = model.hidden;
  g.out_dim = model.out_dim;
  g.layers = model.layers;
  g.heads = model.heads;
  g.dropout = model.dropout;
  g.attention_dropout = model.attention_dropout;
  g.precision = model.precision;
  g.edge_dim = model.edge_dim;
  return g;
}

const NameTable<OptimizerKind>& optimizer_kind_names() {
  static const NameTable<OptimizerKind> names{{"adam", OptimizerKind::kAdam},
                                              {"sgd", OptimizerKind::kSgd}};
  return names;
}

const NameTable<EvalMode>& eval_mode_names() {
  static const NameTable<EvalMode> names{{"sampled", EvalMode::kSampled},
                                         {"full", EvalMode::kFull}};
  return names;
}

const NameTable<SampleOn>& sample_on_names() {
  static const NameTable<SampleOn> names{
      {"auto", SampleOn::kAuto}, {"device", SampleOn::kDevice}, {"host", SampleOn::kHost}};
  return names;
}

const NameTable<Task>& task_names() {
  static const NameTable<Task> names{{"node", Task::kNode}, {"link", Task::kLink}};
  return names;
}

const NameTable<LinkMetricKind>& link_metric_kind_names() {
  static const NameTable<LinkMetricKind> names{{"auc", LinkMetricKind::kAuc},
                                               {"ap", LinkMetricKind::kAp},
                                               {"mrr", LinkMetricKind::kMrr},
                                               {"hits", LinkMetricKind::kHits}};
  return names;
}

std::string link_metric_name(const LinkTaskOptions& link) {
  const std::string& name = name_of(link_metric_kind_names(), link.metric);
  return link.metric == LinkMetricKind::kHits ? name + "@" + std::to_string(link.hits_k) : name;
}

const ModelDefaults& model_defaults(ModelKind kind) {
  static const ModelDefaults none;
  static const ModelDefaults han = [] {
    ModelDefaults d;
    d.layers = 1;
    d.hidden = 8;
    d.heads = 8;
    d.dropout = 0.6;
    d.attention_dropout = 0.5;
    d.lr = 0.01;
    d.fanouts = sample::Fanouts{20};
    d.embed_init = 0.1;
    return d;
  }();
  return kind == ModelKind::kHan ? han : none;
}

const NameTable<sample::Temporal>& temporal_strategy_names() {
  static const NameTable<sample::Temporal> names{{"uniform", sample::Temporal::kUniform},
                                                 {"recent", sample::Temporal::kRecent}};
  return names;
}

const NameTable<sample::Weighting>& sample_weight_names() {
  static const NameTable<sample::Weighting> names{{"none", sample::Weighting::kUniform},
                                                  {"edge_weight", sample::Weighting::kEdgeWeight}};
  return names;
}

namespace {

// `edge_features` against the rest of the options (the partition is checked by
// resolved_options).
void check_edge_features_rule(const TrainOptions& o) {
  PARTITA_CHECK_PARAM(o.loader.edge_features || !needs_edge_features(o.model.kind), "model",
                      "{} needs edge features: pass `edge_features` on a partition that has them",
                      name_of(model_kind_names(), o.model.kind));
  if (!o.loader.edge_features) return;
  PARTITA_CHECK_PARAM(takes_edge_features(o.model.kind), "model",
                      "{} takes no edge features: with `edge_features` use a model whose layers "
                      "read them (gat, gatv2 or gine)",
                      name_of(model_kind_names(), o.model.kind));
}

}  // namespace

void check_sampling_rule(const TrainOptions& o, const sample::LocalSamplerOptions& sampling) {
  check_edge_features_rule(o);
  sample::check_sampling_options(sampling);
  const bool temporal = sampling.temporal != sample::Temporal::kNone;
  if (!temporal) return;
  // Typed partitions sample temporally through the relation runs of the neighbour kernel
  // (`model` rgcn), and `model` han's metapath walks at their seed's time, every step
  // (sample/metapath_sampler.h).
  PARTITA_CHECK_PARAM(o.eval.mode == EvalMode::kSampled, "eval",
                      "full: full-neighbourhood inference reads every edge, later ones too; with "
                      "`temporal` evaluate sampled (the training rule)");
}

void check_options(const TrainOptions& o) {
  const ModelOptions& m = o.model;
  PARTITA_CHECK_PARAM(m.layers >= 1, "layers", "must be >= 1, got {}", m.layers);
  PARTITA_CHECK_PARAM(m.hidden >= 1, "hidden", "must be >= 1, got {}", m.hidden);
  PARTITA_CHECK_PARAM(m.heads >= 1, "heads", "must be >= 1, got {}", m.heads);
  PARTITA_CHECK_PARAM(m.dropout >= 0 && m.dropout < 1, "dropout", "must be in [0, 1), got {}",
                      m.dropout);
  PARTITA_CHECK_PARAM(
      m.attention_dropout == -1 || (m.attention_dropout >= 0 && m.attention_dropout < 1),
      "attention_dropout", "must be in [0, 1) (or -1: same as `dropout`), got {}",
      m.attention_dropout);
  PARTITA_CHECK_PARAM(m.num_bases >= 0, "num_bases", "must be >= 0, got {}", m.num_bases);
  const sample::Fanouts& fanouts = o.loader.fanouts;
  PARTITA_CHECK_PARAM(static_cast<int64_t>(fanouts.num_hops()) == m.layers, "layers",
                      "{} must equal the number of `fanouts` ({})", m.layers, fanouts.num_hops());
  for (size_t h = 0; h < fanouts.num_hops(); ++h) {
    // A hop given per relation was checked by sample::resolve_fanouts (its default may be
    // 0 beside named relations).
    if (!fanouts.relations_of(h).empty()) continue;
    const int64_t k = fanouts.hops[h];
    PARTITA_CHECK_PARAM(k >= 1 || k == -1, "fanouts", "{} is not a fanout", k);
  }
  PARTITA_CHECK_PARAM(o.epochs >= 1, "epochs", "must be >= 1, got {}", o.epochs);
  PARTITA_CHECK_PARAM(o.embeddings.lr >= 0, "embed_lr", "must be >= 0 (0: 2 x `lr`), got {}",
                      o.embeddings.lr);
  PARTITA_CHECK_PARAM(
      std::isfinite(o.embeddings.init) && o.embeddings.init > 0 && o.embeddings.init <= 1e6,
      "embed_init", "must be in (0, 1e6] (embeddings start uniform in [-S, S)), got {}",
      o.embeddings.init);
  const LoaderOptions& l = o.loader;
  PARTITA_CHECK_PARAM(l.batch_size >= 1, "batch_size", "must be >= 1, got {}", l.batch_size);
  PARTITA_CHECK_PARAM(l.max_steps >= 0, "max_steps", "must be >= 0 (0: every step), got {}",
                      l.max_steps);
  PARTITA_CHECK_PARAM(o.optimizer.lr > 0, "lr", "must be > 0, got {}", o.optimizer.lr);
  PARTITA_CHECK_PARAM(o.optimizer.weight_decay >= 0, "weight_decay", "must be >= 0, got {}",
                      o.optimizer.weight_decay);
  PARTITA_CHECK_PARAM(l.threads >= 1 && l.threads <= 256, "threads", "must be in [1, 256], got {}",
                      l.threads);
  PARTITA_CHECK_PARAM(l.prefetch >= 1 && l.prefetch <= 1024, "prefetch",
                      "must be in [1, 1024], got {}", l.prefetch);
  PARTITA_CHECK_PARAM(o.torch_threads >= 1 && o.torch_threads <= 1024, "torch_threads",
                      "must be in [1, 1024], got {}", o.torch_threads);
  PARTITA_CHECK_PARAM(o.eval.every >= 0, "eval_every", "must be >= 0, got {}", o.eval.every);
  PARTITA_CHECK_PARAM(o.log_every >= 0, "log_every", "must be >= 0 (0: once per epoch), got {}",
                      o.log_every);
  PARTITA_CHECK_PARAM(o.bucket_bytes >= sizeof(float), "bucket_bytes",
                      "an allreduce bucket of {} bytes is too small", o.bucket_bytes);
  PARTITA_CHECK_PARAM(!o.checkpoint.resume || !o.checkpoint.dir.empty(), "resume",
                      "needs `checkpoint_dir`");
  loader::check_cache_options(o.cache.ratio, o.cache.presample_batches);
  PARTITA_CHECK_PARAM(m.metapaths.empty() || m.kind == ModelKind::kHan, "metapaths",
                      "applies to `model` han only");
  PARTITA_CHECK_PARAM(
      o.cache.gpu_ratio == kGpuCacheAuto || (o.cache.gpu_ratio >= 0 && o.cache.gpu_ratio <= 1),
      "gpu_cache_ratio", "must be in [0, 1] (a share of the nodes a rank owns) or auto, got {}",
      o.cache.gpu_ratio);
  PARTITA_CHECK_PARAM(
      o.cache.gpu_ratio == 0 || (m.kind != ModelKind::kRgcn && m.kind != ModelKind::kHan),
      "gpu_cache_ratio",
      "the device feature cache does not support typed partitions (`model` rgcn or han) yet");
  PARTITA_CHECK_PARAM(o.link.negatives >= 1 && o.link.negatives <= 1000, "negatives",
                      "must be in [1, 1000] corrupted pairs per positive, got {}",
                      o.link.negatives);
  PARTITA_CHECK_PARAM(o.link.hits_k >= 1, "metric", "K of hits@K must be >= 1, got {}",
                      o.link.hits_k);
  PARTITA_CHECK_PARAM(
      o.task == Task::kNode || (m.kind != ModelKind::kRgcn && m.kind != ModelKind::kHan), "task",
      "link is not possible with `model` {} (link prediction runs on homogeneous partitions "
      "with sage, gcn or gat)",
      name_of(model_kind_names(), m.kind));
  // On a GPU, bf16 is the GPU's (the CPU only feeds it).
  PARTITA_CHECK_PARAM(
      m.precision != nn::Precision::kBf16 || !o.device.is_cpu() || nn::cpu_supports_bf16(),
      "precision",
      "bf16 needs native bfloat16 arithmetic (AVX512-BF16 or AMX-BF16), which "
      "this CPU lacks; use `precision` fp32");
  check_device(o.device);
}

int64_t auto_cache_rows(int64_t free_bytes, int64_t row_bytes, int64_t rows, double share) {
  if (free_bytes <= 0 || row_bytes <= 0 || rows <= 0 || !(share > 0)) return 0;
  const double fit =
      std::floor(share * static_cast<double>(free_bytes) / static_cast<double>(row_bytes));
  return fit >= static_cast<double>(rows) ? rows : static_cast<int64_t>(fit);
}

sample::Fanouts resolve_fanouts(const std::string& spec, const store::DistGraph& graph) {
  return sample::resolve_fanouts(spec, graph.typed() ? sample::relation_names(graph.typed_meta())
                                                     : std::vector<std::string>{});
}

}  // namespace partita::train
