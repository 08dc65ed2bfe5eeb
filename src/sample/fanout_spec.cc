#include "partita/sample/fanout_spec.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "partita/core/parameter_error.h"
#include "partita/sample/relation_names.h"

namespace partita::sample {
namespace {

// The pieces of `text` between separators; "a,,b" and "a," have empty pieces.
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  for (size_t begin = 0;;) {
    const size_t end = text.find(separator, begin);
    pieces.push_back(text.substr(begin, end == std::string::npos ? end : end - begin));
    if (end == std::string::npos) return pieces;
    begin = end + 1;
  }
}

// The fanout `value` of `entry` (in hop `hop`, 1-based): an integer >= -1.
int64_t parse_value(const std::string& value, const std::string& entry, int hop) {
  int64_t k = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, k);
  PARTITA_CHECK_PARAM(!value.empty() && ec == std::errc() && ptr == end, "fanouts",
                      "'{}' in hop {}: '{}' is not a fanout (an integer k >= 0, or -1 for "
                      "all)",
                      entry, hop, value);
  PARTITA_CHECK_PARAM(k >= -1, "fanouts",
                      "'{}' in hop {}: fanout {} is invalid (use k >= 0, or -1 for all)", entry,
                      hop, k);
  return k;
}

HopFanoutSpec parse_hop(const std::string& text, int hop) {
  HopFanoutSpec spec;
  spec.text = text;
  PARTITA_CHECK_PARAM(!text.empty(), "fanouts", "hop {} is empty", hop);
  std::string fallback_text;
  for (const std::string& entry : split(text, ':')) {
    PARTITA_CHECK_PARAM(!entry.empty(), "fanouts", "hop {} ('{}') has an empty entry", hop, text);
    const size_t eq = entry.find('=');
    const std::string name = eq == std::string::npos ? "*" : entry.substr(0, eq);
    const int64_t k =
        parse_value(eq == std::string::npos ? entry : entry.substr(eq + 1), entry, hop);
    PARTITA_CHECK_PARAM(!name.empty(), "fanouts", "'{}' in hop {}: no relation name before '='",
                        entry, hop);
    if (name != "*") {
      spec.named.push_back({entry, name, k});
      continue;
    }
    PARTITA_CHECK_PARAM(!spec.fallback, "fanouts",
                        "'{}' in hop {}: a second default fanout (the hop already has '{}')", entry,
                        hop, fallback_text);
    spec.fallback = k;
    fallback_text = entry;
  }
  PARTITA_CHECK_PARAM(spec.per_relation() || *spec.fallback != 0, "fanouts",
                      "hop {} ('{}') samples no neighbor at all (use a positive integer, or "
                      "-1 for all)",
                      hop, text);
  return spec;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

FanoutSpec parse_fanout_spec(const std::string& text) {
  PARTITA_CHECK_PARAM(!text.empty(), "fanouts",
                      "empty (e.g. 15,10,5, or 25,cites=10:writes=5:20 per relation)");
  FanoutSpec spec;
  const std::vector<std::string> hops = split(text, ',');
  for (size_t h = 0; h < hops.size(); ++h) {
    spec.hops.push_back(parse_hop(hops[h], static_cast<int>(h) + 1));
  }
  return spec;
}

Fanouts resolve_fanouts(const FanoutSpec& spec, const std::vector<std::string>& relation_names) {
  const size_t num_relations = relation_names.size();
  Fanouts out;
  bool any_named = false;
  for (int h = 0; h < spec.num_hops(); ++h) {
    const HopFanoutSpec& hop = spec.hops[h];
    if (!hop.per_relation()) {
      out.hops.push_back(*hop.fallback);
      out.relations.emplace_back();
      continue;
    }
    any_named = true;
    PARTITA_CHECK_PARAM(num_relations > 0, "fanouts",
                        "'{}' in hop {} names a relation, but the graph has a single edge "
                        "type (give a plain number per hop)",
                        hop.named.front().text, h + 1);
    std::vector<int64_t> fanouts(num_relations, 0);
    std::vector<bool> named(num_relations, false);
    for (const HopFanoutSpec::Named& entry : hop.named) {
      const std::vector<int> found = match_relation_name(relation_names, entry.relation);
      PARTITA_CHECK_PARAM(!found.empty(), "fanouts",
                          "'{}' in hop {}: unknown relation '{}' (relations: {})", entry.text,
                          h + 1, entry.relation, joined(relation_names));
      if (found.size() > 1) {
        std::vector<std::string> candidates;
        for (int r : found) candidates.push_back(relation_names[static_cast<size_t>(r)]);
        throw ParameterError("fanouts",
                             fmt::format("'{}' in hop {}: relation name '{}' is ambiguous (any "
                                         "of {}): give the full name",
                                         entry.text, h + 1, entry.relation, joined(candidates)));
      }
      const size_t r = static_cast<size_t>(found.front());
      PARTITA_CHECK_PARAM(!named[r], "fanouts", "'{}' in hop {}: relation '{}' is named twice",
                          entry.text, h + 1, relation_names[r]);
      named[r] = true;
      fanouts[r] = entry.fanout;
    }
    std::vector<std::string> unnamed;
    for (size_t r = 0; r < num_relations; ++r) {
      if (!named[r]) unnamed.push_back(relation_names[r]);
    }
    PARTITA_CHECK_PARAM(unnamed.empty() || hop.fallback, "fanouts",
                        "hop {} ('{}') gives no fanout for {} (name them, or add a default "
                        "N or *=N)",
                        h + 1, hop.text, joined(unnamed));
    int64_t largest = 0;
    bool samples = false;
    for (size_t r = 0; r < num_relations; ++r) {
      if (!named[r]) fanouts[r] = *hop.fallback;
      largest = largest < 0 || fanouts[r] < 0 ? -1 : std::max(largest, fanouts[r]);
      samples |= fanouts[r] != 0;
    }
    PARTITA_CHECK_PARAM(samples, "fanouts",
                        "hop {} ('{}') samples no neighbor at all (every relation's fanout "
                        "is 0)",
                        h + 1, hop.text);
    out.hops.push_back(hop.fallback ? *hop.fallback : largest);
    out.relations.push_back(std::move(fanouts));
  }
  if (!any_named) out.relations.clear();
  return out;
}

Fanouts resolve_fanouts(const std::string& text, const std::vector<std::string>& relation_names) {
  return resolve_fanouts(parse_fanout_spec(text), relation_names);
}

Fanouts unresolved_fanouts(const FanoutSpec& spec) {
  Fanouts out;
  for (const HopFanoutSpec& hop : spec.hops)
    out.hops.push_back(hop.per_relation() ? -1 : hop.fallback.value_or(-1));
  return out;
}

}  // namespace partita::sample
