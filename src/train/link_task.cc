// Link prediction (see partita/train/train_task.h and trainer.h, "Link prediction"): the
// training pairs and their negatives, the step's loss, and the ranking metrics of held-out
// pairs.
#include <torch/torch.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/loader/batch_exclusion.h"
#include "partita/train/batch_staging.h"
#include "partita/train/checkpoint.h"
#include "partita/train/inference.h"
#include "partita/train/train_task.h"

namespace partita::train {
namespace {

// Scores of one rank's held-out pairs, gathered by every rank: pair `index` counts the
// positives first, then the negatives.
struct ScoredPair {
  int64_t index = 0;
  float score = 0;
};

std::vector<int64_t> positions(const std::vector<loader::SeedPair>& pairs, bool src) {
  std::vector<int64_t> out;
  out.reserve(pairs.size());
  for (const loader::SeedPair& p : pairs) out.push_back(src ? p.src : p.dst);
  return out;
}

torch::Tensor as_tensor(std::vector<int64_t> values) {
  return torch::tensor(at::ArrayRef<int64_t>(values), torch::kInt64);
}

// `values` as an index tensor on the model's device (ready() still to call).
torch::Tensor on_device(std::vector<int64_t> values, ModelAdapter& model) {
  return model.staging().to_device(as_tensor(std::move(values)));
}

// The link task's state (trainer.h, "Link prediction").
struct LinkData {
  // Every training pair of the job by global index ([total, 2] row-major, global ids), on
  // every rank, and its key (loader::pair_key).
  std::vector<int64_t> pairs;
  std::vector<int64_t> keys;
  int64_t first = 0, count = 0;  // the indices this rank trains on: [first, first + count)
  // Held-out pairs and their negatives ([k, 2] row-major, global ids), on every rank.
  std::vector<int64_t> valid_pos, valid_neg, test_pos, test_neg;
  std::optional<loader::NegativeSampler> negatives;
  std::vector<loader::LinkStep> steps;  // this rank's steps of the current epoch (no seeds)
  // A partition split by time: each training pair's time (by global index) and each held-out
  // pair's (aligned with valid_pos ...); empty otherwise.
  std::vector<int64_t> times, valid_pos_time, valid_neg_time, test_pos_time, test_neg_time;
  // Temporal training (the session's sampler samples temporally): every pair and its
  // negatives are sampled at the pair's time, none joined to the source by then
  // (loader::JoinedPairs), and step_times holds the seeds' times of the epoch's steps (moved
  // out by epoch_seed_times).
  bool temporal = false;
  std::optional<loader::JoinedPairs> joined;
  std::vector<std::vector<int64_t>> step_times;
};

class LinkTask final : public TrainTask {
 public:
  // Reads the partition's training and held-out pairs and sets up the negatives;
  // collective (degree negatives gather the in-degrees).
  LinkTask(runtime::Session& session, const TrainOptions& options);

  const loader::GlobalBatches& plan() const override { return *plan_; }
  // Builds the epoch's steps (their pairs and negatives) and returns each step's seeds: the
  // distinct endpoints of its pairs and of their negatives.
  std::vector<std::vector<int64_t>> epoch_seeds(int64_t epoch) override;
  std::vector<std::vector<int64_t>> epoch_seed_times() override {
    return std::move(data_.step_times);
  }
  bool needs_labels() const override { return false; }

  sample::NeighborSampler& sampler() override { return session_.sampler(); }
  // Binary cross-entropy over the step's pairs (positives 1, negatives 0), summed and
  // divided by the global batch's pairs; counts pairs classified right (score > 0 for
  // positives, <= 0 for negatives).
  StepLoss step_loss(loader::Batch& batch, int64_t step, int64_t global_batch, ModelAdapter& model,
                     double* flops) override;
  double validate(ModelAdapter& model, uint64_t tag, int64_t /*version*/) override {
    return link_metric_value(options_.link, evaluate(model, false, tag));
  }
  void test(ModelAdapter& model, uint64_t tag, int64_t /*version*/, TrainResult& result) override {
    result.test_link = evaluate(model, true, tag);
  }

 private:
  // Every metric over the valid (test = false) or test pairs and their negatives; `tag`
  // keys the sampling. Collective (one allgather of the scores).
  LinkMetrics evaluate(ModelAdapter& model, bool test, uint64_t tag);

  runtime::Session& session_;
  const TrainOptions& options_;
  std::optional<loader::GlobalBatches> plan_;
  LinkData data_;
};

LinkTask::LinkTask(runtime::Session& session, const TrainOptions& options)
    : session_(session), options_(options) {
  PARTITA_CHECK_PARAM(!session.graph().typed(), "task",
                      "link: {} is a typed (heterogeneous) partition; link prediction supports "
                      "homogeneous partitions",
                      session.graph().dir());
  PARTITA_CHECK_PARAM(session.role() == runtime::Role::kWorker, "task",
                      "link is not possible in server-client mode (`servers`); run in worker "
                      "mode");
  PARTITA_CHECK_PARAM(options.cache.ratio == 0, "cache_ratio",
                      "the hot-feature cache does not support `task` link yet");
  const store::DistGraph& g = session_.graph();
  LinkData& d = data_;
  // This rank's pairs (all of them when replicated) and the held-out ones, read as part of
  // the set-up: a bad file is one agreed error for the job (runtime/session.h).
  loader::LinkEdges mine;
  std::vector<int64_t>* held_out[] = {&d.valid_pos, &d.valid_neg, &d.test_pos, &d.test_neg};
  std::vector<int64_t>* held_out_times[] = {&d.valid_pos_time, &d.valid_neg_time, &d.test_pos_time,
                                            &d.test_neg_time};
  d.temporal = session.sampler().options().temporal != sample::Temporal::kNone;
  const bool by_time = g.meta().summary.edge_split && g.meta().summary.edge_split->by_time;
  runtime::agree_on_setup(session_.collectives(), [&] {
    mine = g.replicated() ? loader::read_all_link_edges(g.dir(), g.meta())
                          : loader::read_link_edges(g.dir(), g.meta(), g.rank());
    PARTITA_CHECK_PARAM(!d.temporal || by_time, "temporal",
                        "with `task` link needs edges split by time (a training pair's time is "
                        "its seeds'); {} was split at random: partition it with `edge_split_by` "
                        "time",
                        g.dir());
    PARTITA_CHECK(mine.total > 0, Error, "{}: the edge split left no training pairs", g.dir());
    for (size_t i = 0; i < 4; ++i) {
      *held_out[i] =
          loader::read_pair_file(g.dir() + "/" + partition::kEdgeSplitFiles[i], g.num_nodes());
      if (by_time)
        *held_out_times[i] =
            loader::read_time_file(g.dir() + "/" + partition::kEdgeSplitTimeFiles[i],
                                   static_cast<int64_t>(held_out[i]->size() / 2));
    }
  });
  // Then every rank's pairs on every rank: a step excludes its global batch's pairs
  // (link_batches.h).
  d.first = mine.first;
  d.count = mine.count();
  d.pairs = g.replicated() ? std::move(mine.pairs) : session_.collectives().allgather(mine.pairs);
  if (by_time)
    d.times = g.replicated() ? std::move(mine.times) : session_.collectives().allgather(mine.times);
  PARTITA_CHECK(static_cast<int64_t>(d.pairs.size()) == 2 * mine.total, Error,
                "internal: {} training pairs gathered, partita.json says {}", d.pairs.size() / 2,
                mine.total);
  // The plan orders the pairs by key.
  const ArrayView<const int64_t> node_map = g.node_map();
  PARTITA_CHECK(node_map.size() == g.num_nodes(), Error,
                "internal: node_map of {} ids for {} nodes", node_map.size(), g.num_nodes());
  std::vector<loader::SeedId> ids(static_cast<size_t>(mine.total));
  d.keys.resize(ids.size());
  if (by_time) {  // a pair may repeat at another time: keyed with its time
    std::vector<int64_t> original(d.pairs.size());
    for (size_t i = 0; i < original.size(); ++i) original[i] = node_map[d.pairs[i]];
    d.keys = loader::time_pair_keys(original, d.times);
  } else {
    for (size_t i = 0; i < ids.size(); ++i)
      d.keys[i] =
          loader::pair_key(node_map[d.pairs[2 * i]], node_map[d.pairs[2 * i + 1]], g.num_nodes());
  }
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = {d.keys[i], static_cast<int64_t>(i)};
  if (d.temporal) d.joined.emplace(d.pairs, d.times);
  plan_.emplace(std::move(ids), options_.loader.batch_size);
  d.negatives = options_.link.negative_kind == loader::NegativeKind::kDegree
                    ? loader::NegativeSampler::by_degree(node_map, all_in_degrees(session_))
                    : loader::NegativeSampler::uniform(node_map);
}

std::vector<std::vector<int64_t>> LinkTask::epoch_seeds(int64_t epoch) {
  LinkData& d = data_;
  const bool replicated = session_.graph().replicated();
  const uint64_t epoch_key = static_cast<uint64_t>(epoch);
  const int64_t k = options_.link.negatives;
  std::vector<std::vector<int64_t>> seeds;
  d.steps.clear();
  d.step_times.clear();
  for (const std::vector<int64_t>& global : plan_->epoch_batches(
           options_.seed, epoch_key, [](const std::vector<int64_t>& b) { return b; })) {
    // This rank's pairs of the global batch: the ones its part holds (an even share of
    // every batch when every rank holds every pair).
    std::vector<int64_t> mine;
    if (replicated) {
      mine = loader::even_share(global, session_.rank(), session_.size());
    } else {
      for (int64_t index : global)
        if (index >= d.first && index < d.first + d.count) mine.push_back(index);
    }
    const auto pairs_of = [&](const std::vector<int64_t>& indices) {
      std::vector<int64_t> out;
      out.reserve(2 * indices.size());
      for (int64_t index : indices) {
        out.push_back(d.pairs[static_cast<size_t>(2 * index)]);
        out.push_back(d.pairs[static_cast<size_t>(2 * index + 1)]);
      }
      return out;
    };
    const int64_t b = static_cast<int64_t>(mine.size());
    std::vector<int64_t> negative_dsts(static_cast<size_t>(b * k)), times;
    for (int64_t i = 0; i < b; ++i) {
      const size_t index = static_cast<size_t>(mine[static_cast<size_t>(i)]);
      if (!d.temporal) {
        d.negatives->draw(options_.seed, epoch_key, d.keys[index], k, negative_dsts.data() + i * k);
        continue;
      }
      // Not a negative at the pair's time t: joined to the source by a training pair no
      // later than t.
      const int64_t u = d.pairs[2 * index], t = d.times[index];
      times.push_back(t);
      d.negatives->draw(options_.seed, epoch_key, d.keys[index], k, negative_dsts.data() + i * k,
                        [&](int64_t w) { return d.joined->joined(u, w, t); });
    }
    loader::LinkStep step = loader::make_link_step(pairs_of(mine), negative_dsts, k, times);
    step.excluded = pairs_of(global);
    seeds.push_back(std::move(step.seeds));
    if (d.temporal) d.step_times.push_back(std::move(step.seed_times));
    d.steps.push_back(std::move(step));
  }
  return seeds;
}

StepLoss LinkTask::step_loss(loader::Batch& batch, int64_t step, int64_t global_batch,
                             ModelAdapter& model, double* flops) {
  const loader::LinkStep& s = data_.steps[static_cast<size_t>(step)];
  loader::exclude_batch_edges(batch, s.excluded, options_.link.exclude);
  const torch::Tensor h = model.forward(batch, flops);
  std::vector<int64_t> src = positions(s.positives, true), dst = positions(s.positives, false);
  const std::vector<int64_t> neg_src = positions(s.negatives, true),
                             neg_dst = positions(s.negatives, false);
  src.insert(src.end(), neg_src.begin(), neg_src.end());
  dst.insert(dst.end(), neg_dst.begin(), neg_dst.end());
  const torch::Tensor src_index = on_device(std::move(src), model);
  const torch::Tensor dst_index = on_device(std::move(dst), model);
  model.staging().ready();
  const torch::Tensor scores = model.link()->score(h, src_index, dst_index);
  const int64_t positives = static_cast<int64_t>(s.positives.size());
  const torch::TensorOptions on(h.device());  // float32, made on the device: nothing to copy
  const torch::Tensor labels = torch::cat(
      {torch::ones({positives}, on), torch::zeros({static_cast<int64_t>(s.negatives.size())}, on)});
  StepLoss out;
  out.correct = scores.gt(0).eq(labels.gt(0.5)).sum();
  out.total = labels.size(0);
  out.loss =
      torch::nn::functional::binary_cross_entropy_with_logits(
          scores, labels,
          torch::nn::functional::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kSum)) /
      static_cast<double>(global_batch * (1 + options_.link.negatives));
  return out;
}

LinkMetrics LinkTask::evaluate(ModelAdapter& model, bool test, uint64_t tag) {
  const LinkData& d = data_;
  const store::DistGraph& g = session_.graph();
  if (options_.eval.mode == EvalMode::kFull) {
    // The embeddings of layer-wise inference, as `partita infer`.
    InferenceOptions inference;
    inference.normalize_features = options_.normalize_features;
    inference.output_embeddings = true;
    const InferenceOutput out = infer_full_graph(session_, *model.gnn(), inference);
    model.module().train();
    // Rank 0 holds the embeddings: it scores, every rank learns the figures.
    LinkMetrics m;
    run_agreed(session_.collectives(), "rank 0 could not score the held-out pairs", [&] {
      if (session_.rank() == 0)
        m = held_out_link_metrics(*model.link(), out, g, test, options_.link.hits_k);
    });
    std::vector<double> figures{m.auc, m.ap, m.mrr, m.hits};
    std::vector<int64_t> counts{m.positives, m.negatives};
    session_.collectives().broadcast(figures.data(), figures.size(), 0);
    session_.collectives().broadcast(counts.data(), counts.size(), 0);
    m = {figures[0],           figures[1], figures[2], figures[3],
         options_.link.hits_k, counts[0],  counts[1]};
    return m;
  }
  const std::vector<int64_t>& pos = test ? d.test_pos : d.valid_pos;
  const std::vector<int64_t>& neg = test ? d.test_neg : d.valid_neg;
  const int64_t num_pos = static_cast<int64_t>(pos.size() / 2);
  const int64_t num_pairs = num_pos + static_cast<int64_t>(neg.size() / 2);
  const auto pair_at = [&](int64_t j, int end) {
    return j < num_pos ? pos[static_cast<size_t>(2 * j + end)]
                       : neg[static_cast<size_t>(2 * (j - num_pos) + end)];
  };
  // Temporal: pair j is sampled at its time (the split's time files).
  const std::vector<int64_t>& pos_time = test ? d.test_pos_time : d.valid_pos_time;
  const std::vector<int64_t>& neg_time = test ? d.test_neg_time : d.valid_neg_time;
  const auto time_at = [&](int64_t j) {
    return j < num_pos ? pos_time[static_cast<size_t>(j)]
                       : neg_time[static_cast<size_t>(j - num_pos)];
  };
  // The pairs in global batches of batch_size, in key order (positives first), each rank
  // scoring the ones whose destination it owns (an even share when every rank holds the
  // whole graph); a batch's samples are keyed by its index, as in training, so the scores
  // do not depend on the partitioning (the files list the pairs by new ids).
  const ArrayView<const int64_t> node_map = g.node_map();
  std::vector<std::pair<int64_t, int64_t>> keyed(static_cast<size_t>(num_pairs));  // (key, j)
  for (int64_t j = 0; j < num_pairs; ++j) {
    keyed[static_cast<size_t>(j)] = {
        loader::pair_key(node_map[pair_at(j, 0)], node_map[pair_at(j, 1)], g.num_nodes()), j};
  }
  std::sort(keyed.begin(), keyed.begin() + num_pos);
  std::sort(keyed.begin() + num_pos, keyed.end());
  std::vector<int64_t> mine;
  std::vector<loader::LinkStep> steps;
  std::vector<std::vector<int64_t>> seeds, seed_times;
  for (int64_t begin = 0; begin < num_pairs; begin += options_.loader.batch_size) {
    const int64_t end = std::min(num_pairs, begin + options_.loader.batch_size);
    std::vector<int64_t> batch;
    for (int64_t i = begin; i < end; ++i) batch.push_back(keyed[static_cast<size_t>(i)].second);
    if (g.replicated()) {
      batch = loader::even_share(batch, session_.rank(), session_.size());
    } else {
      batch.erase(std::remove_if(batch.begin(), batch.end(),
                                 [&](int64_t j) { return !g.owns(pair_at(j, 1)); }),
                  batch.end());
    }
    std::vector<int64_t> pairs, times;
    for (int64_t j : batch) {
      pairs.push_back(pair_at(j, 0));
      pairs.push_back(pair_at(j, 1));
      if (d.temporal) times.push_back(time_at(j));
    }
    mine.insert(mine.end(), batch.begin(), batch.end());
    loader::LinkStep step = loader::make_link_step(pairs, {}, 0, times);
    seeds.push_back(std::move(step.seeds));
    if (d.temporal) seed_times.push_back(std::move(step.seed_times));
    steps.push_back(std::move(step));
  }
  std::vector<ScoredPair> scored;
  scored.reserve(mine.size());
  {
    torch::NoGradGuard no_grad;
    model.module().eval();
    loader::BatchPipelineOptions settings = pipeline_options(session_, options_, model, false, tag);
    settings.seed_times = std::move(seed_times);
    loader::BatchPipeline pipeline(settings, std::move(seeds), sampler(), session_.fetcher());
    size_t next_pair = 0;  // into mine
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      const loader::LinkStep& s = steps[static_cast<size_t>(batch->step)];
      if (s.positives.empty()) continue;
      const torch::Tensor h = model.forward(*batch);
      const torch::Tensor src_index = on_device(positions(s.positives, true), model);
      const torch::Tensor dst_index = on_device(positions(s.positives, false), model);
      model.staging().ready();
      const torch::Tensor scores =
          model.link()->score(h, src_index, dst_index).to(torch::kCPU).contiguous();
      const float* values = scores.data_ptr<float>();
      for (size_t i = 0; i < s.positives.size(); ++i)
        scored.push_back({mine[next_pair++], values[i]});
    }
    model.module().train();
  }
  const std::vector<ScoredPair> all = session_.collectives().allgather(scored);
  PARTITA_CHECK(static_cast<int64_t>(all.size()) == num_pairs, Error,
                "internal: {} scores gathered for {} held-out pairs", all.size(), num_pairs);
  std::vector<float> pos_scores(static_cast<size_t>(num_pos)),
      neg_scores(static_cast<size_t>(num_pairs - num_pos));
  for (const ScoredPair& s : all) {
    if (s.index < num_pos)
      pos_scores[static_cast<size_t>(s.index)] = s.score;
    else
      neg_scores[static_cast<size_t>(s.index - num_pos)] = s.score;
  }
  return link_metrics(pos_scores, neg_scores, options_.link.hits_k);
}

}  // namespace

double link_metric_value(const LinkTaskOptions& link, const LinkMetrics& m) {
  switch (link.metric) {
    case LinkMetricKind::kAuc:
      return m.auc;
    case LinkMetricKind::kAp:
      return m.ap;
    case LinkMetricKind::kMrr:
      return m.mrr;
    case LinkMetricKind::kHits:
      return m.hits;
  }
  return m.auc;
}

std::unique_ptr<TrainTask> make_link_task(runtime::Session& session, const TrainOptions& options) {
  return std::make_unique<LinkTask>(session, options);
}

}  // namespace partita::train
