#include "partita/runtime/failure.h"

#include <climits>
#include <new>

#include "partita/comm/errors.h"

namespace partita::runtime {

FailureKind classify(const std::exception& e) {
  if (const auto* setup = dynamic_cast<const SetupError*>(&e)) return setup->kind();
  if (dynamic_cast<const UsageError*>(&e) != nullptr) return FailureKind::kUsage;
  if (dynamic_cast<const IoError*>(&e) != nullptr) return FailureKind::kIo;
  if (dynamic_cast<const FormatError*>(&e) != nullptr) return FailureKind::kFormat;
  if (dynamic_cast<const TimeoutError*>(&e) != nullptr) return FailureKind::kTimeout;
  if (dynamic_cast<const CommError*>(&e) != nullptr) return FailureKind::kComm;
  if (dynamic_cast<const Error*>(&e) != nullptr) return FailureKind::kError;
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return FailureKind::kOutOfMemory;
  return FailureKind::kInternal;
}

const char* failure_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::kUsage:
      return "usage";
    case FailureKind::kIo:
      return "io";
    case FailureKind::kFormat:
      return "format";
    case FailureKind::kComm:
      return "comm";
    case FailureKind::kTimeout:
      return "timeout";
    case FailureKind::kError:
      return "error";
    case FailureKind::kOutOfMemory:
      return "out-of-memory";
    case FailureKind::kInternal:
    default:
      return "internal";
  }
}

// One allreduce of (lowest failing rank and its kind, whether every rank failed).
void agree_on_setup(Collectives& coll, const std::function<void()>& work) {
  std::exception_ptr cause;
  std::string message;
  FailureKind kind = FailureKind::kInternal;
  try {
    work();
  } catch (const std::exception& e) {
    if (coll.size() == 1) throw;
    cause = std::current_exception();
    message = e.what();
    kind = classify(e);
  }
  if (coll.size() == 1) return;
  // [0]: rank * kFailureKinds + kind of a failing rank, INT_MAX if none; [1]: 1 if this
  // rank failed.
  const bool failed = cause != nullptr;
  int32_t agreed[2] = {failed ? coll.rank() * kFailureKinds + static_cast<int>(kind) : INT_MAX,
                       failed ? 1 : 0};
  coll.allreduce(agreed, 2, ReduceOp::kMin);
  if (agreed[0] == INT_MAX) return;
  const int lowest = agreed[0] / kFailureKinds;
  const bool mine = coll.rank() == lowest;
  throw SetupError(mine ? cause : nullptr, mine ? message : std::string(),
                   static_cast<FailureKind>(agreed[0] % kFailureKinds), lowest, agreed[1] == 1);
}

}  // namespace partita::runtime
