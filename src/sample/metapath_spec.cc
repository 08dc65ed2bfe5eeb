#include "partita/sample/metapath_spec.h"

#include <algorithm>

#include "partita/core/parameter_error.h"
#include "partita/sample/relation_names.h"

namespace partita::sample {
namespace {

using partition::TypedMeta;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  for (size_t begin = 0;;) {
    const size_t end = text.find(separator, begin);
    pieces.push_back(text.substr(begin, end == std::string::npos ? end : end - begin));
    if (end == std::string::npos) return pieces;
    begin = end + 1;
  }
}

std::string joined(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : separator) + name;
  return out;
}

std::string type_name(const TypedMeta& meta, int type) {
  return meta.node_types[static_cast<size_t>(type)].name;
}

// The canonical name (relation_names.h): what messages and default names print.
std::string relation_name(const TypedMeta& meta, int32_t relation) {
  return meta.triplet(relation);
}

std::vector<std::string> type_names(const TypedMeta& meta) {
  std::vector<std::string> names;
  for (const partition::TypedNodeType& t : meta.node_types) names.push_back(t.name);
  return names;
}

// The relation `name` gives (canonical or short, relation_names.h), -1 for none; an
// ambiguous short name is a ParameterError naming the metapath `text`.
int find_relation(const TypedMeta& meta, const std::string& name, const std::string& text) {
  const std::vector<std::string> names = relation_names(meta);
  const std::vector<int> found = match_relation_name(names, name);
  if (found.size() > 1) {
    std::vector<std::string> candidates;
    for (int r : found) candidates.push_back(names[static_cast<size_t>(r)]);
    throw ParameterError("metapaths",
                         fmt::format("'{}': relation name '{}' is ambiguous (any of {}): give "
                                     "the full name",
                                     text, name, joined(candidates)));
  }
  return found.empty() ? -1 : found.front();
}

// Relations a step from type `from` can take to reach type `to` (destination `from`,
// source `to`), in id order.
std::vector<int32_t> step_relations(const TypedMeta& meta, int from, int to) {
  std::vector<int32_t> out;
  for (int32_t r = 0; r < meta.num_relations(); ++r) {
    const partition::TypedRelation& rel = meta.relations[static_cast<size_t>(r)];
    if (rel.dst_type == from && rel.src_type == to) out.push_back(r);
  }
  return out;
}

std::string relation_text(const TypedMeta& meta, const std::vector<int32_t>& relations) {
  std::vector<std::string> names;
  for (int32_t r : relations) names.push_back(relation_name(meta, r));
  return joined(names, "-");
}

// The types a relation path walks through: the start, then the type each step reaches.
std::vector<std::string> path_types(const TypedMeta& meta, const std::vector<int32_t>& relations) {
  std::vector<std::string> types{
      type_name(meta, meta.relations[static_cast<size_t>(relations[0])].dst_type)};
  for (int32_t r : relations)
    types.push_back(type_name(meta, meta.relations[static_cast<size_t>(r)].src_type));
  return types;
}

std::vector<int32_t> resolve_types(const TypedMeta& meta, const std::string& text,
                                   const std::vector<std::string>& tokens) {
  PARTITA_CHECK_PARAM(tokens.size() >= 2, "metapaths",
                      "'{}' is a path through no relation (name at least two node types, "
                      "e.g. {}-X-{})",
                      text, text, text);
  std::vector<int32_t> relations;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const int from = meta.find_type(tokens[i]);
    const int to = meta.find_type(tokens[i + 1]);
    const std::vector<int32_t> found = step_relations(meta, from, to);
    if (found.empty()) {
      std::vector<std::string> reachable;
      for (const partition::TypedRelation& r : meta.relations)
        if (r.dst_type == from && std::find(reachable.begin(), reachable.end(),
                                            type_name(meta, r.src_type)) == reachable.end())
          reachable.push_back(type_name(meta, r.src_type));
      throw ParameterError("metapaths",
                           fmt::format("'{}': steps do not chain: no relation leads from {} to {} "
                                       "(in-edges of {} come from: {})",
                                       text, tokens[i], tokens[i + 1], tokens[i],
                                       reachable.empty() ? "no type" : joined(reachable)));
    }
    if (found.size() > 1) {
      std::vector<std::string> names;
      for (int32_t r : found) names.push_back(relation_name(meta, r));
      throw ParameterError(
          "metapaths", fmt::format("'{}': the step {}-{} is ambiguous, {} relations join "
                                   "these types ({}): name the metapath by its relations",
                                   text, tokens[i], tokens[i + 1], found.size(), joined(names)));
    }
    relations.push_back(found[0]);
  }
  return relations;
}

// " (relations are followed along in-edges, from the target outwards: did you mean 'R-S'?)"
// when the reverse of `relations` chains and starts and ends on the target; else "".
std::string reversal_hint(const TypedMeta& meta, const std::vector<int32_t>& relations) {
  const std::vector<int32_t> reversed(relations.rbegin(), relations.rend());
  for (size_t j = 1; j < reversed.size(); ++j)
    if (meta.relations[static_cast<size_t>(reversed[j])].dst_type !=
        meta.relations[static_cast<size_t>(reversed[j - 1])].src_type)
      return "";
  if (meta.relations[static_cast<size_t>(reversed.front())].dst_type != meta.target_type ||
      meta.relations[static_cast<size_t>(reversed.back())].src_type != meta.target_type)
    return "";
  return fmt::format(
      " (relations are followed along in-edges, from the target outwards: did you mean '{}'?)",
      relation_text(meta, reversed));
}

std::vector<int32_t> resolve_relations(const TypedMeta& meta, const std::string& text,
                                       const std::vector<std::string>& tokens) {
  std::vector<int32_t> relations;
  for (const std::string& token : tokens) relations.push_back(find_relation(meta, token, text));
  for (size_t i = 1; i < relations.size(); ++i) {
    const partition::TypedRelation& before = meta.relations[static_cast<size_t>(relations[i - 1])];
    const partition::TypedRelation& step = meta.relations[static_cast<size_t>(relations[i])];
    PARTITA_CHECK_PARAM(step.dst_type == before.src_type, "metapaths",
                        "'{}': steps do not chain: '{}' reaches {} but '{}' leaves from {}{}", text,
                        relation_name(meta, relations[i - 1]), type_name(meta, before.src_type),
                        relation_name(meta, relations[i]), type_name(meta, step.dst_type),
                        reversal_hint(meta, relations));
  }
  return relations;
}

Metapath resolve_one(const TypedMeta& meta, const std::string& text) {
  PARTITA_CHECK_PARAM(!text.empty(), "metapaths",
                      "a metapath is empty (e.g. paper-author-paper,paper-subject-paper)");
  const std::vector<std::string> tokens = split(text, '-');
  size_t types = 0, relations = 0;
  for (const std::string& token : tokens) {
    PARTITA_CHECK_PARAM(!token.empty(), "metapaths", "'{}' has an empty step", text);
    const bool is_type = meta.find_type(token) >= 0;
    const bool is_relation = find_relation(meta, token, text) >= 0;
    PARTITA_CHECK_PARAM(is_type || is_relation, "metapaths",
                        "'{}': '{}' is neither a node type ({}) nor a relation ({})", text, token,
                        joined(type_names(meta)), joined(relation_names(meta)));
    types += is_type ? 1 : 0;
    relations += is_relation ? 1 : 0;
  }
  const bool by_types = types == tokens.size();
  PARTITA_CHECK_PARAM(by_types || relations == tokens.size(), "metapaths",
                      "'{}' mixes node types and relations (name only types, e.g. "
                      "paper-author-paper, or only relations)",
                      text);
  Metapath m;
  m.name = text;
  m.relations =
      by_types ? resolve_types(meta, text, tokens) : resolve_relations(meta, text, tokens);
  const std::vector<std::string> walked = path_types(meta, m.relations);
  PARTITA_CHECK_PARAM(walked.front() == walked.back(), "metapaths",
                      "'{}' ({}) starts on {} but ends on {}: a metapath ends on the type it "
                      "starts from",
                      text, joined(walked, "-"), walked.front(), walked.back());
  m.node_type = meta.relations[static_cast<size_t>(m.relations[0])].dst_type;
  PARTITA_CHECK_PARAM(m.node_type == meta.target_type, "metapaths",
                      "'{}' starts on {}, but the labelled node type is {}{}", text, walked.front(),
                      type_name(meta, meta.target_type),
                      by_types ? "" : reversal_hint(meta, m.relations));
  return m;
}

}  // namespace

// Appends to *out every metapath through the node types `types` (target first and last):
// one per combination of the relations of its steps, named by its types when every step
// has one relation, else by its relations.
void append_paths_through(const TypedMeta& meta, const std::vector<int>& types,
                          std::vector<Metapath>* out) {
  std::vector<std::vector<int32_t>> steps;
  bool unique = true;
  for (size_t i = 0; i + 1 < types.size(); ++i) {
    steps.push_back(step_relations(meta, types[i], types[i + 1]));
    if (steps.back().empty()) return;
    unique = unique && steps.back().size() == 1;
  }
  std::vector<size_t> pick(steps.size(), 0);  // an odometer over the steps' relations
  while (true) {
    Metapath m;
    for (size_t i = 0; i < steps.size(); ++i) m.relations.push_back(steps[i][pick[i]]);
    m.node_type = types.front();
    m.name = unique ? joined(path_types(meta, m.relations), "-") : relation_text(meta, m.relations);
    out->push_back(std::move(m));
    size_t i = steps.size();
    while (i > 0 && ++pick[i - 1] == steps[i - 1].size()) pick[--i] = 0;
    if (i == 0) return;
  }
}

std::vector<Metapath> default_metapaths(const TypedMeta& meta) {
  const int target = meta.target_type;
  std::vector<Metapath> out;
  for (int32_t r = 0; r < meta.num_relations(); ++r) {  // the target's own relations
    const partition::TypedRelation& relation = meta.relations[static_cast<size_t>(r)];
    if (relation.src_type == target && relation.dst_type == target)
      out.push_back(Metapath{relation_name(meta, r), {r}, target});
  }
  for (int x = 0; x < meta.num_types(); ++x)
    if (x != target) append_paths_through(meta, {target, x, target}, &out);
  for (int x = 0; x < meta.num_types(); ++x) {
    if (x == target || step_relations(meta, target, x).empty()) continue;
    for (int y = 0; y < meta.num_types(); ++y)
      if (y != target && y != x) append_paths_through(meta, {target, x, y, x, target}, &out);
  }
  PARTITA_CHECK_PARAM(!out.empty(), "metapaths",
                      "the schema has no default metapath {}-X-{} (no relation leads from the "
                      "labelled type to another type and back; was it partitioned without "
                      "reverse relations?): name the metapaths",
                      type_name(meta, target), type_name(meta, target));
  return out;
}

std::vector<Metapath> resolve_metapaths(const std::string& text, const TypedMeta& meta) {
  PARTITA_CHECK_PARAM(meta.num_types() > 0, "metapaths", "need a typed (heterogeneous) partition");
  if (text.empty()) return default_metapaths(meta);
  std::vector<Metapath> out;
  for (const std::string& piece : split(text, ',')) {
    Metapath m = resolve_one(meta, piece);
    for (const Metapath& earlier : out)
      PARTITA_CHECK_PARAM(earlier.relations != m.relations, "metapaths",
                          "'{}' and '{}' are the same metapath ({})", earlier.name, m.name,
                          relation_text(meta, m.relations));
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> metapath_names(const std::vector<Metapath>& metapaths) {
  std::vector<std::string> names;
  for (const Metapath& m : metapaths) names.push_back(m.name);
  return names;
}

std::string describe_metapath(const Metapath& metapath, const TypedMeta& meta) {
  return fmt::format("{} ({})", joined(path_types(meta, metapath.relations), "-"),
                     relation_text(meta, metapath.relations));
}

}  // namespace partita::sample
