#pragma once
// The command line's side of a distributed command (train, infer, sample-bench): it runs
// the command's body on every rank through runtime::run_mpi_ranks (runtime/rank_job.h,
// which owns the MPI scope, the Session by role and the job's failure policy) and turns
// each rank's FailureReport into one `error: ...` line for the whole job and an exit code
// (exit_codes.h).
#include <string>

#include "partita/runtime/rank_job.h"

namespace partita::cli {

// Runs `body` on this rank of the MPI job and returns its exit code. Alone (one rank) an
// exception propagates to the caller (main prints it).
int run_rank(const runtime::RankBody& body);

// A usage error found before MPI started (main's flag checks), in a job of several ranks:
// every rank raises it in the job (run_mpi_ranks' usage agreement), then rank 0 prints
// `error: <message>` once and every rank exits with the usage code. Every rank waits for
// the others first: one that exited at once could make mpirun end the job, killing rank 0
// before its line was out (issue 37). When MPI cannot start, rank 0 prints it at once.
// Returns the usage exit code.
int report_usage_error_in_job(const std::string& message);

// What report_failure prints: `error: [rank R: ]<message>` on stderr when the report carries
// an error; returns the exit code of its kind. Exposed for tests.
int report_failure(const runtime::FailureReport& report);

}  // namespace partita::cli
