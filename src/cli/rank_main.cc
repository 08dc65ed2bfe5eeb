#include "rank_main.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "error_text.h"
#include "partita/runtime/mpi_rank.h"

namespace partita::cli {
namespace {

void print_error(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

int run_rank(MpiScope& mpi, const std::function<int()>& body) {
  if (mpi.size() == 1) return body();
  runtime::UsageAgreement agreement(mpi);
  try {
    return body();
  } catch (const runtime::SetupError& e) {
    if (e.report())
      print_error(e.all_failed() ? error_text(e)
                                 : fmt::format("rank {}: {}", mpi.rank(), error_text(e)));
    return e.exit_code();
  } catch (const UsageError& e) {
    int lowest = mpi.rank();
    if (!agreement.all_ranks_raise(kUsageAgreementSeconds, &lowest)) {
      print_error(fmt::format("rank {}: {}", mpi.rank(), error_text(e)));
      runtime::abort_job(mpi, runtime::exit_code_of(e));
    }
    if (lowest == mpi.rank()) print_error(error_text(e));
    return runtime::exit_code_of(e);
  } catch (const std::exception& e) {
    print_error(fmt::format("rank {}: {}", mpi.rank(), error_text(e)));
    runtime::abort_job(mpi, runtime::exit_code_of(e));
  }
}

}  // namespace partita::cli
