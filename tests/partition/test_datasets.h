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

// The feature value planted at (node, col): exact in float32 for node < 2^20.
inline float feature(int64_t node, int64_t col) {
  return static_cast<float>(node) + static_cast<float>(col) / 8.0f;
}

}  // namespace partita::testing
