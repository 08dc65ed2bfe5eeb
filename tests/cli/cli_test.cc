// End-to-end tests of the `partita` executable: exit codes, the one-line `error:` contract
// and the generate -> partition -> info --verify path on synthetic and real data.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "helpers/test_paths.h"

namespace partita {
namespace {

using testing::CommandResult;
using testing::TempDir;

CommandResult partita(const std::string& args) { return testing::run_partita(args); }

// Lines of the output that start with "error:".
std::vector<std::string> error_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("error:", 0) == 0) lines.push_back(line);
  return lines;
}

// Asserts exit code `code`, exactly one `error:` line, containing every piece of `parts`.
void expect_error(const CommandResult& r, int code, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, code) << r.out;
  auto lines = error_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  for (const auto& p : parts) EXPECT_NE(lines[0].find(p), std::string::npos) << lines[0];
  EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
}

std::string cora() { return testing::shared_datasets_dir() + "/ogb-layout/cora"; }

TEST(Cli, HelpListsCommandsAndExitsZero) {
  CommandResult r = partita("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"generate", "partition", "info"})
    EXPECT_NE(r.out.find(cmd), std::string::npos) << r.out;
  CommandResult sub = partita("partition --help");
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("--balance-train"), std::string::npos);
}

TEST(Cli, NonsenseFlagsExitTwoWithOneErrorLine) {
  TempDir dir;
  expect_error(partita(""), 2, {"no command given"});
  expect_error(partita("frobnicate"), 2, {"frobnicate"});
  expect_error(partita("generate --nodes abc --out " + dir / "g"), 2, {"--nodes"});
  expect_error(partita("generate --nodes 0 --out " + dir / "g"), 2, {"--nodes"});
  expect_error(partita("generate --classes 1 --out " + dir / "g"), 2, {"--classes"});
  expect_error(partita("generate --avg-degree -3 --out " + dir / "g"), 2, {"--avg-degree"});
  expect_error(partita("generate --nodes 10"), 2, {"--out"});
  expect_error(partita("partition --dataset " + cora() + " --out " + dir / "p" + " --num-parts 0"),
               2, {"--num-parts"});
  expect_error(
      partita("partition --dataset " + cora() + " --out " + dir / "p" + " --method spectral"), 2,
      {"--method", "spectral"});
  expect_error(
      partita("partition --dataset " + cora() + " --out " + dir / "p" + " --num-parts 100000"), 2,
      {"--num-parts", "100000"});
}

TEST(Cli, MissingInputsExitOneNamingThePath) {
  TempDir dir;
  expect_error(partita("partition --dataset " + dir / "absent" + " --out " + dir / "p"), 1,
               {dir / "absent"});
  expect_error(partita("info " + dir / "absent"), 1, {dir / "absent"});
  std::filesystem::create_directories(dir / "empty");
  expect_error(partita("partition --dataset " + dir / "empty" + " --out " + dir / "p"), 1,
               {dir / "empty"});
}

TEST(Cli, GeneratePartitionVerifyOnSyntheticGraph) {
  TempDir dir;
  CommandResult g = partita(
      "--quiet generate --nodes 3000 --avg-degree 8 --feat-dim 8 "
      "--classes 4 --seed 3 --out " +
      dir / "ds");
  ASSERT_EQ(g.exit_code, 0) << g.out;
  for (const char* method : {"metis", "random"}) {
    std::string out = dir / (std::string("p-") + method);
    CommandResult p = partita("--quiet partition --dataset " + dir / "ds" +
                              " --num-parts 3 --balance-train --balance-edges --method " + method +
                              " --out " + out);
    ASSERT_EQ(p.exit_code, 0) << p.out;
    EXPECT_NE(p.out.find("edge cut"), std::string::npos) << p.out;
    CommandResult i = partita("info " + out + " --verify");
    EXPECT_EQ(i.exit_code, 0) << i.out;
    EXPECT_NE(i.out.find("verified"), std::string::npos) << i.out;
  }
}

TEST(Cli, CoraMetisBalanceTrainPassesVerify) {
  // The acceptance command.
  TempDir dir;
  CommandResult p = partita("partition --dataset " + cora() +
                            " --num-parts 2 --method metis --balance-train --out " + dir / "p");
  ASSERT_EQ(p.exit_code, 0) << p.out;
  CommandResult i = partita("info " + dir / "p" + " --verify");
  EXPECT_EQ(i.exit_code, 0) << i.out;
  EXPECT_NE(i.out.find("2708 nodes"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("10556 edges"), std::string::npos) << i.out;
}

TEST(Cli, VerifyRejectsAFlippedByte) {
  TempDir dir;
  ASSERT_EQ(partita("--quiet partition --dataset " + cora() + " --num-parts 2 --out " + dir / "p")
                .exit_code,
            0);
  std::string feat = dir / "p/part1/feat.npy";
  std::string bytes = testing::read_file(feat);
  bytes[bytes.size() / 2] ^= 0x10;
  testing::write_file(feat, bytes);
  expect_error(partita("info " + dir / "p" + " --verify"), 1, {"part1/feat.npy", "checksum"});
}

}  // namespace
}  // namespace partita

namespace partita {
namespace {

TEST(CliSampleBench, RunsAloneAndRejectsBadFlags) {
  TempDir dir;
  ASSERT_EQ(partita("-q generate --nodes 2000 --avg-degree 6 --feat-dim 4 --classes 3 --out " +
                    dir / "ds")
                .exit_code,
            0);
  ASSERT_EQ(partita("-q partition --dataset " + dir / "ds" + " --num-parts 1 --out " + dir / "p1")
                .exit_code,
            0);
  ASSERT_EQ(partita("-q partition --dataset " + dir / "ds" + " --num-parts 2 --out " + dir / "p2")
                .exit_code,
            0);
  CommandResult r =
      partita("sample-bench --parts " + dir / "p1" + " --fanouts 5,3 --batch-size 64 --batches 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* key :
       {"\"batches_per_s\"", "\"sampled_edges_per_s_per_core\"", "\"feature_gb_per_s_per_core\"",
        "\"hop_s_per_rank\"", "\"remote_requests\": 0,", "\"seeds\": 256,"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;

  const std::string p1 = " --parts " + dir / "p1";
  expect_error(partita("sample-bench" + p1 + " --fanouts ''"), 2, {"--fanouts"});
  expect_error(partita("sample-bench" + p1 + " --fanouts 5,x"), 2, {"--fanouts", "'x'"});
  expect_error(partita("sample-bench" + p1 + " --fanouts 5,0"), 2, {"--fanouts", "'0'"});
  expect_error(partita("sample-bench" + p1 + " --batch-size 0"), 2, {"--batch-size"});
  expect_error(partita("sample-bench" + p1 + " --timeout -1"), 2, {"--timeout"});
  expect_error(partita("sample-bench --parts " + dir / "p2"), 2,
               {"has 2 parts (one per rank) but this is a single process", "partita launch",
                "mpirun -np 2"});
  expect_error(partita("sample-bench --parts " + dir / "nope"), 1, {dir / "nope"});
}

}  // namespace
}  // namespace partita

namespace partita {
namespace {

// A typed (heterogeneous) partition: per-type features, --fanouts REL=N, and the flags that
// do not apply to one.
TEST(CliSampleBench, SamplesATypedPartition) {
  TempDir dir;
  ASSERT_EQ(partita("-q generate --hetero mag --nodes 3000 --feat-dim 8 --classes 4 --seed 1 "
                    "--out " +
                    dir / "mag")
                .exit_code,
            0);
  ASSERT_EQ(partita("-q partition --dataset " + dir / "mag" + " --num-parts 1 --out " + dir / "p1")
                .exit_code,
            0);
  const std::string p1 = " --parts " + dir / "p1";
  CommandResult r =
      partita("sample-bench" + p1 + " --fanouts cites=5:writes=0:3,2 --batch-size 32 --batches 3");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // Papers (the seeds) and the other types reached; only papers have features.
  for (const char* key : {"\"node_types\"", "\"paper\"", "\"author\"", "\"feat_dim\": 8",
                          "\"feat_dim\": 0", "\"relation_fanouts\"", "\"remote_requests\": 0"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
  EXPECT_EQ(r.out.find("\"feature_bytes\": 0,"), std::string::npos) << r.out;

  expect_error(partita("sample-bench" + p1 + " --fanouts nope=3,2"), 2,
               {"--fanouts", "unknown relation 'nope'", "rev_writes"});
  expect_error(partita("sample-bench" + p1 + " --fanouts cites=3,2"), 2,
               {"--fanouts", "gives no fanout"});
  // The hot-feature cache serves typed partitions (issue 28); with one part nothing is
  // remote, so it holds no row and every fetch stays local.
  r = partita("sample-bench" + p1 + " --fanouts 5,2 --batch-size 32 --batches 3 --cache-ratio 0.1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"remote_requests\": 0"), std::string::npos) << r.out;
}

// The integer figure `key` of sample-bench's JSON in `out`, or -1 when it is missing.
int64_t json_count(const std::string& out, const std::string& key) {
  const std::string field = "\"" + key + "\": ";
  const size_t at = out.find(field);
  return at == std::string::npos ? -1 : std::stoll(out.substr(at + field.size()));
}

// --temporal (train's flags, issue 41): each seed samples at its node_time, so on a graph
// whose edges and nodes carry times fewer edges are allowed and sampled than without it;
// recent and strict too. The device sampler (on the CPU) gives the host's blocks exactly, so
// the same counts. Its refusals are train's lines (corpus: sample_bench_temporal_*).
TEST(CliSampleBench, SamplesByTimeOnTheHostAndTheDevice) {
  TempDir dir;
  ASSERT_EQ(partita("-q generate --nodes 2000 --avg-degree 8 --feat-dim 4 --classes 3 --seed 1 "
                    "--edge-time --node-time --edge-weight --out " +
                    dir / "ds")
                .exit_code,
            0);
  ASSERT_EQ(partita("-q partition --dataset " + dir / "ds" + " --num-parts 1 --out " + dir / "p1")
                .exit_code,
            0);
  const std::string bench =
      "sample-bench --parts " + dir / "p1" + " --fanouts 5,3 --batch-size 64 --batches 4";
  auto figures = [&](const std::string& flags) {
    CommandResult r = partita(bench + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.out;
    return r.out;
  };
  const std::string plain = figures("");
  const int64_t all_edges = json_count(plain, "sampled_edges");
  ASSERT_GT(all_edges, 0) << plain;
  EXPECT_NE(plain.find("\"temporal\": false"), std::string::npos) << plain;
  // Without --temporal no strategy applies.
  EXPECT_NE(plain.find("\"temporal_strategy\": null"), std::string::npos) << plain;
  for (const std::string strategy : {"uniform", "recent"}) {
    const std::string flags = " --temporal --temporal-strategy " + strategy;
    const std::string host = figures(flags);
    const int64_t edges = json_count(host, "sampled_edges");
    EXPECT_GT(edges, 0) << flags << "\n" << host;
    EXPECT_LT(edges, all_edges) << flags << ": as many edges as without --temporal";
    for (const std::string& key :
         {std::string("\"temporal\": true"), "\"temporal_strategy\": \"" + strategy + "\"",
          std::string("\"temporal_strict\": false")})
      EXPECT_NE(host.find(key), std::string::npos) << key << "\n" << host;
    const std::string device = figures(flags + " --sample-on device");
    EXPECT_NE(device.find("\"sample_on\": \"device\""), std::string::npos) << device;
    EXPECT_EQ(json_count(device, "sampled_edges"), edges) << flags << " --sample-on device";
    EXPECT_EQ(json_count(device, "input_nodes"), json_count(host, "input_nodes")) << flags;
  }
  const std::string strict = figures(" --temporal --temporal-strict");
  EXPECT_NE(strict.find("\"temporal_strict\": true"), std::string::npos) << strict;
  EXPECT_LT(json_count(strict, "sampled_edges"), all_edges) << strict;

  // Edge times and a split by time, but no node times: no seed has a time (train's line).
  ASSERT_EQ(partita("-q generate --nodes 500 --avg-degree 4 --feat-dim 4 --classes 3 --seed 1 "
                    "--edge-time --out " +
                    dir / "et")
                .exit_code,
            0);
  ASSERT_EQ(partita("-q partition --dataset " + dir / "et" +
                    " --num-parts 1 --edge-split 0.1,0.1 --edge-split-by time --out " + dir / "ep")
                .exit_code,
            0);
  expect_error(partita("sample-bench --parts " + dir / "ep" + " --temporal --batches 2"), 2,
               {"--temporal: " + dir / "ep" + " holds no node times", "generate --node-time"});
}

TEST(CliSampleBench, RejectsRelationFanoutsOnAHomogeneousPartition) {
  TempDir dir;
  ASSERT_EQ(
      partita("-q generate --nodes 500 --avg-degree 4 --feat-dim 4 --classes 3 --out " + dir / "ds")
          .exit_code,
      0);
  ASSERT_EQ(partita("-q partition --dataset " + dir / "ds" + " --num-parts 1 --out " + dir / "p1")
                .exit_code,
            0);
  expect_error(partita("sample-bench --parts " + dir / "p1" + " --fanouts cites=3:2,2"), 2,
               {"--fanouts", "single edge type"});
}

}  // namespace
}  // namespace partita
