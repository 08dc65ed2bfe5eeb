// Failure classification (runtime/failure.h) and the command line's table of exit codes
// (cli/exit_codes.h): each error type has its kind, and only usage errors exit with 2.
#include "partita/runtime/failure.h"

#include <gtest/gtest.h>

#include <new>
#include <set>
#include <stdexcept>
#include <string>

#include "exit_codes.h"
#include "partita/comm/errors.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/core/parameter_error.h"
#include "partita/store/single_process_error.h"

namespace partita::runtime {
namespace {

TEST(RuntimeFailure, ClassifiesEachErrorType) {
  EXPECT_EQ(classify(UsageError("u")), FailureKind::kUsage);
  EXPECT_EQ(classify(ParameterError("batch_size", "must be >= 1")), FailureKind::kUsage);
  EXPECT_EQ(classify(store::SingleProcessError("p: has 2 parts", 2)), FailureKind::kUsage);
  EXPECT_EQ(classify(IoError("i")), FailureKind::kIo);
  EXPECT_EQ(classify(FormatError("f")), FailureKind::kFormat);
  EXPECT_EQ(classify(CommError("c")), FailureKind::kComm);
  EXPECT_EQ(classify(TimeoutError("t")), FailureKind::kTimeout);
  EXPECT_EQ(classify(Error("e")), FailureKind::kError);
  EXPECT_EQ(classify(std::bad_alloc()), FailureKind::kOutOfMemory);
  EXPECT_EQ(classify(std::runtime_error("torch")), FailureKind::kInternal);
  // An agreed set-up failure carries the kind of the error agreed on, on every rank.
  EXPECT_EQ(classify(SetupError(nullptr, "", FailureKind::kFormat, 1, false)),
            FailureKind::kFormat);
  EXPECT_EQ(classify(SetupError(nullptr, "", FailureKind::kUsage, 0, true)), FailureKind::kUsage);
}

TEST(RuntimeFailure, EveryKindHasItsOwnNameAndAnExitCode) {
  std::set<std::string> names;
  for (int k = 0; k < kFailureKinds; ++k) {
    const auto kind = static_cast<FailureKind>(k);
    names.insert(failure_name(kind));
    EXPECT_EQ(cli::exit_code(kind),
              kind == FailureKind::kUsage ? cli::kExitUsage : cli::kExitFailure)
        << failure_name(kind);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kFailureKinds));
}

TEST(RuntimeFailure, AloneASetupErrorPropagatesAsItIs) {
  InProcessCollectiveGroup one(1);
  EXPECT_THROW(agree_on_setup(one.member(0), [] { throw FormatError("f"); }), FormatError);
  EXPECT_NO_THROW(agree_on_setup(one.member(0), [] {}));
}

}  // namespace
}  // namespace partita::runtime
