// Pieces of .npy files for reading datasets in shares (shard_files.h).
#include "shard_files.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "partita/core/error.h"
#include "partita/core/half.h"

namespace partita::data {
namespace {

constexpr int64_t kEdgeBatch = int64_t{1} << 20;  // pairs converted per step
constexpr int64_t kValueBatch = 4096;             // feature values checked per step

// One row source of a feature reader: a [rows, dim] C-order file holding rows starting at
// `first_row` of the whole matrix.
struct FeaturePiece {
  std::shared_ptr<const MappedNpy> file;
  int64_t first_row = 0;
};

}  // namespace

MappedNpy MappedNpy::open(const std::string& path) {
  MappedNpy f;
  f.file_ = MappedFile(path);
  PARTITA_CHECK(f.file_.size() > 0, FormatError, "{}: empty file (not a .npy array)", path);
  f.header_ = parse_npy_header(f.file_.data(), f.file_.size(), f.file_.size(), path);
  return f;
}

void MappedNpy::expect(DType dtype, int n) const {
  PARTITA_CHECK(header_.dtype == dtype, FormatError, "{}: expected dtype {}, found {}", path(),
                dtype_name(dtype), dtype_name(header_.dtype));
  PARTITA_CHECK(ndim() == n, FormatError, "{}: expected {} dimension(s), found shape {}", path(), n,
                shape());
}

void MappedNpy::copy_elements(int64_t begin, int64_t end, void* out) const {
  const size_t size = dtype_size(header_.dtype);
  const size_t offset = header_.data_offset + static_cast<size_t>(begin) * size;
  const size_t bytes = static_cast<size_t>(end - begin) * size;
  if (bytes == 0) return;
  std::memcpy(out, file_.data() + offset, bytes);
  file_.release(offset, bytes);
}

void read_edge_rows(const MappedNpy& f, EdgeForm form, int64_t num_edges, int64_t begin,
                    int64_t end, int64_t src_count, int64_t dst_count, int64_t src_offset,
                    int64_t dst_offset, EdgeTarget out) {
  const bool wide = f.dtype() == DType::kInt64, rows = form == EdgeForm::kRows;
  std::vector<int64_t> a, b;  // one batch: rows, the pairs in a; columns, sources in a, dsts in b
  std::vector<int32_t> narrow;
  const auto load = [&](int64_t first, int64_t count, std::vector<int64_t>& to) {
    to.resize(static_cast<size_t>(count));
    narrow.resize(wide ? 0 : static_cast<size_t>(count));  // int32 ids, widened after the copy
    f.copy_elements(first, first + count, wide ? static_cast<void*>(to.data()) : narrow.data());
    std::copy(narrow.begin(), narrow.end(), to.begin());
  };
  const int64_t step = rows ? 2 : 1;  // between one edge's source (or destination) and the next
  for (int64_t row = begin; row < end; row += kEdgeBatch) {
    const int64_t n = std::min(kEdgeBatch, end - row);
    load(step * row, step * n, a);
    if (!rows) load(num_edges + row, n, b);
    const int64_t* dsts = rows ? a.data() + 1 : b.data();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = a[step * i], d = dsts[step * i];
      if (s < 0 || s >= src_count || d < 0 || d >= dst_count)
        throw FormatError(
            src_count == dst_count
                ? fmt::format("{}: edge {} ({}, {}) has a node id outside [0, {})", f.path(),
                              row + i, s, d, src_count)
                : fmt::format("{}: edge {} ({}, {}) has a node id outside its type's range "
                              "(sources [0, {}), destinations [0, {}))",
                              f.path(), row + i, s, d, src_count, dst_count));
      out.src->push_back(s + src_offset);
      out.dst->push_back(d + dst_offset);
    }
  }
}

ShardFeatures open_features(const std::vector<ChunkFile>& files, DType dtype, int64_t dim,
                            const std::string& source) {
  std::vector<FeaturePiece> pieces;
  int64_t total = 0;
  for (const ChunkFile& c : files) {
    auto f = std::make_shared<MappedNpy>(MappedNpy::open(c.file));
    f->expect(dtype, 2);
    PARTITA_CHECK(!f->header().fortran_order, FormatError,
                  "{}: Fortran order is not read in shares; save the features in C order "
                  "(np.ascontiguousarray)",
                  f->path());
    PARTITA_CHECK(f->dim(0) == c.rows, FormatError, "{}: {} rows, but {} has {}", f->path(),
                  f->dim(0), source, c.rows);
    PARTITA_CHECK(f->dim(1) > 0, FormatError, "{}: shape {} has no feature columns", f->path(),
                  f->shape());
    if (dim == 0) dim = f->dim(1);
    PARTITA_CHECK(f->dim(1) == dim, FormatError, "{}: {} feature columns, but {} says {}",
                  f->path(), f->dim(1), source, dim);
    pieces.push_back({std::move(f), total});
    total += c.rows;
  }
  // The reader: rows are copied in the stored dtype, then checked.
  ShardFeatures features{dim, dtype, {}};
  features.read = [pieces = std::move(pieces), rows = total, dim, dtype](int64_t begin, int64_t end,
                                                                         void* out) {
    PARTITA_CHECK(begin >= 0 && begin <= end && end <= rows, Error,
                  "internal: feature rows [{}, {}) asked of a matrix of {} rows", begin, end, rows);
    const size_t row_bytes = static_cast<size_t>(dim) * dtype_size(dtype);
    auto* dst = static_cast<unsigned char*>(out);
    // From the last piece starting at or before `begin` (the first starts at row 0).
    auto after =
        std::upper_bound(pieces.begin(), pieces.end(), begin,
                         [](int64_t row, const FeaturePiece& f) { return row < f.first_row; });
    size_t p = static_cast<size_t>(after - pieces.begin()) - 1;
    for (int64_t row = begin; row < end; ++p) {
      const FeaturePiece& piece = pieces[p];
      const int64_t piece_end = piece.first_row + piece.file->dim(0);
      if (piece_end <= row) continue;  // an empty chunk
      const int64_t n = std::min(end, piece_end) - row;
      const int64_t local = row - piece.first_row;
      piece.file->copy_elements(local * dim, (local + n) * dim, dst);
      float values[kValueBatch];
      for (int64_t i = 0; i < n * dim; i += kValueBatch) {
        const int64_t count = std::min(kValueBatch, n * dim - i);
        widen_to_floats(dst + static_cast<size_t>(i) * dtype_size(dtype), count, dtype, values);
        for (int64_t j = 0; j < count; ++j)
          if (!std::isfinite(values[j]))
            throw FormatError(fmt::format("{}: row {} column {}: value {} is not finite",
                                          piece.file->path(), local + (i + j) / dim, (i + j) % dim,
                                          static_cast<double>(values[j])));
      }
      dst += static_cast<size_t>(n) * row_bytes;
      row += n;
    }
  };
  return features;
}

}  // namespace partita::data
