#include "loader_base.h"

#include "partita/core/error.h"
#include "partita/train/device.h"
#include "partita/train/train_task.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// `text` ("cpu", "cuda", "cuda:N"; train::parse_device) as a device this process can use
// (ParameterError(device) otherwise; "cuda" is GPU 0).
torch::Device checked_device(const std::string& text) {
  const train::DeviceSpec device = train::parse_device(text);
  train::check_device(device);
  return train::torch_device(device);
}

}  // namespace

sample::Fanouts checked_fanouts(std::vector<int64_t> fanouts) {
  PARTITA_CHECK(!fanouts.empty(), UsageError, "fanouts: give one per layer, e.g. [10, 10]");
  for (int64_t k : fanouts)
    PARTITA_CHECK(k >= 1 || k == -1, UsageError,
                  "fanouts: {} is not a fanout (>= 1, or -1 for all)", k);
  return sample::Fanouts(std::move(fanouts));
}

train::TrainOptions with_edge_features(train::TrainOptions options, bool edge_features) {
  options.loader.edge_features = edge_features;
  return options;
}

EdgeAttrs edge_attrs_of(Graph& graph, bool edge_features, const std::string& name) {
  if (!edge_features) return {};
  const store::DistGraph& g = graph.graph();
  // A typed dataset holds them per relation (docs/dataset-format.md).
  PARTITA_CHECK(g.has_edge_features(), UsageError,
                "{}: edge_features: {} holds no edge features (partition a dataset with {})", name,
                g.dir(),
                g.typed() ? "edge_feat/<head>___<relation>___<tail>.npy per relation, e.g. from "
                            "`generate --hetero mag --edge-feat-dim D`"
                          : "edge_feat.npy");
  PARTITA_CHECK(graph.session().sampler().options().edge_ids, UsageError,
                "{}: edge_features: the graph samples without edge ids; open it with "
                "partita.DistGraph(..., edge_features=True)",
                name);
  return {g.edge_feat_dim(), g.edge_feat_dtype()};
}

train::TrainOptions trainer_options(sample::Fanouts fanouts, int64_t batch_size, uint64_t seed,
                                    int prefetch, int threads) {
  train::TrainOptions o;
  o.loader.fanouts = std::move(fanouts);
  o.loader.batch_size = batch_size;
  o.loader.prefetch = prefetch;
  o.loader.threads = threads;
  o.seed = seed;
  return o;
}

LoaderBase::LoaderBase(std::string name, train::TrainOptions options, LoaderFeed feed,
                       const std::string& device)
    : name_(std::move(name)),
      options_(std::move(options)),
      feed_(feed),
      staging_(checked_device(device)) {
  const int64_t batch_size = options_.loader.batch_size;
  PARTITA_CHECK(batch_size >= 1, UsageError, "batch_size: must be >= 1, got {}", batch_size);
  // The library's own checks of threads and prefetch, before any collective.
  loader::BatchPipelineOptions pipeline;
  pipeline.prefetch = options_.loader.prefetch;
  pipeline.threads = options_.loader.threads;
  loader::check_pipeline_options(pipeline);
}

LoaderBase::~LoaderBase() {
  py::gil_scoped_release release;
  if (Graph* graph = graph_.load()) graph->detach(this);
  std::lock_guard<std::mutex> lock(mu_);
  pipeline_.reset();
}

void LoaderBase::attach(Graph& graph) {
  // graph_ first, so that a close() on another thread right after the attach finds the
  // loader complete.
  graph_ = &graph;
  try {
    graph.attach(this);
  } catch (...) {
    graph_ = nullptr;
    throw;
  }
}

std::string LoaderBase::closed_message() const {
  return fmt::format(
      "{}: its DistGraph is closed (close the graph after the loops over its loaders, e.g. "
      "loop inside `with partita.DistGraph(...) as g:`)",
      name_);
}

Graph& LoaderBase::open_graph() const {
  Graph* graph = graph_.load();
  PARTITA_CHECK(graph != nullptr, UsageError, "{}", closed_message());
  return *graph;
}

int64_t LoaderBase::start() {
  Graph& graph = open_graph();
  Loop loop = plan_loop(graph, epoch_);
  runtime::Session& session = graph.session();
  // As the trainer's tasks take them; a loader keeps no rows resident on its device.
  const loader::BatchPipelineOptions pipeline = train::pipeline_options(
      session, options_, feed_.degrees, feed_.labels, loop.key, /*resident=*/nullptr);
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(mu_);
  PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", closed_message());
  pipeline_.reset();
  if (loop.started) loop.started();
  pipeline_ = std::make_unique<loader::BatchPipeline>(pipeline, std::move(loop.seeds),
                                                      session.sampler(), session.fetcher());
  ++generation_;
  ++epoch_;
  return generation_;
}

std::shared_ptr<loader::Batch> LoaderBase::pull(int64_t token) {
  PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", closed_message());
  PARTITA_CHECK(token == generation_, UsageError,
                "{}: this loop was replaced by a later loop over the same loader (one loop at "
                "a time: each loop is the next epoch)",
                name_);
  if (pipeline_ == nullptr) return nullptr;
  std::optional<loader::Batch> got = pipeline_->next();
  if (!got) {
    pipeline_.reset();
    return nullptr;
  }
  return std::make_shared<loader::Batch>(std::move(*got));
}

void LoaderBase::stop(int64_t token) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(mu_);
  if (token < 0 || token == generation_) pipeline_.reset();
}

void LoaderBase::graph_closing() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  pipeline_.reset();  // joins the workers
  graph_ = nullptr;
}

}  // namespace partita::python
