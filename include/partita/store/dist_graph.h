#pragma once
// One rank's view of a partition directory (docs/partition-format.md): its own part,
// memory-mapped, plus owner lookup for every global id. Opening parses partita.json and the
// .npy headers, and reads the part's indptr, labels and split ids once to check them (they
// are used as indices: a corrupt file must be an error, not a crash); edges and features are
// neither read nor copied (unless in_memory).
//
// Modes. With P ranks the directory must hold P parts (rank r maps part r), or exactly 1
// part: the replicated mode, where every rank maps the whole graph and owns every node
// (on one host the page cache shares the mapping).
// Server-client mode (DESIGN 5): a job of W ranks on a P-part directory (1 < P < W) whose
// first P ranks serve one part each (open_server: rank r maps part r, as in worker mode) and
// whose other ranks train (open_client: no part mapped, every node remote). owner_rank()
// is the same in both views and in worker mode: part p is served by rank p.
//
// Ids. Global ids are the partition's new ids; part p owns [ranges[p], ranges[p+1]).
// original_ids() gives the dataset ids of the owned nodes (node_map), which the sampler uses
// to key its random streams so a sample does not depend on the partitioning.
//
// Thread-safety: immutable after open(); every accessor may be called from any thread.
#include <cstdint>
#include <string>

#include "partita/core/array_view.h"
#include "partita/core/huge_buffer.h"
#include "partita/core/npy.h"
#include "partita/partition/format.h"

namespace partita::store {

struct DistGraphOptions {
  // Copy the arrays read at random (indptr, indices, features, original ids) into memory
  // advised for huge pages instead of reading them through 4 KiB file pages: costs one
  // sequential copy at start-up and private memory, saves TLB misses on every access
  // (sampling and feature gathers run measurably faster; see the README).
  bool in_memory = false;
};

class DistGraph {
 public:
  // Maps the part of `rank` in a job of `world_size` ranks. Throws UsageError naming both
  // numbers when the directory has neither world_size parts nor 1, FormatError/IoError from
  // the metadata or the arrays (including indptr offsets, labels or split ids out of range).
  static DistGraph open(const std::string& dir, int rank, int world_size,
                        const DistGraphOptions& options = {});
  // Server-client mode, server side: maps part `rank` of a directory of `servers` parts in a
  // job of `world_size` ranks (rank < servers < world_size). Throws UsageError naming
  // --servers when the directory has 1 part (replicated mode needs no servers) or not
  // `servers` parts, or when no rank is left to train; FormatError/IoError as open().
  static DistGraph open_server(const std::string& dir, int rank, int world_size, int servers,
                               const DistGraphOptions& options = {});
  // Server-client mode, trainer side (servers <= rank < world_size): the metadata and owner
  // lookup only; owns no node (num_local_nodes() == 0, every array empty, indptr() = {0}),
  // so every feature, label and sample comes from the servers. Throws as open_server().
  static DistGraph open_client(const std::string& dir, int rank, int world_size, int servers);

  const partition::PartitionMeta& meta() const { return meta_; }
  const std::string& dir() const { return dir_; }
  bool replicated() const { return replicated_; }
  // A trainer's view in server-client mode (open_client): owns nothing.
  bool client() const { return client_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int64_t num_nodes() const { return meta_.num_nodes; }
  int64_t feat_dim() const { return meta_.feat_dim; }
  int64_t num_classes() const { return meta_.num_classes; }

  // Owned global ids: [first_node(), end_node()).
  int64_t first_node() const { return first_; }
  int64_t end_node() const { return end_; }
  int64_t num_local_nodes() const { return end_ - first_; }
  bool owns(int64_t gid) const { return gid >= first_ && gid < end_; }
  // Rank that serves `gid` (this rank in replicated mode). Throws Error when gid is not in
  // [0, num_nodes()).
  int owner_rank(int64_t gid) const;

  // In-edge CSC of the owned rows: indptr [num_local_nodes()+1], indices = global ids.
  ArrayView<const int64_t> indptr() const { return indptr_; }
  ArrayView<const int64_t> indices() const { return indices_; }
  // Dataset ids of the owned nodes, [num_local_nodes()].
  ArrayView<const int64_t> original_ids() const { return original_ids_; }
  // Row-major [num_local_nodes(), feat_dim()] of feature_dtype() (float32, float16 or
  // bfloat16 bits), feature_row_bytes() per row.
  const uint8_t* features() const { return features_; }
  DType feature_dtype() const { return meta_.feature_dtype; }
  int64_t feature_row_bytes() const {
    return feat_dim() * static_cast<int64_t>(dtype_size(meta_.feature_dtype));
  }
  ArrayView<const int64_t> labels() const { return labels_; }
  // Global ids of the owned train/valid/test nodes, ascending.
  ArrayView<const int64_t> train_ids() const { return train_ids_; }
  ArrayView<const int64_t> valid_ids() const { return valid_ids_; }
  ArrayView<const int64_t> test_ids() const { return test_ids_; }

 private:
  // Reads the metadata; checks the server-client counts (see open_server).
  static DistGraph with_servers(const std::string& dir, int rank, int world_size, int servers);
  // Maps part `part` (the mapped views below) and node_map.
  void map_part(int part, const DistGraphOptions& options);

  std::string dir_;
  partition::PartitionMeta meta_;
  partition::PartFiles files_;
  NpyArray node_map_;
  HugeBuffer copies_[4];  // in_memory: indptr, indices, features, original ids
  ArrayView<const int64_t> indptr_, indices_, original_ids_;
  ArrayView<const int64_t> labels_, train_ids_, valid_ids_, test_ids_;
  const uint8_t* features_ = nullptr;
  bool replicated_ = false;
  bool client_ = false;
  int rank_ = 0;
  int world_size_ = 1;
  int64_t first_ = 0;
  int64_t end_ = 0;
};

}  // namespace partita::store
