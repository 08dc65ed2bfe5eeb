#include "rank_main.h"

#include <fmt/format.h>

#include <cstdio>
#include <new>
#include <string>

#include "exit_codes.h"

namespace partita::cli {
namespace {

// The one-line message of `e` (as main() prints it): torch's errors carry a backtrace.
std::string message_of(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory";
  if (dynamic_cast<const Error*>(&e) != nullptr) return e.what();
  const std::string what = e.what();
  return "internal: " + what.substr(0, what.find('\n'));
}

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return message_of(e);
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

int run_rank(const runtime::RankBody& body) {
  return runtime::run_mpi_ranks(body, &report_failure);
}

}  // namespace partita::cli
