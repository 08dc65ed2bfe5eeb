#pragma once
// The exit status of `partita`, the command line's alone: one table maps each kind of
// failure the runtime classifies (runtime/failure.h) to a process exit code.
//   0  success
//   1  bad input data, I/O failure, a peer lost or silent, out of memory, internal error
//   2  usage: bad flags (the same verdict on every rank of a job)
#include "partita/runtime/failure.h"

namespace partita::cli {

constexpr int kExitSuccess = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr int exit_code(runtime::FailureKind kind) {
  switch (kind) {
    case runtime::FailureKind::kUsage:
      return kExitUsage;
    case runtime::FailureKind::kIo:
    case runtime::FailureKind::kFormat:
    case runtime::FailureKind::kComm:
    case runtime::FailureKind::kTimeout:
    case runtime::FailureKind::kError:
    case runtime::FailureKind::kOutOfMemory:
    case runtime::FailureKind::kInternal:
      return kExitFailure;
  }
  return kExitFailure;
}

}  // namespace partita::cli
