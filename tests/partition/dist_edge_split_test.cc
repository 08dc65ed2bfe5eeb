// The pipeline with a link-prediction split (src/partition/edge_split_steps.h), threads as
// ranks: for 2 and 3 ranks and part counts above and below the rank count, its directory
// (parts without the held-out edges, edges/*.npy, part<p>/train_edges.npy, partita.json
// apart from timings) equals one process's (partition_dataset_assigned) for the same
// assignment, byte for byte; sampled splits (rejection and dense enumeration of negatives,
// directed and undirected) and a dataset's own split files. Bad fractions, typed datasets,
// a flag on a dataset with its own split, and bad split files fail every rank with one
// agreed error, one process's error. The offsets its numbering takes across ranks.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "collective.h"  // src/partition: offsets_over_ranks, send_ints, gather_ints, ask_ranks
#include "edge_split_draw.h"  // src/partition: which negative draw a graph takes
#include "helpers/inproc_dist_comm.h"
#include "helpers/on_threads.h"
#include "helpers/quiet_logs.h"
#include "helpers/test_paths.h"
#include "partita/core/npy.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/partition/edge_split.h"
#include "partita/partition/format.h"
#include "partita/partition/partition_assigned.h"
#include "partita/partition/pipeline.h"
#include "partition_dirs.h"

namespace partita::partition {
namespace {

namespace fs = std::filesystem;
using testing::expect_same_directory;
using testing::read_file;
using testing::TempDir;

// The in-process part_graph's assignment: contiguous blocks.
std::vector<int32_t> blocks(int64_t n, int P) {
  std::vector<int32_t> part(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) part[v] = static_cast<int32_t>(v * P / n);
  return part;
}

PartitionOptions options(int P, double valid, double test) {
  PartitionOptions o;
  o.num_parts = P;
  o.seed = 7;
  o.threads = 1;
  o.dist_partitioner = DistPartitioner::kPtScotch;  // the stand-in part_graph: known blocks
  o.edge_split.valid_fraction = valid;
  o.edge_split.test_fraction = test;
  return o;
}

// run_partition on R thread ranks into `out`; every rank's failure text.
std::vector<std::string> run_distributed(const std::string& dataset, const data::LoadOptions& load,
                                         PartitionOptions o, int R, const std::string& out) {
  o.out_dir = out;
  testing::InProcessDistComms comms(R);
  return testing::on_threads(R, [&](int r) { run_partition(dataset, load, o, comms.member(r)); });
}

// The distributed directory against the single-process one with the same blocks.
void check_split(const std::string& dataset, const data::LoadOptions& load, PartitionOptions o,
                 int R) {
  SCOPED_TRACE(::testing::Message() << dataset << ": parts " << o.num_parts << ", ranks " << R
                                    << (load.undirected ? ", undirected" : ", directed"));
  TempDir tmp;
  const std::vector<std::string> failures = run_distributed(dataset, load, o, R, tmp / "dist");
  for (int r = 0; r < R; ++r) ASSERT_EQ(failures[r], "") << "rank " << r;
  EXPECT_NO_THROW(verify_partition(tmp / "dist", 1));
  data::Dataset ds = data::load_dataset(dataset, load);
  o.out_dir = tmp / "single";
  o.undirected = load.undirected;
  const PartitionSummary single =
      partition_dataset_assigned(ds, o, blocks(ds.num_nodes, o.num_parts));
  ASSERT_TRUE(single.edge_split.has_value());
  EXPECT_GT(single.edge_split->valid, 0);
  expect_same_directory(tmp / "single", tmp / "dist");
}

void write_pairs(const std::string& path, const std::vector<int64_t>& pairs) {
  write_npy<int64_t>(path, ArrayView<const int64_t>(pairs),
                     {static_cast<int64_t>(pairs.size() / 2), 2});
}

class DistEdgeSplitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    data::GenerateOptions g;
    g.nodes = 500;
    g.avg_degree = 6;
    g.feat_dim = 4;
    g.classes = 3;
    g.seed = 5;
    g.threads = 1;
    g.out_dir = *dir_ / "sparse";
    data::generate_synthetic(g);
    g.nodes = 300;
    g.edge_time = true;
    g.out_dir = *dir_ / "timed";
    data::generate_synthetic(g);
    g.edge_time = false;
    g.nodes = 40;
    g.out_dir = *dir_ / "dense";
    data::generate_synthetic(g);
    // Four pairs in five are edges: negatives by enumeration.
    std::vector<int64_t> dense;
    for (int64_t a = 0; a < g.nodes; ++a)
      for (int64_t b = a + 1; b < g.nodes; ++b)
        if ((a * 7 + b * 3) % 5 != 0) dense.insert(dense.end(), {a, b});
    write_pairs(g.out_dir + "/edges.npy", dense);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string path(const std::string& name) { return *dir_ / name; }
  // A copy of the sparse dataset with its own split files: a sampled split of its
  // undirected graph, then `edit` applied to the five arrays (train, valid, test, valid_neg,
  // test_neg).
  static std::string with_split_files(
      const std::string& name,
      const std::function<void(std::vector<std::vector<int64_t>>&)>& edit) {
    const std::string out = *dir_ / name;
    fs::remove_all(out);
    fs::copy(path("sparse"), out, fs::copy_options::recursive);
    // A sampled split of the undirected graph as one process writes it into one part (new
    // ids are then the original ids).
    PartitionOptions o;
    o.num_parts = 1;
    o.seed = 3;
    o.threads = 1;
    o.out_dir = out + "-split";
    o.edge_split.valid_fraction = 0.1;
    o.edge_split.test_fraction = 0.1;
    data::LoadOptions load;
    load.undirected = true;
    run_partition(path("sparse"), load, o);
    std::vector<std::vector<int64_t>> arrays;
    for (const char* file : {"part0/train_edges.npy", "edges/valid_pos.npy", "edges/test_pos.npy",
                             "edges/valid_neg.npy", "edges/test_neg.npy"}) {
      const NpyArray a = NpyArray::open(o.out_dir + "/" + file);
      arrays.emplace_back(a.view<int64_t>().begin(), a.view<int64_t>().end());
    }
    edit(arrays);
    const char* names[] = {"train_edges.npy", "valid_edges.npy", "test_edges.npy", "valid_neg.npy",
                           "test_neg.npy"};
    for (size_t i = 0; i < 5; ++i) write_pairs(out + "/" + names[i], arrays[i]);
    return out;
  }
  static TempDir* dir_;
};
TempDir* DistEdgeSplitTest::dir_ = nullptr;

TEST_F(DistEdgeSplitTest, SampledEqualsSingleProcess) {
  data::LoadOptions directed, undirected;
  undirected.undirected = true;
  for (int R = 2; R <= 3; ++R) {
    check_split(path("sparse"), directed, options(R, 0.1, 0.15), R);
    check_split(path("sparse"), undirected, options(R, 0.05, 0.1), R);
  }
  check_split(path("sparse"), undirected, options(3, 0.2, 0.1), 2);  // P > R
  check_split(path("sparse"), directed, options(2, 0.1, 0.1), 3);    // P < R
}

// A split by time (the latest units held out, every pair with its time) chooses across
// ranks what one process chooses: the same bytes, *_time files included.
TEST_F(DistEdgeSplitTest, TimeSplitEqualsSingleProcess) {
  data::LoadOptions directed, undirected;
  undirected.undirected = true;
  for (int R = 2; R <= 3; ++R) {
    PartitionOptions o = options(R, 0.1, 0.15);
    o.edge_split.by = SplitBy::kTime;
    check_split(path("timed"), directed, o, R);
    o.edge_split.valid_fraction = 0.05;
    check_split(path("timed"), undirected, o, R);
  }
  PartitionOptions o = options(3, 0.2, 0.1);
  o.edge_split.by = SplitBy::kTime;
  check_split(path("timed"), undirected, o, 2);  // P > R
}

// A random split of a graph whose pairs repeat at different times (edge_time): the pair is
// one unit on every rank count, so ranks hold out what one process does, every copy of a
// held-out pair leaves the graph and the result verifies (no training edge held out).
TEST_F(DistEdgeSplitTest, RandomSplitOfRepeatedPairsEqualsSingleProcess) {
  data::LoadOptions directed, undirected;
  undirected.undirected = true;
  const data::Dataset ds = data::load_dataset(path("timed"), directed);
  int64_t repeats = 0;
  for (int64_t d = 0; d < ds.num_nodes; ++d)
    for (int64_t k = ds.in_edges.indptr[d] + 1; k < ds.in_edges.indptr[d + 1]; ++k)
      repeats += ds.in_edges.indices[k] == ds.in_edges.indices[k - 1] ? 1 : 0;
  ASSERT_GT(repeats, 0) << "no repeated pair: the test cannot fail";
  for (int R = 2; R <= 3; ++R) {
    check_split(path("timed"), directed, options(R, 0.1, 0.15), R);
    check_split(path("timed"), undirected, options(R, 0.05, 0.1), R);
  }
  check_split(path("timed"), undirected, options(3, 0.2, 0.1), 2);  // P > R
}

TEST_F(DistEdgeSplitTest, DenseGraphEnumeratesNegativesAlike) {
  data::LoadOptions undirected;
  undirected.undirected = true;
  const data::Dataset ds = data::load_dataset(path("dense"), undirected);
  const int64_t units = ds.num_edges() / 2, held = 2 * std::max<int64_t>(1, units / 10);
  ASSERT_TRUE(negatives_by_enumeration(ds.num_nodes, units, held)) << units << " units";
  for (int R = 2; R <= 3; ++R) check_split(path("dense"), undirected, options(2, 0.1, 0.1), R);
}

TEST_F(DistEdgeSplitTest, DatasetSplitFilesEqualSingleProcess) {
  // A training pair repeated: written once.
  const std::string dir = with_split_files("given", [](std::vector<std::vector<int64_t>>& a) {
    a[0].insert(a[0].end(), {a[0][0], a[0][1]});
  });
  data::LoadOptions undirected;
  undirected.undirected = true;
  PartitionOptions o = options(3, 0, 0);
  for (int R = 2; R <= 3; ++R) check_split(dir, undirected, o, R);
  o.num_parts = 2;
  check_split(dir, undirected, o, 3);
}

// Batched rejection consumes the stream exactly as one candidate at a time: any batch size
// gives the same negatives (a graph where many candidates are rejected).
TEST(EdgeSplitDraw, RejectionBatchesDoNotChangeTheDraw) {
  // A toy graph: {a, b} is an edge when a + b is a multiple of 3. Accepted pairs are held
  // in two hash shares, as on two ranks, and must be found repeated all the same.
  auto draw = [](int64_t batch, Rng& rng) {
    AcceptedPairs even([](int64_t lo, int64_t hi) { return (lo + hi) % 2 == 0; });
    AcceptedPairs odd([](int64_t lo, int64_t hi) { return (lo + hi) % 2 == 1; });
    NegativeJudge judge;
    judge.rejected = [&](const std::vector<int64_t>& pairs) {
      std::vector<uint8_t> out(pairs.size() / 2);
      for (size_t j = 0; j < out.size(); ++j)
        out[j] = pairs[2 * j] == pairs[2 * j + 1] || (pairs[2 * j] + pairs[2 * j + 1]) % 3 == 0;
      even.flag_repeats(pairs, &out);
      odd.flag_repeats(pairs, &out);
      return out;
    };
    judge.accepted = [&](const std::vector<int64_t>& pairs, int64_t k) {
      even.add(pairs, k);
      odd.add(pairs, k);
    };
    std::vector<int64_t> out;
    draw_negatives_by_rejection(
        30, 120, rng, judge,
        [&](int64_t k, int64_t a, int64_t b) {
          EXPECT_EQ(k, static_cast<int64_t>(out.size() / 2));
          out.insert(out.end(), {a, b});
        },
        batch);
    return out;
  };
  Rng one(11);
  const std::vector<int64_t> want = draw(1, one);
  ASSERT_EQ(want.size(), 240u);
  std::set<std::pair<int64_t, int64_t>> unique;
  for (size_t i = 0; i < want.size(); i += 2) {
    EXPECT_NE((want[i] + want[i + 1]) % 3, 0);
    unique.insert({std::min(want[i], want[i + 1]), std::max(want[i], want[i + 1])});
  }
  EXPECT_EQ(unique.size(), 120u);
  for (int64_t batch : {2, 7, 1000}) {
    Rng rng(11);
    EXPECT_EQ(draw(batch, rng), want) << batch;
    EXPECT_EQ(rng.next(), Rng(one).next()) << batch;  // the stream ends at the same place
  }
}

// Every rank fails with the lowest failing rank's text, which contains `want`.
void expect_agreed_failure(const std::vector<std::string>& f, const std::string& want) {
  ASSERT_FALSE(f.empty());
  size_t origin = f.size();
  for (size_t r = 0; r < f.size(); ++r)
    if (f[r].rfind("rank ", 0) != 0) origin = std::min(origin, r);
  ASSERT_LT(origin, f.size()) << f[0];
  EXPECT_NE(f[origin].find(want), std::string::npos) << f[origin];
  for (size_t r = 0; r < f.size(); ++r) {
    if (r != origin) {
      EXPECT_EQ(f[r], "rank " + std::to_string(origin) + ": " + f[origin]);
    }
  }
}

TEST_F(DistEdgeSplitTest, BadFractionsAndSplitFilesAreOneAgreedError) {
  TempDir tmp;
  data::LoadOptions undirected;
  undirected.undirected = true;
  for (const auto& [valid, test] : {std::pair{1.5, 0.1}, {0.6, 0.5}, {-0.1, 0.2}}) {
    const std::vector<std::string> f =
        run_distributed(path("sparse"), undirected, options(2, valid, test), 3, tmp / "x");
    for (const std::string& text : f) EXPECT_NE(text.find("edge_split"), std::string::npos) << text;
  }
  // More negatives than the dense graph has free pairs: the single-process usage error.
  std::vector<std::string> f =
      run_distributed(path("dense"), undirected, options(2, 0.45, 0.45), 3, tmp / "x");
  for (const std::string& text : f)
    EXPECT_NE(text.find("node pairs that are not edges"), std::string::npos) << text;

  // A typed dataset, and a flag on a dataset with its own files: the single process's
  // usage errors, on every rank.
  data::HeteroGenerateOptions h;
  h.nodes = 300;
  h.feat_dim = 3;
  h.classes = 3;
  h.seed = 1;
  h.threads = 1;
  h.out_dir = tmp / "typed";
  data::generate_hetero(h);
  f = run_distributed(tmp / "typed", {}, options(2, 0.1, 0.1), 2, tmp / "x");
  for (const std::string& text : f)
    EXPECT_NE(text.find("need a homogeneous dataset"), std::string::npos) << text;
  const std::string own = with_split_files("own", [](auto&) {});
  f = run_distributed(own, undirected, options(2, 0.1, 0.1), 2, tmp / "x");
  for (const std::string& text : f)
    EXPECT_NE(text.find("has its own edge split"), std::string::npos) << text;

  PartitionOptions o = options(2, 0, 0);
  // An id out of range in the last rows (read by the last rank).
  std::string dir = with_split_files(
      "out_of_range", [](std::vector<std::vector<int64_t>>& a) { a[4].back() = 500; });
  expect_agreed_failure(run_distributed(dir, undirected, o, 3, tmp / "x"),
                        "node id 500 is outside [0, 500)");
  // A negative that is an edge of the graph, one held-out positive used as a negative, a
  // repeated negative in another file, a training pair that is also a test pair: every
  // rank fails with the single-process message.
  const std::vector<std::function<void(std::vector<std::vector<int64_t>>&)>> edits = {
      [](auto& a) { a[3][0] = a[0][0], a[3][1] = a[0][1]; },
      [](auto& a) { a[4][2] = a[1][2], a[4][3] = a[1][3]; },
      [](auto& a) { a[4][2] = a[3][1], a[4][3] = a[3][0]; },
      [](auto& a) {
        a[0].insert(a[0].end(), {a[2][3], a[2][2]});
      },
  };
  const char* wants[] = {"is an edge, not a negative", "is an edge, not a negative",
                         "repeats an earlier negative pair", "is also a valid or test edge"};
  for (size_t i = 0; i < edits.size(); ++i) {
    SCOPED_TRACE(wants[i]);
    dir = with_split_files("bad" + std::to_string(i), edits[i]);
    std::string single;
    try {
      PartitionOptions one = o;
      one.out_dir = tmp / "x";
      run_partition(dir, undirected, one);
    } catch (const FormatError& e) {
      single = e.what();
    }
    ASSERT_NE(single.find(wants[i]), std::string::npos) << single;
    for (int R : {2, 3}) {
      f = run_distributed(dir, undirected, o, R, tmp / "x");
      expect_agreed_failure(f, wants[i]);
      EXPECT_NE(f[0].find(single), std::string::npos) << f[0] << " vs " << single;
    }
    EXPECT_FALSE(fs::exists(tmp / "x/partita.json"));
  }
}

// The split's rows and units are numbered across ranks by offsets_over_ranks: per count,
// where this rank's share starts (the sum over the ranks below) and the sum over all ranks,
// for any rank count, the same total on every rank.
TEST(EdgeSplitCollectives, OffsetsOverRanksSumTheRanksBelowAndAll) {
  for (int ranks : {1, 2, 3}) {
    testing::InProcessDistComms comms(ranks);
    std::vector<RankOffsets> got(static_cast<size_t>(ranks));
    const auto failures = testing::on_threads(ranks, [&](int r) {
      got[r] = offsets_over_ranks({r + 1, 10 * r, 0}, comms.member(r));
    });
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(failures[r], "") << "rank " << r;
      const int64_t below = r * (r + 1) / 2, tens_below = 10 * r * (r - 1) / 2;
      EXPECT_EQ(got[r].first, (std::vector<int64_t>{below, tens_below, 0})) << ranks << " ranks";
      EXPECT_EQ(got[r].total,
                (std::vector<int64_t>{ranks * (ranks + 1) / 2, 10 * ranks * (ranks - 1) / 2, 0}))
          << ranks << " ranks";
    }
  }
}

// send_ints and gather_ints move elements of any integer width, and plain structs of
// integers, whole: what rank r sent to rank q arrives at q as it left, element by element.
TEST(EdgeSplitCollectives, SendAndGatherKeepTheirElementType) {
  struct Pair {
    int64_t a, b;
  };
  for (int ranks : {1, 2, 3}) {
    testing::InProcessDistComms comms(ranks);
    std::vector<std::vector<std::vector<int32_t>>> sent(static_cast<size_t>(ranks));
    std::vector<std::vector<std::vector<Pair>>> gathered(static_cast<size_t>(ranks));
    const auto failures = testing::on_threads(ranks, [&](int r) {
      std::vector<std::vector<int32_t>> send(static_cast<size_t>(ranks));
      for (int q = 0; q < ranks; ++q) send[q].assign(static_cast<size_t>(q + 1), -(10 * r + q));
      sent[r] = send_ints(send, comms.member(r));
      gathered[r] =
          gather_ints(std::vector<Pair>(static_cast<size_t>(r), {r, -r}), comms.member(r));
    });
    for (int q = 0; q < ranks; ++q) {
      EXPECT_EQ(failures[q], "") << "rank " << q;
      ASSERT_EQ(sent[q].size(), static_cast<size_t>(ranks));
      ASSERT_EQ(gathered[q].size(), static_cast<size_t>(ranks));
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(sent[q][r], std::vector<int32_t>(static_cast<size_t>(q + 1), -(10 * r + q)))
            << ranks << " ranks, from rank " << r << " to " << q;
        ASSERT_EQ(gathered[q][r].size(), static_cast<size_t>(r)) << ranks << " ranks";
        for (const Pair& p : gathered[q][r])
          EXPECT_TRUE(p.a == r && p.b == -r) << ranks << " ranks";
      }
    }
  }
}

// ask_ranks: every question reaches the rank it was asked of, is answered there, and its
// answer comes back to the asker in the order asked. Rank r asks rank q the pairs (r, i)
// for i <= q + r; q answers 1000 q + 10 r + i.
TEST(EdgeSplitCollectives, AskRanksAnswersWhereAskedInTheOrderAsked) {
  for (int ranks : {1, 2, 3}) {
    testing::InProcessDistComms comms(ranks);
    std::vector<std::vector<std::vector<int64_t>>> got(static_cast<size_t>(ranks));
    const auto failures = testing::on_threads(ranks, [&](int r) {
      std::vector<std::vector<int64_t>> ask(static_cast<size_t>(ranks));
      for (int q = 0; q < ranks; ++q)
        for (int64_t i = 0; i <= q + r; ++i) ask[q].insert(ask[q].end(), {r, i});
      got[r] = ask_ranks(std::move(ask), 2, comms.member(r),
                         [&](const int64_t* x) { return 1000 * r + 10 * x[0] + x[1]; });
    });
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(failures[r], "") << "rank " << r;
      ASSERT_EQ(got[r].size(), static_cast<size_t>(ranks));
      for (int q = 0; q < ranks; ++q) {
        std::vector<int64_t> expected;
        for (int64_t i = 0; i <= q + r; ++i) expected.push_back(1000 * q + 10 * r + i);
        EXPECT_EQ(got[r][q], expected) << ranks << " ranks, rank " << r << " asking " << q;
      }
    }
  }
}

}  // namespace
}  // namespace partita::partition
