#pragma once
// The text of `train --profile` (train/step_profile.h): the step's stages, then the
// largest torch ops by self time. Pure: the caller prints it (rank 0, to stderr).
#include <string>

#include "partita/train/step_profile.h"

namespace partita::cli {

// Ops shown in the op table unless told otherwise.
constexpr int kProfileTopOps = 15;

// Both tables of `report`, headed by `title` (which rank, how many threads): stage rows with
// total seconds, share of the steps' wall time, calls, and ms per step; then the top_n ops
// by self time with inclusive time, share and calls, and a line for the time in no op; then
// the op counts, one line each for the training thread and the loader threads:
//   training thread: ops_per_step=<top-level aten ops / steps>
//   host_syncs_per_step=<syncs / steps> all_ops_per_step=<aten ops, nested included / steps>
//   (the sync ops by name, per step, when there are any); and, when the device time was
//   measured (a GPU), its table by stage.
std::string profile_tables(const train::StepProfileReport& report, const std::string& title,
                           int top_n = kProfileTopOps);

}  // namespace partita::cli
