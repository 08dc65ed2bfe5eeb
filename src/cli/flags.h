#pragma once
// Parsing of flag values shared by several commands.
#include <cstdint>
#include <string>
#include <vector>

namespace partita::cli {

// "15,10,5" -> {15, 10, 5}; each item a positive integer or -1 (all neighbors). Throws
// UsageError naming --fanouts on an empty list or a bad item.
std::vector<int64_t> parse_fanouts(const std::string& text);

// Longest --timeout accepted, in seconds (about 11.5 days): deadlines are computed in
// nanoseconds of a 64-bit clock, which `inf` or 1e12 s would overflow.
constexpr double kMaxTimeoutSeconds = 1e6;

// Throws UsageError naming --timeout unless 0 < seconds <= kMaxTimeoutSeconds (NaN and
// infinity are rejected).
void check_timeout(double seconds);

}  // namespace partita::cli
