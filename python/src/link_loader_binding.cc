// Link-prediction batches for Python: the steps of the C++ link task (train/link_task.cc:
// the same pair plan, share, negatives, exclusion, sampling keys and pipeline;
// loader/link_batches.h), and the held-out pairs in the batches its sampled evaluation
// scores, handed out as torch tensors.
#include "link_loader_binding.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "batch_views.h"
#include "graph_binding.h"
#include "loader_base.h"
#include "partita/core/error.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_exclusion.h"
#include "partita/loader/link_batches.h"
#include "partita/loader/seeds.h"
#include "partita/partition/format.h"
#include "partita/runtime/failure.h"
#include "partita/sample/edge_exclusion.h"
#include "partita/train/inference.h"
#include "partita/train/link_metrics.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// The sampling keys of the trainer's evaluation passes (train/trainer.cc): validation after
// epoch e is keyed kEvalTagBase + e, the test pass kEvalTagBase - 1.
constexpr uint64_t kEvalTagBase = uint64_t{1} << 40;

// One link batch of this rank: a homogeneous batch (batch_views.h; blocks[-1].dst = seeds)
// with its pairs. global_size counts the global batch's pairs, positives and negatives.
struct LinkBatch : BlockBatch {
  int64_t global_positives = 0;    // positives of the global batch
  torch::Tensor pos, neg;          // int64 [2, p], [2, n]: (src, dst) positions into seeds
  torch::Tensor pos_ids, neg_ids;  // int64 [p], [n]: which pairs (see StepPairs)
  int64_t excluded_edges = 0;      // block edges removed by the exclusion
  double exclude_s = 0;
};

// The pairs of one step, positions into its seeds (loader::LinkStep).
struct StepPairs {
  std::vector<loader::SeedPair> pos, neg;
  // Training: pos_ids the global indices of the positives (part order, link_batches.h),
  // neg_ids empty. Held-out: the rows of the positives' and negatives' files.
  std::vector<int64_t> pos_ids, neg_ids;
  std::vector<int64_t> excluded;  // [g, 2] row-major global ids; empty: nothing excluded
  int64_t global_size = 0, global_positives = 0;
};

torch::Tensor int64_tensor(const std::vector<int64_t>& values) {
  return torch::tensor(at::ArrayRef<int64_t>(values), torch::kInt64);
}

// [2, n] (src; dst) of `pairs`.
torch::Tensor pair_tensor(const std::vector<loader::SeedPair>& pairs) {
  const int64_t n = static_cast<int64_t>(pairs.size());
  torch::Tensor out = torch::empty({2, n}, torch::kInt64);
  int64_t* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    p[i] = pairs[static_cast<size_t>(i)].src;
    p[n + i] = pairs[static_cast<size_t>(i)].dst;
  }
  return out;
}

// The loader behind partita.LinkNeighborLoader (pairs kTrain) and partita.LinkEvalLoader
// (kValid, kTest); the lifecycle is loader_base.h's. next() waits for a batch, removes the
// step's excluded edges and converts it, without the GIL.
class LinkLoader final : public LoaderBase {
 public:
  // `options`: the loader's settings as the C++ link task's (loader.*, link.negatives,
  // negative_kind and exclude, seed). Collective: gathers every rank's training pairs
  // (kTrain) and, for degree negatives, the in-degrees.
  LinkLoader(Graph& graph, runtime::Split which, train::TrainOptions options,
             const std::string& device)
      : LoaderBase(which == runtime::Split::kTrain ? "LinkNeighborLoader" : "LinkEvalLoader",
                   std::move(options), {/*degrees=*/true, /*labels=*/false}, device),
        which_(which) {
    const store::DistGraph& g = graph.graph();
    PARTITA_CHECK(!g.typed(), UsageError,
                  "{}: {} is a typed (heterogeneous) partition; link batches need a "
                  "homogeneous one",
                  name(), g.dir());
    PARTITA_CHECK(g.meta().summary.edge_split.has_value(), UsageError,
                  "{}: {} has no edge split; partition the dataset with `partita partition "
                  "--edge-split VALID,TEST` (e.g. 0.05,0.10)",
                  name(), g.dir());
    feat_dim_ = g.feat_dim();
    feature_dtype_ = g.feature_dtype();
    edge_attrs_ = edge_attrs_of(graph, this->options().loader.edge_features, name());
    if (which_ == runtime::Split::kTrain) {
      set_up_training(graph);
    } else {
      set_up_held_out(graph);
    }
    attach(graph);
  }

  int64_t steps() const {
    if (which_ != runtime::Split::kTrain) return static_cast<int64_t>(held_out_.size());
    const int64_t max_steps = options().loader.max_steps;
    return max_steps > 0 ? std::min(max_steps, plan_->steps()) : plan_->steps();
  }
  int64_t num_pairs() const { return num_pos_ + num_neg_; }
  int64_t num_positives() const { return num_pos_; }
  int64_t num_negatives() const { return num_neg_; }

  // The next batch of loop `token`; nullopt after its last step.
  std::optional<LinkBatch> next(int64_t token) {
    return next_with(token, [this](const std::shared_ptr<loader::Batch>& batch) {
      return convert(batch, steps_[static_cast<size_t>(batch->step)]);
    });
  }

 private:
  Loop plan_loop(Graph& graph, int64_t epoch) override {
    Loop loop;
    auto steps = std::make_shared<std::vector<StepPairs>>();
    if (which_ == runtime::Split::kTrain) {
      loop.key = static_cast<uint64_t>(epoch);
      training_steps(graph, loop.key, *steps, loop.seeds);
    } else {
      loop.key = which_ == runtime::Split::kTest ? kEvalTagBase - 1
                                                 : kEvalTagBase + static_cast<uint64_t>(epoch);
      *steps = held_out_;
      loop.seeds = held_out_seeds_;
    }
    loop.started = [this, steps] { steps_ = std::move(*steps); };
    return loop;
  }

  // As LinkTask's constructor (train/link_task.cc): this rank's pairs, every rank's pairs
  // gathered, their keys, the plan in key order and the negative sampler. Collective.
  void set_up_training(Graph& graph) {
    runtime::Session& session = graph.session();
    const store::DistGraph& g = session.graph();
    loader::LinkEdges mine;
    runtime::agree_on_setup(session.collectives(), [&] {
      mine = g.replicated() ? loader::read_all_link_edges(g.dir(), g.meta())
                            : loader::read_link_edges(g.dir(), g.meta(), g.rank());
      PARTITA_CHECK(mine.total > 0, Error, "{}: the edge split left no training pairs", g.dir());
    });
    first_ = mine.first;
    count_ = mine.count();
    pairs_ = g.replicated() ? std::move(mine.pairs) : session.collectives().allgather(mine.pairs);
    PARTITA_CHECK(static_cast<int64_t>(pairs_.size()) == 2 * mine.total, Error,
                  "internal: {} training pairs gathered, partita.json says {}", pairs_.size() / 2,
                  mine.total);
    const ArrayView<const int64_t> node_map = g.node_map();
    std::vector<loader::SeedId> ids(static_cast<size_t>(mine.total));
    keys_.resize(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      keys_[i] =
          loader::pair_key(node_map[pairs_[2 * i]], node_map[pairs_[2 * i + 1]], g.num_nodes());
      ids[i] = {keys_[i], static_cast<int64_t>(i)};
    }
    plan_ = std::make_unique<loader::GlobalBatches>(std::move(ids), options().loader.batch_size);
    negatives_.emplace(
        options().link.negative_kind == loader::NegativeKind::kDegree
            ? loader::NegativeSampler::by_degree(node_map, train::all_in_degrees(session))
            : loader::NegativeSampler::uniform(node_map));
  }

  // As LinkTask::epoch_seeds: the epoch's steps and their seeds.
  void training_steps(Graph& graph, uint64_t epoch, std::vector<StepPairs>& steps,
                      std::vector<std::vector<int64_t>>& seeds) const {
    runtime::Session& session = graph.session();
    const bool replicated = session.graph().replicated();
    const int64_t k = options().link.negatives;
    const int64_t max_steps = options().loader.max_steps;
    const auto pairs_of = [&](const std::vector<int64_t>& indices) {
      std::vector<int64_t> out;
      out.reserve(2 * indices.size());
      for (int64_t index : indices) {
        out.push_back(pairs_[static_cast<size_t>(2 * index)]);
        out.push_back(pairs_[static_cast<size_t>(2 * index + 1)]);
      }
      return out;
    };
    for (const std::vector<int64_t>& global : plan_->epoch_batches(
             options().seed, epoch, [](const std::vector<int64_t>& b) { return b; })) {
      // The first max_steps global batches only (the C++ trainer's --max-steps).
      if (max_steps > 0 && static_cast<int64_t>(steps.size()) == max_steps) break;
      std::vector<int64_t> mine;
      if (replicated) {
        mine = loader::even_share(global, session.rank(), session.size());
      } else {
        for (int64_t index : global)
          if (index >= first_ && index < first_ + count_) mine.push_back(index);
      }
      const int64_t b = static_cast<int64_t>(mine.size());
      std::vector<int64_t> negative_dsts(static_cast<size_t>(b * k));
      for (int64_t i = 0; i < b; ++i)
        negatives_->draw(options().seed, epoch,
                         keys_[static_cast<size_t>(mine[static_cast<size_t>(i)])], k,
                         negative_dsts.data() + i * k);
      loader::LinkStep step = loader::make_link_step(pairs_of(mine), negative_dsts, k);
      StepPairs s;
      s.pos = std::move(step.positives);
      s.neg = std::move(step.negatives);
      s.pos_ids = std::move(mine);
      if (options().link.exclude != sample::Exclude::kNone) s.excluded = pairs_of(global);
      s.global_positives = static_cast<int64_t>(global.size());
      s.global_size = s.global_positives * (1 + k);
      seeds.push_back(std::move(step.seeds));
      steps.push_back(std::move(s));
    }
  }

  // As LinkTask::evaluate (sampled): the held-out positives then negatives in global batches
  // of batch_size in key order (positives first), each rank the pairs whose destination it
  // owns (an even share when replicated). Every rank reads the files.
  void set_up_held_out(Graph& graph) {
    runtime::Session& session = graph.session();
    const store::DistGraph& g = session.graph();
    const size_t first_file = which_ == runtime::Split::kTest ? 2 : 0;
    std::vector<int64_t> pos, neg;
    runtime::agree_on_setup(session.collectives(), [&] {
      pos = loader::read_pair_file(g.dir() + "/" + partition::kEdgeSplitFiles[first_file],
                                   g.num_nodes());
      neg = loader::read_pair_file(g.dir() + "/" + partition::kEdgeSplitFiles[first_file + 1],
                                   g.num_nodes());
    });
    num_pos_ = static_cast<int64_t>(pos.size() / 2);
    num_neg_ = static_cast<int64_t>(neg.size() / 2);
    const int64_t n = num_pos_ + num_neg_;
    const auto pair_at = [&](int64_t j, int end) {
      return j < num_pos_ ? pos[static_cast<size_t>(2 * j + end)]
                          : neg[static_cast<size_t>(2 * (j - num_pos_) + end)];
    };
    const ArrayView<const int64_t> node_map = g.node_map();
    std::vector<std::pair<int64_t, int64_t>> keyed(static_cast<size_t>(n));  // (key, j)
    for (int64_t j = 0; j < n; ++j)
      keyed[static_cast<size_t>(j)] = {
          loader::pair_key(node_map[pair_at(j, 0)], node_map[pair_at(j, 1)], g.num_nodes()), j};
    std::sort(keyed.begin(), keyed.begin() + num_pos_);
    std::sort(keyed.begin() + num_pos_, keyed.end());
    for (int64_t begin = 0; begin < n; begin += options().loader.batch_size) {
      const int64_t end = std::min(n, begin + options().loader.batch_size);
      std::vector<int64_t> batch;
      StepPairs s;
      for (int64_t i = begin; i < end; ++i) {
        batch.push_back(keyed[static_cast<size_t>(i)].second);
        if (batch.back() < num_pos_) ++s.global_positives;
      }
      s.global_size = end - begin;
      if (g.replicated()) {
        batch = loader::even_share(batch, session.rank(), session.size());
      } else {
        batch.erase(std::remove_if(batch.begin(), batch.end(),
                                   [&](int64_t j) { return !g.owns(pair_at(j, 1)); }),
                    batch.end());
      }
      std::vector<int64_t> pairs;
      for (int64_t j : batch) {
        pairs.push_back(pair_at(j, 0));
        pairs.push_back(pair_at(j, 1));
      }
      loader::LinkStep step = loader::make_link_step(pairs, {}, 0);
      for (size_t i = 0; i < batch.size(); ++i) {
        if (batch[i] < num_pos_) {
          s.pos.push_back(step.positives[i]);
          s.pos_ids.push_back(batch[i]);
        } else {
          s.neg.push_back(step.positives[i]);
          s.neg_ids.push_back(batch[i] - num_pos_);
        }
      }
      held_out_seeds_.push_back(std::move(step.seeds));
      held_out_.push_back(std::move(s));
    }
  }

  // The step's excluded edges removed from the batch (as the C++ task's step_loss: the
  // global step's pairs leave every block, and GCN's degrees, after sampling), then its
  // tensors: on the CPU sharing the batch's memory where the types allow, on another
  // device copied through staging(). No GIL needed.
  LinkBatch convert(const std::shared_ptr<loader::Batch>& batch, const StepPairs& s) {
    LinkBatch out;
    if (!s.excluded.empty() && !batch->sampled.seeds.empty()) {
      Stopwatch watch;
      out.excluded_edges = loader::exclude_batch_edges(*batch, s.excluded, options().link.exclude);
      out.exclude_s = watch.seconds();
    }
    fill_block_batch(batch, s.global_size, feat_dim_, feature_dtype_, out);
    set_edge_attrs(batch, edge_attrs_.dim, edge_attrs_.dtype, out);
    out.global_positives = s.global_positives;
    out.pos = pair_tensor(s.pos);
    out.neg = pair_tensor(s.neg);
    out.pos_ids = int64_tensor(s.pos_ids);
    out.neg_ids = int64_tensor(s.neg_ids);
    if (staging().on_cpu()) return out;
    to_device(out, staging());
    for (torch::Tensor* t : {&out.pos, &out.neg, &out.pos_ids, &out.neg_ids})
      *t = staging().to_device(*t);
    staging().ready();
    return out;
  }

  const runtime::Split which_;
  int64_t feat_dim_ = 0;
  DType feature_dtype_ = DType::kFloat32;
  EdgeAttrs edge_attrs_;
  // Training: every pair of the job ([total, 2] row-major, global ids), its key, the plan,
  // this rank's indices [first_, first_ + count_), the negatives.
  std::vector<int64_t> pairs_, keys_;
  int64_t first_ = 0, count_ = 0;
  std::unique_ptr<loader::GlobalBatches> plan_;
  std::optional<loader::NegativeSampler> negatives_;
  // Held-out: the steps and their seeds (the same every loop), the set's sizes.
  std::vector<StepPairs> held_out_;
  std::vector<std::vector<int64_t>> held_out_seeds_;
  int64_t num_pos_ = 0, num_neg_ = 0;
  std::vector<StepPairs> steps_;  // the running loop's steps (under LoaderBase's lock)
};

// The settings of a link loader in the C++ link task's terms. `negatives` may be 0 (a
// held-out set's loader draws none).
train::TrainOptions link_options(std::vector<int64_t> fanouts, int64_t batch_size,
                                 int64_t negatives, const std::string& negative_sampling,
                                 const std::string& exclude, uint64_t seed, int prefetch,
                                 int threads, int64_t max_steps) {
  train::TrainOptions o =
      trainer_options(checked_fanouts(std::move(fanouts)), batch_size, seed, prefetch, threads);
  PARTITA_CHECK(max_steps >= 0, UsageError, "max_steps: must be >= 0, got {}", max_steps);
  PARTITA_CHECK(negatives >= 0 && negatives <= 1000, UsageError,
                "neg: must be in [0, 1000], got {}", negatives);
  o.loader.max_steps = max_steps;
  o.link.negatives = negatives;
  o.link.negative_kind =
      value_named(loader::negative_kind_names(), "negative_sampling", negative_sampling);
  const std::optional<sample::Exclude> kind = find_named(sample::exclude_names(), exclude);
  PARTITA_CHECK(kind.has_value(), UsageError,
                "exclude_seed_edges: '{}' is not one of True (reverse), reverse, self, "
                "False (none), none",
                exclude);
  o.link.exclude = *kind;
  return o;
}

// The C++ link task's metrics (train/link_metrics.h) of float32 score tensors.
py::dict link_metrics(const torch::Tensor& positive, const torch::Tensor& negative,
                      int64_t hits_k) {
  const torch::Tensor p = positive.to(torch::kCPU, torch::kFloat32).contiguous();
  const torch::Tensor n = negative.to(torch::kCPU, torch::kFloat32).contiguous();
  const train::LinkMetrics m =
      train::link_metrics(ArrayView<const float>(p.data_ptr<float>(), p.numel()),
                          ArrayView<const float>(n.data_ptr<float>(), n.numel()), hits_k);
  py::dict out;
  out["auc"] = m.auc;
  out["ap"] = m.ap;
  out["mrr"] = m.mrr;
  out["hits"] = m.hits;
  out["hits_k"] = m.hits_k;
  out["positives"] = m.positives;
  out["negatives"] = m.negatives;
  return out;
}

}  // namespace

void add_link_loader_bindings(py::module_& m) {
  // Link batches hold Blocks (loader_binding.cc registers them); the former name stays.
  m.attr("LinkBlock") = m.attr("Block");

  py::class_<LinkBatch> batch(m, "LinkBatch", "One link-prediction mini-batch of this rank");
  bind_block_batch(batch);
  batch.def_readonly("global_positives", &LinkBatch::global_positives)
      .def_readonly("pos", &LinkBatch::pos)
      .def_readonly("neg", &LinkBatch::neg)
      .def_readonly("pos_ids", &LinkBatch::pos_ids)
      .def_readonly("neg_ids", &LinkBatch::neg_ids)
      .def_readonly("excluded_edges", &LinkBatch::excluded_edges)
      .def_readonly("exclude_s", &LinkBatch::exclude_s)
      .def_property_readonly("num_pos", [](const LinkBatch& b) { return b.pos.size(1); })
      .def_property_readonly("num_neg", [](const LinkBatch& b) { return b.neg.size(1); })
      .def_property_readonly("edge_label_index",
                             [](const LinkBatch& b) {
                               return torch::cat({b.pos, b.neg}, 1);
                             })
      .def_property_readonly("edge_label", [](const LinkBatch& b) {
        const auto on = torch::TensorOptions().dtype(torch::kFloat32).device(b.pos.device());
        return torch::cat({torch::ones({b.pos.size(1)}, on), torch::zeros({b.neg.size(1)}, on)});
      });

  py::class_<LinkLoader> loader(
      m, "LinkLoader", "The C++ link batches (training steps or a held-out set) of a DistGraph");
  loader
      .def(py::init([](Graph& graph, const std::string& pairs, std::vector<int64_t> fanouts,
                       int64_t batch_size, int64_t negatives, const std::string& negative_sampling,
                       const std::string& exclude, uint64_t seed, int prefetch, int threads,
                       const std::string& device, int64_t max_steps, bool edge_features) {
             const runtime::Split which = split_of(pairs);
             return std::make_unique<LinkLoader>(
                 graph, which,
                 with_edge_features(
                     link_options(std::move(fanouts), batch_size, negatives, negative_sampling,
                                  exclude, seed, prefetch, threads, max_steps),
                     edge_features),
                 device);
           }),
           py::arg("graph"), py::arg("pairs"), py::arg("fanouts"), py::arg("batch_size"),
           py::arg("neg"), py::arg("negative_sampling"), py::arg("exclude_seed_edges"),
           py::arg("seed"), py::arg("prefetch"), py::arg("threads"), py::arg("device"),
           py::arg("max_steps") = 0, py::arg("edge_features") = false, py::keep_alive<1, 2>())
      .def_property_readonly("num_pairs", &LinkLoader::num_pairs)
      .def_property_readonly("num_positives", &LinkLoader::num_positives)
      .def_property_readonly("num_negatives", &LinkLoader::num_negatives);
  bind_loops(loader);

  m.def("link_metrics", &link_metrics, py::arg("positive"), py::arg("negative"),
        py::arg("hits_k") = 50,
        "AUC, AP, MRR and Hits@K of scored held-out pairs, as the C++ link task computes them");
  m.def(
      "in_degrees",
      [](Graph& graph) {
        std::vector<int64_t> degrees;
        {
          py::gil_scoped_release release;
          degrees = train::all_in_degrees(graph.session());
        }
        return int64_tensor(degrees);
      },
      py::arg("graph"),
      "The in-degree of every global id in the whole graph, on every rank (collective): the "
      "weights of degree negatives");
}

}  // namespace partita::python
