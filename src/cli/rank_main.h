#pragma once
// The exit policy of a distributed command (train, sample-bench): how an error on one rank
// becomes one `error: ...` line and an exit status for the whole job.
#include <functional>

#include "partita/comm/mpi_scope.h"

namespace partita::cli {

// How long a rank that raised a UsageError waits for the other ranks to raise one too.
constexpr double kUsageAgreementSeconds = 10;

// Runs `body` on this rank and returns the exit code. Alone (one rank) an exception
// propagates to the caller (main prints it). In a job of several ranks, one `error: ...`
// line is printed for the whole job:
//  - runtime::SetupError: the reporting rank prints it; every rank returns its code.
//  - UsageError: flag checks give the same verdict on every rank, so each rank that raises
//    one waits (at most kUsageAgreementSeconds) for all ranks to raise one too. If they all
//    do, the lowest rank prints its message and every rank returns 2. Otherwise (a rank
//    raised it alone) it is handled like any other error:
//  - any other exception: the rank prints `error: rank R: ...` and aborts the job
//    (MPI_Abort) so that peers do not hang.
// A clean return of 1 or 2 on every rank lets MPI finish without an abort banner.
int run_rank(MpiScope& mpi, const std::function<int()>& body);

}  // namespace partita::cli
