#pragma once
// Heterogeneous (typed) graphs, held as ONE homogenised graph: node type t owns the
// homogenised ids [offset, offset + count) (types in the dataset's order, so original ids
// sort by type first), and every in-edge carries the id of its relation. Readers of the OGB
// heterogeneous raw layout and of the numpy hetero layout fill it (docs/dataset-format.md);
// the partitioner, sampler and R-GCN consume it.
//
// Conventions shared by every layer:
//  - relation ids index HeteroSchema::relations; a relation (src type, name, dst type)
//    holds edges src -> dst; reverse relations ("rev_<name>", dst -> src) are appended
//    after the input relations, in input order, unless the user asked for none.
//  - a CSC row (the in-edges of one node) lists its entries sorted by (relation, source id)
//    ascending; inside one relation a source appears at most once (duplicates dropped), and
//    self loops (src == dst within one relation) are dropped.
//  - labels exist for the target type only; other nodes hold label -1.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/data/feature_matrix.h"

namespace partita::data {

struct NodeType {
  std::string name;
  int64_t count = 0;   // > 0
  int64_t offset = 0;  // homogenised ids of this type: [offset, offset + count)
  // [count, dim] float32, or empty (cols() == 0) when the type has no features (the model
  // learns an embedding per node instead).
  FeatureMatrix features;

  int64_t feat_dim() const { return features.cols(); }
};

struct Relation {
  std::string name;  // as in the input ("writes"), or "rev_<name>" for a reverse relation
  int src_type = 0;  // index into HeteroSchema::node_types
  int dst_type = 0;
  int64_t num_edges = 0;  // stored edges (after dropping duplicates and self loops)
  bool reverse = false;   // added as the reverse of another relation
};

struct HeteroSchema {
  std::vector<NodeType> node_types;  // in the dataset's order; offsets increase
  std::vector<Relation> relations;
  int target_type = 0;  // the labelled type: labels, splits and training seeds

  int num_types() const { return static_cast<int>(node_types.size()); }
  int num_relations() const { return static_cast<int>(relations.size()); }
  // The type of homogenised id `id` (binary search over offsets); id in [0, total nodes).
  int type_of(int64_t id) const;
  // "src___name___dst", OGB's folder name of a relation.
  std::string triplet(int relation) const;
  // The index of the node type / relation named `name`, or -1.
  int find_type(const std::string& name) const;
  int find_relation(const std::string& name) const;
  // Appends the reverse ("rev_<name>", dst -> src, `reverse` set) of every relation held now,
  // in their order.
  void add_reverse_relations();
};

}  // namespace partita::data
