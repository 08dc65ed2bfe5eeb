#include "relay_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "launch_plan.h"

namespace partita::cli {
namespace {

// Open MPI's delimiters are 74 (or 55) dashes; a shorter run may be anyone's output.
constexpr size_t kMinDashes = 20;
// Open MPI's banners are a dozen lines; a longer "block" is something else, passed on.
constexpr size_t kMaxBlockLines = 40;

bool is_dash_line(const std::string& line) {
  return line.size() >= kMinDashes &&
         std::all_of(line.begin(), line.end(), [](char c) { return c == '-'; });
}

// Whether `partial`, the start of a line, may still turn out to be a block delimiter or an
// `error:` line: then it is held until the line is complete.
bool undecided(const std::string& partial) {
  const std::string error = "error:";
  if (partial.size() < error.size() && error.compare(0, partial.size(), partial) == 0) return true;
  return std::all_of(partial.begin(), partial.end(), [](char c) { return c == '-'; });
}

// `text` with every run of white space made one space.
std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return out;
}

// "rank N" mentions in `line`, in order.
std::vector<int> mentioned_ranks(const std::string& line) {
  std::vector<int> ranks;
  for (size_t at = line.find("rank "); at != std::string::npos; at = line.find("rank ", at + 5)) {
    size_t end = at + 5;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    if (end == at + 5 || end - at > 14) continue;
    ranks.push_back(std::stoi(line.substr(at + 5, end - at - 5)));
  }
  return ranks;
}

}  // namespace

bool restates_nonzero_exit(const std::string& block) {
  const std::string text = squeezed(block);
  // Open MPI 4.1's two notes (orte/mca/errmgr help texts), as printed, in any wrapping.
  const bool primary = text.find("Primary job terminated normally, but") != std::string::npos &&
                       text.find("returned a non-zero exit code") != std::string::npos;
  const bool detected =
      text.find("mpirun detected that one or more processes exited with non-zero status") !=
      std::string::npos;
  return primary || detected;
}

std::string lost_rank_error(const std::string& line) {
  const std::string head = " noticed that process rank ";  // mpirun's, or mpiexec's
  const size_t at = line.find(head);
  if (at == std::string::npos) return "";
  const size_t rank_at = at + head.size();
  size_t rank_end = rank_at;
  while (rank_end < line.size() && std::isdigit(static_cast<unsigned char>(line[rank_end])))
    ++rank_end;
  const size_t signal_at = line.find(" exited on signal ", rank_end);
  if (rank_end == rank_at || signal_at == std::string::npos) return "";
  std::string node;
  const size_t node_at = line.find(" on node ", rank_end);
  if (node_at != std::string::npos && node_at < signal_at)
    node = " (node " + line.substr(node_at + 9, signal_at - node_at - 9) + ")";
  std::string how = line.substr(signal_at + 18);
  while (!how.empty() &&
         (how.back() == '.' || std::isspace(static_cast<unsigned char>(how.back()))))
    how.pop_back();
  return "error: launch: rank " + line.substr(rank_at, rank_end - rank_at) + node +
         " was killed by signal " + how + "; mpirun stopped the job";
}

std::string RelayFilter::feed(std::string_view data) {
  std::string out;
  while (!data.empty()) {
    const size_t eol = data.find('\n');
    if (eol == std::string_view::npos) {
      line_.append(data);
      break;
    }
    line_.append(data.substr(0, eol));
    data.remove_prefix(eol + 1);
    std::string line;
    line.swap(line_);
    complete_line(std::move(line), out);
  }
  // The rest of a line (a progress bar redrawn with '\r' never ends one) goes out now,
  // unless it may still be a delimiter or an `error:` line.
  if (!line_.empty() && !in_block_ && (line_passed_ || !undecided(line_))) {
    if (!line_passed_) {
      line_is_error_ = line_.rfind("error:", 0) == 0;
      if (!line_is_error_) out += held_;
      held_.clear();
      error_seen_ = error_seen_ || line_is_error_;
    }
    out += line_;
    line_.clear();
    line_passed_ = true;
  }
  return out;
}

void RelayFilter::complete_line(std::string line, std::string& out) {
  const bool passed = line_passed_;
  line_passed_ = false;
  if (in_block_) {
    block_ += line + "\n";
    ++block_lines_;
    if (is_dash_line(line)) {
      close_block(out);
    } else if (block_lines_ > kMaxBlockLines) {  // not one of Open MPI's notes
      out += held_ + block_;
      held_.clear();
      block_.clear();
      in_block_ = false;
    }
    return;
  }
  if (!passed && is_dash_line(line)) {
    in_block_ = true;
    block_ = line + "\n";
    block_lines_ = 1;
    return;
  }
  const bool is_error = passed ? line_is_error_ : line.rfind("error:", 0) == 0;
  if (!passed) {
    // A rank's own line right after a restating banner: the banner goes; any other line
    // first lets it out, in order.
    if (!is_error) out += held_;
    held_.clear();
  }
  error_seen_ = error_seen_ || is_error;
  out += line + "\n";
}

void RelayFilter::close_block(std::string& out) {
  in_block_ = false;
  if (restates_nonzero_exit(block_)) {
    if (!error_seen_) held_ += block_;  // a rank's line may still come
  } else {
    out += held_ + block_;
    held_.clear();
  }
  block_.clear();
}

std::string RelayFilter::finish() {
  std::string out = held_ + block_ + line_;
  held_.clear();
  block_.clear();
  line_.clear();
  in_block_ = false;
  line_passed_ = false;
  return out;
}

bool replaces_failure_line(const std::string& kept, const std::string& line) {
  return kept.empty() || (line.rfind("error:", 0) == 0 && kept.rfind("error:", 0) != 0);
}

bool is_failure_line(const std::string& line) {
  // A rank's own report (the CLI's `error: ...`), and Open MPI's teardown banners.
  static const char* const kMarkers[] = {
      "mpirun noticed that process rank",
      "mpirun detected that one or more processes exited with non-zero status",
      "ORTE has lost communication with a remote daemon",
      "An ORTE daemon has unexpectedly failed",
      "MPI_ABORT was invoked",
  };
  if (line.rfind("error:", 0) == 0) return true;
  for (const char* marker : kMarkers)
    if (line.find(marker) != std::string::npos) return true;
  return false;
}

std::string stuck_message(const LaunchPlan& plan, const std::string& first_failure,
                          double waited_s) {
  const std::string head =
      first_failure.empty()
          ? fmt::format("launch: mpirun did not exit {:.0f} s after it was asked to stop", waited_s)
          : fmt::format("launch: the job failed but mpirun had not exited {:.0f} s later",
                        waited_s);
  std::vector<int> ranks = mentioned_ranks(first_failure);
  std::vector<std::string> lost;
  // The first mention is the reporting rank ("error: rank 0: rank 1 did not answer").
  const std::string reporter = !ranks.empty() && ranks[0] < static_cast<int>(plan.rank_hosts.size())
                                   ? plan.rank_hosts[ranks[0]]
                                   : std::string();
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= static_cast<int>(plan.rank_hosts.size())) continue;
    const std::string& host = plan.rank_hosts[ranks[i]];
    const std::string entry = fmt::format("{} (rank {})", host, ranks[i]);
    if (host != reporter && std::find(lost.begin(), lost.end(), entry) == lost.end())
      lost.push_back(entry);
  }
  std::string hosts;
  for (const std::string& entry : lost) hosts += (hosts.empty() ? "" : ", ") + entry;
  return head +
         (hosts.empty() ? std::string("; it could not reach a host")
                        : "; it could not reach host " + hosts) +
         "; killed mpirun and the processes it started here";
}

}  // namespace partita::cli
