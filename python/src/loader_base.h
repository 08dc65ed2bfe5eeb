#pragma once
// The lifecycle every loader of the Python package shares (partita.NeighborLoader on either
// kind of partition, LinkNeighborLoader, LinkEvalLoader): the C++ batch pipeline over a
// graph, one loop at a time.
//
// Loops: each loop over a loader is a generation. start() stops the previous loop's pipeline
// and returns the new loop's token, which next() and stop() take, so that a loop left behind
// (a generator not yet collected) neither reads nor stops a later loop's pipeline. Each
// start() runs the loader's next epoch (the one set_epoch named, else the one after the last).
//
// Graph: a loader is attached to its graph while it lives (GraphUser); closing the graph
// stops the pipeline (joins its workers), and the loader then raises UsageError.
//
// Threads: the Python thread that loops calls start/next/stop with the GIL; they release it
// while they wait. The lock makes a close() from another thread wait for a next() in progress
// instead of destroying the pipeline under it; batches are converted under it, without the
// GIL.
//
// What a loader supplies: its settings in the C++ trainer's terms (train::TrainOptions: the
// loader's fanouts, batch size, threads, prefetch and the seed), from which the pipeline's
// options come as the trainer's tasks take them (train::pipeline_options); what its
// batches fetch (LoaderFeed); each loop's plan (plan_loop); and the conversion of a batch to
// the tensors Python gets (its next(), through next_with).
#include <torch/extension.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph_binding.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/train/batch_staging.h"
#include "partita/train/train_options.h"

namespace partita::python {

// What a loader's batches carry besides blocks and input features.
struct LoaderFeed {
  bool degrees = false;  // every input node's graph in-degree (GCN layers normalize with it)
  bool labels = false;   // the seeds' labels
};

// `fanouts` (one per layer, each >= 1 or -1: all neighbours) as the trainer's; UsageError
// "fanouts: ..." otherwise.
sample::Fanouts checked_fanouts(std::vector<int64_t> fanouts);

// A loader's settings in the C++ trainer's terms: loader.fanouts, batch_size, prefetch and
// threads, and the seed; everything else at train::TrainOptions' defaults.
train::TrainOptions trainer_options(sample::Fanouts fanouts, int64_t batch_size, uint64_t seed,
                                    int prefetch, int threads);

// The edge features a loader's batches carry (Block::edge_attr, batch_views.h's
// set_edge_attrs; a typed batch's RelationBlock::edge_attr): dim 0 for none.
struct EdgeAttrs {
  int64_t dim = 0;
  DType dtype = DType::kFloat32;
};

// `options` with loader.edge_features set: train::pipeline_options then fetches every block
// edge's edge_feat row.
train::TrainOptions with_edge_features(train::TrainOptions options, bool edge_features);

// What `graph` gives the batches of loader `name` (the Python class) with `edge_features`
// (its options' loader.edge_features; nothing without): UsageError when the partition holds no edge
// features or the graph samples without edge ids (partita.DistGraph(..., edge_features=True) turns
// them on).
EdgeAttrs edge_attrs_of(Graph& graph, bool edge_features, const std::string& name);

class LoaderBase : public GraphUser {
 public:
  LoaderBase(const LoaderBase&) = delete;
  LoaderBase& operator=(const LoaderBase&) = delete;

  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // Starts the pipeline of the next loop, stopping one still running; returns its token.
  // Collective where plan_loop is.
  int64_t start();
  // Stops loop `token`'s pipeline (the current one when token < 0); a no-op for a loop that
  // a later one replaced, or after the graph closed.
  void stop(int64_t token);

  void graph_closing() noexcept final;

 protected:
  // One loop's input: its sampling key (the epoch, or an evaluation tag) and this rank's
  // seeds of every step.
  struct Loop {
    uint64_t key = 0;
    std::vector<std::vector<int64_t>> seeds;
    // Run under the lock as the loop's pipeline starts, when a loader keeps state per loop
    // for its conversion (LinkLoader: each step's pairs); may be empty.
    std::function<void()> started;
  };

  // `name`: the Python class, for messages. `options`: the loader's settings (loader.*,
  // seed); batch_size, prefetch and threads are checked here (ParameterError naming them).
  // `device`: "cpu", "cuda", "cuda:N" (ParameterError(device) when this process cannot use
  // it), where next() delivers batches. Call attach() last in the loader's constructor.
  LoaderBase(std::string name, train::TrainOptions options, LoaderFeed feed,
             const std::string& device);
  // Detaches from the graph and stops the pipeline.
  ~LoaderBase();

  // Attaches to `graph`; the constructor's last step, as nothing after it may throw.
  void attach(Graph& graph);
  // The graph; UsageError when it closed.
  Graph& open_graph() const;

  // The plan of the loop that runs epoch `epoch`. Called by start() with the GIL.
  virtual Loop plan_loop(Graph& graph, int64_t epoch) = 0;

  // The next batch of loop `token` passed to `convert` (with the lock held, without the
  // GIL): what convert returns, or nullopt after the loop's last step. UsageError when the
  // graph closed or a later loop replaced this one.
  template <class Convert>
  auto next_with(int64_t token, Convert&& convert)
      -> std::optional<decltype(convert(std::shared_ptr<loader::Batch>()))> {
    pybind11::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<loader::Batch> batch = pull(token);
    if (batch == nullptr) return std::nullopt;
    return convert(batch);
  }

  const std::string& name() const { return name_; }
  const train::TrainOptions& options() const { return options_; }
  // Batches to the loader's device (train/batch_staging.h); used under the lock.
  train::BatchStaging& staging() { return staging_; }

 private:
  std::string closed_message() const;
  // The next batch of loop `token`, or null after its last step. Holds mu_.
  std::shared_ptr<loader::Batch> pull(int64_t token);

  const std::string name_;
  const train::TrainOptions options_;
  const LoaderFeed feed_;
  std::atomic<Graph*> graph_{nullptr};  // null once the graph closed (graph_closing)
  int64_t epoch_ = 0;
  std::mutex mu_;           // guards the two below
  int64_t generation_ = 0;  // the current loop's token
  std::unique_ptr<loader::BatchPipeline> pipeline_;
  train::BatchStaging staging_;
};

// Runs loader `l`'s next loop to its end in C++, converting every batch as next() does but
// handing none to Python; returns the batches (benchmarks: the C++ side of a loader alone).
template <class L>
int64_t drain(L& l) {
  const int64_t token = l.start();
  int64_t batches = 0;
  while (l.next(token)) ++batches;
  return batches;
}

// Binds the loop methods of loader class L (a LoaderBase with steps() and next(token)):
// __len__, epoch, set_epoch, start, next, stop, drain.
template <class L>
void bind_loops(pybind11::class_<L>& c) {
  namespace py = pybind11;
  c.def("__len__", &L::steps)
      .def_property_readonly("epoch", &L::epoch)
      .def("set_epoch", &L::set_epoch, py::arg("epoch"))
      .def("start", &L::start,
           "Starts the next epoch's pipeline (stopping one still running); returns its token")
      .def("next", &L::next, py::arg("token"),
           "The next batch of loop `token`, or None after its last step")
      .def("stop", &L::stop, py::arg("token") = -1,
           "Stops loop `token`'s pipeline (default: the current one); idempotent")
      .def("drain", &drain<L>,
           "Runs the next loop in C++ without handing batches to Python (benchmarks)");
}

}  // namespace partita::python
