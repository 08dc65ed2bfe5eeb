#pragma once
// Including this silences Partita's info logs (the partitioner's progress and tables) in a
// gtest executable: a global environment, registered once however many files include it.
#include <gtest/gtest.h>

#include "partita/core/log.h"

namespace partita::testing {

class QuietLogs : public ::testing::Environment {
 public:
  void SetUp() override { set_log_level(LogLevel::kQuiet); }
};

inline const auto* const kQuietLogs = ::testing::AddGlobalTestEnvironment(new QuietLogs);

}  // namespace partita::testing
