#pragma once
// Parsing of flag values shared by several commands.
#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace partita::cli {

// Integer flags: CLI11 converts with strtoll/strtoull in base 0, so "010" is octal (8),
// "0x10" hex, and strtoull turns "-1" into 2^64-1 for an unsigned flag. Returns "" when
// `text` is a plain decimal integer (digits, a leading '-' only if `is_signed`, no leading
// zero unless the number is 0), else why not, e.g. "'010' has a leading zero ...".
std::string integer_flag_error(const std::string& text, bool is_signed);

// Adds the integer_flag_error check to every integer option of `app` and of all its
// subcommands, recursively: options whose CLI11 type name is INT or UINT (what add_option
// gives integer variables and vectors of them) or "N" (our name for a count). Call once,
// after all options are registered. A refused value is a CLI::ValidationError
// ("--seed: ..."), which main() prints as one `error:` line with exit code 2. Of a
// single-value flag given twice only the value kept (the last) is checked.
void require_decimal_integers(CLI::App& app);

// "15,10,5" -> {15, 10, 5}; each item a positive integer or -1 (all neighbors). Throws
// UsageError naming --fanouts on an empty list or a bad item.
std::vector<int64_t> parse_fanouts(const std::string& text);

// --threads means the same in every command: threads of the command's own work per
// process, 0 (the default) automatic. generate and partition use all cores; train and
// sample-bench sample on rule_sampler_threads (launch_layout.h): one sampler thread per 8
// cores of the rank, at least 1 and at most 4 (the model's kernels, or the fetches, need the
// rest); launch passes the same values, so its printed layout is the one that runs.

// --threads of train and sample-bench: `flag` itself when > 0, else rule_sampler_threads.
// Throws UsageError naming --threads unless 0 <= flag <= 256.
int resolve_sampler_threads(int flag, int cores_per_rank);

// Longest --timeout accepted, in seconds (about 11.5 days): deadlines are computed in
// nanoseconds of a 64-bit clock, which `inf` or 1e12 s would overflow.
constexpr double kMaxTimeoutSeconds = 1e6;

// Throws UsageError naming --timeout unless 0 < seconds <= kMaxTimeoutSeconds (NaN and
// infinity are rejected).
void check_timeout(double seconds);

}  // namespace partita::cli
