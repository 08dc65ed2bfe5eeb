// The pipelined neighbor loader for Python: the batches of the C++ trainer (the same global
// plan, share, sampling keys and pipeline; train/trainer.h), handed out as torch tensors.
// The lifecycle is loader_base.h's, the plan split_plan.h's, the tensors batch_views.h's.
#include "loader_binding.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch_views.h"
#include "graph_binding.h"
#include "loader_base.h"
#include "partita/core/error.h"
#include "split_plan.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// One batch: tensors that share the C++ batch's memory where the type allows.
struct Batch : BlockBatch {
  torch::Tensor y;  // int64 labels of the seeds
};

// The loader behind partita.NeighborLoader on a homogeneous partition (loader_base.h).
class Loader final : public SplitLoader {
 public:
  Loader(Graph& graph, std::vector<int64_t> fanouts, int64_t batch_size, const std::string& split,
         bool shuffle, uint64_t seed, int prefetch, int threads, const std::string& device,
         bool edge_features)
      : SplitLoader("NeighborLoader",
                    with_edge_features(trainer_options(checked_fanouts(std::move(fanouts)),
                                                       batch_size, seed, prefetch, threads),
                                       edge_features),
                    {/*degrees=*/true, /*labels=*/true},  // GCN layers normalize with degrees
                    device) {
    const store::DistGraph& g = graph.graph();
    PARTITA_CHECK(!g.typed(), UsageError,
                  "NeighborLoader: {} is a typed (heterogeneous) partition (not supported yet)",
                  g.dir());
    edge_attrs_ = edge_attrs_of(graph, options().loader.edge_features, name());
    plan_split(graph, split, shuffle);
    feat_dim_ = g.feat_dim();
    feature_dtype_ = g.feature_dtype();
    attach(graph);
  }

  // The next batch of loop `token`; nullopt after its last step. On another device than the
  // CPU, every tensor is copied there through staging() (pinned memory, a side stream, and
  // the caller's current stream made to wait for the copies).
  std::optional<Batch> next(int64_t token) {
    return next_with(token, [this](const std::shared_ptr<loader::Batch>& batch) {
      Batch out;
      fill_block_batch(batch, global_size(batch->step), feat_dim_, feature_dtype_, out);
      set_edge_attrs(batch, edge_attrs_.dim, edge_attrs_.dtype, out);
      out.y = view_of(batch->labels, batch, torch::kInt64);
      if (staging().on_cpu()) return out;
      to_device(out, staging());
      out.y = staging().to_device(out.y);
      staging().ready();
      return out;
    });
  }

 private:
  int64_t feat_dim_ = 0;
  DType feature_dtype_ = DType::kFloat32;
  EdgeAttrs edge_attrs_;
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
  return input_layer_first(owner->blocks, nn::to_block_tensors(owner->blocks), owner);
}

}  // namespace

void add_loader_bindings(py::module_& m) {
  m.def("sample_blocks", &sample_blocks, py::arg("graph"), py::arg("seeds"), py::arg("fanouts"),
        py::arg("seed"), py::arg("epoch"), py::arg("step"),
        "The blocks BlockBuilder samples for `seeds` under key (seed, epoch, step), input "
        "layer first (the loader's batch of that step, without the pipeline)");
  bind_block(m);

  py::class_<Batch> batch(m, "Batch", "One mini-batch of this rank");
  bind_block_batch(batch);
  batch.def_readonly("y", &Batch::y);

  py::class_<Loader> loader(m, "NeighborLoader",
                            "The C++ batch pipeline over a split of a DistGraph");
  loader
      .def(py::init<Graph&, std::vector<int64_t>, int64_t, const std::string&, bool, uint64_t, int,
                    int, const std::string&, bool>(),
           py::arg("graph"), py::arg("fanouts"), py::arg("batch_size") = 1024,
           py::arg("split") = "train", py::arg("shuffle") = true, py::arg("seed") = 0,
           py::arg("prefetch") = 2, py::arg("threads") = 1, py::arg("device") = "cpu",
           py::arg("edge_features") = false, py::keep_alive<1, 2>())
      .def_property_readonly("num_ids", &Loader::num_ids);
  bind_loops(loader);
}

}  // namespace partita::python
