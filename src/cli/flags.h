#pragma once
// Parsing of flag values shared by several commands.
#include <cstdint>
#include <string>
#include <vector>

namespace partita::cli {

// "15,10,5" -> {15, 10, 5}; each item a positive integer or -1 (all neighbors). Throws
// UsageError naming --fanouts on an empty list or a bad item.
std::vector<int64_t> parse_fanouts(const std::string& text);

}  // namespace partita::cli
