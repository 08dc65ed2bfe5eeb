// What a new user met in the second hour (issue 37, section 3), on the built `partita` binary:
// a stray label, `partition --out` over other files, a resume that asks for what the
// checkpoint knows, relation names as `partita info` prints them, HAN's defaults and the
// learned tables it writes. (Refusals, each with its exact message, are corpus cases:
// tests/corpus/cases/partition_out_*, *_label_stray_class, partition_num_classes_*.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "helpers/test_paths.h"
#include "partita/core/npy.h"

namespace partita {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::TempDir;

CommandResult partita(const std::string& args) { return testing::run_partita(args); }

// `partita <args>` under mpirun with `ranks` ranks.
CommandResult mpi_partita(int ranks, const std::string& args) {
  return testing::run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np " +
      std::to_string(ranks) + " --oversubscribe " + testing::partita_binary() + " " + args);
}

std::vector<std::string> lines_with(const std::string& text, const std::string& start) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(start, 0) == 0) lines.push_back(line);
  return lines;
}

std::vector<nlohmann::json> records_of(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A generated homogeneous dataset and a typed (mag-shaped) one, shared by the tests.
class SecondHour : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ASSERT_EQ(partita("-q generate --nodes 600 --avg-degree 5 --feat-dim 4 --classes 3 --seed 2 "
                      "--out " +
                      dir("ds"))
                  .exit_code,
              0);
    ASSERT_EQ(partita("-q generate --hetero mag --nodes 400 --feat-dim 4 --classes 3 --seed 1 "
                      "--out " +
                      dir("mag"))
                  .exit_code,
              0);
    CommandResult p =
        partita("-q partition --dataset " + dir("mag") + " --num-parts 1 --out " + dir("mag1"));
    ASSERT_EQ(p.exit_code, 0) << p.out;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string dir(const std::string& name) { return *dir_ / name; }

  static TempDir* dir_;
};
TempDir* SecondHour::dir_ = nullptr;

// 3.6: a partition replaced by one of fewer parts keeps no stale part; other files stay.
TEST_F(SecondHour, PartitionReplacesAPartitionAndItsPartsOnly) {
  const std::string out = dir("replaced");
  ASSERT_EQ(
      partita("-q partition --dataset " + dir("ds") + " --num-parts 3 --out " + out).exit_code, 0);
  testing::write_file(out + "/notes.txt", "mine\n");
  ASSERT_TRUE(fs::exists(out + "/part2"));
  CommandResult two =
      partita("-q partition --dataset " + dir("ds") + " --num-parts 2 --out " + out);
  ASSERT_EQ(two.exit_code, 0) << two.out;
  EXPECT_EQ(names_in(out), (std::vector<std::string>{"node_map.npy", "notes.txt", "part0", "part1",
                                                     "partita.json"}));
  CommandResult verify = partita("info --verify " + out);
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  // The same under mpirun (the distributed pipeline): 2 parts over 3 leave no part2/.
  ASSERT_EQ(
      partita("-q partition --dataset " + dir("ds") + " --num-parts 3 --out " + out).exit_code, 0);
  CommandResult mpi =
      mpi_partita(2, "-q partition --dataset " + dir("ds") + " --num-parts 2 --out " + out);
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  EXPECT_EQ(names_in(out), (std::vector<std::string>{"node_map.npy", "notes.txt", "part0", "part1",
                                                     "partita.json"}));
}

// 3.6: a non-empty directory that is no partition is written only with --force, its files
// left alone; refused, nothing is written into it.
TEST_F(SecondHour, PartitionWritesIntoOtherFilesOnlyWithForce) {
  const std::string out = dir("occupied");
  testing::write_file(out + "/notes.txt", "mine\n");
  CommandResult refused = partita("-q partition --dataset " + dir("ds") + " --out " + out);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_EQ(lines_with(refused.out, "error: --out: ").size(), 1u) << refused.out;
  EXPECT_EQ(names_in(out), (std::vector<std::string>{"notes.txt"}));
  CommandResult forced =
      partita("-q partition --dataset " + dir("ds") + " --out " + out + " --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.out;
  EXPECT_EQ(testing::read_file(out + "/notes.txt"), "mine\n");
  EXPECT_TRUE(fs::exists(out + "/partita.json"));
}

// 3.6: a failed run removes what it wrote: the directory it created, or (an existing one) the
// entries it added. Under mpirun the chunked layout's features are read while the parts are
// written, so a corrupt feature chunk fails after part0/ and part1/ exist.
TEST_F(SecondHour, AFailedPartitionRemovesWhatItWrote) {
  const std::string chunked = dir("chunked");
  ASSERT_EQ(partita("-q generate --layout chunked --nodes 2000 --avg-degree 4 --feat-dim 4 "
                    "--classes 3 --seed 1 --out " +
                    chunked)
                .exit_code,
            0);
  // Cut every feature chunk short (their names are the layout's business: find them).
  int cut = 0;
  for (const auto& entry : fs::recursive_directory_iterator(chunked)) {
    const std::string name = entry.path().string();
    if (entry.is_regular_file() && name.find("feat") != std::string::npos && name.size() > 4 &&
        name.compare(name.size() - 4, 4, ".npy") == 0) {
      fs::resize_file(entry.path(), fs::file_size(entry.path()) - 8);
      ++cut;
    }
  }
  ASSERT_GT(cut, 0) << "no feature chunk found under " << chunked;
  const std::string fresh = dir("failed-fresh");
  CommandResult a =
      mpi_partita(2, "-q partition --dataset " + chunked + " --num-parts 2 --out " + fresh);
  EXPECT_EQ(a.exit_code, 1) << a.out;
  EXPECT_FALSE(fs::exists(fresh)) << a.out;
  const std::string existing = dir("failed-existing");
  fs::create_directories(existing);
  CommandResult b =
      mpi_partita(2, "-q partition --dataset " + chunked + " --num-parts 2 --out " + existing);
  EXPECT_EQ(b.exit_code, 1) << b.out;
  EXPECT_TRUE(names_in(existing).empty()) << b.out;
  CommandResult c = partita("-q partition --dataset " + chunked + " --out " + fresh);
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_FALSE(fs::exists(fresh)) << c.out;
}

// 3.2: a stray label is refused; --num-classes states the count, in one process and under
// mpirun alike.
TEST_F(SecondHour, AStrayLabelNeedsNumClasses) {
  const std::string stray = dir("stray");
  fs::copy(dir("ds"), stray, fs::copy_options::recursive);
  std::vector<int64_t> labels = read_npy_vector<int64_t>(stray + "/label.npy");
  labels[17] = 100000;
  write_npy<int64_t>(stray + "/label.npy", labels);
  CommandResult refused = partita("-q partition --dataset " + stray + " --out " + dir("stray-p"));
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("--num-classes 100001"), std::string::npos) << refused.out;
  EXPECT_FALSE(fs::exists(dir("stray-p")));
  for (int ranks : {1, 2}) {
    const std::string out = dir("stray-p" + std::to_string(ranks));
    const std::string args =
        "-q partition --dataset " + stray + " --num-classes 100001 --out " + out;
    CommandResult r = ranks == 1 ? partita(args) : mpi_partita(ranks, args);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    CommandResult info = partita("info " + out);
    EXPECT_NE(info.out.find(", 100001 classes,"), std::string::npos) << info.out;
  }
}

// 3.3: --resume takes every flag it is not given from the checkpoint, refuses every changed
// model flag in one line, and says nothing of a raised --epochs.
TEST_F(SecondHour, ResumeTakesWhatTheCheckpointRecords) {
  const std::string parts = dir("p1"), ck = dir("ck-gcn");
  ASSERT_EQ(
      partita("-q partition --dataset " + dir("ds") + " --num-parts 1 --out " + parts).exit_code,
      0);
  ASSERT_EQ(partita("-q train --parts " + parts +
                    " --model gcn --hidden 32 --fanouts 4,4 --lr 0.01 --epochs 1 "
                    "--checkpoint-dir " +
                    ck)
                .exit_code,
            0);
  const std::string metrics = dir("resume.jsonl");
  CommandResult resumed = partita("train --progress off --parts " + parts + " --checkpoint-dir " +
                                  ck + " --resume --epochs 2 --metrics-out " + metrics);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("--resume: as recorded in " + ck +
                             "/checkpoint-000001.pt: --model gcn --hidden 32 --fanouts 4,4 --lr "
                             "0.01"),
            std::string::npos)
      << resumed.out;
  EXPECT_TRUE(lines_with(resumed.out, "warning:").empty()) << resumed.out;
  const nlohmann::json run = records_of(metrics).at(0);
  EXPECT_EQ(run["settings"]["model"], "gcn");
  EXPECT_EQ(run["settings"]["hidden"], "32");
  EXPECT_EQ(run["settings"]["epochs"], "2");
  EXPECT_EQ(run["given"], nlohmann::json({"parts", "epochs", "checkpoint-dir", "resume",
                                          "metrics-out", "progress"}));
  // Two model flags given with other values: one line names both.
  CommandResult refused = partita("-q train --parts " + parts + " --checkpoint-dir " + ck +
                                  " --resume --epochs 3 --model sage --hidden 16");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  const std::vector<std::string> errors = lines_with(refused.out, "error:");
  ASSERT_EQ(errors.size(), 1u) << refused.out;
  EXPECT_EQ(errors[0].rfind("error: --model: gcn in the checkpoint " + ck +
                                "/checkpoint-000002.pt, sage given; --hidden: 32 in it, 16 given; "
                                "a resumed run must build the same model",
                            0),
            0u)
      << errors[0];
}

// 3.5: the relation names `partita info` prints are the ones --fanouts takes (and the short
// names, where unambiguous).
TEST_F(SecondHour, FanoutsTakeTheRelationNamesOfInfo) {
  CommandResult info = partita("info " + dir("mag1"));
  ASSERT_EQ(info.exit_code, 0) << info.out;
  EXPECT_NE(info.out.find("  relation author___writes___paper: "), std::string::npos) << info.out;
  for (const char* fanouts : {"3,author___writes___paper=2:3", "3,writes=2:3"}) {
    CommandResult r =
        partita("-q train --parts " + dir("mag1") +
                " --model rgcn --hidden 8 --epochs 1 --max-steps 1 --fanouts " + fanouts);
    EXPECT_EQ(r.exit_code, 0) << fanouts << "\n" << r.out;
  }
}

// 3.9 and 3.3: --model han alone takes HAN's recipe (flags given win), records the metapaths
// the default resolved to, and resumes with those very metapaths given.
TEST_F(SecondHour, HanTakesItsRecipeAndRecordsItsMetapaths) {
  const std::string metrics = dir("han.jsonl"), ck = dir("ck-han");
  CommandResult r =
      partita("train --progress off --parts " + dir("mag1") +
              " --model han --epochs 1 --checkpoint-dir " + ck + " --metrics-out " + metrics);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json run = records_of(metrics).at(0);
  const nlohmann::json& s = run["settings"];
  EXPECT_EQ(s["layers"], "1");
  EXPECT_EQ(s["hidden"], "8");
  EXPECT_EQ(s["heads"], "8");
  EXPECT_EQ(s["fanouts"], "20");
  EXPECT_EQ(s["lr"], "0.01");
  EXPECT_EQ(s["dropout"], "0.6");
  EXPECT_EQ(s["attention-dropout"], "0.5");
  EXPECT_EQ(s["embed-init"], "0.1");
  const std::string metapaths = s["metapaths"];
  EXPECT_EQ(
      metapaths.rfind("paper___cites___paper,paper___rev_cites___paper,paper-author-paper", 0), 0u)
      << metapaths;
  EXPECT_NE(
      r.out.find("han: 5 metapaths: paper___cites___paper = paper-paper (paper___cites___paper), "),
      std::string::npos)
      << r.out;
  EXPECT_EQ(run["given"], nlohmann::json({"parts", "model", "epochs", "checkpoint-dir",
                                          "metrics-out", "progress"}));
  // The paper type has features: HAN reads no learned embedding, so no table is written.
  for (const std::string& name : names_in(ck))
    EXPECT_EQ(name.find("embeddings-"), std::string::npos) << name;
  // Resumed with the very metapaths the default gave, by name or by relations.
  CommandResult same =
      partita("-q train --parts " + dir("mag1") + " --model han --checkpoint-dir " + ck +
              " --resume --epochs 2 --metapaths " + metapaths);
  EXPECT_EQ(same.exit_code, 0) << same.out;
  CommandResult other =
      partita("-q train --parts " + dir("mag1") + " --model han --checkpoint-dir " + ck +
              " --resume --epochs 3 --metapaths paper-author-paper");
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_NE(other.out.find("error: --metapaths: " + metapaths + " in the checkpoint"),
            std::string::npos)
      << other.out;
  // A flag given wins over the recipe.
  const std::string given = dir("han16.jsonl");
  ASSERT_EQ(partita("-q train --parts " + dir("mag1") +
                    " --model han --hidden 16 --dropout 0.2 --epochs 1 --max-steps 1 "
                    "--metrics-out " +
                    given)
                .exit_code,
            0);
  const nlohmann::json g = records_of(given).at(0)["settings"];
  EXPECT_EQ(g["hidden"], "16");
  EXPECT_EQ(g["dropout"], "0.2");
  EXPECT_EQ(g["attention-dropout"], "-1");  // follows the --dropout given, as for every model
  EXPECT_EQ(g["heads"], "8");
  // --help says what --model han sets.
  CommandResult help = partita("train --help");
  EXPECT_NE(help.out.find("han's own defaults"), std::string::npos) << help.out;
}

// 3.10: on a featureless labelled type HAN keeps one learned table, for that type only (R-GCN
// one per featureless type), and resumes from it.
TEST_F(SecondHour, HanKeepsATableForTheTypeItReadsOnly) {
  const std::string ds = dir("mag-nofeat"), parts = dir("mag-nofeat1");
  fs::copy(dir("mag"), ds, fs::copy_options::recursive);
  fs::remove(ds + "/feat/paper.npy");
  ASSERT_EQ(partita("-q partition --dataset " + ds + " --num-parts 1 --out " + parts).exit_code, 0);
  // The count of tables in an embedding file: its header's u32 after the magic and version.
  auto tables_in = [](const std::string& path) {
    const std::string bytes = testing::read_file(path);
    EXPECT_EQ(bytes.compare(0, 8, "PTEMBFIL"), 0) << path;
    uint32_t count = 0;
    std::memcpy(&count, bytes.data() + 12, sizeof(count));
    return count;
  };
  for (const char* model : {"han", "rgcn"}) {
    const std::string ck = dir(std::string("ck-nofeat-") + model);
    CommandResult r =
        partita("-q train --parts " + parts + " --model " + model +
                " --hidden 8 --fanouts 3 --epochs 1 --max-steps 2 --checkpoint-dir " + ck);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(tables_in(ck + "/embeddings-000001-rank0.bin"), std::string(model) == "han" ? 1u : 4u)
        << model;
    CommandResult resumed = partita("-q train --parts " + parts + " --checkpoint-dir " + ck +
                                    " --resume --epochs 2 --max-steps 2");
    EXPECT_EQ(resumed.exit_code, 0) << model << "\n" << resumed.out;
  }
}

}  // namespace
}  // namespace partita
