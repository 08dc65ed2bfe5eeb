#include "rank_main.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "error_text.h"
#include "exit_codes.h"
#include "launcher_env.h"
#include "partita/core/error.h"

namespace partita::cli {
namespace {

// error_text (error_text.h) of an exception in flight: the library's words as flags.
std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return error_text(e);
  } catch (...) {
    return "internal: unknown exception";
  }
}

}  // namespace

int report_failure(const runtime::FailureReport& report) {
  if (report.error != nullptr) {
    const std::string message = message_of(report.error);
    const std::string line = report.rank >= 0
                                 ? fmt::format("error: rank {}: {}\n", report.rank, message)
                                 : fmt::format("error: {}\n", message);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }
  return exit_code(report.kind);
}

int report_usage_error_in_job(const std::string& message) {
  const auto print = [&](int rank) {
    const std::string line = rank >= 0 ? fmt::format("error: rank {}: {}\n", rank, message)
                                       : fmt::format("error: {}\n", message);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  };
  try {
    return runtime::run_mpi_ranks([&](runtime::RankContext&) -> int { throw UsageError(message); },
                                  [&](const runtime::FailureReport& report) {
                                    if (report.error != nullptr) print(report.rank);
                                    return kExitUsage;
                                  });
  } catch (const std::exception&) {
    // MPI did not start (or the job is of one rank after all): as the job's rank 0.
    if (launcher_rank() == 0) print(-1);
    return kExitUsage;
  }
}

int run_rank(const runtime::RankBody& body) {
  return runtime::run_mpi_ranks(body, &report_failure);
}

}  // namespace partita::cli
