// Distributed learned embeddings (store/dist_embedding.h): the same ids split over 1, 2 and 3
// ranks (threads over the in-process transport, non-adjacent ranges in another order than the
// ranks, an empty range) give the same initial rows, and after the same global gradients,
// divided differently among the ranks, the same rows as one rank and as a direct reference
// of each optimizer; state round trips exactly; bad states and bad ids are errors.
#include "partita/store/dist_embedding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "partita/comm/errors.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/core/random.h"

namespace partita {
namespace {

using store::DistEmbedding;
using store::EmbeddingOptions;
using store::IdRange;
using store::SparseOptimizer;

constexpr int64_t kRows = 40;  // original ids 0..kRows-1
constexpr int64_t kDim = 5;

// How the kRows original ids are split: rank r owns its original ids in ascending order as
// the new ids [begin_r, end_r); ranges lie in reverse rank order with gaps (as one node
// type's ranges do in a typed partition).
struct Layout {
  std::vector<IdRange> ranges;
  std::vector<std::vector<int64_t>> original;  // per rank
  std::vector<int64_t> new_id;                 // original id -> new id
};

Layout make_layout(int ranks, const std::function<int(int64_t)>& rank_of) {
  Layout layout;
  layout.original.resize(static_cast<size_t>(ranks));
  layout.new_id.resize(kRows);
  for (int64_t o = 0; o < kRows; ++o) layout.original[static_cast<size_t>(rank_of(o))].push_back(o);
  for (int r = 0; r < ranks; ++r) {
    const int64_t begin = (ranks - 1 - r) * 1000 + 17;
    const auto& orig = layout.original[static_cast<size_t>(r)];
    layout.ranges.push_back({begin, begin + static_cast<int64_t>(orig.size())});
    for (size_t k = 0; k < orig.size(); ++k)
      layout.new_id[orig[k]] = begin + static_cast<int64_t>(k);
  }
  return layout;
}

// The splits every test runs on.
std::vector<Layout> layouts() {
  return {
      make_layout(1, [](int64_t) { return 0; }),
      make_layout(2, [](int64_t o) { return static_cast<int>(o % 2); }),
      make_layout(3, [](int64_t o) { return static_cast<int>(o >= 10) + (o >= 25); }),
      make_layout(3, [](int64_t o) { return o < 15 ? 2 : 0; }),  // rank 1 owns nothing
  };
}

EmbeddingOptions table_options(SparseOptimizer kind) {
  EmbeddingOptions options;
  options.dim = kDim;
  options.table_id = 3;
  options.seed = 42;
  options.init_scale = 0.5f;
  options.optimizer.kind = kind;
  options.optimizer.lr = 0.05f;
  return options;
}

// One table over a layout: a DistEmbedding, router and endpoint per rank.
class Job {
 public:
  Job(const Layout& layout, const EmbeddingOptions& options)
      : layout_(layout), world_(static_cast<int>(layout.ranges.size())) {
    const int n = world_.size();
    for (int r = 0; r < n; ++r)
      tables_.push_back(std::make_unique<DistEmbedding>(options, layout.ranges, r,
                                                        layout.original[static_cast<size_t>(r)]));
    RpcOptions rpc;
    rpc.timeout_s = 20;
    for (int r = 0; r < n; ++r) {
      RpcRouter router;
      tables_[r]->add_routes(router);
      endpoints_.push_back(
          std::make_unique<RpcEndpoint>(world_.transport(r), router.handler(), rpc));
    }
    for (int r = 0; r < n; ++r) tables_[r]->attach(n > 1 ? endpoints_[r].get() : nullptr);
  }
  ~Job() {
    std::vector<std::thread> threads;
    for (auto& endpoint : endpoints_)
      threads.emplace_back([&endpoint] {
        try {
          endpoint->shutdown();
        } catch (const Error&) {
        }
      });
    for (auto& t : threads) t.join();
  }
  int size() const { return world_.size(); }
  DistEmbedding& table(int r) { return *tables_[static_cast<size_t>(r)]; }
  RpcEndpoint& endpoint(int r) { return *endpoints_[static_cast<size_t>(r)]; }
  const Layout& layout() const { return layout_; }

  // Every row, in original-id order, as rank r looks it up.
  std::vector<float> snapshot(int r) {
    std::vector<int64_t> ids(layout_.new_id);
    std::vector<float> out(static_cast<size_t>(kRows * kDim));
    table(r).lookup(ids, out.data());
    return out;
  }

 private:
  Layout layout_;
  InProcessWorld world_;
  std::vector<std::unique_ptr<DistEmbedding>> tables_;
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints_;
};

// One gradient of the global program: a row (original id) and its values.
struct Entry {
  int64_t original;
  std::vector<float> grad;
};

// Step s of the program: 60 entries over 30 of the rows (so rows repeat and some rows get
// no gradient).
std::vector<Entry> program_step(int s) {
  Rng rng(stream_key(7, static_cast<uint64_t>(s)));
  std::vector<Entry> entries(60);
  for (Entry& e : entries) {
    e.original = static_cast<int64_t>(rng.below(30)) + (s % 2) * 10;
    for (int64_t j = 0; j < kDim; ++j) e.grad.push_back(static_cast<float>(2 * rng.uniform() - 1));
  }
  return entries;
}

// Runs `fn(r)` on every rank at once, one thread each.
void on_every_rank(Job& job, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < job.size(); ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

// Entry e goes to rank pusher(e, original); every rank pushes its entries (in `pushes`
// calls) at once, then every rank applies.
void run_step(Job& job, const std::vector<Entry>& entries,
              const std::function<int(size_t, int64_t)>& pusher, int pushes = 1) {
  on_every_rank(job, [&](int r) {
    std::vector<int64_t> ids;
    std::vector<float> grads;
    for (size_t e = 0; e < entries.size(); ++e) {
      if (pusher(e, entries[e].original) != r) continue;
      ids.push_back(job.layout().new_id[entries[e].original]);
      grads.insert(grads.end(), entries[e].grad.begin(), entries[e].grad.end());
    }
    const int64_t n = static_cast<int64_t>(ids.size());
    for (int p = 0; p < pushes; ++p) {
      const int64_t begin = n * p / pushes, end = n * (p + 1) / pushes;
      job.table(r).push_gradients(ArrayView<const int64_t>(ids.data() + begin, end - begin),
                                  grads.data() + begin * kDim);
    }
  });
  for (int r = 0; r < job.size(); ++r) job.table(r).apply_pending();
}

// Direct reference, in double: one table of every row, updated as the header's formulas say.
struct Reference {
  EmbeddingOptions options;
  std::vector<double> x, s1, s2;
  std::vector<int64_t> t;

  explicit Reference(const EmbeddingOptions& o) : options(o) {
    for (int64_t orig = 0; orig < kRows; ++orig) {
      Rng rng(stream_key(o.seed, store::kEmbeddingStream, static_cast<uint64_t>(o.table_id),
                         static_cast<uint64_t>(orig)));
      for (int64_t j = 0; j < kDim; ++j)
        x.push_back(static_cast<float>(o.init_scale * (2 * rng.uniform() - 1)));
    }
    s1.assign(x.size(), 0);
    s2.assign(x.size(), 0);
    t.assign(kRows, 0);
  }
  void step(const std::vector<Entry>& entries) {
    std::vector<double> g(x.size(), 0);
    std::vector<char> touched(kRows, 0);
    for (const Entry& e : entries) {
      touched[e.original] = 1;
      for (int64_t j = 0; j < kDim; ++j) g[e.original * kDim + j] += e.grad[j];
    }
    const auto& o = options.optimizer;
    for (int64_t row = 0; row < kRows; ++row) {
      if (!touched[row]) continue;
      ++t[row];
      for (int64_t j = 0; j < kDim; ++j) {
        const int64_t k = row * kDim + j;
        if (o.kind == SparseOptimizer::kSgd) {
          x[k] -= o.lr * g[k];
        } else if (o.kind == SparseOptimizer::kAdagrad) {
          s1[k] += g[k] * g[k];
          x[k] -= o.lr * g[k] / (std::sqrt(s1[k]) + o.eps);
        } else {
          s1[k] = o.beta1 * s1[k] + (1 - o.beta1) * g[k];
          s2[k] = o.beta2 * s2[k] + (1 - o.beta2) * g[k] * g[k];
          const double m = s1[k] / (1 - std::pow(double{o.beta1}, t[row]));
          const double v = s2[k] / (1 - std::pow(double{o.beta2}, t[row]));
          x[k] -= o.lr * m / (std::sqrt(v) + o.eps);
        }
      }
    }
  }
};

TEST(DistEmbedding, InitialRowsAreTheSameForEverySplitAndFollowTheFormula) {
  const EmbeddingOptions options = table_options(SparseOptimizer::kSgd);
  const Reference reference(options);
  std::vector<float> want(reference.x.begin(), reference.x.end());
  for (const Layout& layout : layouts()) {
    Job job(layout, options);
    for (int r = 0; r < job.size(); ++r) EXPECT_EQ(job.snapshot(r), want) << job.size() << " ranks";
  }
  for (float v : want) EXPECT_TRUE(v >= -0.5f && v < 0.5f);
  EmbeddingOptions other = options;
  other.table_id = 4;
  Job job(layouts()[0], other);
  EXPECT_NE(job.snapshot(0), want);  // another table, other values
}

class DistEmbeddingUpdates : public ::testing::TestWithParam<SparseOptimizer> {};

TEST_P(DistEmbeddingUpdates, AnySplitEqualsOneRankAndTheReference) {
  const EmbeddingOptions options = table_options(GetParam());
  Job single(layouts()[0], options);
  Reference reference(options);
  std::vector<std::unique_ptr<Job>> jobs;
  for (const Layout& layout : layouts()) jobs.push_back(std::make_unique<Job>(layout, options));
  for (int s = 0; s < 4; ++s) {
    const std::vector<Entry> entries = program_step(s);
    run_step(single, entries, [](size_t, int64_t) { return 0; });
    reference.step(entries);
    for (auto& job : jobs) {
      const int n = job->size();
      // Entries dealt round-robin, each rank pushing in two calls: a row's gradient is summed
      // from several pushes in another order than one rank's.
      run_step(
          *job, entries, [n](size_t e, int64_t) { return static_cast<int>(e % n); }, 2);
    }
  }
  const std::vector<float> want = single.snapshot(0);
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(want[k], reference.x[k], 2e-5) << k;
  for (auto& job : jobs) {
    for (int r = 0; r < job->size(); ++r) {
      const std::vector<float> got = job->snapshot(r);
      for (size_t k = 0; k < want.size(); ++k)
        ASSERT_NEAR(got[k], want[k], 1e-6) << job->size() << " ranks, rank " << r << ", " << k;
    }
  }
}

TEST_P(DistEmbeddingUpdates, OneSourcePerRowIsExactlyOneRank) {
  const EmbeddingOptions options = table_options(GetParam());
  Job single(layouts()[0], options);
  std::vector<std::unique_ptr<Job>> jobs;
  for (const Layout& layout : layouts()) jobs.push_back(std::make_unique<Job>(layout, options));
  for (int s = 0; s < 3; ++s) {
    const std::vector<Entry> entries = program_step(s);
    run_step(single, entries, [](size_t, int64_t) { return 0; });
    for (auto& job : jobs) {
      const int n = job->size();
      // Every gradient of a row from one rank, not always its owner.
      run_step(*job, entries, [n](size_t, int64_t o) { return static_cast<int>((o * 7) % n); });
    }
  }
  const std::vector<float> want = single.snapshot(0);
  for (auto& job : jobs)
    for (int r = 0; r < job->size(); ++r) EXPECT_EQ(job->snapshot(r), want) << job->size();
}

INSTANTIATE_TEST_SUITE_P(Optimizers, DistEmbeddingUpdates,
                         ::testing::Values(SparseOptimizer::kSgd, SparseOptimizer::kAdagrad,
                                           SparseOptimizer::kAdam));

TEST(DistEmbedding, SourcesAddUpInRankOrderWhateverTheArrivalOrder) {
  // One row of rank 0 gets 1e8 from rank 0, -1e8 from rank 1 and 1 from rank 2: in rank
  // order (1e8 - 1e8) + 1 = 1 in float; in any order adding rank 2's before rank 1's, 0.
  EmbeddingOptions options = table_options(SparseOptimizer::kSgd);
  options.optimizer.lr = 1;
  const Layout layout = make_layout(3, [](int64_t o) { return static_cast<int>(o % 3); });
  const int64_t id = layout.new_id[0];
  for (const std::vector<int>& order :
       {std::vector<int>{0, 1, 2}, std::vector<int>{2, 1, 0}, std::vector<int>{0, 2, 1}}) {
    Job job(layout, options);
    std::vector<float> want = job.snapshot(0);
    for (int64_t j = 0; j < kDim; ++j) want[j] -= 1.0f;  // original id 0, lr 1, gradient 1
    const float values[3] = {1e8f, -1e8f, 1.0f};
    for (int r : order) {
      const std::vector<float> grad(kDim, values[r]);
      job.table(r).push_gradients(ArrayView<const int64_t>(&id, 1), grad.data());
    }
    EXPECT_EQ(job.table(0).pending_rows(), 1);
    job.table(0).apply_pending();
    EXPECT_EQ(job.snapshot(1), want) << order[0] << order[1] << order[2];
  }
}

TEST(DistEmbedding, ServersApplyWhenOneTrainerAsksThem) {
  // Server-client mode: ranks 0 and 2 own every row, rank 1 owns none and pushes everything.
  const EmbeddingOptions options = table_options(SparseOptimizer::kAdam);
  Job single(layouts()[0], options);
  Job job(layouts()[3], options);
  for (int s = 0; s < 3; ++s) {
    const std::vector<Entry> entries = program_step(s);
    run_step(single, entries, [](size_t, int64_t) { return 0; });
    std::vector<int64_t> ids;
    std::vector<float> grads;
    for (const Entry& e : entries) {
      ids.push_back(job.layout().new_id[e.original]);
      grads.insert(grads.end(), e.grad.begin(), e.grad.end());
    }
    job.table(1).push_gradients(ids, grads.data());
    EXPECT_GT(job.table(0).pending_rows() + job.table(2).pending_rows(), 0);
    job.table(1).apply_remote({0, 2});
    EXPECT_EQ(job.table(0).pending_rows() + job.table(2).pending_rows(), 0);
  }
  EXPECT_EQ(job.snapshot(1), single.snapshot(0));
}

TEST(DistEmbedding, StateRoundTripReproducesLookupsAndLaterUpdates) {
  const EmbeddingOptions options = table_options(SparseOptimizer::kAdam);
  const Layout layout = layouts()[2];
  auto deal = [](size_t e, int64_t) { return static_cast<int>(e % 3); };
  Job job(layout, options);
  for (int s = 0; s < 2; ++s) run_step(job, program_step(s), deal);

  EmbeddingOptions fresh = options;
  fresh.seed = 9;  // other initial rows: everything must come from the state
  Job restored(layout, fresh);
  ASSERT_NE(restored.snapshot(0), job.snapshot(0));
  for (int r = 0; r < 2; ++r) {
    const std::vector<uint8_t> state = job.table(r).serialize_state();
    restored.table(r).load_state(state.data(), state.size(), "ckpt/rank" + std::to_string(r));
  }
  // Rank 2's state through the routes, as a trainer reaches a server's.
  restored.table(0).load_remote_state(2, job.table(0).fetch_remote_state(2), "ckpt/rank2");
  EXPECT_EQ(restored.snapshot(1), job.snapshot(1));
  for (int s = 2; s < 5; ++s) {
    run_step(job, program_step(s), deal);
    run_step(restored, program_step(s), deal);
  }
  EXPECT_EQ(restored.snapshot(0), job.snapshot(0));
}

// The message of the FormatError `fn` throws, or "".
std::string format_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST(DistEmbedding, CorruptOrMismatchedStateIsAFormatErrorNamingTheSource) {
  const EmbeddingOptions options = table_options(SparseOptimizer::kAdagrad);
  Job job(layouts()[1], options);
  run_step(job, program_step(0), [](size_t e, int64_t) { return static_cast<int>(e % 2); });
  const std::vector<uint8_t> state = job.table(0).serialize_state();
  DistEmbedding& target = job.table(0);
  auto load = [&](std::vector<uint8_t> bytes) {
    return format_error_of([&] { target.load_state(bytes.data(), bytes.size(), "ck/emb3"); });
  };

  std::vector<uint8_t> flipped = state;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_NE(load(flipped).find("ck/emb3: embedding state checksum"), std::string::npos);
  EXPECT_NE(load({state.begin(), state.begin() + 30}).find("ck/emb3"), std::string::npos);
  EXPECT_NE(load({}).find("ck/emb3: not an embedding state"), std::string::npos);
  std::vector<uint8_t> other_version = state;
  other_version[8] = 2;  // the version, after the magic; checksum made to match
  const uint32_t crc = crc32_update(0, other_version.data(), other_version.size() - 4);
  std::memcpy(other_version.data() + other_version.size() - 4, &crc, 4);
  EXPECT_NE(load(other_version).find("version 2"), std::string::npos);

  // Another rank's rows, another optimizer, another dim, another table.
  EXPECT_NE(load(job.table(1).serialize_state()).find("rows ["), std::string::npos);
  auto state_of = [](const Layout& layout, EmbeddingOptions o) {
    Job other(layout, o);
    return other.table(0).serialize_state();
  };
  EXPECT_NE(
      load(state_of(layouts()[1], table_options(SparseOptimizer::kAdam))).find("optimizer adam"),
      std::string::npos);
  EmbeddingOptions wide = options;
  wide.dim = kDim + 1;
  EXPECT_NE(load(state_of(layouts()[1], wide)).find("dim 6"), std::string::npos);
  EmbeddingOptions renamed = options;
  renamed.table_id = 5;
  EXPECT_NE(load(state_of(layouts()[1], renamed)).find("table 5"), std::string::npos);
  EXPECT_EQ(load(state), "");  // the table's own state still loads

  // Pending gradients must be applied first.
  const int64_t id = job.layout().new_id[0];
  const std::vector<float> grad(kDim, 1.0f);
  target.push_gradients(ArrayView<const int64_t>(&id, 1), grad.data());
  EXPECT_THROW(target.serialize_state(), Error);
  EXPECT_THROW(target.load_state(state.data(), state.size(), "ck/emb3"), Error);
}

TEST(DistEmbedding, IdsInNoRangeAreErrors) {
  Job job(layouts()[2], table_options(SparseOptimizer::kSgd));
  std::vector<float> out(kDim);
  const std::vector<float> grad(kDim, 1.0f);
  // A gap between ranges, past the last, before the first, negative.
  for (const int64_t bad : {int64_t{500}, int64_t{2017 + 15}, int64_t{3}, int64_t{-1}}) {
    const int64_t ids[2] = {job.layout().new_id[0], bad};
    for (int r = 0; r < job.size(); ++r) {
      EXPECT_THROW(job.table(r).lookup(ArrayView<const int64_t>(ids, 2), out.data()), Error);
      std::vector<float> grads(2 * kDim, 1.0f);
      EXPECT_THROW(job.table(r).push_gradients(ArrayView<const int64_t>(ids, 2), grads.data()),
                   Error);
      EXPECT_EQ(job.table(r).pending_rows(), 0);  // nothing kept from a failed push
    }
  }
  EXPECT_EQ(job.table(0).owner_rank(17), 2);
  EXPECT_EQ(job.table(0).owner_rank(2017 + 9), 0);
  // A one-rank table without an endpoint cannot reach anyone.
  EXPECT_THROW(DistEmbedding(table_options(SparseOptimizer::kSgd), {{0, 2}, {2, 4}}, 0,
                             std::vector<int64_t>{0, 1})
                   .lookup(std::vector<int64_t>{3}, out.data()),
               Error);
}

TEST(DistEmbedding, BadConstructionIsAUsageError) {
  const EmbeddingOptions options = table_options(SparseOptimizer::kSgd);
  const std::vector<int64_t> two{0, 1};
  EXPECT_THROW(DistEmbedding(options, {{0, 2}, {1, 3}}, 0, two), UsageError);  // overlap
  EXPECT_THROW(DistEmbedding(options, {{0, 2}, {2, 4}}, 0, std::vector<int64_t>{0}), UsageError);
  EXPECT_THROW(DistEmbedding(options, {{0, 2}}, 1, two), UsageError);
  EmbeddingOptions no_dim = options;
  no_dim.dim = 0;
  EXPECT_THROW(DistEmbedding(no_dim, {{0, 2}}, 0, two), UsageError);
  EmbeddingOptions bad_table = options;
  bad_table.table_id = store::kMaxEmbeddingTables;
  EXPECT_THROW(DistEmbedding(bad_table, {{0, 2}}, 0, two), UsageError);
}

TEST(DistEmbedding, ConcurrentLookupsAndStats) {
  Job job(layouts()[2], table_options(SparseOptimizer::kSgd));
  const std::vector<float> want = job.snapshot(0);
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) good[t] += job.snapshot(t % job.size()) == want;
    });
  for (auto& t : threads) t.join();
  for (int g : good) EXPECT_EQ(g, 20);

  // Stats of one lookup from rank 1, which owns original ids 10..24: 15 local rows and 25
  // remote rows from two owners, one request each.
  Job fresh(layouts()[2], table_options(SparseOptimizer::kSgd));
  fresh.snapshot(1);
  const store::EmbeddingStats stats = fresh.table(1).stats();
  EXPECT_EQ(stats.local_rows, 15);
  EXPECT_EQ(stats.remote_rows, 25);
  EXPECT_EQ(stats.remote_requests, 2);
  EXPECT_GT(stats.remote_bytes, 25 * kDim * 4);
}

TEST(DistEmbedding, LargeLookupsAndPushesGoInSlices) {
  // 300 columns: 873 rows per 1 MiB slice. 3000 ids, repeats, from two owners.
  EmbeddingOptions options = table_options(SparseOptimizer::kSgd);
  options.dim = 300;
  const std::vector<IdRange> ranges{{0, 1000}, {1000, 2000}};
  std::vector<int64_t> orig0(1000), orig1(1000);
  for (int64_t i = 0; i < 1000; ++i) orig0[i] = i, orig1[i] = 1000 + i;
  InProcessWorld world(2);
  DistEmbedding a(options, ranges, 0, orig0), b(options, ranges, 1, orig1);
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
  for (DistEmbedding* t : {&a, &b}) {
    RpcRouter router;
    t->add_routes(router);
    endpoints.push_back(
        std::make_unique<RpcEndpoint>(world.transport(t->rank()), router.handler()));
  }
  a.attach(endpoints[0].get());
  b.attach(endpoints[1].get());
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 3000; ++i) ids.push_back((i * 7919) % 2000);
  std::vector<float> from_a(ids.size() * 300), from_b(ids.size() * 300);
  a.lookup(ids, from_a.data());
  b.lookup(ids, from_b.data());
  EXPECT_EQ(from_a, from_b);
  EXPECT_EQ(a.stats().remote_requests, 2);  // 1500 remote ids: two slices
  // Push a gradient of 1 for every id: each row gets (its count) and SGD subtracts lr times it.
  std::vector<float> ones(ids.size() * 300, 1.0f);
  a.push_gradients(ids, ones.data());
  a.apply_pending();
  b.apply_pending();
  std::vector<float> after(ids.size() * 300);
  b.lookup(ids, after.data());
  std::vector<int> count(2000, 0);
  for (int64_t id : ids) ++count[id];
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_FLOAT_EQ(after[i * 300 + 7], from_b[i * 300 + 7] - 0.05f * count[ids[i]]) << i;
  std::thread other([&] { endpoints[1]->shutdown(); });
  endpoints[0]->shutdown();
  other.join();
}

}  // namespace
}  // namespace partita
