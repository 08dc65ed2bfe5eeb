// The data tools and inference, for Python: see tools_binding.h.
#include "tools_binding.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph_binding.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/core/parameter_error.h"
#include "partita/core/version.h"
#include "partita/data/generate.h"
#include "partita/partition/edge_split.h"
#include "partita/partition/partition.h"
#include "partita/train/device.h"
#include "partita/train/inference.h"
#include "partita/train/train_options.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// --- generate ---------------------------------------------------------------------------

// Optional keywords: None keeps the library's default (which for hetero="mag" is the
// shape's own, as the command's flags not given).
struct GenerateArgs {
  std::string out;
  std::string hetero;
  std::optional<int64_t> nodes, feat_dim, classes;
  std::optional<double> avg_degree, homophily;
  uint64_t seed = 0;
  double power_law = 2.5, feature_noise = 1.0;
  double train_fraction = 0.6, valid_fraction = 0.2, test_fraction = 0.2;
  int threads = 0;
};

py::dict split_dict(const data::SplitSizes& s) {
  py::dict d;
  d["train"] = s.train;
  d["valid"] = s.valid;
  d["test"] = s.test;
  return d;
}

// The fields GenerateOptions and HeteroGenerateOptions share, from the arguments; optional
// arguments left unset keep the options' defaults.
template <class Options>
void fill_common_options(const GenerateArgs& a, Options* o) {
  o->out_dir = a.out;
  o->seed = a.seed;
  o->threads = a.threads;
  o->power_law = a.power_law;
  o->feature_noise = a.feature_noise;
  o->train_fraction = a.train_fraction;
  o->valid_fraction = a.valid_fraction;
  o->test_fraction = a.test_fraction;
  if (a.nodes) o->nodes = *a.nodes;
  if (a.feat_dim) o->feat_dim = *a.feat_dim;
  if (a.classes) o->classes = *a.classes;
  if (a.homophily) o->homophily = *a.homophily;
}

py::dict generate(const GenerateArgs& a) {
  py::dict out;
  out["out"] = a.out;
  if (!a.hetero.empty()) {
    PARTITA_CHECK_PARAM(!a.avg_degree, "avg_degree",
                        "does not apply with `shape` (edges follow ogbn-mag's proportions)");
    data::HeteroGenerateOptions h;
    h.shape = a.hetero;
    fill_common_options(a, &h);
    data::HeteroGenerateStats stats;
    {
      py::gil_scoped_release release;
      stats = data::generate_hetero(h);
    }
    int64_t nodes = 0, edges = 0;
    py::dict types, relations;
    for (size_t i = 0; i < stats.type_names.size(); ++i) {
      types[py::str(stats.type_names[i])] = stats.type_counts[i];
      nodes += stats.type_counts[i];
    }
    for (size_t i = 0; i < stats.relation_names.size(); ++i) {
      relations[py::str(stats.relation_names[i])] = stats.relation_edges[i];
      edges += stats.relation_edges[i];
    }
    out["hetero"] = a.hetero;
    out["nodes"] = nodes;
    out["edges"] = edges;
    out["type_nodes"] = types;
    out["relation_edges"] = relations;
    out["split"] = split_dict(stats.split);
    out["bytes_written"] = stats.bytes_written;
    out["seconds"] = stats.seconds;
    return out;
  }
  data::GenerateOptions o;
  fill_common_options(a, &o);
  if (a.avg_degree) o.avg_degree = *a.avg_degree;
  data::GenerateStats stats;
  {
    py::gil_scoped_release release;
    stats = data::generate_synthetic(o);
  }
  out["nodes"] = stats.nodes;
  out["edges"] = stats.edges;
  out["split"] = split_dict(stats.split);
  out["bytes_written"] = stats.bytes_written;
  out["seconds"] = stats.seconds;
  return out;
}

// --- partition --------------------------------------------------------------------------

struct PartitionArgs {
  std::string dataset, out;
  int num_parts = 2;
  std::string method = "metis";
  bool balance_train = false, balance_edges = false, undirected = false, reverse = true;
  std::string split;
  std::string edge_split;  // "VALID,TEST"; empty: none
  uint64_t seed = 0;
  int threads = 0;
  std::string feature_dtype = "float32";
};

py::dict named(const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  py::dict d;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) d[py::str(names[i])] = values[i];
  return d;
}

py::dict summary_dict(const PartitionArgs& a, const partition::PartitionSummary& s) {
  py::dict out;
  out["dataset"] = a.dataset;
  out["out"] = a.out;
  out["num_parts"] = static_cast<int64_t>(s.parts.size());
  out["num_nodes"] = s.num_nodes;
  out["num_edges"] = s.num_edges;
  out["edge_cut"] = s.edge_cut;
  out["edge_cut_fraction"] = s.edge_cut_fraction;
  out["node_imbalance"] = s.node_imbalance;
  out["edge_imbalance"] = s.edge_imbalance;
  out["train_imbalance"] = s.train_imbalance;
  out["empty_parts"] = s.empty_parts();
  out["peak_rss_bytes"] = s.peak_rss_bytes;
  py::dict phases;
  for (const auto& [name, seconds] : s.phase_seconds) phases[py::str(name)] = seconds;
  out["phase_seconds"] = phases;
  py::list parts;
  for (const partition::PartStats& p : s.parts) {
    py::dict d;
    d["nodes"] = p.nodes;
    d["edges"] = p.edges;
    d["train_nodes"] = p.train_nodes;
    d["valid_nodes"] = p.valid_nodes;
    d["test_nodes"] = p.test_nodes;
    if (!s.type_names.empty()) {
      d["type_nodes"] = named(s.type_names, p.type_nodes);
      d["relation_edges"] = named(s.relation_names, p.relation_edges);
    }
    parts.append(d);
  }
  out["parts"] = parts;
  out["type_names"] = s.type_names;
  out["relation_names"] = s.relation_names;
  if (s.edge_split) {
    const partition::EdgeSplitStats& e = *s.edge_split;
    py::dict d;
    d["source"] = e.source;
    d["valid_fraction"] = e.valid_fraction;
    d["test_fraction"] = e.test_fraction;
    d["valid"] = e.valid;
    d["test"] = e.test;
    d["valid_neg"] = e.valid_neg;
    d["test_neg"] = e.test_neg;
    d["train"] = e.train();
    d["train_per_part"] = e.train_per_part;
    out["edge_split"] = d;
  } else {
    out["edge_split"] = py::none();
  }
  out["text"] = partition::format_summary(s);
  return out;
}

py::dict run_partition(const PartitionArgs& a) {
  data::LoadOptions load;
  partition::PartitionOptions options;
  options.out_dir = a.out;
  options.num_parts = a.num_parts;
  options.balance_train = a.balance_train;
  options.balance_edges = a.balance_edges;
  options.seed = a.seed;
  options.threads = a.threads;
  options.feature_dtype = value_named(feature_dtype_names(), "feature_dtype", a.feature_dtype);
  options.method = value_named(partition::method_names(), "method", a.method);
  if (!a.edge_split.empty()) options.edge_split = partition::parse_edge_split(a.edge_split);
  load.undirected = a.undirected;
  load.split = a.split;
  load.threads = a.threads;
  load.reverse_relations = a.reverse;
  partition::PartitionSummary summary;
  {
    py::gil_scoped_release release;
    summary = partition::run_partition(a.dataset, load, options);
  }
  return summary_dict(a, summary);
}

// --- infer ------------------------------------------------------------------------------

// A float32/int64 tensor owning `values` (moved, no copy).
template <typename T>
torch::Tensor tensor_of(std::vector<T>&& values, std::vector<int64_t> shape) {
  auto* held = new std::vector<T>(std::move(values));
  return torch::from_blob(
      held->data(), shape, [held](void*) { delete held; },
      torch::TensorOptions().dtype(torch::CppTypeToScalarType<T>()));
}

// The training run's normalize-features setting as the checkpoint records it (nullopt for
// a checkpoint written before settings were recorded), reapplied as `partita infer` does.
std::optional<bool> recorded_normalize(const train::LoadedModel& loaded) {
  for (const auto& [name, value] : loaded.settings)
    if (name == "normalize-features") return value == "true";
  return std::nullopt;
}

// Restores torch's intra-op thread count when it leaves scope: infer's torch_threads
// applies to that call only, not to the rest of the Python process.
class ThreadCountRestore {
 public:
  ThreadCountRestore() : saved_(torch::get_num_threads()) {}
  ~ThreadCountRestore() { torch::set_num_threads(saved_); }
  ThreadCountRestore(const ThreadCountRestore&) = delete;
  ThreadCountRestore& operator=(const ThreadCountRestore&) = delete;

 private:
  int saved_;
};

struct InferArgs {
  std::string checkpoint;
  int64_t batch_size = train::InferenceOptions{}.batch_size;
  std::optional<bool> normalize_features;  // None: the checkpoint's record
  int torch_threads = 0;                   // 0: leave torch's setting
  std::string device = "cpu";
  int64_t hits_k = train::LinkTaskOptions{}.hits_k;
};

py::dict infer(Graph& graph, const InferArgs& a) {
  PARTITA_CHECK_PARAM(a.batch_size >= 1, "batch_size", "must be >= 1, got {}", a.batch_size);
  PARTITA_CHECK_PARAM(a.hits_k >= 1, "hits_k", "must be >= 1, got {}", a.hits_k);
  PARTITA_CHECK_PARAM(a.torch_threads >= 0, "torch_threads",
                      "must be >= 0 (0: leave torch's setting), got {}", a.torch_threads);
  const train::DeviceSpec device = train::parse_device(a.device);
  train::check_device(device);
  runtime::Session& session = graph.session();
  train::InferenceOutput out;
  std::optional<train::LinkMetrics> link;
  bool link_model = false;
  bool normalize = false;
  {
    py::gil_scoped_release release;
    std::optional<ThreadCountRestore> restore_threads;
    if (a.torch_threads > 0) restore_threads.emplace();
    const train::LoadedModel loaded =
        train::load_model_for_inference(session, a.checkpoint, train::torch_device(device));
    link_model = loaded.link != nullptr;
    const std::optional<bool> recorded = recorded_normalize(loaded);
    if (a.normalize_features && recorded) {
      PARTITA_CHECK_PARAM(*a.normalize_features == *recorded, "normalize_features",
                          "{} in the checkpoint {}, {} given; the model must be fed as in "
                          "training, or its outputs are wrong (leave it out: the checkpoint's "
                          "value is applied)",
                          *recorded ? "True" : "False", loaded.source,
                          *a.normalize_features ? "True" : "False");
    }
    normalize = a.normalize_features.value_or(recorded.value_or(false));
    train::InferenceOptions options;
    options.batch_size = a.batch_size;
    options.normalize_features = normalize;
    options.torch_threads = a.torch_threads;
    options.output_embeddings = link_model;
    out = train::infer_full_graph(session, *loaded.model, options);
    if (link_model && session.rank() == 0)
      link = train::held_out_link_metrics(*loaded.link, out, session.graph(), true, a.hits_k);
  }
  py::dict d;
  d["num_nodes"] = out.num_nodes;
  d["embedding_dim"] = out.embedding_dim;
  d["normalize_features"] = normalize;
  d["link"] = link_model;
  if (session.rank() == 0) {
    d["embeddings"] = tensor_of(std::move(out.embeddings), {out.num_nodes, out.embedding_dim});
  } else {
    d["embeddings"] = py::none();
  }
  if (link_model) {
    d["predictions"] = py::none();
    if (link) {
      d["test_pairs"] = link->positives + link->negatives;
      d["test_auc"] = link->auc;
      d["test_ap"] = link->ap;
      d["test_mrr"] = link->mrr;
      d["hits_k"] = link->hits_k;
      d["test_hits"] = link->hits;
    }
  } else {
    const int64_t n = static_cast<int64_t>(out.predictions.size());
    d["predictions"] = tensor_of(std::move(out.predictions), {n});
    d["test_total"] = out.test_total;
    d["test_correct"] = out.test_correct;
    d["test_acc"] = out.test_acc;
  }
  return d;
}

}  // namespace

void add_tools_bindings(py::module_& m) {
  m.attr("__version__") = kVersion;
  m.def(
      "generate",
      [](std::string out, std::string hetero, std::optional<int64_t> nodes,
         std::optional<double> avg_degree, std::optional<int64_t> feat_dim,
         std::optional<int64_t> classes, uint64_t seed, std::optional<double> homophily,
         double power_law, double feature_noise, double train_fraction, double valid_fraction,
         double test_fraction, int threads) {
        GenerateArgs a;
        a.out = std::move(out);
        a.hetero = std::move(hetero);
        a.nodes = nodes;
        a.avg_degree = avg_degree;
        a.feat_dim = feat_dim;
        a.classes = classes;
        a.seed = seed;
        a.homophily = homophily;
        a.power_law = power_law;
        a.feature_noise = feature_noise;
        a.train_fraction = train_fraction;
        a.valid_fraction = valid_fraction;
        a.test_fraction = test_fraction;
        a.threads = threads;
        return generate(a);
      },
      py::arg("out"), py::kw_only(), py::arg("hetero") = "", py::arg("nodes") = py::none(),
      py::arg("avg_degree") = py::none(), py::arg("feat_dim") = py::none(),
      py::arg("classes") = py::none(), py::arg("seed") = 0, py::arg("homophily") = py::none(),
      py::arg("power_law") = 2.5, py::arg("feature_noise") = 1.0, py::arg("train_fraction") = 0.6,
      py::arg("valid_fraction") = 0.2, py::arg("test_fraction") = 0.2, py::arg("threads") = 0,
      "`partita generate`: writes a synthetic dataset into `out`; returns its figures");
  m.def(
      "partition",
      [](std::string dataset, std::string out, int num_parts, std::string method,
         bool balance_train, bool balance_edges, bool undirected, bool reverse, std::string split,
         std::string edge_split, uint64_t seed, int threads, std::string feature_dtype) {
        PartitionArgs a;
        a.dataset = std::move(dataset);
        a.out = std::move(out);
        a.num_parts = num_parts;
        a.method = std::move(method);
        a.balance_train = balance_train;
        a.balance_edges = balance_edges;
        a.undirected = undirected;
        a.reverse = reverse;
        a.split = std::move(split);
        a.edge_split = std::move(edge_split);
        a.seed = seed;
        a.threads = threads;
        a.feature_dtype = std::move(feature_dtype);
        return run_partition(a);
      },
      py::arg("dataset"), py::arg("out"), py::kw_only(), py::arg("num_parts") = 2,
      py::arg("method") = "metis", py::arg("balance_train") = false,
      py::arg("balance_edges") = false, py::arg("undirected") = false, py::arg("reverse") = true,
      py::arg("split") = "", py::arg("edge_split") = "", py::arg("seed") = 0,
      py::arg("threads") = 0, py::arg("feature_dtype") = "float32",
      "`partita partition`: partitions `dataset` into `out`; returns the summary");
  m.def(
      "infer",
      [](Graph& graph, std::string checkpoint, int64_t batch_size,
         std::optional<bool> normalize_features, int torch_threads, std::string device,
         int64_t hits_k) {
        InferArgs a;
        a.checkpoint = std::move(checkpoint);
        a.batch_size = batch_size;
        a.normalize_features = normalize_features;
        a.torch_threads = torch_threads;
        a.device = std::move(device);
        a.hits_k = hits_k;
        return infer(graph, a);
      },
      py::arg("graph"), py::arg("checkpoint"), py::kw_only(),
      py::arg("batch_size") = train::InferenceOptions{}.batch_size,
      py::arg("normalize_features") = py::none(), py::arg("torch_threads") = 0,
      py::arg("device") = "cpu", py::arg("hits_k") = train::LinkTaskOptions{}.hits_k,
      "`partita infer` over an open DistGraph (collective): the full-graph outputs");
}

}  // namespace partita::python
