#pragma once
// A front end's table of words for library parameters (core/parameter_error.h): the CLI's
// flags (src/cli/flag_names.cc) and the Python package's keywords
// (python/src/keyword_names.cc) are each one constexpr array of ParameterWord, sorted by
// parameter with each name once (sorted_by_parameter, checked by a static_assert), looked
// up by binary search. Pure functions, no I/O.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace partita {

struct ParameterWord {
  std::string_view parameter;  // the library's name
  std::string_view word;       // the front end's (a flag, a keyword)
};

// True when `table` is sorted by parameter with each parameter once.
template <size_t N>
constexpr bool sorted_by_parameter(const ParameterWord (&table)[N]) {
  for (size_t i = 1; i < N; ++i)
    if (!(table[i - 1].parameter < table[i].parameter)) return false;
  return true;
}

// The word for `parameter` in a table sorted by parameter, or nullopt.
template <size_t N>
std::optional<std::string> find_word(const ParameterWord (&table)[N], std::string_view parameter) {
  const ParameterWord* end = std::end(table);
  const ParameterWord* it = std::lower_bound(
      std::begin(table), end, parameter,
      [](const ParameterWord& e, std::string_view name) { return e.parameter < name; });
  if (it == end || it->parameter != parameter) return std::nullopt;
  return std::string(it->word);
}

// The table as (parameter, word) pairs, in its order (for tests and checks).
template <size_t N>
std::vector<std::pair<std::string_view, std::string_view>> word_pairs(
    const ParameterWord (&table)[N]) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (const ParameterWord& e : table) out.emplace_back(e.parameter, e.word);
  return out;
}

}  // namespace partita
