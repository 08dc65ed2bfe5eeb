#include "flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <string>

#include "launch_layout.h"
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

std::string integer_flag_error(const std::string& text, bool is_signed) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  bool all_digits = !digits.empty();
  for (char c : digits) all_digits = all_digits && c >= '0' && c <= '9';
  if (!all_digits) return "'" + text + "' is not a decimal integer";
  if (negative && !is_signed) return "'" + text + "' is negative; this flag takes a number >= 0";
  if (digits.size() > 1 && digits[0] == '0')
    return "'" + text + "' has a leading zero (octal and hex are not accepted); write it in " +
           "decimal without leading zeros";
  return "";
}

void require_decimal_integers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    std::string type = option->get_type_name();
    type = type.substr(0, type.find(':'));  // validators append ":<description>"
    if (type != "INT" && type != "UINT" && type != "N") continue;
    const bool is_signed = type != "UINT";
    // An empty description keeps --help's type column as it was.
    CLI::Validator decimal(
        [is_signed](std::string& value) { return integer_flag_error(value, is_signed); }, "");
    // A single-value flag given twice keeps its last value (make_command_line), and CLI11
    // converts only that one; check only it too (index 0: earlier ones get negative indices).
    if (option->get_items_expected_max() == 1) decimal.application_index(0);
    option->check(decimal);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    require_decimal_integers(*sub);
}

void check_timeout(double seconds) {
  PARTITA_CHECK(seconds > 0 && seconds <= kMaxTimeoutSeconds, UsageError,
                "--timeout: must be in (0, {:g}] seconds, got {}", kMaxTimeoutSeconds, seconds);
}

int resolve_sampler_threads(int flag, int cores_per_rank) {
  PARTITA_CHECK(flag >= 0 && flag <= 256, UsageError,
                "--threads: must be in [0, 256] (0: automatic), got {}", flag);
  return flag > 0 ? flag : rule_sampler_threads(cores_per_rank);
}

}  // namespace partita::cli
