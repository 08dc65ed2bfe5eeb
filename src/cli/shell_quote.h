#pragma once
// POSIX shell quoting, for the one line `partita launch` prints (--dry-run) or logs: a word a
// shell reads back as the same argv entry. Pure.
#include <string>
#include <vector>

namespace partita::cli {

// Words made only of safe characters stay bare, others are single-quoted ('' for the empty
// word, ' as '\'').
std::string shell_quote(const std::string& word);
// The words quoted and joined by single spaces: one line a shell runs as `argv`.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace partita::cli
