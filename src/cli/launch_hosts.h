#pragma once
// `partita launch`: the parsers of where ranks run, pure: a --hosts list and the text of an
// Open MPI hostfile. Planning (launch_plan.h) chooses between them and Slurm.
#include <optional>
#include <string>
#include <vector>

namespace partita::cli {

// One host line of an Open MPI hostfile.
struct HostfileEntry {
  std::string host;
  int slots = 0;  // slots=N on the line; 0: not given (Open MPI then counts cores)
  int line = 0;   // 1-based line number, for messages
};

// "h1,h2" -> {"h1", "h2"}. Throws UsageError naming --hosts on an empty or malformed name
// or a host listed twice.
std::vector<std::string> parse_hosts(const std::string& list);

// Open MPI hostfile text: one host per line, optional `slots=N` and other key=value
// fields, `#` comments. Throws FormatError "<path>:<line>: ..." or "<path>: lists no hosts".
std::vector<HostfileEntry> parse_hostfile(const std::string& text, const std::string& path);

// A positive count, at most 1,000,000 (slots=N, a Slurm node count, a thread flag's value);
// nullopt for anything else.
std::optional<int> parse_positive(const std::string& text);

}  // namespace partita::cli
