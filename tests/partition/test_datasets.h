#pragma once
// Small in-memory datasets for partition tests.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/data/dataset.h"

namespace partita::testing {

struct PlantedOptions {
  int64_t num_nodes = 600;
  int clusters = 4;              // nodes v with v % clusters == c form cluster c
  int intra_degree = 6;          // out-edges per node inside its cluster
  double inter_fraction = 0.05;  // probability that an edge leaves the cluster instead
  int64_t feat_dim = 5;
  int64_t num_classes = 3;
  bool undirected = false;
  uint64_t seed = 1;
};

// A directed planted-partition graph: dense clusters, few edges between them (METIS should
// find them; random assignment cuts most edges). Features are feature(v, c), labels v % C,
// splits: train v % 10 == 0, valid v % 10 == 1, test v % 10 in {2, 3}.
data::Dataset planted_dataset(const PlantedOptions& options);
// A dataset over an explicit (src, dst) pair list, with the same features/labels/splits.
data::Dataset dataset_from_pairs(int64_t num_nodes, const std::vector<int64_t>& pairs,
                                 int64_t feat_dim = 3, int64_t num_classes = 3);

struct TypedOptions {
  int64_t papers = 120;  // target type, 4 features, labels paper % classes
  int64_t authors = 80;  // no features
  int64_t fields = 30;   // 2 features
  int64_t num_classes = 4;
  int cites = 3;                 // out-edges per paper (paper -> paper)
  int writes = 2;                // papers per author (author -> paper)
  int topics = 1;                // fields per paper (paper -> field)
  bool reverse = true;           // add rev_<relation> for each, as the readers do by default
  bool single_relation = false;  // writes only (a bipartite graph of one relation)
  uint64_t seed = 3;
};

// A typed dataset built by hand as data/hetero.h describes (types paper, author, field in
// that order; relations writes, cites, has_topic, then their reverses): rows sorted by
// (relation, source), unique within a relation, no self loops; labels -1 off papers; splits
// of papers: train paper % 5 in {0, 1}, valid == 2, test == 3. Per-type features are
// typed_feature(original id, col).
data::Dataset typed_dataset(const TypedOptions& options);

// The feature value planted at (node, col): exact in float32 for node < 2^20.
inline float feature(int64_t node, int64_t col) {
  return static_cast<float>(node) + static_cast<float>(col) / 8.0f;
}

// Per-type feature value of homogenised id `node` at `col` (distinct per node and column,
// exact in float32 and in bfloat16 is not required: tests round with the writer's rule).
inline float typed_feature(int64_t node, int64_t col) {
  return static_cast<float>(node) * 0.5f + static_cast<float>(col) + 0.1f;
}

}  // namespace partita::testing
