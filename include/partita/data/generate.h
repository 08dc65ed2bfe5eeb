#pragma once
// Synthetic node-classification graphs for tests and benchmarks: a degree-corrected
// stochastic block model (power-law degrees, one community per class) whose labels are
// learnable from features and, more so, from neighborhoods. Written in the Partita numpy
// layout (docs/dataset-format.md). The output depends only on the options (not on threads).
#include <cstdint>
#include <string>

namespace partita::data {

struct GenerateOptions {
  int64_t nodes = 10000;        // number of nodes, >= 2
  double avg_degree = 10;       // edges written = round(nodes * avg_degree), > 0
  int64_t feat_dim = 32;        // feature dimension, >= 1
  int64_t classes = 8;          // number of classes (= communities), >= 2
  uint64_t seed = 0;            // everything is a function of this seed
  double homophily = 0.8;       // fraction of edges that stay inside a community, [0, 1]
  double power_law = 2.5;       // exponent of the degree distribution, > 1
  double feature_noise = 2.0;   // noise stddev relative to the centroid scale, >= 0
  std::string out_dir;          // created if missing; existing files are replaced
  int threads = 0;              // <= 0: all hardware threads
};

struct GenerateStats {
  int64_t nodes = 0;
  int64_t edges = 0;
  int64_t bytes_written = 0;
  double seconds = 0;
};

// Validates the options (UsageError naming the flag) and writes edges.npy, feat.npy,
// label.npy, train_idx.npy, valid_idx.npy, test_idx.npy (random 60/20/20 split).
GenerateStats generate_synthetic(const GenerateOptions& options);

}  // namespace partita::data
