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
// Typed partitions (format version 2, partition::TypedMeta): the same one id space, plus a
// relation per CSC entry (edge_relations()), the owned new ids of each node type (one
// contiguous range per type: owned_type_range()) and per featured type its mapped rows
// (type_features()). The homogeneous features() are then empty (feat_dim() == 0). Labels
// are -1 off the target type. Open() checks the relation ids (an O(edges) pass over
// etype.npy) and that labels are -1 exactly off the target type and split ids of it.
//
// Edge and node arrays (docs/partition-format.md, "Edge and node arrays"): when the parts
// hold them, open() maps edge_time.npy and edge_weight.npy (aligned with indices()) and
// node_time.npy (aligned with labels()); open_part checked each one's dtype and length
// against partita.json (a mismatch is a FormatError naming the file). Their values are not
// read at open: they are never used as indices (the sampler compares times and never draws
// a weight that is not > 0 and finite; `partita info --verify` checks them all).
// edge_feat.npy ([e, d], float32/float16/bfloat16) is mapped the same way (edge_features()),
// its rows addressed by global edge id: part p's entry k is edge first_edge(p) + k, where
// first_edge(p) is the entries of the parts before p (docs/partition-format.md, "Reading
// every part's topology"), the same for any rank count on one directory.
//
// Thread-safety: immutable after open(); every accessor may be called from any thread.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
  // Maps the part of `rank` in a job of `world_size` ranks. Throws SingleProcessError for one
  // process on several parts, UsageError naming both numbers when the directory has neither
  // world_size parts nor 1, FormatError/IoError from the metadata or the arrays (ids out of range).
  static DistGraph open(const std::string& dir, int rank, int world_size,
                        const DistGraphOptions& options = {});
  // Server-client mode, server side: maps part `rank` of a directory of `servers` parts in a
  // job of `world_size` ranks (rank < servers < world_size). Throws ParameterError
  // naming `servers` when the directory has 1 part (replicated mode needs no servers) or not
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
  // Dataset ids of every global id, [num_nodes()] (node_map.npy, mapped: its pages are read
  // when first touched). Empty for a trainer of server-client mode, which maps no part.
  ArrayView<const int64_t> node_map() const {
    return node_map_.ndim() == 1 ? node_map_.view<int64_t>() : ArrayView<const int64_t>();
  }
  // Row-major [num_local_nodes(), feat_dim()] of feature_dtype() (float32, float16 or
  // bfloat16 bits), feature_row_bytes() per row.
  const uint8_t* features() const { return features_; }
  DType feature_dtype() const { return meta_.feature_dtype; }
  int64_t feature_row_bytes() const {
    return feat_dim() * static_cast<int64_t>(dtype_size(meta_.feature_dtype));
  }
  ArrayView<const int64_t> labels() const { return labels_; }
  // The optional arrays (empty when the partition has none, and on a client): the time and
  // the weight of each entry of indices(), and the time of each owned node.
  ArrayView<const int64_t> edge_times() const { return edge_times_; }
  ArrayView<const float> edge_weights() const { return edge_weights_; }
  ArrayView<const int64_t> node_times() const { return node_times_; }
  // Whether the parts hold edge_time, edge_weight, node_time (every part or none: read_meta),
  // known on every rank, clients included.
  bool has_edge_times() const { return meta_.has_array("edge_time"); }
  bool has_edge_weights() const { return meta_.has_array("edge_weight"); }
  bool has_node_times() const { return meta_.has_array("node_time"); }

  // Edge ids: entry k of indices() is global edge id first_edge() + k (0 on a client, which
  // owns no entry; 0 in replicated mode). edge_id_start(part): the first edge id of `part`
  // (from partita.json), edge_id_start(num_parts) == meta().num_edges.
  int64_t first_edge() const { return first_edge_; }
  // Whether this rank's part stores edge `edge`: first_edge() <= edge < first_edge() + entries.
  bool stores_edge(int64_t edge) const {
    return edge >= first_edge_ && edge - first_edge_ < indices().size();
  }
  int64_t edge_id_start(int part) const;
  // The part that stores edge `edge` (binary search over the parts' edge starts); its owner
  // rank is that part's rank (owner of the edge's dst). Throws Error outside [0, num_edges).
  int edge_owner(int64_t edge) const;
  // Edge features (edge_feat.npy; every part or none, known on every rank). Row-major
  // [indices().size(), edge_feat_dim()] of edge_feat_dtype(); null when the parts hold none,
  // and on a client.
  bool has_edge_features() const { return meta_.has_array("edge_feat"); }
  int64_t edge_feat_dim() const { return edge_feat_dim_; }
  DType edge_feat_dtype() const { return edge_feat_dtype_; }
  int64_t edge_feat_row_bytes() const {
    return edge_feat_dim_ * static_cast<int64_t>(dtype_size(edge_feat_dtype_));
  }
  const uint8_t* edge_features() const { return edge_features_; }

  // Typed partitions. typed_meta() requires typed().
  bool typed() const { return meta_.typed.has_value(); }
  const partition::TypedMeta& typed_meta() const { return *meta_.typed; }
  int num_node_types() const { return typed() ? meta_.typed->num_types() : 1; }
  // The relation of each entry of indices() (same length); empty for a homogeneous graph.
  ArrayView<const int32_t> edge_relations() const { return edge_relations_; }
  // The node type of any global id in [0, num_nodes()) (0 for a homogeneous graph). Throws
  // Error when gid is out of range.
  int node_type(int64_t gid) const;
  // The owned global ids of type `type`: [first, second) (empty on a client; a homogeneous
  // graph has one type 0, the whole owned range). Throws Error for a type out of range.
  std::pair<int64_t, int64_t> owned_type_range(int type) const;
  // Row-major [owned nodes of `type`, feat_dim], feature_dtype(); row i is global id
  // owned_type_range(type).first + i. Null when the type has no features (or this rank owns
  // none of its nodes). type_feat_dim(type) is 0 for a featureless type.
  const uint8_t* type_features(int type) const;
  int64_t type_feat_dim(int type) const;
  int64_t type_feature_row_bytes(int type) const {
    return type_feat_dim(type) * static_cast<int64_t>(dtype_size(meta_.feature_dtype));
  }
  // Global ids of the owned train/valid/test nodes, ascending.
  ArrayView<const int64_t> train_ids() const { return train_ids_; }
  ArrayView<const int64_t> valid_ids() const { return valid_ids_; }
  ArrayView<const int64_t> test_ids() const { return test_ids_; }

 private:
  // Reads the metadata; checks the server-client counts (see open_server).
  static DistGraph with_servers(const std::string& dir, int rank, int world_size, int servers);
  // Maps part `part` (the mapped views below) and node_map.
  void map_part(int part, const DistGraphOptions& options);
  // The parts' edge id starts and the edge features' dtype and width, from meta_.
  void read_edge_meta();
  // Typed partitions: maps etype and the per-type features of part `part`.
  void map_typed(int part, bool copy);

  std::string dir_;
  partition::PartitionMeta meta_;
  partition::PartFiles files_;
  NpyArray node_map_;
  HugeBuffer copies_[4];  // in_memory: indptr, indices, features, original ids
  std::vector<HugeBuffer> type_feature_copies_;   // in_memory, typed: per type
  HugeBuffer etype_copy_;                         // in_memory, typed
  HugeBuffer edge_time_copy_, edge_weight_copy_;  // in_memory, when the parts hold them
  ArrayView<const int64_t> indptr_, indices_, original_ids_;
  ArrayView<const int64_t> labels_, train_ids_, valid_ids_, test_ids_;
  ArrayView<const int64_t> edge_times_, node_times_;
  ArrayView<const float> edge_weights_;
  const uint8_t* features_ = nullptr;
  ArrayView<const int32_t> edge_relations_;
  std::vector<const uint8_t*> type_features_;  // typed: per type, null without features
  std::vector<std::pair<int64_t, int64_t>> owned_type_ranges_;  // typed: per type
  bool replicated_ = false;
  bool client_ = false;
  int rank_ = 0;
  int world_size_ = 1;
  int64_t first_ = 0;
  int64_t end_ = 0;
  int64_t first_edge_ = 0;
  std::vector<int64_t> edge_starts_;  // num_parts + 1 edge id starts
  int64_t edge_feat_dim_ = 0;
  DType edge_feat_dtype_ = DType::kFloat32;
  const uint8_t* edge_features_ = nullptr;
};

}  // namespace partita::store
