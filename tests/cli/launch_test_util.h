#pragma once
// Shared by the launch tests: launch_test.cc and launch_program_test.cc (the plan),
// launch_cli_test.cc (the built binary).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <typeinfo>

#include "launch_plan.h"
#include "partita/core/error.h"
#include "relay_filter.h"
#include "shell_quote.h"

namespace partita::cli {

// What launch adds across hosts so that mpirun notices a host it lost (docs/launch.md).
const std::string kKeepalive =
    "--mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 10 --mca "
    "oob_tcp_keepalive_probes 3 ";

// The plan tests' base: a partita binary, a home and a working directory.
inline constexpr const char* kBin = "/opt/partita/bin/partita";

inline LaunchFacts base_facts() {
  LaunchFacts facts;
  facts.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}};
  facts.partita_binary = kBin;
  facts.cwd = "/home/u/work";
  return facts;
}

inline LaunchOptions train_on(const std::string& parts) {
  LaunchOptions options;
  options.command = {"train", "--parts", parts, "--epochs", "3"};
  return options;
}

inline std::string line_of(const LaunchOptions& options, const LaunchFacts& facts) {
  return shell_join(plan_launch(options, facts).argv);
}

// `f` throws exactly an `E` whose message is `message`.
template <class E>
void expect_throw(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected: " << message;
  } catch (const std::exception& e) {
    EXPECT_EQ(typeid(e), typeid(E)) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
  }
}

inline void expect_plan_error_usage(const LaunchOptions& options, const LaunchFacts& facts,
                                    const std::string& message) {
  expect_throw<UsageError>([&] { plan_launch(options, facts); }, message);
}

}  // namespace partita::cli
