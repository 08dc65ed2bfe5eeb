#pragma once
// The Python package's words for library parameters: one table from a parameter's name in
// the library (core/parameter_error.h: `batch_size`, `timeout_s`) to the keyword of the
// partita API that sets it (batch_size=, timeout=), for the parameters Python exposes.
// module.cc's exception translation words every library error with it.
// tests/cli/check_parameter_names.py checks it against the names the library throws and the
// keywords the package declares.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace partita::python {

// The keyword for `parameter`, or nullopt when Python does not expose it. A ParameterNamer.
std::optional<std::string> keyword_name(std::string_view parameter);

// Every (parameter, keyword) pair of the table, sorted by parameter.
const std::vector<std::pair<std::string_view, std::string_view>>& keyword_table();

// `text` with its backquoted parameter names as keywords (rename_parameters).
std::string in_keyword_words(std::string_view text);

}  // namespace partita::python
