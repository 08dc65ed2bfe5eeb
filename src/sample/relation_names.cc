// Relation names: see partita/sample/relation_names.h.
#include "partita/sample/relation_names.h"

namespace partita::sample {

std::vector<std::string> relation_names(const partition::TypedMeta& meta) {
  std::vector<std::string> names;
  for (int r = 0; r < meta.num_relations(); ++r) names.push_back(meta.triplet(r));
  return names;
}

std::string short_relation_name(const std::string& canonical) {
  const std::string sep = "___";
  const size_t first = canonical.find(sep);
  if (first == std::string::npos || first == 0) return "";
  const size_t middle = first + sep.size();
  const size_t second = canonical.find(sep, middle);
  if (second == std::string::npos || second == middle) return "";
  const size_t last = second + sep.size();
  // Exactly three non-empty parts: type and relation names hold no "___" (data/ checks).
  if (last >= canonical.size() || canonical.find(sep, last) != std::string::npos) return "";
  return canonical.substr(middle, second - middle);
}

std::vector<int> match_relation_name(const std::vector<std::string>& names,
                                     const std::string& name) {
  std::vector<int> found;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) found.push_back(static_cast<int>(i));
  if (!found.empty()) return found;
  for (size_t i = 0; i < names.size(); ++i)
    if (short_relation_name(names[i]) == name) found.push_back(static_cast<int>(i));
  return found;
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace partita::sample
