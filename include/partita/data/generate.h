#pragma once
// Synthetic node-classification graphs for tests and benchmarks: a degree-corrected
// stochastic block model (power-law degrees, one community per class) whose labels are
// learnable from features and, more so, from neighborhoods. Written in the Partita numpy
// layout (docs/dataset-format.md, which also states the model exactly). The output depends
// only on the options (not on threads): the same options give byte-identical files.
#include <cstdint>
#include <string>
#include <vector>

namespace partita::data {

// Errors name the field at fault (ParameterError, core/parameter_error.h): `nodes`,
// `avg_degree`, ...; the CLI shows each as its flag (--nodes, --avg-degree, ...).
struct GenerateOptions {
  int64_t nodes = 10000;        // number of nodes, in [2, 2^31-1]
  double avg_degree = 10;       // edges written = round(nodes * avg_degree), > 0 and at
                                //   most 2^36 edges
  int64_t feat_dim = 32;        // feature dimension, in [1, 2^20]
  int64_t classes = 8;          // classes (= communities), in [2, min(nodes, 65536)]
  uint64_t seed = 0;            // everything is a function of this seed
  double homophily = 0.9;       // probability that an edge's destination is drawn
                                //   inside its source's community (else among all nodes, so
                                //   about h + (1-h)/classes of edges are intra-class), [0, 1]
  double power_law = 2.5;       // exponent of the degree distribution, > 1
  double feature_noise = 1.0;   // noise relative to half the distance between
                                //   two class centroids (1/noise = signal-to-noise of telling
                                //   two classes apart from one node's features), >= 0
  double train_fraction = 0.6;  // share of nodes in train_idx, in (0, 1];
                                //   must give at least one node
  double valid_fraction = 0.2;  // share in valid_idx, [0, 1]
  double test_fraction = 0.2;   // share in test_idx, [0, 1]; the three sum
                                //   to at most 1 (+1e-9); nodes beyond the sum are in no split
  // Optional arrays (data/edge_arrays.h), each a function of the seed alone:
  bool edge_time = false;     // edge_time.npy: int64, uniform in [0, kGeneratedTimes)
  bool edge_weight = false;   // edge_weight.npy: float32, uniform in [0.5, 1.5)
  int64_t edge_feat_dim = 0;  // > 0: edge_feat.npy float32 [E, d], standard normal; [0, 2^16]
  bool node_time = false;     // node_time.npy: int64, uniform in [0, kGeneratedTimes)
  std::string out_dir;        // created if missing; existing files are replaced
  int threads = 0;            // <= 0: all hardware threads
};

// Times of generated edges and nodes lie in [0, kGeneratedTimes): few enough that a pair
// drawn twice often repeats its time too.
constexpr int64_t kGeneratedTimes = 1000;

// Sizes of the three splits of N nodes: each is floor(fraction x N), a product within a
// relative 1e-12 of an integer counting as that integer (0.29 x 100 gives 29, not 28).
// When the fractions sum to 1 (+-1e-9), every node is in a split: the rounding remainder
// goes to the last split with a positive fraction (the defaults give floor(0.6 N),
// floor(0.2 N) and the rest as test, exactly as before the fraction flags existed).
struct SplitSizes {
  int64_t train = 0, valid = 0, test = 0;
};

struct GenerateStats {
  int64_t nodes = 0;
  int64_t edges = 0;          // pairs written (duplicates included; loading drops them)
  int64_t bytes_written = 0;  // total size of the six files
  SplitSizes split;           // nodes in train_idx, valid_idx, test_idx
  double seconds = 0;         // total wall time, of which:
  double model_s = 0, edges_s = 0, features_s = 0, split_s = 0;
};

// The split sizes generate_synthetic writes for these options (nodes and fractions
// assumed valid; generate_synthetic checks them).
SplitSizes split_sizes(const GenerateOptions& options);

// Validates the options (ParameterError naming the field) and writes edges.npy, feat.npy,
// label.npy, train_idx.npy, valid_idx.npy, test_idx.npy (a random split, split_sizes), and the
// optional arrays asked for (edge_time.npy, edge_weight.npy, edge_feat.npy, node_time.npy) into
// out_dir (IoError naming the path if that fails). Uses up to options.threads threads;
// memory is per-node tables (~40 bytes a node) plus bounded chunk buffers (< 100 MiB), not
// the output size. With the defaults, a nearest-centroid classifier gets about 53% test
// accuracy from features alone and 88% from the mean of in-neighbor features.
GenerateStats generate_synthetic(const GenerateOptions& options);

// A mag-shaped heterogeneous graph (ogbn-mag's node types, relations and proportions),
// written in the Partita numpy heterogeneous layout (docs/dataset-format.md, which states
// the model). Like generate_synthetic, the output depends only on the options.
struct HeteroGenerateOptions {
  std::string shape = "mag";  // the shape; only "mag"
  int64_t nodes = 100000;     // all types together, in [100, 2^31-1]; split as in
                              //   ogbn-mag (author 58.5%, field_of_study 3.1%, institution
                              //   0.45%, paper the rest), each type at least one node
  int64_t feat_dim = 128;     // features of papers (the only featured type)
  int64_t classes = 349;      // paper classes, in [2, min(papers, 65536)]
  uint64_t seed = 0;
  double homophily = 0.8;       // probability that an edge's destination is drawn
                                //   from its source's class (cites, writes, has_topic,
                                //   affiliated_with alike), else from the whole type, [0, 1]
  double power_law = 2.5;       // exponent of every type's degree distribution
  double feature_noise = 1.0;   // as in GenerateOptions
  double train_fraction = 0.6;  // these three: the random split of the papers, as in
  double valid_fraction = 0.2;  //   GenerateOptions
  double test_fraction = 0.2;
  // Optional arrays of the typed layout (docs/dataset-format.md), as GenerateOptions's, each a
  // function of the seed alone: edge_time/, edge_weight/, edge_feat/ hold <triplet>.npy per
  // relation, node_time/ <type>.npy per node type.
  bool edge_time = false;
  bool edge_weight = false;
  int64_t edge_feat_dim = 0;  // [0, 2^16]
  bool node_time = false;
  std::string out_dir;  // created if missing
  int threads = 0;      // <= 0: all hardware threads
};

// ogbn-mag's shape: per-type node counts and per-relation edge counts at full scale.
struct MagShape {
  static constexpr int64_t kNodes = 1939743;
  static constexpr int64_t kAuthors = 1134649, kFields = 59965, kInstitutions = 8740,
                           kPapers = 736389;
  static constexpr int64_t kAffiliatedWith = 1043998, kWrites = 7145660, kCites = 5416271,
                           kHasTopic = 7505078;
};

struct HeteroGenerateStats {
  std::vector<std::string> type_names;      // author, field_of_study, institution, paper
  std::vector<int64_t> type_counts;         // nodes of each
  std::vector<std::string> relation_names;  // "author___writes___paper", ...
  std::vector<int64_t> relation_edges;      // pairs written (duplicates included)
  SplitSizes split;                         // papers in train/valid/test
  int64_t bytes_written = 0;
  double seconds = 0;
};

// Node counts per type for `nodes` in ogbn-mag's proportions: author, field_of_study and
// institution get floor(nodes x share) (at least 1), paper the rest; and the edges written
// per relation: round(nodes x full-scale edges / full-scale nodes), at least 1.
std::vector<int64_t> mag_type_counts(int64_t nodes);
std::vector<int64_t> mag_relation_edges(int64_t nodes);

// Validates the options (ParameterError naming the field) and writes hetero.json,
// edges/<H>___<R>___<T>.npy, feat/paper.npy, label.npy and {train,valid,test}_idx.npy into
// out_dir. Memory: per-node tables (~40 bytes a node) plus bounded chunk buffers; edges and
// features are streamed to disk. Logs progress per relation.
HeteroGenerateStats generate_hetero(const HeteroGenerateOptions& options);

}  // namespace partita::data
