#pragma once
// The command line's words for library parameters: one table from a parameter's name in the
// library (core/parameter_error.h: `batch_size`, `cache_ratio`, `out_dir`) to the flag that
// sets it (--batch-size, --cache-ratio, --out), for every command. A name means the same flag
// in every command that has it. Every parameter a library error names must have an entry:
// tests/cli/check_parameter_names.py checks src/ against this table.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace partita::cli {

// The flag for `parameter` ("--batch-size"; for hits_k, "--metric hits@K"), or nullopt when
// the name is not a parameter of the command line. A ParameterNamer.
std::optional<std::string> flag_name(std::string_view parameter);

// Every (parameter, flag) pair of the table, sorted by parameter.
const std::vector<std::pair<std::string_view, std::string_view>>& flag_table();

// `text` with its backquoted parameter names as flags (rename_parameters with flag_name).
std::string in_flag_words(std::string_view text);

}  // namespace partita::cli
