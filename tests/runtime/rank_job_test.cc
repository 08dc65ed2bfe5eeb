// The rank lifecycle (runtime/rank_job.h) over threads as ranks: roles, and the job's failure
// policy. A set-up failure on one rank is every rank's, reported once by the lowest failing
// rank; every rank failing is one unnamed report; a usage error on every rank is one report
// by rank 0; a failure on one rank alone aborts the job naming it; a trainer's usage error
// reaches the servers. Under mpirun the same policy is exercised by tests/cli (corpus, exit
// codes) and tests/train/failure_test.py.
#include "partita/runtime/rank_job.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "exit_codes.h"
#include "helpers/test_paths.h"
#include "inproc_job.h"
#include "partita/data/generate.h"
#include "partita/partition/partition.h"

namespace partita::runtime {
namespace {

namespace fs = std::filesystem;
using testing::InProcessJob;
using testing::JobAborted;
using testing::TempDir;

// What one rank of a job ended with.
struct Outcome {
  int code = -1;         // run_ranks' result, or the abort's code
  bool aborted = false;  // JobWorld::abort
  int reports = 0;       // calls of the ReportFailure
  FailureReport report;  // the last one
  std::string message;   // what() of report.error, if any
  std::string escaped;   // an exception out of run_ranks (one rank alone)
  Role role = Role::kWorker;
  bool worked = false;  // the work of run_session ran
};

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Runs `body` on every rank of `job`, one thread each.
std::vector<Outcome> run_job(InProcessJob& job,
                             const std::function<int(RankContext&, Outcome&)>& body) {
  std::vector<Outcome> out(static_cast<size_t>(job.size()));
  std::vector<std::thread> threads;
  for (int r = 0; r < job.size(); ++r) {
    threads.emplace_back([&, r] {
      Outcome& o = out[static_cast<size_t>(r)];
      const ReportFailure report = [&o](const FailureReport& rep) {
        ++o.reports;
        o.report = rep;
        if (rep.error != nullptr) o.message = what_of(rep.error);
        return cli::exit_code(rep.kind);
      };
      try {
        o.code = run_ranks(
            job.rank(r), [&](RankContext& rank) { return body(rank, o); }, report);
      } catch (const JobAborted& a) {
        o.aborted = true;
        o.code = a.code;
      } catch (const std::exception& e) {
        o.escaped = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

class RankJob : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    data::GenerateOptions g;
    g.nodes = 600;
    g.avg_degree = 6;
    g.feat_dim = 4;
    g.classes = 3;
    g.seed = 5;
    g.threads = 1;
    g.out_dir = *dir_ / "ds";
    data::generate_synthetic(g);
    for (int parts : {2, 4}) {
      partition::PartitionOptions p;
      p.num_parts = parts;
      p.method = partition::Method::kRandom;
      p.seed = 3;
      p.threads = 1;
      p.out_dir = *dir_ / ("p" + std::to_string(parts));
      partition::run_partition(g.out_dir, data::LoadOptions{}, p);
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  static SessionOptions options(const std::string& parts, int servers = 0) {
    SessionOptions so;
    so.parts_dir = parts;
    so.timeout_s = 10;
    so.servers = servers;
    return so;
  }
  static std::string parts(int count) { return *dir_ / ("p" + std::to_string(count)); }

  // A copy of the `count`-part directory whose parts `broken` miss their features file.
  static std::string broken_copy(int count, const std::vector<int>& broken, const TempDir& tmp) {
    const std::string copy = tmp / "parts";
    fs::copy(parts(count), copy, fs::copy_options::recursive);
    for (int p : broken) {
      const fs::path features = fs::path(copy) / ("part" + std::to_string(p)) / "feat.npy";
      EXPECT_TRUE(fs::remove(features)) << features;
    }
    return copy;
  }

  // The body of a command: a session on `dir`, work that records the role and returns 0.
  static std::function<int(RankContext&, Outcome&)> session_body(const SessionOptions& so) {
    return [so](RankContext& rank, Outcome& o) {
      return rank.run_session(so, [&](Session& session) {
        o.role = session.role();
        o.worked = true;
        return 0;
      });
    };
  }

  static TempDir* dir_;
};
TempDir* RankJob::dir_ = nullptr;

TEST_F(RankJob, WorkersRunTheWorkOverTheirSessionAndExitZero) {
  InProcessJob job(2);
  const std::vector<Outcome> out = run_job(job, session_body(options(parts(2))));
  for (int r = 0; r < 2; ++r) {
    const Outcome& o = out[static_cast<size_t>(r)];
    EXPECT_EQ(o.code, 0) << "rank " << r << ": " << o.message << o.escaped;
    EXPECT_EQ(o.reports, 0) << "rank " << r;
    EXPECT_TRUE(o.worked) << "rank " << r;
    EXPECT_EQ(o.role, Role::kWorker);
  }
}

TEST_F(RankJob, ServerClientRunsTheWorkOnTrainersOnly) {
  InProcessJob job(4, /*servers=*/2);
  std::atomic<int> trainer_ranks{0};
  const SessionOptions so = options(parts(2), 2);
  const std::vector<Outcome> out = run_job(job, [&](RankContext& rank, Outcome& o) {
    return rank.run_session(so, [&](Session& session) {
      o.role = session.role();
      o.worked = true;
      EXPECT_EQ(session.size(), 2) << "trainers train among themselves";
      trainer_ranks += session.rank();
      return 0;
    });
  });
  for (int r = 0; r < 4; ++r) {
    const Outcome& o = out[static_cast<size_t>(r)];
    EXPECT_EQ(o.code, 0) << "rank " << r << ": " << o.message << o.escaped;
    EXPECT_EQ(o.worked, r >= 2) << "rank " << r << ": servers serve, trainers work";
    if (r >= 2) {
      EXPECT_EQ(o.role, Role::kTrainer);
    }
  }
  EXPECT_EQ(trainer_ranks.load(), 0 + 1);
}

TEST_F(RankJob, OneRankFailingAtSetupMakesEveryRankReportItsError) {
  TempDir tmp;
  const std::string dir = broken_copy(2, {1}, tmp);
  InProcessJob job(2);
  const std::vector<Outcome> out = run_job(job, session_body(options(dir)));
  const Outcome& failed = out[1];
  ASSERT_EQ(failed.reports, 1) << failed.escaped;
  EXPECT_NE(failed.report.error, nullptr) << "the failing rank reports its own error";
  EXPECT_EQ(failed.report.rank, 1) << "named: the other rank did not fail";
  EXPECT_FALSE(failed.report.abort);
  EXPECT_NE(failed.message.find("feat.npy"), std::string::npos) << failed.message;
  const Outcome& other = out[0];
  ASSERT_EQ(other.reports, 1) << other.escaped;
  EXPECT_EQ(other.report.error, nullptr) << "reported once for the job";
  EXPECT_EQ(other.report.kind, failed.report.kind) << "every rank knows which failure";
  for (const Outcome& o : out) {
    EXPECT_FALSE(o.aborted) << "an agreed failure ends every rank cleanly";
    EXPECT_FALSE(o.worked);
    EXPECT_EQ(o.code, cli::exit_code(failed.report.kind));
  }
  EXPECT_NE(failed.report.kind, FailureKind::kUsage);
  EXPECT_NE(failed.report.kind, FailureKind::kInternal);
}

TEST_F(RankJob, TheLowestFailingRankReportsWhenSeveralFail) {
  TempDir tmp;
  const std::string dir = broken_copy(4, {3, 2}, tmp);
  InProcessJob job(4);
  const std::vector<Outcome> out = run_job(job, session_body(options(dir)));
  for (int r = 0; r < 4; ++r) {
    const Outcome& o = out[static_cast<size_t>(r)];
    ASSERT_EQ(o.reports, 1) << "rank " << r << ": " << o.escaped;
    EXPECT_EQ(o.report.error != nullptr, r == 2) << "rank " << r;
    EXPECT_EQ(o.code, 1) << "rank " << r;
  }
  EXPECT_EQ(out[2].report.rank, 2);
  EXPECT_NE(out[2].message.find("part2"), std::string::npos) << out[2].message;
}

TEST_F(RankJob, EveryRankFailingAtSetupIsOneUnnamedReport) {
  // 2 parts on 3 ranks: every rank refuses the directory, with the same usage error.
  InProcessJob job(3);
  const std::vector<Outcome> out = run_job(job, session_body(options(parts(2))));
  for (int r = 0; r < 3; ++r) {
    const Outcome& o = out[static_cast<size_t>(r)];
    ASSERT_EQ(o.reports, 1) << "rank " << r << ": " << o.escaped;
    EXPECT_EQ(o.report.kind, FailureKind::kUsage) << "rank " << r;
    EXPECT_EQ(o.report.error != nullptr, r == 0) << "rank " << r;
    EXPECT_EQ(o.code, cli::kExitUsage) << "rank " << r;
    EXPECT_FALSE(o.aborted) << "rank " << r;
  }
  EXPECT_EQ(out[0].report.rank, -1) << "every rank failed: no rank is named";
  EXPECT_NE(out[0].message.find("2 parts"), std::string::npos) << out[0].message;
}

TEST_F(RankJob, ALaterSetupStepIsAgreedToo) {
  // As a link trainer's edge files: agree_on_setup inside the work.
  InProcessJob job(2);
  const SessionOptions so = options(parts(2));
  const std::vector<Outcome> out = run_job(job, [&](RankContext& rank, Outcome&) {
    return rank.run_session(so, [&](Session& session) {
      agree_on_setup(session.collectives(), [&] {
        if (session.rank() == 1) throw FormatError("edges.npy: bad magic");
      });
      return 0;
    });
  });
  EXPECT_EQ(out[1].message, "edges.npy: bad magic");
  EXPECT_EQ(out[1].report.rank, 1);
  EXPECT_EQ(out[0].report.error, nullptr);
  for (const Outcome& o : out) {
    EXPECT_EQ(o.report.kind, FailureKind::kFormat);
    EXPECT_EQ(o.code, cli::kExitFailure);
    EXPECT_FALSE(o.aborted);
  }
}

TEST_F(RankJob, AUsageErrorOnEveryRankIsReportedOnceByRankZero) {
  InProcessJob job(3);
  const std::vector<Outcome> out = run_job(job, [](RankContext& rank, Outcome&) -> int {
    throw UsageError(fmt::format("batch_size: must be >= 1 (rank {})", rank.rank()));
  });
  for (int r = 0; r < 3; ++r) {
    const Outcome& o = out[static_cast<size_t>(r)];
    ASSERT_EQ(o.reports, 1) << "rank " << r << ": " << o.escaped;
    EXPECT_EQ(o.report.error != nullptr, r == 0) << "rank " << r;
    EXPECT_EQ(o.report.rank, -1);
    EXPECT_FALSE(o.aborted);
    EXPECT_EQ(o.code, cli::kExitUsage);
  }
  EXPECT_EQ(out[0].message, "batch_size: must be >= 1 (rank 0)");
}

TEST_F(RankJob, AUsageErrorOnOneRankAloneAbortsTheJobNamingIt) {
  InProcessJob job(2, 0, /*timeout_s=*/1);
  const SessionOptions so = options(parts(2));
  const std::vector<Outcome> out = run_job(job, [&](RankContext& rank, Outcome& o) {
    if (rank.rank() == 1) throw UsageError("only here");
    return session_body(so)(rank, o);
  });
  EXPECT_TRUE(out[1].aborted);
  EXPECT_EQ(out[1].code, cli::kExitUsage);
  EXPECT_EQ(out[1].report.rank, 1);
  EXPECT_TRUE(out[1].report.abort);
  EXPECT_EQ(out[1].message, "only here");
  // Rank 0 waited for rank 1 at set-up, within the deadline, then aborted too.
  EXPECT_TRUE(out[0].aborted);
  EXPECT_EQ(out[0].report.rank, 0);
  EXPECT_EQ(out[0].report.kind, FailureKind::kTimeout) << out[0].message;
  EXPECT_EQ(out[0].code, cli::kExitFailure);
}

TEST_F(RankJob, AFailureAfterSetupAbortsTheJobNamingTheRank) {
  InProcessJob job(2, 0, /*timeout_s=*/2);
  SessionOptions so = options(parts(2));
  so.timeout_s = 2;
  const std::vector<Outcome> out = run_job(job, [&](RankContext& rank, Outcome&) {
    return rank.run_session(so, [&](Session& session) {
      if (session.rank() == 1) throw std::runtime_error("c10 error\nbacktrace");
      return 0;
    });
  });
  EXPECT_TRUE(out[1].aborted);
  EXPECT_EQ(out[1].report.kind, FailureKind::kInternal);
  EXPECT_EQ(out[1].report.rank, 1);
  EXPECT_EQ(out[1].code, cli::kExitFailure);
  // Rank 0 ends too (finished, or aborted once rank 1 stopped answering): no hang.
  EXPECT_TRUE(out[0].code == 0 || out[0].aborted) << out[0].code;
}

TEST_F(RankJob, ATrainersUsageErrorReachesTheServers) {
  InProcessJob job(4, /*servers=*/2, 3);
  const SessionOptions so = options(parts(2), 2);
  const std::vector<Outcome> out = run_job(job, [&](RankContext& rank, Outcome&) {
    return rank.run_session(so, [&](Session&) -> int {
      throw UsageError("checkpoint_dir: exists");  // the same verdict on every trainer
    });
  });
  for (int r = 0; r < 4; ++r) {
    const Outcome& o = out[static_cast<size_t>(r)];
    ASSERT_EQ(o.reports, 1) << "rank " << r << ": " << o.escaped;
    EXPECT_EQ(o.report.kind, FailureKind::kUsage) << "rank " << r;
    EXPECT_EQ(o.report.error != nullptr, r == 0) << "rank " << r << ": " << o.message;
    EXPECT_FALSE(o.aborted) << "rank " << r;
    EXPECT_EQ(o.code, cli::kExitUsage) << "rank " << r;
  }
  EXPECT_EQ(out[0].message, "checkpoint_dir: exists") << "a server prints the trainers' error";
}

TEST_F(RankJob, AloneAnErrorPropagatesToTheCaller) {
  InProcessJob job(1);
  const std::vector<Outcome> out =
      run_job(job, [](RankContext&, Outcome&) -> int { throw IoError("x.npy: cannot open"); });
  EXPECT_EQ(out[0].escaped, "x.npy: cannot open");
  EXPECT_EQ(out[0].reports, 0);
}

TEST_F(RankJob, ASessionIsBuiltOncePerRank) {
  InProcessJob job(1);
  const SessionOptions so = options(*dir_ / "p2");
  const std::vector<Outcome> out = run_job(job, [&](RankContext& rank, Outcome&) {
    // A 2-part directory alone: the opening refuses it (a single process).
    try {
      rank.run_session(so, [](Session&) { return 0; });
    } catch (const UsageError&) {
    }
    return rank.run_session(so, [](Session&) { return 0; });
  });
  EXPECT_NE(out[0].escaped.find("internal"), std::string::npos) << out[0].escaped;
}

}  // namespace
}  // namespace partita::runtime
