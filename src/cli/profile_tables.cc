// train --profile's tables: see profile_tables.h.
#include "profile_tables.h"

#include <fmt/format.h>

#include <algorithm>

namespace partita::cli {
namespace {

double per_step_ms(double seconds, int64_t steps) {
  return steps > 0 ? 1e3 * seconds / static_cast<double>(steps) : 0.0;
}

// "training thread: ops_per_step=231.0 host_syncs_per_step=1.00 all_ops_per_step=840.0
// (aten::nonzero 1.00)".
std::string op_count_line(const char* who, const train::OpCounts& c, int64_t steps) {
  const auto per_step = [&](int64_t n) {
    return steps > 0 ? static_cast<double>(n) / static_cast<double>(steps) : 0.0;
  };
  std::string line =
      fmt::format("{}: ops_per_step={:.1f} host_syncs_per_step={:.2f} all_ops_per_step={:.1f}", who,
                  per_step(c.ops), per_step(c.host_syncs), per_step(c.all_ops));
  std::string by_op;
  for (const auto& [name, n] : c.syncs_by_op)
    by_op += fmt::format("{}{} {:.2f}", by_op.empty() ? "" : ", ", name, per_step(n));
  if (!by_op.empty()) line += " (" + by_op + ")";
  return line + "\n";
}

}  // namespace

std::string profile_tables(const train::StepProfileReport& r, const std::string& title, int top_n) {
  std::string out =
      fmt::format("profile: {}; {} steps, {:.3f} s of step wall time ({:.1f} ms/step)\n", title,
                  r.steps, r.step_s, per_step_ms(r.step_s, r.steps));
  out += fmt::format("{:<34} {:>10} {:>7} {:>7} {:>9}\n", "stage", "total_s", "share", "calls",
                     "ms/step");
  double sum = 0, share = 0;
  bool overlapped_note = false;
  for (const train::StageRow& s : r.stages) {
    if (s.overlapped && !overlapped_note) {
      out += fmt::format("{:<34} {:>10.3f} {:>6.1f}% {:>7}\n", "total (the steps' wall time)", sum,
                         100 * share, r.steps);
      out += "overlapped with the steps (sampler threads; not in the total):\n";
      overlapped_note = true;
    }
    if (!s.overlapped) {
      sum += s.seconds;
      share += s.share;
    }
    out += fmt::format("{:<34} {:>10.3f} {:>6.1f}% {:>7} {:>9.2f}\n", s.name, s.seconds,
                       100 * s.share, s.calls, per_step_ms(s.seconds, r.steps));
  }
  out += fmt::format(
      "\nlargest ops by self time (the training thread's; self excludes nested ops, an op's "
      "intra-op threads count as its time)\n");
  out += fmt::format("{:<40} {:>9} {:>7} {:>12} {:>8} {:>9}\n", "op", "self_s", "share",
                     "inclusive_s", "calls", "us/call");
  const size_t shown = std::min(r.ops.size(), static_cast<size_t>(std::max(top_n, 0)));
  double rest = 0;
  int64_t rest_calls = 0;
  for (size_t i = shown; i < r.ops.size(); ++i) {
    rest += r.ops[i].self_s;
    rest_calls += r.ops[i].calls;
  }
  for (size_t i = 0; i < shown; ++i) {
    const train::OpRow& o = r.ops[i];
    std::string name = o.name.size() > 40 ? o.name.substr(0, 37) + "..." : o.name;
    out += fmt::format("{:<40} {:>9.3f} {:>6.1f}% {:>12.3f} {:>8} {:>9.1f}\n", name, o.self_s,
                       100 * o.share, o.inclusive_s, o.calls,
                       o.calls > 0 ? 1e6 * o.self_s / static_cast<double>(o.calls) : 0.0);
  }
  const double total = r.step_s > 0 ? r.step_s : 1.0;
  if (r.ops.size() > shown)
    out += fmt::format("{:<40} {:>9.3f} {:>6.1f}% {:>12} {:>8}\n",
                       fmt::format("({} other ops)", r.ops.size() - shown), rest,
                       100 * rest / total, "", rest_calls);
  out += fmt::format("{:<40} {:>9.3f} {:>6.1f}%\n", "(in no op: batch wait, C++ between ops)",
                     r.outside_ops_s, 100 * r.outside_ops_s / total);
  out += "\n" + op_count_line("training thread", r.training, r.steps);
  out += op_count_line("loader threads", r.loader, r.steps);
  if (!r.device_stages.empty()) {
    out +=
        fmt::format("\ndevice time per stage (events on the compute stream; {} steps)\n", r.steps);
    out += fmt::format("{:<34} {:>10} {:>7} {:>9}\n", "stage", "device_s", "share", "ms/step");
    double sum = 0;
    for (const train::StageRow& s : r.device_stages) {
      sum += s.seconds;
      out += fmt::format("{:<34} {:>10.3f} {:>6.1f}% {:>9.2f}\n", s.name, s.seconds, 100 * s.share,
                         per_step_ms(s.seconds, r.steps));
    }
    out += fmt::format("{:<34} {:>10.3f} {:>6.1f}% {:>9.2f}\n", "total", sum, 100.0,
                       per_step_ms(sum, r.steps));
  }
  return out;
}

}  // namespace partita::cli
