#pragma once
// The global flags of `partita` (-q/--quiet, -v/--verbose), which may come before the
// command's name: shared by main(), the parse-error messages and `partita launch`.
#include <cstddef>
#include <string>
#include <vector>

namespace partita::cli {

inline bool is_global_flag(const std::string& word) {
  return word == "-q" || word == "--quiet" || word == "-v" || word == "--verbose";
}

// Index of the word that names the command in `words` (the arguments after the program
// name): the first that is not a global flag; words.size() when there is none.
inline size_t command_index(const std::vector<std::string>& words) {
  size_t i = 0;
  while (i < words.size() && is_global_flag(words[i])) ++i;
  return i;
}

}  // namespace partita::cli
