#pragma once
// The partition pipeline: read a dataset, assign nodes to parts (METIS or random),
// renumber contiguously, write the partition directory (docs/partition-format.md) and
// report a summary. One pipeline over a communicator (partition/pipeline.h has its stages);
// one process is its one-rank case.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/name_table.h"
#include "partita/data/dataset.h"
#include "partita/partition/dist_comm.h"
#include "partita/partition/edge_split.h"

namespace partita::partition {

enum class Method { kMetis, kRandom };
const char* method_name(Method method);
// metis, random (method_name's words; --method, partita.partition(method=)).
inline const NameTable<Method>& method_names() {
  static const NameTable<Method> names{{method_name(Method::kMetis), Method::kMetis},
                                       {method_name(Method::kRandom), Method::kRandom}};
  return names;
}

// Method metis on several ranks (pipeline.h): the coarse-partition-refine partitioner
// (src/partition/coarse_partition.h) or PT-Scotch (DistComm::part_graph). One rank runs
// METIS on the whole graph.
enum class DistPartitioner { kCoarse, kPtScotch };

struct PartitionOptions {
  int num_parts = 2;  // >= 1 and <= number of nodes
  Method method = Method::kMetis;
  DistPartitioner dist_partitioner = DistPartitioner::kCoarse;  // on several ranks only
  bool balance_train = false;  // METIS: balance training nodes per part too
  bool balance_edges = false;  // METIS: balance in-degree (edges) per part too
  uint64_t seed = 0;           // METIS seed / random assignment seed
  std::string out_dir;         // created; existing partition files are replaced
  int threads = 0;             // <= 0: all hardware threads
  // Recorded in partita.json only: whether the dataset was loaded with reverse edges added.
  // run_partition sets it from LoadOptions::undirected.
  bool undirected = false;
  // Type of the stored features: float32, float16 or bfloat16 (narrowed with rounding to
  // nearest even; half the bytes on disk, in caches and on the wire).
  DType feature_dtype = DType::kFloat32;
  // Hold out edges for link prediction (partition/edge_split.h). Homogeneous
  // datasets only; a dataset with its own edge split (Dataset::edge_split) uses that one
  // instead, and the two together are a usage error.
  EdgeSplitOptions edge_split;
};

struct PartStats {
  int64_t nodes = 0;
  int64_t edges = 0;  // in-edges of owned nodes
  int64_t train_nodes = 0;
  int64_t valid_nodes = 0;
  int64_t test_nodes = 0;
  // Typed partitions only (empty otherwise): nodes per node type, in-edges per relation.
  std::vector<int64_t> type_nodes;
  std::vector<int64_t> relation_edges;
};

// A link-prediction split's figures (partita.json "edge_split"; docs/partition-format.md).
struct EdgeSplitStats {
  std::string source;                            // "sampled" (`edge_split`) or "dataset"
  double valid_fraction = 0, test_fraction = 0;  // sampled only; 0 for "dataset"
  int64_t valid = 0, test = 0;                   // held-out positive pairs
  int64_t valid_neg = 0, test_neg = 0;           // negative pairs
  std::vector<int64_t> train_per_part;           // rows of part<p>/train_edges.npy
  // Split by time (sampled only; partita.json "by": "time", absent for a random split): the
  // *_time files of format.h are written too.
  bool by_time = false;

  int64_t train() const;  // sum of train_per_part
};

struct PartitionSummary {
  std::vector<std::pair<std::string, double>> phase_seconds;  // in order of execution
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t edge_cut = 0;  // edges whose endpoints lie in different parts
  double edge_cut_fraction = 0;
  std::vector<PartStats> parts;
  // max over parts / mean over parts (1.0 = perfect balance)
  double node_imbalance = 1, edge_imbalance = 1, train_imbalance = 1;
  int64_t peak_rss_bytes = 0;  // runs on several ranks: the maximum over ranks
  // Runs on several ranks only: each rank's peak RSS, in rank order.
  std::vector<int64_t> rank_peak_rss_bytes;
  // Typed partitions only: the names PartStats::type_nodes and relation_edges refer to.
  std::vector<std::string> type_names;
  std::vector<std::string> relation_names;  // "src___name___dst"

  // Partitions made with an edge split only (num_edges etc. then count the graph without
  // the held-out edges).
  std::optional<EdgeSplitStats> edge_split;

  int64_t empty_parts() const;  // parts owning no node (METIS may leave some on tiny graphs)
};

// Typed datasets (Dataset::hetero set) give a typed partition (format version 2): METIS runs
// on the homogenised graph with relations ignored, balance_train balances the target
// type's training nodes (the splits hold target ids), and each part stores its entries'
// relations and per-type features. partita.json records whether reverse relations were
// added (a relation flagged `reverse` exists).
//
// Runs the whole pipeline on `dataset_dir`, on rank comm.rank() of comm.size(). One rank
// loads the dataset (load_dataset: every layout; the summary's first phase is "load");
// several read it in shares (data/shard.h: numpy, typed numpy and chunked layouts; phases
// "read", "build_graph"). Prints progress with log_info (rank 0). Throws ParameterError
// naming `num_parts` when num_parts < 1 or > number of nodes, `out_dir` when it is empty,
// `edge_split` when the split cannot be made, IoError/FormatError for unreadable input or
// unwritable output; on several ranks every rank throws the failure agreed (DistComm::agree).
PartitionSummary run_partition(const std::string& dataset_dir, const data::LoadOptions& load,
                               const PartitionOptions& options, DistComm& comm);
// The same in this process alone (OneRankComm).
PartitionSummary run_partition(const std::string& dataset_dir, const data::LoadOptions& load,
                               const PartitionOptions& options);

// Partitions an in-memory dataset into options.out_dir (same contract as run_partition,
// without the load phase). `dataset` is only read. Identical dataset, options and seed give
// byte-identical .npy files and a partita.json that differs only in "phase_seconds" and
// "peak_rss_bytes". Returns the summary also stored in partita.json.
PartitionSummary partition_dataset(const data::Dataset& dataset, const PartitionOptions& options);

// Human-readable multi-line summary (what `partita partition` and `partita info` print).
std::string format_summary(const PartitionSummary& summary);

}  // namespace partita::partition
