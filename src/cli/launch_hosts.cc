#include "launch_hosts.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "partita/core/error.h"

namespace partita::cli {

std::optional<int> parse_positive(const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || v < 1 || v > 1'000'000) return std::nullopt;
  return static_cast<int>(v);
}

std::vector<std::string> parse_hosts(const std::string& list) {
  std::vector<std::string> hosts;
  std::stringstream in(list);
  std::string host;
  while (std::getline(in, host, ',')) hosts.push_back(host);
  if (!list.empty() && list.back() == ',') hosts.emplace_back();  // getline drops it
  for (const std::string& h : hosts) {
    PARTITA_CHECK(!h.empty(), UsageError, "--hosts: empty host name in '{}'", list);
    PARTITA_CHECK(h.find(':') == std::string::npos, UsageError,
                  "--hosts: '{}': give bare host names and the ranks per host with "
                  "--procs-per-host",
                  h);
    PARTITA_CHECK(std::none_of(h.begin(), h.end(),
                               [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                  UsageError, "--hosts: '{}' is not a host name", h);
    PARTITA_CHECK(std::count(hosts.begin(), hosts.end(), h) == 1, UsageError,
                  "--hosts: '{}' listed twice", h);
  }
  return hosts;
}

std::vector<HostfileEntry> parse_hostfile(const std::string& text, const std::string& path) {
  std::vector<HostfileEntry> entries;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    HostfileEntry entry;
    entry.line = number;
    if (!(words >> entry.host)) continue;  // blank or comment
    for (std::string field; words >> field;) {
      if (field.rfind("slots=", 0) != 0) continue;  // max_slots=, etc.: Open MPI's business
      std::optional<int> slots = parse_positive(field.substr(6));
      PARTITA_CHECK(slots.has_value(), FormatError, "{}:{}: bad slots value '{}'", path, number,
                    field.substr(6));
      entry.slots = *slots;
    }
    for (const HostfileEntry& e : entries)
      PARTITA_CHECK(e.host != entry.host, FormatError, "{}:{}: host '{}' already listed on line {}",
                    path, number, entry.host, e.line);
    entries.push_back(entry);
  }
  PARTITA_CHECK(!entries.empty(), FormatError, "{}: lists no hosts", path);
  return entries;
}

}  // namespace partita::cli
