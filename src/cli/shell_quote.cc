#include "shell_quote.h"

#include <algorithm>
#include <cctype>

namespace partita::cli {

std::string shell_quote(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string("_@%+=:,./-").find(c) != std::string::npos;
  });
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) line += (line.empty() ? "" : " ") + shell_quote(word);
  return line;
}

}  // namespace partita::cli
