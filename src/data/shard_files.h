#pragma once
// Reading pieces of .npy files for data/shard.h: a mapping whose data is never copied
// (Fortran order and misalignment are handled by copying out elements), edge rows, labels,
// and streaming feature readers over one file or many chunk files; and the steps the share
// readers of each layout have in common (shard_reader.cc, shard_chunked.cc). Private to
// data/.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/mapped_file.h"
#include "partita/core/npy.h"
#include "partita/data/chunked_layout.h"
#include "partita/data/shard.h"

namespace partita::data {

// A mapped .npy file, header parsed and checked against the file size; the data stays on disk
// until read. Missing or unreadable: IoError naming the path.
class MappedNpy {
 public:
  static MappedNpy open(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const NpyHeader& header() const { return header_; }
  DType dtype() const { return header_.dtype; }
  int ndim() const { return static_cast<int>(header_.shape.size()); }
  int64_t dim(int i) const { return header_.shape.at(static_cast<size_t>(i)); }
  std::string shape() const { return header_.shape_string(); }
  // FormatError "<path>: expected dtype X, found Y" / "expected N dimension(s), found shape S".
  void expect(DType dtype, int ndim) const;
  // Copies stored elements [begin, end) (storage order) to `out`, then drops their pages.
  void copy_elements(int64_t begin, int64_t end, void* out) const;

 private:
  MappedFile file_;
  NpyHeader header_;
};

// How the pairs of an edge file are stored.
enum class EdgeForm {
  kRows,     // [E, 2] C order: src, dst interleaved
  kColumns,  // [2, E] C order (edge_index.npy) or [E, 2] Fortran order: all src, then all dst
};

// Appends rows [begin, end) of edge file `f` (int64 or int32, `num_edges` pairs stored as
// `form`) to src/dst, each id checked in [0, src_count) / [0, dst_count) (FormatError
// "<file>: edge i (s, d) has a node id outside ..." otherwise), plus `offset`s
// (homogenising typed ids). Reads in bounded chunks, dropping pages as it goes. The caller
// reserves src/dst for its whole share (growing them file by file would copy them).
struct EdgeTarget {
  std::vector<int64_t>* src;
  std::vector<int64_t>* dst;
};
void read_edge_rows(const MappedNpy& f, EdgeForm form, int64_t num_edges, int64_t begin,
                    int64_t end, int64_t src_count, int64_t dst_count, int64_t src_offset,
                    int64_t dst_offset, EdgeTarget out);

// Features stored in `files` end to end (each a path and its row count), of `dtype` in C
// order, `dim` columns wide (0: as wide as the first file); `source` names what gives the row
// counts. A file that differs throws FormatError naming it. The reader copies rows in the
// stored dtype, checks every value is finite (FormatError "<file>: row r column c: value is
// not finite"), drops the pages read. Thread-safe. Asking for rows outside the whole throws
// Error.
ShardFeatures open_features(const std::vector<ChunkFile>& files, DType dtype, int64_t dim,
                            const std::string& source);

// Sets rank, ranks, num_nodes and the node block of `s`.
void set_block(DatasetShard& s, int64_t num_nodes, int rank, int ranks);

// The ids of sorted `sorted_ids` that lie in [begin, end).
std::vector<int64_t> ids_in_block(const std::vector<int64_t>& sorted_ids, int64_t begin,
                                  int64_t end);

// The chunked layout's reader (shard_chunked.cc); `dir` holds manifest.json.
DatasetShard read_chunked_shard(const std::string& dir, int rank, int ranks);

}  // namespace partita::data
