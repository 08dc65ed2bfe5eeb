// HeteroSchema's look-ups, and its reverse relations.
#include "partita/data/hetero.h"

#include <algorithm>
#include <utility>

namespace partita::data {

int HeteroSchema::type_of(int64_t id) const {
  auto it = std::upper_bound(node_types.begin(), node_types.end(), id,
                             [](int64_t v, const NodeType& t) { return v < t.offset; });
  return static_cast<int>(it - node_types.begin()) - 1;
}

std::string HeteroSchema::triplet(int relation) const {
  const Relation& r = relations[relation];
  return node_types[r.src_type].name + "___" + r.name + "___" + node_types[r.dst_type].name;
}

int HeteroSchema::find_type(const std::string& name) const {
  for (int t = 0; t < num_types(); ++t) {
    if (node_types[t].name == name) return t;
  }
  return -1;
}

int HeteroSchema::find_relation(const std::string& name) const {
  for (int r = 0; r < num_relations(); ++r) {
    if (relations[r].name == name) return r;
  }
  return -1;
}

void HeteroSchema::add_reverse_relations() {
  const int inputs = num_relations();
  for (int r = 0; r < inputs; ++r) {
    Relation rev = relations[r];
    rev.name = "rev_" + rev.name;
    std::swap(rev.src_type, rev.dst_type);
    rev.reverse = true;
    relations.push_back(rev);
  }
}

}  // namespace partita::data
