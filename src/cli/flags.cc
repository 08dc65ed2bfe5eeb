#include "flags.h"

#include <sstream>

#include "partita/core/error.h"

namespace partita::cli {

std::vector<int64_t> parse_fanouts(const std::string& text) {
  std::vector<int64_t> fanouts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int64_t k = 0;
    try {
      k = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    PARTITA_CHECK(used == item.size() && !item.empty() && (k >= 1 || k == -1), UsageError,
                  "--fanouts: '{}' is not a fanout (a positive integer, or -1 for all)", item);
    fanouts.push_back(k);
  }
  PARTITA_CHECK(!fanouts.empty(), UsageError, "--fanouts: empty (e.g. 15,10,5)");
  return fanouts;
}

}  // namespace partita::cli
