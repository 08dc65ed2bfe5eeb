#pragma once
// Errors of the comm/ layer. Both derive from partita::Error directly, so a caller can tell
// a remote failure (CommError) from a peer that did not answer in time (TimeoutError).
#include "partita/core/error.h"

namespace partita {

// An MPI call that failed, a malformed or unexpected message, a remote handler that threw,
// or a comm object used wrongly (bad rank, call after shutdown). The message says what was
// being done and with which rank.
class CommError : public Error {
 public:
  using Error::Error;
};

// A remote wait that passed its deadline. The message names the rank(s) that did not answer
// and the timeout, e.g. "rank 3 did not answer within 60 s".
class TimeoutError : public Error {
 public:
  using Error::Error;
};

}  // namespace partita
