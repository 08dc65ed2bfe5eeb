// The pipelined neighbor loader for Python: the batches of the C++ trainer (the same global
// plan, share, sampling keys and pipeline; train/trainer.h), handed out as torch tensors.
#include "loader_binding.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "graph_binding.h"
#include "partita/core/error.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/seeds.h"
#include "partita/nn/block_tensors.h"
#include "partita/train/batch_staging.h"
#include "partita/train/device.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// One block of a batch: its tensors (for the fused kernels) and its global src ids.
struct Block {
  nn::BlockTensors tensors;
  torch::Tensor src_nodes;  // [num_src] global ids; the first num_dst are the dst nodes
};

// One batch: tensors that share the C++ batch's memory where the type allows.
struct Batch {
  int64_t step = 0;
  int64_t global_size = 0;  // seeds of the whole global batch (all ranks)
  torch::Tensor seeds, input_nodes, x, y;
  std::vector<Block> blocks;  // input layer first (DGL order): blocks[0].src = input_nodes
  double sample_s = 0, fetch_s = 0;
};

// A tensor over `values` that keeps `owner` alive (no copy).
template <class T>
torch::Tensor view_of(std::vector<T>& values, std::shared_ptr<loader::Batch> owner,
                      torch::ScalarType type) {
  return torch::from_blob(
      values.data(), {static_cast<int64_t>(values.size())}, [owner](void*) {},
      torch::TensorOptions().dtype(type));
}

// The loader behind partita.NeighborLoader. Each loop over it is a generation: start()
// stops the previous one's pipeline and returns the new one's token, which next() and stop()
// take, so that a loop left behind (a generator not yet collected) neither reads nor stops
// a later loop's pipeline. Attached to its graph (GraphUser): closing the graph stops the
// pipeline, and the loader then raises UsageError.
//
// Threads: the Python thread that loops calls start/next/stop with the GIL; pipeline_mu_
// makes a close() from another thread wait for a next() in progress instead of destroying
// the pipeline under it.
class Loader final : public GraphUser {
 public:
  Loader(Graph& graph, std::vector<int64_t> fanouts, int64_t batch_size, const std::string& split,
         bool shuffle, uint64_t seed, int prefetch, int threads, const std::string& device)
      : fanouts_(std::move(fanouts)),
        batch_size_(batch_size),
        shuffle_(shuffle),
        seed_(seed),
        prefetch_(prefetch),
        threads_(threads),
        staging_(checked_device(device)) {
    PARTITA_CHECK(!fanouts_.empty(), UsageError, "fanouts: give one per layer, e.g. [10, 10]");
    for (int64_t k : fanouts_)
      PARTITA_CHECK(k >= 1 || k == -1, UsageError,
                    "fanouts: {} is not a fanout (>= 1, or -1 for all)", k);
    PARTITA_CHECK(batch_size >= 1, UsageError, "batch_size: must be >= 1, got {}", batch_size);
    loader::BatchPipelineOptions pipeline;  // the library's own checks, before any collective
    pipeline.prefetch = prefetch;
    pipeline.threads = threads;
    loader::check_pipeline_options(pipeline);
    PARTITA_CHECK(!graph.graph().typed(), UsageError,
                  "NeighborLoader: {} is a typed (heterogeneous) partition (not supported yet)",
                  graph.graph().dir());
    const runtime::Split which =
        split == "train"                     ? runtime::Split::kTrain
        : split == "valid" || split == "val" ? runtime::Split::kValid
        : split == "test"
            ? runtime::Split::kTest
            : throw UsageError(fmt::format("split: '{}' is not one of train, valid, test", split));
    std::vector<loader::SeedId> ids = graph.all_ids(which);
    std::sort(ids.begin(), ids.end(), [](const loader::SeedId& a, const loader::SeedId& b) {
      return a.original < b.original;
    });
    for (const loader::SeedId& id : ids) ordered_.push_back(id.global);
    plan_ = std::make_unique<loader::GlobalBatches>(std::move(ids), batch_size);
    feat_dim_ = graph.graph().feat_dim();
    feature_dtype_ = graph.graph().feature_dtype();
    feature_row_bytes_ = graph.graph().feature_row_bytes();
    // Last, as nothing after it may throw; graph_ first, so that a close() on another thread
    // right after the attach finds the loader complete.
    graph_ = &graph;
    try {
      graph.attach(this);
    } catch (...) {
      graph_ = nullptr;
      throw;
    }
  }

  ~Loader() {
    py::gil_scoped_release release;
    if (Graph* graph = graph_.load()) graph->detach(this);
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    pipeline_.reset();
  }

  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t steps() const { return plan_->steps(); }
  int64_t num_ids() const { return plan_->num_ids(); }
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // Starts the pipeline of the next epoch (the one set_epoch named, else the one after the
  // last), stopping one still running; returns the new loop's token.
  int64_t start() {
    Graph& graph = open_graph();
    const uint64_t key = static_cast<uint64_t>(epoch_);
    std::vector<std::vector<int64_t>> batches;
    const auto share = [&graph](const std::vector<int64_t>& b) { return graph.share_of(b); };
    if (shuffle_) {
      batches = plan_->epoch_batches(seed_, key, share);
    } else {
      for (const std::vector<int64_t>& b : loader::chunk(ordered_, batch_size_))
        batches.push_back(share(b));
    }
    loader::BatchPipelineOptions o;
    o.threads = threads_;
    o.prefetch = prefetch_;
    o.fanouts = fanouts_;
    o.seed = seed_;
    o.epoch = key;
    o.feature_row_bytes = feature_row_bytes_;
    o.fetch_degrees = true;  // GCN layers normalize with the graph degrees
    runtime::Session& session = graph.session();
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", kClosed);
    pipeline_.reset();
    pipeline_ = std::make_unique<loader::BatchPipeline>(o, std::move(batches), session.sampler(),
                                                        session.fetcher());
    ++generation_;
    ++epoch_;
    return generation_;
  }

  // The next batch of loop `token`; nullopt after its last step.
  std::optional<Batch> next(int64_t token) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", kClosed);
    PARTITA_CHECK(token == generation_, UsageError,
                  "NeighborLoader: this loop was replaced by a later loop over the same loader "
                  "(one loop at a time: each loop is the next epoch)");
    if (pipeline_ == nullptr) return std::nullopt;
    std::optional<loader::Batch> got = pipeline_->next();
    if (!got) {
      pipeline_.reset();
      return std::nullopt;
    }
    return convert(std::make_shared<loader::Batch>(std::move(*got)));
  }

  // Stops loop `token`'s pipeline (the current one when token < 0); a no-op for a loop
  // that a later one replaced, or after the graph closed.
  void stop(int64_t token) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    if (token < 0 || token == generation_) pipeline_.reset();
  }

  // Runs the next epoch's pipeline to its end in C++, converting every batch to tensors as
  // next() does but handing none to Python; returns the batches. The C++ side of the loader
  // alone, for benchmarks.
  int64_t drain() {
    const int64_t token = start();
    int64_t batches = 0;
    while (next(token)) ++batches;
    return batches;
  }

  void graph_closing() noexcept override {
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    pipeline_.reset();  // joins the workers
    graph_ = nullptr;
  }

 private:
  static constexpr const char* kClosed =
      "NeighborLoader: its DistGraph is closed (close the graph after the loops over its "
      "loaders, e.g. loop inside `with partita.DistGraph(...) as g:`)";

  Graph& open_graph() const {
    Graph* graph = graph_.load();
    PARTITA_CHECK(graph != nullptr, UsageError, "{}", kClosed);
    return *graph;
  }

  // `text` ("cpu", "cuda", "cuda:N"; train::parse_device) as a device this process can use
  // (ParameterError(device) otherwise; "cuda" is GPU 0).
  static torch::Device checked_device(const std::string& text) {
    const train::DeviceSpec device = train::parse_device(text);
    train::check_device(device);
    return train::torch_device(device);
  }

  // The tensors of a batch: on the CPU sharing its memory where the types allow, on another
  // device copied there through staging_ (train/batch_staging.h: pinned memory, a side
  // stream, and the caller's current stream made to wait for the copies). No GIL needed.
  Batch convert(const std::shared_ptr<loader::Batch>& owner) {
    Batch out = convert_on_host(owner);
    if (staging_.on_cpu()) return out;
    for (torch::Tensor* t : {&out.seeds, &out.input_nodes, &out.x, &out.y})
      *t = staging_.to_device(*t);
    for (Block& b : out.blocks) {
      b.tensors = staging_.to_device(std::move(b.tensors));
      b.src_nodes = staging_.to_device(b.src_nodes);
    }
    staging_.ready();
    return out;
  }

  Batch convert_on_host(const std::shared_ptr<loader::Batch>& owner) const {
    Batch out;
    out.step = owner->step;
    out.global_size = plan_->batch_size(owner->step);
    out.sample_s = owner->sample_s;
    out.fetch_s = owner->fetch_s;
    out.seeds = view_of(owner->sampled.seeds, owner, torch::kInt64);
    out.input_nodes = view_of(owner->sampled.input_nodes, owner, torch::kInt64);
    out.y = view_of(owner->labels, owner, torch::kInt64);
    const int64_t rows = static_cast<int64_t>(owner->sampled.input_nodes.size());
    torch::Tensor x = torch::from_blob(
        owner->features.data(), {rows, feat_dim_}, [owner](void*) {},
        torch::TensorOptions().dtype(torch_type(feature_dtype_)));
    out.x = x.scalar_type() == torch::kFloat32 ? x : x.to(torch::kFloat32);
    if (!owner->sampled.seeds.empty()) {
      std::vector<nn::BlockTensors> tensors =
          nn::to_block_tensors(owner->sampled.blocks, owner->degrees);
      for (size_t i = tensors.size(); i-- > 0;) {
        sample::Block& b = owner->sampled.blocks[i];
        out.blocks.push_back({std::move(tensors[i]), view_of(b.src_nodes, owner, torch::kInt64)});
      }
    }
    return out;
  }

  static torch::ScalarType torch_type(DType dtype) {
    switch (dtype) {
      case DType::kFloat16:
        return torch::kFloat16;
      case DType::kBFloat16:
        return torch::kBFloat16;
      default:
        return torch::kFloat32;
    }
  }

  std::atomic<Graph*> graph_{nullptr};  // null once the graph closed (graph_closing)
  std::vector<int64_t> fanouts_;
  int64_t batch_size_;
  bool shuffle_;
  uint64_t seed_;
  int prefetch_, threads_;
  int64_t feat_dim_ = 0;
  DType feature_dtype_ = DType::kFloat32;
  int64_t feature_row_bytes_ = 0;
  std::unique_ptr<loader::GlobalBatches> plan_;
  std::vector<int64_t> ordered_;  // every id of the split by original id (shuffle=False)
  int64_t epoch_ = 0;
  std::mutex pipeline_mu_;  // guards the two below
  int64_t generation_ = 0;  // the current loop's token (start())
  std::unique_ptr<loader::BatchPipeline> pipeline_;
  train::BatchStaging staging_;  // batches to the loader's device (used by next())
};

// The blocks BlockBuilder samples for `seeds` under key (seed, epoch, step) through the
// graph's distributed sampler, input layer first: what the loader's batch of that step
// holds, built without the pipeline (for tests and debugging). Collective only in that a
// remote owner must answer.
std::vector<Block> sample_blocks(Graph& graph, std::vector<int64_t> seeds,
                                 std::vector<int64_t> fanouts, uint64_t seed, uint64_t epoch,
                                 uint64_t step) {
  auto owner = std::make_shared<sample::SampledBatch>();
  {
    py::gil_scoped_release release;
    sample::BlockOptions options;
    options.fanouts = std::move(fanouts);
    options.key = {seed, epoch, step};
    *owner =
        sample::sample_blocks(ArrayView<const int64_t>(seeds), options, graph.session().sampler());
  }
  std::vector<Block> out;
  std::vector<nn::BlockTensors> tensors = nn::to_block_tensors(owner->blocks);
  for (size_t i = tensors.size(); i-- > 0;) {
    std::vector<int64_t>& src = owner->blocks[i].src_nodes;
    out.push_back({std::move(tensors[i]),
                   torch::from_blob(
                       src.data(), {static_cast<int64_t>(src.size())}, [owner](void*) {},
                       torch::TensorOptions().dtype(torch::kInt64))});
  }
  return out;
}

}  // namespace

void add_loader_bindings(py::module_& m) {
  m.def("sample_blocks", &sample_blocks, py::arg("graph"), py::arg("seeds"), py::arg("fanouts"),
        py::arg("seed"), py::arg("epoch"), py::arg("step"),
        "The blocks BlockBuilder samples for `seeds` under key (seed, epoch, step), input "
        "layer first (the loader's batch of that step, without the pipeline)");
  py::class_<Block>(m, "Block", "One sampled block (layer) of a batch")
      .def_readonly("tensors", &Block::tensors)
      .def_readonly("src_nodes", &Block::src_nodes)
      .def_property_readonly("num_src", [](const Block& b) { return b.tensors.num_src; })
      .def_property_readonly("num_dst", [](const Block& b) { return b.tensors.num_dst; })
      .def_property_readonly("num_edges", [](const Block& b) { return b.tensors.num_edges(); })
      .def_property_readonly("indptr", [](const Block& b) { return b.tensors.indptr; })
      .def_property_readonly("indices", [](const Block& b) { return b.tensors.indices; })
      .def_property_readonly("edge_index",
                             [](const Block& b) {
                               return torch::stack({b.tensors.indices, b.tensors.edge_dst});
                             })
      .def_property_readonly("graph_deg", [](const Block& b) { return b.tensors.graph_deg; });

  py::class_<Batch>(m, "Batch", "One mini-batch of this rank")
      .def_readonly("step", &Batch::step)
      .def_readonly("global_size", &Batch::global_size)
      .def_readonly("seeds", &Batch::seeds)
      .def_readonly("input_nodes", &Batch::input_nodes)
      .def_readonly("x", &Batch::x)
      .def_readonly("y", &Batch::y)
      .def_readonly("blocks", &Batch::blocks)
      .def_readonly("sample_s", &Batch::sample_s)
      .def_readonly("fetch_s", &Batch::fetch_s)
      .def_property_readonly("num_seeds", [](const Batch& b) { return b.seeds.size(0); });

  py::class_<Loader>(m, "NeighborLoader", "The C++ batch pipeline over a split of a DistGraph")
      .def(py::init<Graph&, std::vector<int64_t>, int64_t, const std::string&, bool, uint64_t, int,
                    int, const std::string&>(),
           py::arg("graph"), py::arg("fanouts"), py::arg("batch_size") = 1024,
           py::arg("split") = "train", py::arg("shuffle") = true, py::arg("seed") = 0,
           py::arg("prefetch") = 2, py::arg("threads") = 1, py::arg("device") = "cpu",
           py::keep_alive<1, 2>())
      .def("__len__", &Loader::steps)
      .def_property_readonly("num_ids", &Loader::num_ids)
      .def_property_readonly("epoch", &Loader::epoch)
      .def("set_epoch", &Loader::set_epoch, py::arg("epoch"))
      .def("start", &Loader::start,
           "Starts the next epoch's pipeline (stopping one still running); returns its token")
      .def("next", &Loader::next, py::arg("token"),
           "The next batch of loop `token`, or None after its last step")
      .def("stop", &Loader::stop, py::arg("token") = -1,
           "Stops loop `token`'s pipeline (default: the current one); idempotent")
      .def("drain", &Loader::drain,
           "Runs the next epoch in C++ without handing batches to Python (benchmarks)");
}

}  // namespace partita::python
