// What `partita launch` relays of mpirun's stderr (relay_filter.h).
#include "relay_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace partita::cli {
namespace {

// Open MPI 4.1.4's notes after a rank of `mpirun -np 2 partita train ...` exited with 2, as
// mpirun printed them here.
const std::string kPrimaryJob =
    "-------------------------------------------------------\n"
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    "-------------------------------------------------------\n";
const std::string kDetected =
    "--------------------------------------------------------------------------\n"
    "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    "the job to be terminated. The first process to do so was:\n"
    "\n"
    "  Process name: [[39393,1],0]\n"
    "  Exit code:    2\n"
    "--------------------------------------------------------------------------\n";
const std::string kSignal =
    "--------------------------------------------------------------------------\n"
    "mpirun noticed that process rank 1 with PID 0 on node a exited on signal 9 (Killed).\n"
    "--------------------------------------------------------------------------\n";

// All of `chunks` through one filter, then its finish().
std::string filtered(const std::vector<std::string>& chunks) {
  RelayFilter filter;
  std::string out;
  for (const std::string& chunk : chunks) out += filter.feed(chunk);
  return out + filter.finish();
}

TEST(RelayFilter, DropsTheNotesThatRestateARanksExitAfterItsErrorLine) {
  const std::string error = "error: --model: 'graphsage' is not one of sage, gcn, gat, rgcn\n";
  EXPECT_EQ(filtered({error + kPrimaryJob + kDetected}), error);
  // Byte by byte: the same.
  std::vector<std::string> bytes;
  for (char c : "launch: mpirun -np 2\n" + error + kPrimaryJob + kDetected)
    bytes.emplace_back(1, c);
  EXPECT_EQ(filtered(bytes), "launch: mpirun -np 2\n" + error);
  // The rank's line may come right after the notes: they go all the same.
  EXPECT_EQ(filtered({kPrimaryJob, kDetected, error}), error);
  EXPECT_TRUE(restates_nonzero_exit(kPrimaryJob));
  EXPECT_TRUE(restates_nonzero_exit(kDetected));
  EXPECT_FALSE(restates_nonzero_exit(kSignal));
}

TEST(RelayFilter, KeepsEverythingElse) {
  // No rank said why: mpirun's notes are all there is.
  EXPECT_EQ(filtered({kPrimaryJob + kDetected}), kPrimaryJob + kDetected);
  // Not followed by an error line: let out before the next line, in order.
  EXPECT_EQ(filtered({kPrimaryJob, "epoch=1\n", "error: late\n"}),
            kPrimaryJob + "epoch=1\nerror: late\n");
  // A rank killed by a signal, or any other block, stays, error line or not.
  const std::string error = "error: rank 0: rank 1 did not answer a ping within 5 s\n";
  EXPECT_EQ(filtered({error + kSignal + kDetected}), error + kSignal);
  // Short dash runs and text are not blocks.
  EXPECT_EQ(filtered({"----\nerror: x\n---- a\n"}), "----\nerror: x\n---- a\n");
  // A block that never closes (mpirun killed) is written at the end.
  EXPECT_EQ(filtered({error, "------------------------------\nhalf"}),
            error + "------------------------------\nhalf");
  // Too long for one of Open MPI's notes: passed on.
  std::string long_block = "------------------------------\n";
  for (int i = 0; i < 50; ++i) long_block += "line\n";
  EXPECT_EQ(filtered({error, long_block}), error + long_block);
}

TEST(RelayFilter, PassesPartialLinesAtOnce) {
  RelayFilter filter;
  // A progress bar redraws its line with '\r' and ends it only at the end.
  EXPECT_EQ(filter.feed("\r[#   ] 1/4"), "\r[#   ] 1/4");
  EXPECT_EQ(filter.feed("\r[##  ] 2/4"), "\r[##  ] 2/4");
  EXPECT_EQ(filter.feed("\n"), "\n");
  // What may still be a block's delimiter or an `error:` line waits for its end.
  EXPECT_EQ(filter.feed("----"), "");
  EXPECT_EQ(filter.feed(" not a delimiter\n"), "---- not a delimiter\n");
  EXPECT_EQ(filter.feed("err"), "");
  EXPECT_EQ(filter.feed("or: x"), "error: x");
  EXPECT_EQ(filter.feed("\n" + kPrimaryJob), "\n");
  EXPECT_EQ(filter.finish(), "");
}

// A rank killed by a signal prints nothing itself: launch names it in one error line.
TEST(RelayFilter, NamesARankKilledByASignal) {
  EXPECT_EQ(lost_rank_error("mpirun noticed that process rank 1 with PID 0 on node a exited on "
                            "signal 9 (Killed)."),
            "error: launch: rank 1 (node a) was killed by signal 9 (Killed); mpirun stopped the "
            "job");
  EXPECT_EQ(lost_rank_error("mpiexec noticed that process rank 12 with PID 7 on node n-3.x "
                            "exited on signal 11 (Segmentation fault)."),
            "error: launch: rank 12 (node n-3.x) was killed by signal 11 (Segmentation fault); "
            "mpirun stopped the job");
  EXPECT_EQ(lost_rank_error("mpirun detected that one or more processes exited with non-zero "
                            "status, thus causing"),
            "");
  EXPECT_EQ(lost_rank_error("error: rank 0: rank 1 did not answer a ping within 5 s"), "");
  RelayFilter filter;
  filter.feed("epoch=1\n" + kSignal);
  EXPECT_FALSE(filter.error_seen());
  filter.feed("error: rank 0: rank 1 did not answer\n");
  EXPECT_TRUE(filter.error_seen());
}

}  // namespace
}  // namespace partita::cli
