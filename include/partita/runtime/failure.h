#pragma once
// How a rank's failure is classified, and the set-up agreement that makes one rank's failure
// every rank's (DESIGN 11: failure is loud and bounded).
//
// FailureKind is the runtime's word for what went wrong; the command line maps each kind to
// a process exit code in one table (cli/exit_codes.h) and decides what a user sees. Nothing
// here prints or exits.
//
// agree_on_setup(coll, work): every rank runs `work`, then one allreduce over `coll` (with
// the collectives' deadline) tells every rank whether any failed. If one did, every rank
// throws SetupError: only the lowest failing rank reports it (it carries that rank's own
// exception as cause()), and every rank carries that failure's kind, so the whole job exits
// with one line and one code. Alone (one rank) an error propagates as it is.
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <utility>

#include "partita/comm/collectives.h"
#include "partita/core/error.h"

namespace partita::runtime {

enum class FailureKind : uint8_t {
  kUsage = 0,    // UsageError: bad flags or parameters (the same verdict on every rank)
  kIo,           // IoError: a file could not be read or written
  kFormat,       // FormatError: a file's content is not what its format says
  kComm,         // CommError: a transport or collective failed (a peer is gone)
  kTimeout,      // TimeoutError: a peer did not answer within the deadline
  kError,        // any other partita::Error
  kOutOfMemory,  // std::bad_alloc
  kInternal,     // anything else (e.g. torch's c10::Error): a bug
};
constexpr int kFailureKinds = 8;

// The kind of `e`: a SetupError's is the failure it agreed on (possibly another rank's).
FailureKind classify(const std::exception& e);
// "usage", "io", "format", "comm", "timeout", "error", "out-of-memory", "internal".
const char* failure_name(FailureKind kind);

// A set-up failure that every rank of the job knows about (thrown by agree_on_setup on
// every rank of a multi-rank job). report() is true on exactly one rank, the lowest failing
// one: cause() is then its own exception and what() that exception's what(); on the other
// ranks cause() is null and what() empty. kind() is the failure's kind on every rank.
// all_failed() says that every rank failed, usually with the same error (e.g. parts that
// do not match the ranks).
class SetupError : public Error {
 public:
  SetupError(std::exception_ptr cause, const std::string& message, FailureKind kind,
             int failed_rank, bool all_failed)
      : Error(message),
        cause_(std::move(cause)),
        kind_(kind),
        failed_rank_(failed_rank),
        all_failed_(all_failed) {}
  FailureKind kind() const { return kind_; }
  bool report() const { return cause_ != nullptr; }
  const std::exception_ptr& cause() const { return cause_; }
  int failed_rank() const { return failed_rank_; }  // the lowest failing rank of the group
  bool all_failed() const { return all_failed_; }

 private:
  std::exception_ptr cause_;
  FailureKind kind_;
  int failed_rank_;
  bool all_failed_;
};

// Runs `work` on this rank, then agrees with every rank of `coll` (above). Collective; used
// by Session's opening and by later set-up steps that read files on some ranks (e.g. a
// link trainer's edge files).
void agree_on_setup(Collectives& coll, const std::function<void()>& work);

}  // namespace partita::runtime
