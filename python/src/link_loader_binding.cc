// Link-prediction batches for Python: the steps of the C++ link task (train/link_task.cc:
// the same pair plan, share, negatives, exclusion, sampling keys and pipeline;
// loader/link_batches.h), and the held-out pairs in the batches its sampled evaluation
// scores, handed out as torch tensors.
#include "link_loader_binding.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph_binding.h"
#include "partita/core/error.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/link_batches.h"
#include "partita/loader/seeds.h"
#include "partita/nn/block_tensors.h"
#include "partita/partition/format.h"
#include "partita/runtime/failure.h"
#include "partita/sample/edge_exclusion.h"
#include "partita/train/batch_staging.h"
#include "partita/train/device.h"
#include "partita/train/inference.h"
#include "partita/train/link_metrics.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// The sampling keys of the trainer's evaluation passes (train/trainer.cc): validation after
// epoch e is keyed kEvalTagBase + e, the test pass kEvalTagBase - 1.
constexpr uint64_t kEvalTagBase = uint64_t{1} << 40;

// What a loader hands out: the training steps, or one held-out set.
enum class Pairs { kTrain, kValid, kTest };

// One block of a link batch: as partita._C.Block (loader_binding.cc), which the layers of
// partita.nn take.
struct LinkBlock {
  nn::BlockTensors tensors;
  torch::Tensor src_nodes;  // [num_src] global ids; the first num_dst are the dst nodes
};

// One link batch of this rank.
struct LinkBatch {
  int64_t step = 0;
  int64_t global_size = 0;       // pairs (positives and negatives) of the global batch
  int64_t global_positives = 0;  // positives of the global batch
  torch::Tensor seeds, input_nodes, x;
  torch::Tensor pos, neg;          // int64 [2, p], [2, n]: (src, dst) positions into seeds
  torch::Tensor pos_ids, neg_ids;  // int64 [p], [n]: which pairs (see StepPairs)
  std::vector<LinkBlock> blocks;   // input layer first: blocks[-1].dst = seeds
  int64_t excluded_edges = 0;      // block edges removed by the exclusion
  double sample_s = 0, fetch_s = 0, exclude_s = 0;
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

// A tensor over `values` that keeps `owner` alive (no copy).
torch::Tensor view_of(std::vector<int64_t>& values, const std::shared_ptr<loader::Batch>& owner) {
  return torch::from_blob(
      values.data(), {static_cast<int64_t>(values.size())}, [owner](void*) {},
      torch::TensorOptions().dtype(torch::kInt64));
}

torch::ScalarType torch_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return torch::kFloat16;
    case DType::kBFloat16:
      return torch::kBFloat16;
    default:
      return torch::kFloat32;
  }
}

struct LinkLoaderOptions {
  std::vector<int64_t> fanouts;
  int64_t batch_size = 1024;
  int64_t negatives = 1;
  std::string negative_sampling = "uniform";
  std::string exclude = "reverse";
  uint64_t seed = 0;
  int prefetch = 2;
  int threads = 1;
  std::string device = "cpu";
  int64_t max_steps = 0;  // training: steps per epoch at most (0: all), as --max-steps
};

// The loader behind partita.LinkNeighborLoader (pairs kTrain) and partita.LinkEvalLoader
// (kValid, kTest). Loops, tokens, threads and closing as partita.NeighborLoader's
// (loader_binding.cc): start() stops the previous loop and returns the new one's token; the
// pipeline's workers sample and fetch without the GIL; next() waits for a batch, removes the
// step's excluded edges and converts it without the GIL.
class LinkLoader final : public GraphUser {
 public:
  // Collective: gathers every rank's training pairs (kTrain) and, for degree negatives,
  // the in-degrees.
  LinkLoader(Graph& graph, Pairs which, LinkLoaderOptions o)
      : which_(which), o_(std::move(o)), staging_(checked_device(o_.device)) {
    PARTITA_CHECK(!o_.fanouts.empty(), UsageError, "fanouts: give one per layer, e.g. [10, 10]");
    for (int64_t k : o_.fanouts)
      PARTITA_CHECK(k >= 1 || k == -1, UsageError,
                    "fanouts: {} is not a fanout (>= 1, or -1 for all)", k);
    PARTITA_CHECK(o_.batch_size >= 1, UsageError, "batch_size: must be >= 1, got {}",
                  o_.batch_size);
    PARTITA_CHECK(o_.max_steps >= 0, UsageError, "max_steps: must be >= 0, got {}", o_.max_steps);
    PARTITA_CHECK(o_.negatives >= 0 && o_.negatives <= 1000, UsageError,
                  "neg: must be in [0, 1000], got {}", o_.negatives);
    const std::optional<loader::NegativeKind> kind =
        find_named(loader::negative_kind_names(), o_.negative_sampling);
    PARTITA_CHECK(kind.has_value(), UsageError,
                  "negative_sampling: '{}' is not one of uniform, degree", o_.negative_sampling);
    const std::optional<sample::Exclude> exclude = find_named(sample::exclude_names(), o_.exclude);
    PARTITA_CHECK(exclude.has_value(), UsageError,
                  "exclude_seed_edges: '{}' is not one of True (reverse), reverse, self, "
                  "False (none), none",
                  o_.exclude);
    exclude_ = *exclude;
    loader::BatchPipelineOptions pipeline;  // the library's own checks, before any collective
    pipeline.prefetch = o_.prefetch;
    pipeline.threads = o_.threads;
    loader::check_pipeline_options(pipeline);
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
    feature_row_bytes_ = g.feature_row_bytes();
    if (which_ == Pairs::kTrain) {
      set_up_training(graph, *kind);
    } else {
      set_up_held_out(graph);
    }
    // Last, as nothing after it may throw; graph_ first (see loader_binding.cc).
    graph_ = &graph;
    try {
      graph.attach(this);
    } catch (...) {
      graph_ = nullptr;
      throw;
    }
  }

  ~LinkLoader() {
    py::gil_scoped_release release;
    if (Graph* graph = graph_.load()) graph->detach(this);
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    pipeline_.reset();
  }

  LinkLoader(const LinkLoader&) = delete;
  LinkLoader& operator=(const LinkLoader&) = delete;

  int64_t steps() const {
    if (which_ != Pairs::kTrain) return static_cast<int64_t>(held_out_.size());
    return o_.max_steps > 0 ? std::min(o_.max_steps, plan_->steps()) : plan_->steps();
  }
  int64_t num_pairs() const { return num_pos_ + num_neg_; }
  int64_t num_positives() const { return num_pos_; }
  int64_t num_negatives() const { return num_neg_; }
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // Starts the pipeline of the next loop (see the class comment); returns its token.
  int64_t start() {
    Graph& graph = open_graph();
    uint64_t key = 0;
    std::vector<StepPairs> steps;
    std::vector<std::vector<int64_t>> seeds;
    if (which_ == Pairs::kTrain) {
      key = static_cast<uint64_t>(epoch_);
      training_steps(graph, key, steps, seeds);
    } else {
      key =
          which_ == Pairs::kTest ? kEvalTagBase - 1 : kEvalTagBase + static_cast<uint64_t>(epoch_);
      steps = held_out_;
      seeds = held_out_seeds_;
    }
    loader::BatchPipelineOptions po;
    po.threads = o_.threads;
    po.prefetch = o_.prefetch;
    po.fanouts = o_.fanouts;
    po.seed = o_.seed;
    po.epoch = key;
    po.feature_row_bytes = feature_row_bytes_;
    po.fetch_degrees = true;  // GCN layers normalize with the graph degrees
    po.fetch_labels = false;
    runtime::Session& session = graph.session();
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", closed_message());
    pipeline_.reset();
    steps_ = std::move(steps);
    pipeline_ = std::make_unique<loader::BatchPipeline>(po, std::move(seeds), session.sampler(),
                                                        session.fetcher());
    ++generation_;
    ++epoch_;
    return generation_;
  }

  // The next batch of loop `token`; nullopt after its last step.
  std::optional<LinkBatch> next(int64_t token) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", closed_message());
    PARTITA_CHECK(token == generation_, UsageError,
                  "{}: this loop was replaced by a later loop over the same loader (one loop "
                  "at a time)",
                  name());
    if (pipeline_ == nullptr) return std::nullopt;
    std::optional<loader::Batch> got = pipeline_->next();
    if (!got) {
      pipeline_.reset();
      return std::nullopt;
    }
    auto owner = std::make_shared<loader::Batch>(std::move(*got));
    const StepPairs& s = steps_[static_cast<size_t>(owner->step)];
    LinkBatch out;
    if (!s.excluded.empty() && !owner->sampled.seeds.empty()) {
      // As the C++ task's step_loss: the global step's pairs leave every block (and GCN's
      // degrees), after sampling.
      Stopwatch watch;
      out.excluded_edges = sample::exclude_edges(
          owner->sampled, s.excluded, exclude_, owner->degrees.empty() ? nullptr : &owner->degrees);
      out.exclude_s = watch.seconds();
    }
    convert(owner, s, out);
    return out;
  }

  void stop(int64_t token) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    if (token < 0 || token == generation_) pipeline_.reset();
  }

  // The next loop run to its end in C++ (exclusion and tensors included), handing no batch
  // to Python; returns the batches. The C++ side of the loader alone, for benchmarks.
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
  const char* name() const {
    return which_ == Pairs::kTrain ? "LinkNeighborLoader" : "LinkEvalLoader";
  }
  std::string closed_message() const {
    return fmt::format(
        "{}: its DistGraph is closed (close the graph after the loops over its loaders, e.g. "
        "loop inside `with partita.DistGraph(...) as g:`)",
        name());
  }

  Graph& open_graph() const {
    Graph* graph = graph_.load();
    PARTITA_CHECK(graph != nullptr, UsageError, "{}", closed_message());
    return *graph;
  }

  static torch::Device checked_device(const std::string& text) {
    const train::DeviceSpec device = train::parse_device(text);
    train::check_device(device);
    return train::torch_device(device);
  }

  // As LinkTask's constructor (train/link_task.cc): this rank's pairs, every rank's pairs
  // gathered, their keys, the plan in key order and the negative sampler. Collective.
  void set_up_training(Graph& graph, loader::NegativeKind kind) {
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
    plan_ = std::make_unique<loader::GlobalBatches>(std::move(ids), o_.batch_size);
    negatives_.emplace(
        kind == loader::NegativeKind::kDegree
            ? loader::NegativeSampler::by_degree(node_map, train::all_in_degrees(session))
            : loader::NegativeSampler::uniform(node_map));
  }

  // As LinkTask::epoch_seeds: the epoch's steps and their seeds.
  void training_steps(Graph& graph, uint64_t epoch, std::vector<StepPairs>& steps,
                      std::vector<std::vector<int64_t>>& seeds) const {
    runtime::Session& session = graph.session();
    const bool replicated = session.graph().replicated();
    const int64_t k = o_.negatives;
    const auto pairs_of = [&](const std::vector<int64_t>& indices) {
      std::vector<int64_t> out;
      out.reserve(2 * indices.size());
      for (int64_t index : indices) {
        out.push_back(pairs_[static_cast<size_t>(2 * index)]);
        out.push_back(pairs_[static_cast<size_t>(2 * index + 1)]);
      }
      return out;
    };
    for (const std::vector<int64_t>& global :
         plan_->epoch_batches(o_.seed, epoch, [](const std::vector<int64_t>& b) { return b; })) {
      // The first max_steps global batches only (the C++ trainer's --max-steps).
      if (o_.max_steps > 0 && static_cast<int64_t>(steps.size()) == o_.max_steps) break;
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
        negatives_->draw(o_.seed, epoch, keys_[static_cast<size_t>(mine[static_cast<size_t>(i)])],
                         k, negative_dsts.data() + i * k);
      loader::LinkStep step = loader::make_link_step(pairs_of(mine), negative_dsts, k);
      StepPairs s;
      s.pos = std::move(step.positives);
      s.neg = std::move(step.negatives);
      s.pos_ids = std::move(mine);
      if (exclude_ != sample::Exclude::kNone) s.excluded = pairs_of(global);
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
    const size_t first_file = which_ == Pairs::kTest ? 2 : 0;
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
    for (int64_t begin = 0; begin < n; begin += o_.batch_size) {
      const int64_t end = std::min(n, begin + o_.batch_size);
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

  // The tensors of a batch (as NeighborLoader's convert): on the CPU sharing the batch's
  // memory where the types allow, on another device copied through staging_. No GIL needed.
  void convert(const std::shared_ptr<loader::Batch>& owner, const StepPairs& s, LinkBatch& out) {
    out.step = owner->step;
    out.global_size = s.global_size;
    out.global_positives = s.global_positives;
    out.sample_s = owner->sample_s;
    out.fetch_s = owner->fetch_s;
    out.seeds = view_of(owner->sampled.seeds, owner);
    out.input_nodes = view_of(owner->sampled.input_nodes, owner);
    out.pos = pair_tensor(s.pos);
    out.neg = pair_tensor(s.neg);
    out.pos_ids = int64_tensor(s.pos_ids);
    out.neg_ids = int64_tensor(s.neg_ids);
    const int64_t rows = static_cast<int64_t>(owner->sampled.input_nodes.size());
    torch::Tensor x = torch::from_blob(
        owner->features.data(), {rows, feat_dim_}, [owner](void*) {},
        torch::TensorOptions().dtype(torch_type(feature_dtype_)));
    out.x = x.scalar_type() == torch::kFloat32 ? x : x.to(torch::kFloat32);
    if (!owner->sampled.seeds.empty()) {
      std::vector<nn::BlockTensors> tensors =
          nn::to_block_tensors(owner->sampled.blocks, owner->degrees);
      for (size_t i = tensors.size(); i-- > 0;)
        out.blocks.push_back(
            {std::move(tensors[i]), view_of(owner->sampled.blocks[i].src_nodes, owner)});
    }
    if (staging_.on_cpu()) return;
    for (torch::Tensor* t :
         {&out.seeds, &out.input_nodes, &out.x, &out.pos, &out.neg, &out.pos_ids, &out.neg_ids})
      *t = staging_.to_device(*t);
    for (LinkBlock& b : out.blocks) {
      b.tensors = staging_.to_device(std::move(b.tensors));
      b.src_nodes = staging_.to_device(b.src_nodes);
    }
    staging_.ready();
  }

  const Pairs which_;
  const LinkLoaderOptions o_;
  sample::Exclude exclude_ = sample::Exclude::kReverse;
  std::atomic<Graph*> graph_{nullptr};  // null once the graph closed (graph_closing)
  int64_t feat_dim_ = 0;
  DType feature_dtype_ = DType::kFloat32;
  int64_t feature_row_bytes_ = 0;
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
  int64_t epoch_ = 0;
  std::mutex pipeline_mu_;  // guards the three below
  int64_t generation_ = 0;
  std::vector<StepPairs> steps_;  // the running loop's steps
  std::unique_ptr<loader::BatchPipeline> pipeline_;
  train::BatchStaging staging_;
};

std::unique_ptr<LinkLoader> make_loader(Graph& graph, Pairs which, std::vector<int64_t> fanouts,
                                        int64_t batch_size, int64_t negatives,
                                        const std::string& negative_sampling,
                                        const std::string& exclude, uint64_t seed, int prefetch,
                                        int threads, const std::string& device, int64_t max_steps) {
  LinkLoaderOptions o;
  o.fanouts = std::move(fanouts);
  o.batch_size = batch_size;
  o.negatives = negatives;
  o.negative_sampling = negative_sampling;
  o.exclude = exclude;
  o.seed = seed;
  o.prefetch = prefetch;
  o.threads = threads;
  o.device = device;
  o.max_steps = max_steps;
  return std::make_unique<LinkLoader>(graph, which, std::move(o));
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
  py::class_<LinkBlock>(m, "LinkBlock", "One sampled block of a link batch (as Block)")
      .def_readonly("tensors", &LinkBlock::tensors)
      .def_readonly("src_nodes", &LinkBlock::src_nodes)
      .def_property_readonly("num_src", [](const LinkBlock& b) { return b.tensors.num_src; })
      .def_property_readonly("num_dst", [](const LinkBlock& b) { return b.tensors.num_dst; })
      .def_property_readonly("num_edges", [](const LinkBlock& b) { return b.tensors.num_edges(); })
      .def_property_readonly("indptr", [](const LinkBlock& b) { return b.tensors.indptr; })
      .def_property_readonly("indices", [](const LinkBlock& b) { return b.tensors.indices; })
      .def_property_readonly("edge_index",
                             [](const LinkBlock& b) {
                               return torch::stack({b.tensors.indices, b.tensors.edge_dst});
                             })
      .def_property_readonly("graph_deg", [](const LinkBlock& b) { return b.tensors.graph_deg; });

  py::class_<LinkBatch>(m, "LinkBatch", "One link-prediction mini-batch of this rank")
      .def_readonly("step", &LinkBatch::step)
      .def_readonly("global_size", &LinkBatch::global_size)
      .def_readonly("global_positives", &LinkBatch::global_positives)
      .def_readonly("seeds", &LinkBatch::seeds)
      .def_readonly("input_nodes", &LinkBatch::input_nodes)
      .def_readonly("x", &LinkBatch::x)
      .def_readonly("pos", &LinkBatch::pos)
      .def_readonly("neg", &LinkBatch::neg)
      .def_readonly("pos_ids", &LinkBatch::pos_ids)
      .def_readonly("neg_ids", &LinkBatch::neg_ids)
      .def_readonly("blocks", &LinkBatch::blocks)
      .def_readonly("excluded_edges", &LinkBatch::excluded_edges)
      .def_readonly("sample_s", &LinkBatch::sample_s)
      .def_readonly("fetch_s", &LinkBatch::fetch_s)
      .def_readonly("exclude_s", &LinkBatch::exclude_s)
      .def_property_readonly("num_seeds", [](const LinkBatch& b) { return b.seeds.size(0); })
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

  py::class_<LinkLoader>(m, "LinkLoader",
                         "The C++ link batches (training steps or a held-out set) of a DistGraph")
      .def(py::init([](Graph& graph, const std::string& pairs, std::vector<int64_t> fanouts,
                       int64_t batch_size, int64_t negatives, const std::string& negative_sampling,
                       const std::string& exclude, uint64_t seed, int prefetch, int threads,
                       const std::string& device, int64_t max_steps) {
             const Pairs which = pairs == "train"   ? Pairs::kTrain
                                 : pairs == "valid" ? Pairs::kValid
                                 : pairs == "test"
                                     ? Pairs::kTest
                                     : throw UsageError(fmt::format(
                                           "split: '{}' is not one of train, valid, test", pairs));
             return make_loader(graph, which, std::move(fanouts), batch_size, negatives,
                                negative_sampling, exclude, seed, prefetch, threads, device,
                                max_steps);
           }),
           py::arg("graph"), py::arg("pairs"), py::arg("fanouts"), py::arg("batch_size"),
           py::arg("neg"), py::arg("negative_sampling"), py::arg("exclude_seed_edges"),
           py::arg("seed"), py::arg("prefetch"), py::arg("threads"), py::arg("device"),
           py::arg("max_steps") = 0, py::keep_alive<1, 2>())
      .def("__len__", &LinkLoader::steps)
      .def_property_readonly("num_pairs", &LinkLoader::num_pairs)
      .def_property_readonly("num_positives", &LinkLoader::num_positives)
      .def_property_readonly("num_negatives", &LinkLoader::num_negatives)
      .def_property_readonly("epoch", &LinkLoader::epoch)
      .def("set_epoch", &LinkLoader::set_epoch, py::arg("epoch"))
      .def("start", &LinkLoader::start)
      .def("next", &LinkLoader::next, py::arg("token"))
      .def("stop", &LinkLoader::stop, py::arg("token") = -1)
      .def("drain", &LinkLoader::drain,
           "Runs the next loop in C++ without handing batches to Python (benchmarks)");

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
