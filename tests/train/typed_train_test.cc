// Distributed R-GCN training of typed (heterogeneous) graphs equals single-process training
// (issue 11): the typed dataset of tests/partition/test_datasets.h partitioned into 1, 2 and
// 3 parts, trained by 1, 2 and 3 ranks (threads over the in-process transport and
// collectives) with SGD or Adam and no dropout, gives the same losses per epoch, accuracies,
// weights and learned embedding rows of the featureless type (author), up to floating-point
// summation order; so does server-client mode against worker mode, and a graph of a single
// relation. A resumed run repeats the uninterrupted one bit for bit, embeddings included,
// and a damaged embeddings file is refused naming it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "../partition/test_datasets.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/partition/partition.h"
#include "partita/runtime/session.h"
#include "partita/sample/fanout_spec.h"
#include "partita/train/checkpoint.h"
#include "partita/train/trainer.h"

namespace partita::train {
namespace {

using testing::TempDir;

constexpr int kAuthor = 1;  // the featureless node type of testing::typed_dataset

struct RunResult {
  std::vector<std::string> failures;  // per world rank; "FormatError: ..." for that type
  std::vector<double> epoch_losses;   // the first trainer's
  std::vector<double> step_losses;
  std::vector<double> val_accs;
  double test_acc = 0;
  int64_t steps = 0;
  int64_t request_bytes = 0;   // the first trainer's, epoch 1
  int64_t remote_rows = 0;     // the first trainer's, epoch 1: remote feature rows fetched
  int64_t cache_hits = 0;      // and answered by the hot-feature cache
  std::vector<float> weights;  // the first trainer's parameters after training
  // The author table, rows in order of original id: before and after training.
  std::vector<float> first_embeddings;
  std::vector<float> embeddings;
};

std::vector<float> flat_parameters(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  std::vector<float> out;
  for (const auto& p : module.parameters()) {
    torch::Tensor t = p.detach().reshape(-1).contiguous();
    out.insert(out.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  return out;
}

// Every row of the author table, in order of original id (looked up from wherever it lives).
std::vector<float> author_rows(runtime::Session& session, const std::vector<int64_t>& node_map) {
  store::DistEmbedding* table = session.embedding(kAuthor);
  PARTITA_CHECK(table != nullptr, Error, "no embedding table for the author type");
  std::vector<std::pair<int64_t, int64_t>> authors;  // (original, global)
  for (int64_t gid = 0; gid < session.graph().num_nodes(); ++gid)
    if (session.graph().node_type(gid) == kAuthor) authors.emplace_back(node_map[gid], gid);
  std::sort(authors.begin(), authors.end());
  std::vector<int64_t> ids;
  for (const auto& a : authors) ids.push_back(a.second);
  std::vector<float> rows(ids.size() * static_cast<size_t>(table->dim()));
  table->lookup(ids, rows.data());
  return rows;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                  double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    worst = std::max(worst, d);
    if (d > atol + rtol * std::abs(static_cast<double>(want[i]))) ++bad;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size()
                     << " values differ; largest difference " << worst;
}

void expect_no_failures(const RunResult& r, const std::string& what) {
  for (size_t i = 0; i < r.failures.size(); ++i)
    EXPECT_EQ(r.failures[i], "") << what << ", rank " << i;
}

// `got` trained the same steps as `want`: losses per epoch within a relative 1e-4, the same
// accuracies, weights within 1e-3 and author embeddings within 1e-4 (relative).
void expect_same_training(const RunResult& got, const RunResult& want, const std::string& what) {
  ASSERT_EQ(got.epoch_losses.size(), want.epoch_losses.size()) << what;
  EXPECT_EQ(got.steps, want.steps) << what;
  for (size_t e = 0; e < want.epoch_losses.size(); ++e)
    EXPECT_NEAR(got.epoch_losses[e], want.epoch_losses[e], 1e-4 * want.epoch_losses[e])
        << what << ", epoch " << e + 1;
  EXPECT_EQ(got.val_accs, want.val_accs) << what;
  EXPECT_EQ(got.test_acc, want.test_acc) << what;
  expect_close(got.weights, want.weights, 1e-3, 1e-5, what + ": weights");
  EXPECT_EQ(got.first_embeddings, want.first_embeddings) << what << ": initial embeddings";
  expect_close(got.embeddings, want.embeddings, 1e-4, 1e-5, what + ": author embeddings");
}

class TypedTraining : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    testing::TypedOptions t;
    t.papers = 300;  // 120 training papers
    t.authors = 160;
    t.fields = 24;
    t.seed = 8;
    const data::Dataset typed = testing::typed_dataset(t);
    partition_into(typed, "p1", 1, partition::Method::kMetis);
    partition_into(typed, "p2", 2, partition::Method::kMetis);
    partition_into(typed, "p3", 3, partition::Method::kRandom);
    t.single_relation = true;
    const data::Dataset single = testing::typed_dataset(t);
    partition_into(single, "single1", 1, partition::Method::kMetis);
    partition_into(single, "single2", 2, partition::Method::kRandom);
  }
  static void TearDownTestSuite() { delete dir_; }

  static void partition_into(const data::Dataset& ds, const std::string& name, int parts,
                             partition::Method method) {
    partition::PartitionOptions p;
    p.num_parts = parts;
    p.method = method;
    p.seed = 6;
    p.threads = 2;
    p.out_dir = *dir_ / name;
    partition::partition_dataset(ds, p);
  }

  // Learned embeddings of width `hidden`, trained as the command line does (cmd_train.cc):
  // the sparse form of the optimizer at its learning rate, initial rows keyed by the seed.
  static store::EmbeddingOptions embeddings(const TrainOptions& o) {
    store::EmbeddingOptions e;
    e.dim = o.model.hidden;
    e.seed = o.seed;
    e.optimizer.kind = o.optimizer.kind == OptimizerKind::kSgd ? store::SparseOptimizer::kSgd
                                                               : store::SparseOptimizer::kAdam;
    e.optimizer.lr = static_cast<float>(o.optimizer.lr);
    return e;
  }

  // Trains on directory `name`: `workers` workers (servers == 0), or `servers` servers and
  // `trainers` trainers. The results of the first rank that trains.
  // host_local: off sends every remote row as a request (as ranks on different hosts).
  static RunResult run(const std::string& name, int ranks, const TrainOptions& options,
                       int servers = 0, runtime::HostLocal host_local = runtime::HostLocal::kAuto) {
    const int trainers = servers > 0 ? ranks - servers : 0;
    InProcessWorld world(ranks);
    InProcessCollectiveGroup world_group(ranks, 60);
    std::unique_ptr<InProcessCollectiveGroup> trainer_group;
    if (trainers > 0) trainer_group = std::make_unique<InProcessCollectiveGroup>(trainers, 60);
    const std::vector<int64_t> node_map = read_npy_vector<int64_t>(*dir_ / name + "/node_map.npy");
    RunResult result;
    result.failures.assign(static_cast<size_t>(ranks), "");
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        try {
          runtime::SessionOptions so;
          so.parts_dir = *dir_ / name;
          so.timeout_s = 60;
          so.servers = servers;
          so.host_local = host_local;
          so.embeddings = embeddings(options);
          Collectives* mine =
              trainers > 0 && r >= servers ? &trainer_group->member(r - servers) : nullptr;
          runtime::Session session(world.transport(r), world_group.member(r), so, mine);
          if (session.role() != runtime::Role::kServer) {
            const bool first = session.rank() == 0;
            if (first) result.first_embeddings = author_rows(session, node_map);
            Trainer trainer(session, options);
            const TrainResult t = trainer.train({}, [&](const StepRecord& s) {
              if (first) result.step_losses.push_back(s.loss);
            });
            if (first) {
              for (const EpochRecord& e : t.epochs) {
                result.epoch_losses.push_back(e.loss);
                result.val_accs.push_back(e.val_acc);
              }
              result.test_acc = t.test_acc;
              if (!t.epochs.empty()) {
                result.steps = t.epochs[0].steps;
                result.request_bytes = t.epochs[0].request_bytes;
                result.remote_rows = t.epochs[0].remote_rows;
                result.cache_hits = t.epochs[0].cache_hits;
              }
              result.weights = flat_parameters(trainer.module());
              result.embeddings = author_rows(session, node_map);
            }
          }
          session.finish();
        } catch (const FormatError& e) {
          result.failures[static_cast<size_t>(r)] = std::string("FormatError: ") + e.what();
        } catch (const std::exception& e) {
          result.failures[static_cast<size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    return result;
  }

  // `spec` resolved against the relation names of the typed partitions (p1, p2 and p3
  // share them; single1 and single2 only take plain hops, which need no names).
  static sample::Fanouts fanouts_of(const std::string& spec) {
    const partition::PartitionMeta meta = partition::read_meta(*dir_ / "p1");
    std::vector<std::string> names;
    for (const partition::TypedRelation& r : meta.typed->relations) names.push_back(r.name);
    return sample::resolve_fanouts(spec, names);
  }

  static TrainOptions options(const std::string& fanouts, OptimizerKind optimizer) {
    TrainOptions o;
    o.model.kind = ModelKind::kRgcn;
    o.model.hidden = 16;
    o.model.layers = 2;
    o.model.dropout = 0;
    o.loader.fanouts = fanouts_of(fanouts);
    o.optimizer.kind = optimizer;
    o.optimizer.lr = optimizer == OptimizerKind::kSgd ? 0.2 : 0.01;
    // The planted features grow with the node id (up to ~250): unnormalized, SGD diverges.
    o.normalize_features = true;
    o.loader.batch_size = 32;  // 120 training papers: the last step is short
    o.epochs = 3;
    o.seed = 11;
    o.loader.threads = 1;
    o.torch_threads = 1;
    return o;
  }

  static TempDir* dir_;
};
TempDir* TypedTraining::dir_ = nullptr;

TEST_F(TypedTraining, OneTwoAndThreeRanksTrainTheSameSteps) {
  struct Case {
    std::string fanouts;
    OptimizerKind optimizer;
    int64_t num_bases;
  };
  for (const Case& c :
       {Case{"5,5", OptimizerKind::kSgd, 0}, Case{"cites=3:4,-1", OptimizerKind::kSgd, 2},
        Case{"5,5", OptimizerKind::kAdam, 0}}) {
    const std::string what = "--fanouts " + c.fanouts +
                             (c.optimizer == OptimizerKind::kSgd ? " sgd" : " adam") + " bases " +
                             std::to_string(c.num_bases);
    SCOPED_TRACE(what);
    TrainOptions o = options(c.fanouts, c.optimizer);
    o.model.num_bases = c.num_bases;
    const RunResult one = run("p1", 1, o);
    expect_no_failures(one, what);
    ASSERT_EQ(one.epoch_losses.size(), 3u);
    EXPECT_EQ(one.steps, 4);
    EXPECT_EQ(one.request_bytes, 0);
    EXPECT_NE(one.embeddings, one.first_embeddings) << "the embeddings were not trained";
    EXPECT_NE(one.epoch_losses.front(), one.epoch_losses.back());
    for (int ranks : {2, 3}) {
      const RunResult many = run("p" + std::to_string(ranks), ranks, o);
      expect_no_failures(many, what);
      EXPECT_GT(many.request_bytes, 0) << "remote neighbors, features, embeddings were fetched";
      expect_same_training(many, one, what + ", " + std::to_string(ranks) + " ranks vs 1");
    }
  }
}

TEST_F(TypedTraining, ServerClientModeEqualsWorkerMode) {
  const TrainOptions o = options("cites=3:4,-1", OptimizerKind::kSgd);
  const RunResult workers = run("p2", 2, o);
  expect_no_failures(workers, "workers");
  ASSERT_EQ(workers.epoch_losses.size(), 3u);
  for (int trainers : {1, 2}) {
    const std::string what = "2 servers + " + std::to_string(trainers) + " trainers";
    const RunResult sc = run("p2", 2 + trainers, o, /*servers=*/2);
    expect_no_failures(sc, what);
    EXPECT_GT(sc.request_bytes, 0) << what;
    expect_same_training(sc, workers, what);
  }
}

// The hot-feature cache on a typed partition (issue 28): rows of featured types, each at its
// width; the same steps, and the cache answers what the wire no longer carries (host-local
// reads off: they would answer remote rows before the cache).
TEST_F(TypedTraining, HotFeatureCacheTrainsTheSameSteps) {
  TrainOptions o = options("5,5", OptimizerKind::kSgd);
  const auto off = runtime::HostLocal::kOff;
  const RunResult plain = run("p2", 2, o, 0, off);
  expect_no_failures(plain, "no cache");
  o.cache.ratio = 0.5;
  o.cache.presample_batches = 2;
  const RunResult cached = run("p2", 2, o, 0, off);
  expect_no_failures(cached, "cache");
  ASSERT_EQ(cached.epoch_losses.size(), 3u);
  expect_same_training(cached, plain, "--cache-ratio 0.5 vs none");
  EXPECT_EQ(plain.cache_hits, 0);
  EXPECT_GT(cached.cache_hits, 0);
  EXPECT_GT(plain.remote_rows, 0);
  EXPECT_EQ(cached.remote_rows + cached.cache_hits, plain.remote_rows);
  EXPECT_LT(cached.request_bytes, plain.request_bytes);
}

TEST_F(TypedTraining, SingleRelationGraphTrains) {
  const TrainOptions o = options("5,5", OptimizerKind::kSgd);
  const RunResult one = run("single1", 1, o);
  expect_no_failures(one, "1 rank");
  ASSERT_EQ(one.epoch_losses.size(), 3u);
  for (double loss : one.epoch_losses) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NE(one.embeddings, one.first_embeddings) << "the embeddings were not trained";
  const RunResult two = run("single2", 2, o);
  expect_no_failures(two, "2 ranks");
  expect_same_training(two, one, "single relation, 2 ranks vs 1");
}

// 4 epochs straight equal 2 epochs, then a new session and Trainer resuming to 4: the same
// step losses and accuracies, parameters and embedding rows bit for bit (Adam: the sparse
// optimizer state of the embeddings is restored too).
TEST_F(TypedTraining, ResumeWithEmbeddingsRepeatsTheUninterruptedRun) {
  TempDir ckpt;
  TrainOptions o = options("5,5", OptimizerKind::kAdam);
  o.epochs = 4;
  const RunResult whole = run("p2", 2, o);
  expect_no_failures(whole, "uninterrupted");

  TrainOptions head_options = o;
  head_options.epochs = 2;
  head_options.checkpoint.dir = ckpt / "c";
  const RunResult head = run("p2", 2, head_options);
  expect_no_failures(head, "first 2 epochs");
  for (int rank : {0, 1})
    EXPECT_TRUE(std::filesystem::exists(embeddings_path(ckpt / "c", 2, rank))) << rank;

  TrainOptions resumed = o;
  resumed.checkpoint.dir = ckpt / "c";
  resumed.checkpoint.resume = true;
  const RunResult tail = run("p2", 2, resumed);
  expect_no_failures(tail, "resumed");

  ASSERT_EQ(head.step_losses.size() + tail.step_losses.size(), whole.step_losses.size());
  for (size_t i = 0; i < whole.step_losses.size(); ++i) {
    const double got = i < head.step_losses.size() ? head.step_losses[i]
                                                   : tail.step_losses[i - head.step_losses.size()];
    EXPECT_EQ(got, whole.step_losses[i]) << "step " << i;
  }
  ASSERT_EQ(tail.epoch_losses.size(), 2u);
  EXPECT_EQ(tail.epoch_losses[0], whole.epoch_losses[2]);
  EXPECT_EQ(tail.epoch_losses[1], whole.epoch_losses[3]);
  EXPECT_EQ(tail.val_accs[1], whole.val_accs[3]);
  EXPECT_EQ(tail.test_acc, whole.test_acc);
  EXPECT_EQ(tail.weights, whole.weights) << "final parameters differ";
  EXPECT_EQ(tail.embeddings, whole.embeddings) << "final embedding rows differ";
  // Not vacuous: epochs 3-4 moved the rows the resumed run started from.
  EXPECT_NE(head.embeddings, whole.embeddings);
}

TEST_F(TypedTraining, TruncatedEmbeddingsFileFailsResumeNamingIt) {
  TempDir ckpt;
  TrainOptions o = options("5,5", OptimizerKind::kSgd);
  o.epochs = 1;
  o.checkpoint.dir = ckpt / "c";
  expect_no_failures(run("p2", 2, o), "first epoch");
  const std::string path = embeddings_path(o.checkpoint.dir, 1, 1);
  ASSERT_TRUE(std::filesystem::exists(path));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  o.checkpoint.resume = true;
  o.epochs = 2;
  const RunResult r = run("p2", 2, o);
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[1].rfind("FormatError: " + path + ": ", 0), 0u) << r.failures[1];
  EXPECT_NE(r.failures[0], "") << "rank 0 went on without rank 1's embeddings";
  EXPECT_TRUE(r.epoch_losses.empty());
}

}  // namespace
}  // namespace partita::train
