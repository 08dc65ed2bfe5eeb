// What a new user meets first, on the built `partita` binary: flags accepted where they are
// written, defaults that follow from other flags, outputs that keep data and say what they
// did. (Refusals, each with its exact message, are corpus cases: tests/corpus.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "helpers/test_paths.h"

namespace partita {
namespace {

using testing::CommandResult;
using testing::TempDir;

CommandResult partita(const std::string& args) { return testing::run_partita(args); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<nlohmann::json> records_of(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

// One small dataset and its 1-part partition, shared by the tests of this file.
class FirstHour : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ASSERT_EQ(partita("-q generate --nodes 600 --avg-degree 5 --feat-dim 4 --classes 3 --seed 2 "
                      "--out " +
                      *dir_ / "ds")
                  .exit_code,
              0);
    CommandResult p = partita("partition --dataset " + *dir_ / "ds" + " --num-parts 1 --out " +
                              *dir_ / "p1" + " -q");
    ASSERT_EQ(p.exit_code, 0) << p.out;
    partition_output_ = new std::string(p.out);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete partition_output_;
  }
  static std::string dir(const std::string& name) { return *dir_ / name; }
  static std::string p1() { return dir("p1"); }

  static TempDir* dir_;
  static std::string* partition_output_;
};
TempDir* FirstHour::dir_ = nullptr;
std::string* FirstHour::partition_output_ = nullptr;

TEST_F(FirstHour, QuietAfterTheCommandLeavesTheResultLineOnly) {
  // -q after the command, as before it: partition prints its one result line, no table.
  EXPECT_EQ(*partition_output_,
            "partitioned " + dir("ds") + " into " + p1() + ": 1 part, edge cut 0.00%\n");
  CommandResult loud =
      partita("partition --dataset " + dir("ds") + " --num-parts 2 --out " + dir("p2"));
  ASSERT_EQ(loud.exit_code, 0) << loud.out;
  EXPECT_NE(loud.out.find("imbalance (max/mean)"), std::string::npos) << loud.out;
  // train -q: the epoch lines and the test line, nothing on progress.
  CommandResult train = partita("train --parts " + p1() + " --epochs 2 --fanouts 3,3 -q");
  ASSERT_EQ(train.exit_code, 0) << train.out;
  const std::vector<std::string> lines = lines_of(train.out);
  ASSERT_EQ(lines.size(), 3u) << train.out;
  EXPECT_EQ(lines[0].rfind("epoch=1 ", 0), 0u) << train.out;
  EXPECT_EQ(lines[2].rfind("test_acc=", 0), 0u) << train.out;
}

TEST_F(FirstHour, InfoTakesTheDirectoryPositionallyOrAsParts) {
  CommandResult positional = partita("info " + p1());
  CommandResult flag = partita("info --parts " + p1());
  ASSERT_EQ(positional.exit_code, 0) << positional.out;
  EXPECT_EQ(flag.exit_code, 0) << flag.out;
  EXPECT_EQ(flag.out, positional.out);
}

TEST_F(FirstHour, LayersDefaultToTheFanoutsAndTheRunIsRecorded) {
  const std::string metrics = dir("layers.jsonl");
  CommandResult r = partita("-q train --parts " + p1() +
                            " --epochs 1 --fanouts 4,3,2 --seed 7 --metrics-out " + metrics);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<nlohmann::json> records = records_of(metrics);
  ASSERT_EQ(records.size(), 3u);  // run, epoch 1, final
  const nlohmann::json& run = records[0];
  EXPECT_EQ(run["type"], "run");
  EXPECT_EQ(run["settings"]["layers"], "3");  // resolved from --fanouts
  EXPECT_EQ(run["settings"]["fanouts"], "4,3,2");
  EXPECT_EQ(run["settings"]["seed"], "7");
  EXPECT_EQ(run["settings"]["lr"], "0.003");  // a default, recorded too
  // The flags given, in the order of `train --help`.
  EXPECT_EQ(run["given"], nlohmann::json({"parts", "fanouts", "epochs", "seed", "metrics-out"}));
  EXPECT_EQ(run["ranks"], 1);
  EXPECT_EQ(run["resume"], false);
  EXPECT_FALSE(run["partita"].get<std::string>().empty());
  EXPECT_FALSE(run["torch"].get<std::string>().empty());
  EXPECT_EQ(records[1]["type"], "epoch");
  EXPECT_TRUE(records[1].contains("os_threads"));
  EXPECT_FALSE(records[1].contains("threads"));
  EXPECT_EQ(records[2]["type"], "final");

  // The file exists now: refused without --force (nothing written), replaced with it.
  CommandResult again = partita("-q train --parts " + p1() + " --epochs 1 --fanouts 4,3,2 " +
                                "--metrics-out " + metrics);
  EXPECT_EQ(again.exit_code, 2) << again.out;
  EXPECT_EQ(records_of(metrics).size(), 3u);
  CommandResult forced = partita("-q train --parts " + p1() + " --epochs 2 --fanouts 4,3,2 " +
                                 "--force --metrics-out " + metrics);
  ASSERT_EQ(forced.exit_code, 0) << forced.out;
  records = records_of(metrics);
  ASSERT_EQ(records.size(), 4u);  // run, epochs 1 and 2, final: the old records are gone
  EXPECT_EQ(records[0]["given"].back(), "force");
  EXPECT_EQ(records[3]["epochs"], 2);
}

TEST_F(FirstHour, ResumeAppendsARunRecordAndSaysWhenNothingIsLeftToTrain) {
  const std::string metrics = dir("resume.jsonl"), checkpoints = dir("ck");
  const std::string common = " --parts " + p1() + " --fanouts 3,3 --checkpoint-dir " + checkpoints +
                             " --metrics-out " + metrics;
  ASSERT_EQ(partita("-q train --epochs 2" + common).exit_code, 0);
  CommandResult more = partita("-q train --epochs 3 --resume" + common);
  ASSERT_EQ(more.exit_code, 0) << more.out;
  std::vector<nlohmann::json> records = records_of(metrics);
  // run, 2 epochs, final; then run (resume), epoch 3, final.
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[4]["type"], "run");
  EXPECT_EQ(records[4]["resume"], true);
  EXPECT_EQ(records[5]["epoch"], 3);
  EXPECT_EQ(records[6]["type"], "final");
  EXPECT_EQ(records[6]["resumed_epochs"], 2);

  CommandResult none = partita("train --epochs 2 --resume" + common);
  ASSERT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("warning: --epochs 2: the checkpoint has 3 epochs done, so no epoch "
                          "is trained; pass --epochs above 3 to train more"),
            std::string::npos)
      << none.out;
}

TEST_F(FirstHour, ThreadsZeroIsAutomaticInTrainAndSampleBench) {
  // -v prints the resolved counts: on a rank of up to 15 cores, one sampler thread.
  CommandResult train = partita("-v train --parts " + p1() +
                                " --epochs 1 --fanouts 3,3 "
                                "--torch-threads 1 --threads 0");
  ASSERT_EQ(train.exit_code, 0) << train.out;
  EXPECT_NE(train.out.find("1 torch threads, 1 sampler threads"), std::string::npos) << train.out;
  CommandResult bench = partita("-q sample-bench --parts " + p1() + " --batches 2");
  ASSERT_EQ(bench.exit_code, 0) << bench.out;
  const nlohmann::json j = nlohmann::json::parse(bench.out);
  EXPECT_GE(j["threads_per_rank"].get<int>(), 1);
  EXPECT_TRUE(j["seeds"].is_number_integer()) << j["seeds"];
  EXPECT_TRUE(j["sampled_edges"].is_number_integer()) << j["sampled_edges"];
}

// Scripts append overrides to their flags: a flag given twice keeps its last value, in every
// command, and --help says so. Only that value is checked; list values stay whole.
TEST_F(FirstHour, AFlagGivenTwiceKeepsItsLastValue) {
  const std::string metrics = dir("twice.jsonl");
  CommandResult r = partita("-q train --parts " + p1() +
                            " --epochs 1 --dropout 0.5 --fanouts 4,4,4 --seed 010 --dropout 0 "
                            "--fanouts 3,2 --seed 5 --metrics-out " +
                            metrics);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json run = records_of(metrics).at(0);
  EXPECT_EQ(run["settings"]["dropout"], "0");
  EXPECT_EQ(run["settings"]["fanouts"], "3,2");
  EXPECT_EQ(run["settings"]["layers"], "2");
  EXPECT_EQ(run["settings"]["seed"], "5");
  // Each once, in the order of `train --help`.
  EXPECT_EQ(run["given"],
            nlohmann::json({"parts", "dropout", "fanouts", "epochs", "seed", "metrics-out"}));
  for (const char* command :
       {"", "generate", "partition", "info", "sample-bench", "train", "infer", "launch"}) {
    CommandResult help = partita(std::string(command) + " --help");
    EXPECT_NE(help.out.find("A flag given more than once keeps its last value (--dropout 0.5"),
              std::string::npos)
        << command << ":\n"
        << help.out;
  }
}

TEST(Cli, HelpIsWrappedToTheTerminalWidth) {
  for (const char* command :
       {"", "generate", "partition", "info", "sample-bench", "train", "infer", "launch"}) {
    CommandResult r = partita(std::string(command) + " --help");
    ASSERT_EQ(r.exit_code, 0) << command;
    for (const std::string& line : lines_of(r.out)) {
      // Usage lines and a lone unbreakable word (a path, an example command) may be longer.
      if (line.rfind("Usage:", 0) == 0 ||
          line.find(' ', line.find_first_not_of(' ')) == std::string::npos)
        continue;
      EXPECT_LE(line.size(), 92u) << command << " --help: " << line;
    }
  }
}

}  // namespace
}  // namespace partita
