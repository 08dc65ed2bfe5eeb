// Typed partitions' metadata: TypedMeta's look-ups and the "hetero" object of partita.json.
#include <algorithm>
#include <numeric>

#include "json_reader.h"

namespace partita::partition {

std::string type_feature_name(const std::string& type_name) { return "feat_" + type_name; }

bool valid_type_name(const std::string& name) {
  constexpr const char* kAllowed =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  return !name.empty() && name.size() <= 128 &&
         name.find_first_not_of(kAllowed) == std::string::npos;
}

int TypedMeta::type_of(int part, int64_t gid) const {
  const std::vector<int64_t>& s = type_starts[part];
  // The last start <= gid; empty types before it share its value, so take the last of them.
  return static_cast<int>(std::upper_bound(s.begin(), s.end() - 1, gid) - s.begin()) - 1;
}

int TypedMeta::type_of_original(int64_t original) const {
  auto it = std::upper_bound(node_types.begin(), node_types.end(), original,
                             [](int64_t v, const TypedNodeType& t) { return v < t.offset; });
  return static_cast<int>(it - node_types.begin()) - 1;
}

int TypedMeta::find_type(const std::string& name) const {
  for (int t = 0; t < num_types(); ++t)
    if (node_types[t].name == name) return t;
  return -1;
}

std::string TypedMeta::triplet(int relation) const {
  const TypedRelation& r = relations[relation];
  return node_types[r.src_type].name + "___" + r.name + "___" + node_types[r.dst_type].name;
}

Json typed_meta_json(const TypedMeta& typed) {
  Json types = Json::array();
  for (const TypedNodeType& t : typed.node_types)
    types.push_back(Json{{"name", t.name}, {"count", t.count}, {"feat_dim", t.feat_dim}});
  Json relations = Json::array();
  for (const TypedRelation& r : typed.relations)
    relations.push_back(Json{{"name", r.name},
                             {"src", typed.node_types[r.src_type].name},
                             {"dst", typed.node_types[r.dst_type].name},
                             {"num_edges", r.num_edges},
                             {"reverse", r.reverse}});
  return Json{{"node_types", types},
              {"relations", relations},
              {"target_type", typed.node_types[typed.target_type].name},
              {"reverse_relations", typed.reverse_relations},
              {"type_starts", typed.type_starts}};
}

TypedMeta parse_typed_meta(const Reader& rd, const Json& hetero) {
  TypedMeta m;
  const Json& types = rd.typed(hetero, "node_types", /*array=*/true, "hetero.");
  if (types.empty()) rd.fail("key 'hetero.node_types' is empty");
  int64_t offset = 0;
  for (size_t t = 0; t < types.size(); ++t) {
    const std::string where = fmt::format("hetero.node_types[{}].", t);
    rd.fail_if(!types[t].is_object(), "hetero.node_types[{}] must be an object", t);
    TypedNodeType nt;
    nt.name = rd.string(types[t], "name", where);
    rd.fail_if(!valid_type_name(nt.name), "key '{}name' = '{}' is not 1 to 128 of [A-Za-z0-9_-]",
               where, nt.name.substr(0, 128));
    rd.fail_if(m.find_type(nt.name) >= 0, "key '{}name': type '{}' appears twice", where, nt.name);
    nt.count = rd.integer(types[t], "count", where, 1);
    nt.feat_dim = rd.integer(types[t], "feat_dim", where);
    nt.offset = offset;
    if (__builtin_add_overflow(offset, nt.count, &offset))
      rd.fail("hetero.node_types: counts overflow");
    m.node_types.push_back(std::move(nt));
  }
  auto type_named = [&](const Json& obj, const std::string& key, const std::string& where) {
    const std::string name = rd.string(obj, key, where);
    const int t = m.find_type(name);
    rd.fail_if(t < 0, "key '{}{}' names unknown type '{}'", where, key, name);
    return t;
  };
  const Json& relations = rd.typed(hetero, "relations", /*array=*/true, "hetero.");
  if (relations.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    rd.fail("key 'hetero.relations' has too many entries");
  for (size_t r = 0; r < relations.size(); ++r) {
    const std::string where = fmt::format("hetero.relations[{}].", r);
    rd.fail_if(!relations[r].is_object(), "hetero.relations[{}] must be an object", r);
    TypedRelation& rel = m.relations.emplace_back();
    rel.name = rd.string(relations[r], "name", where);
    rd.fail_if(rel.name.empty(), "key '{}name' is empty", where);
    rel.src_type = type_named(relations[r], "src", where);
    rel.dst_type = type_named(relations[r], "dst", where);
    rel.num_edges = rd.integer(relations[r], "num_edges", where);
    rel.reverse = rd.boolean(relations[r], "reverse", where);
  }
  m.target_type = type_named(hetero, "target_type", "hetero.");
  m.reverse_relations = rd.boolean(hetero, "reverse_relations", "hetero.");
  const Json& starts = rd.typed(hetero, "type_starts", /*array=*/true, "hetero.");
  for (size_t p = 0; p < starts.size(); ++p) {
    rd.fail_if(!starts[p].is_array(), "hetero.type_starts[{}] must be an array", p);
    std::vector<int64_t>& row = m.type_starts.emplace_back();
    for (size_t t = 0; t < starts[p].size(); ++t) {
      const Json& v = starts[p][t];
      rd.fail_if(!v.is_number_integer() || v.get<int64_t>() < 0,
                 "hetero.type_starts[{}][{}] must be a non-negative integer", p, t);
      row.push_back(v.get<int64_t>());
    }
  }
  return m;
}

void check_typed_meta(const Reader& rd, const PartitionMeta& meta) {
  const TypedMeta& m = *meta.typed;
  const int types = m.num_types();
  const TypedNodeType& last = m.node_types.back();
  rd.fail_if(last.offset + last.count != meta.num_nodes,
             "hetero.node_types: counts sum to {}, expected num_nodes = {}",
             last.offset + last.count, meta.num_nodes);
  int64_t edges = 0;
  for (const TypedRelation& r : m.relations)
    if (__builtin_add_overflow(edges, r.num_edges, &edges))
      rd.fail("hetero.relations: num_edges overflow");
  rd.fail_if(edges != meta.num_edges,
             "hetero.relations: num_edges sum to {}, expected num_edges = {}", edges,
             meta.num_edges);
  rd.fail_if(meta.feat_dim != 0,
             "key 'feat_dim' = {} must be 0 in a typed partition (features are per type)",
             meta.feat_dim);
  rd.fail_if(static_cast<int64_t>(m.type_starts.size()) != meta.num_parts,
             "hetero.type_starts has {} rows, expected num_parts = {}", m.type_starts.size(),
             meta.num_parts);
  std::vector<int64_t> type_total(static_cast<size_t>(types), 0);
  std::vector<int64_t> relation_total(static_cast<size_t>(m.num_relations()), 0);
  for (int p = 0; p < meta.num_parts; ++p) {
    const std::vector<int64_t>& s = m.type_starts[p];
    rd.fail_if(static_cast<int>(s.size()) != types + 1,
               "hetero.type_starts[{}] has {} entries, expected {} (types + 1)", p, s.size(),
               types + 1);
    rd.fail_if(s.front() != meta.ranges[p] || s.back() != meta.ranges[p + 1],
               "hetero.type_starts[{}] runs from {} to {}, expected the part's range [{}, {})", p,
               s.front(), s.back(), meta.ranges[p], meta.ranges[p + 1]);
    std::vector<int64_t> starts_nodes;
    for (int t = 0; t < types; ++t) {
      rd.fail_if(s[t + 1] < s[t], "hetero.type_starts[{}] decreases at type {}", p, t);
      starts_nodes.push_back(s[t + 1] - s[t]);
      type_total[t] += starts_nodes.back();
    }
    const PartStats& ps = meta.summary.parts[p];
    rd.fail_if(ps.type_nodes != starts_nodes,
               "summary.parts[{}].types disagrees with hetero.type_starts", p);
    rd.fail_if(static_cast<int>(ps.relation_edges.size()) != m.num_relations(),
               "summary.parts[{}].relations has {} entries, expected {} relations", p,
               ps.relation_edges.size(), m.num_relations());
    for (int r = 0; r < m.num_relations(); ++r) relation_total[r] += ps.relation_edges[r];
    const int64_t part_edges =
        std::accumulate(ps.relation_edges.begin(), ps.relation_edges.end(), int64_t{0});
    rd.fail_if(part_edges != ps.edges,
               "summary.parts[{}].relations sum to {}, expected its edges = {}", p, part_edges,
               ps.edges);
  }
  for (int t = 0; t < types; ++t)
    rd.fail_if(type_total[t] != m.node_types[t].count,
               "hetero.type_starts: type '{}' has {} nodes over the parts, expected its count {}",
               m.node_types[t].name, type_total[t], m.node_types[t].count);
  for (int r = 0; r < m.num_relations(); ++r)
    rd.fail_if(relation_total[r] != m.relations[r].num_edges,
               "summary.parts: relation {} ('{}') has {} edges over the parts, "
               "expected its num_edges {}",
               r, m.relations[r].name, relation_total[r], m.relations[r].num_edges);
}

}  // namespace partita::partition
