// The rank lifecycle and the job's failure policy: see partita/runtime/rank_job.h.
#include "partita/runtime/rank_job.h"

#include <exception>

#include "partita/core/parameter_error.h"

namespace partita::runtime {
namespace {

// JobWorld::abort does not return (an in-process world throws); the compiler cannot see
// that through a virtual call.
[[noreturn]] void abort_job(JobWorld& world, int code) {
  world.abort(code);
  std::terminate();
}

}  // namespace

int RankContext::run_session(const SessionOptions& options,
                             const std::function<int(Session&)>& work) {
  PARTITA_CHECK(!used_, Error, "internal: rank {} built its session twice", world_.rank());
  used_ = true;
  const JobWorld::Links links = world_.connect(options);
  Session session(links.transport, links.world, options, links.trainers);
  // Server-client mode: a server serves until every trainer is done, and runs no work.
  if (session.role() == Role::kServer) {
    session.finish();
    return 0;
  }
  int status = 0;
  try {
    status = work(session);
  } catch (const ParameterError& e) {
    // Relayed as text: the parameter stays marked (core/parameter_error.h), so that the
    // server's front end words it as the trainer's would.
    session.fail_with_usage_error("`" + e.parameter() + "`: " + e.detail());
    throw;
  } catch (const UsageError& e) {
    session.fail_with_usage_error(e.what());
    throw;
  }
  session.finish();
  return status;
}

int run_ranks(JobWorld& world, const RankBody& body, const ReportFailure& report) {
  RankContext rank(world);
  if (world.size() == 1) return body(rank);
  try {
    return body(rank);
  } catch (const SetupError& e) {
    // Every rank knows; the lowest failing one reports its own error.
    FailureReport r;
    r.kind = e.kind();
    r.error = e.cause();
    r.rank = e.all_failed() ? -1 : world.rank();
    return report(r);
  } catch (const UsageError&) {
    FailureReport r;
    r.kind = FailureKind::kUsage;
    if (!world.all_ranks_raise(kUsageAgreementSeconds)) {
      r.error = std::current_exception();
      r.rank = world.rank();
      r.abort = true;
      abort_job(world, report(r));
    }
    if (world.rank() == 0) r.error = std::current_exception();
    return report(r);
  } catch (const std::exception& e) {
    FailureReport r;
    r.kind = classify(e);
    r.error = std::current_exception();
    r.rank = world.rank();
    r.abort = true;
    abort_job(world, report(r));
  }
}

}  // namespace partita::runtime
