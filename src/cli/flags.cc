#include "flags.h"

#include <cctype>
#include <string>

#include "partita/core/error.h"

namespace partita::cli {

std::vector<int64_t> parse_fanouts(const std::string& text) {
  PARTITA_CHECK(!text.empty(), UsageError, "--fanouts: empty (e.g. 15,10,5)");
  std::vector<int64_t> fanouts;
  // Every comma separates two items: "5,3," has an empty third item (getline would drop it).
  for (size_t begin = 0; begin <= text.size();) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    begin = end + 1;
    size_t used = 0;
    int64_t k = 0;
    try {
      if (!item.empty() && !std::isspace(static_cast<unsigned char>(item[0])))
        k = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    PARTITA_CHECK(used == item.size() && !item.empty() && (k >= 1 || k == -1), UsageError,
                  "--fanouts: '{}' is not a fanout (a positive integer, or -1 for all)", item);
    fanouts.push_back(k);
  }
  return fanouts;
}

void check_timeout(double seconds) {
  PARTITA_CHECK(seconds > 0 && seconds <= kMaxTimeoutSeconds, UsageError,
                "--timeout: must be in (0, {:g}] seconds, got {}", kMaxTimeoutSeconds, seconds);
}

}  // namespace partita::cli
