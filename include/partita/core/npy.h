#pragma once
// NumPy .npy files: header parsing (untrusted input), memory-mapped reading and
// streaming writing with a CRC-32 of the whole file. Little-endian arrays of the dtypes
// below are supported, in C order (mapped) or Fortran order (copied into C order on open,
// e.g. what np.save writes for a transposed array); anything else is a FormatError naming
// the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/core/error.h"
#include "partita/core/mapped_file.h"
#include "partita/core/name_table.h"

namespace partita {

// kBFloat16: numpy has no bfloat16 type, so such arrays are written with the descr of
// their raw 16 bits, "<u2" (view them with ml_dtypes.bfloat16); partita.json names them
// "bfloat16". Partita has no other 16-bit unsigned type, so "<u2" always reads as this.
enum class DType { kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64, kFloat16, kBFloat16 };

const char* dtype_descr(DType dtype);  // numpy descr, e.g. "<i8"
const char* dtype_name(DType dtype);   // numpy name, e.g. "int64"
size_t dtype_size(DType dtype);
// Parses a numpy name ("int64") as written in partita.json; throws FormatError naming `what`.
DType dtype_from_name(const std::string& name, const std::string& what);
// The types features may be stored as (partition --feature-dtype, generate --feature-dtype,
// partita.partition(feature_dtype=)): float32, float16, bfloat16.
const NameTable<DType>& feature_dtype_names();

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kFloat64;
}

struct NpyHeader {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  size_t data_offset = 0;      // bytes before the first element
  bool fortran_order = false;  // as stored, with 2+ dimensions (NpyArray reads it in C order)

  int64_t num_elements() const;
  size_t data_bytes() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype); }
  std::string shape_string() const;  // "(3, 4)"
};

// Parses the header at the start of a file of `file_size` bytes whose first `size` bytes
// are `bytes`. Checks magic, version, header length, dict syntax, dtype, order, shape and
// that the file holds exactly the data the header claims. Throws FormatError naming `path`.
NpyHeader parse_npy_header(const unsigned char* bytes, size_t size, size_t file_size,
                           const std::string& path);

// Builds a version-1.0 header (padded so the data starts on a 64-byte boundary).
std::string make_npy_header(DType dtype, const std::vector<int64_t>& shape);

// A mapped, validated .npy file. Opening parses only the header; data stays on disk
// until touched.
//
// Alignment: view<T>() always points at memory aligned for T. numpy pads its headers so
// the data starts on a 16- or 64-byte boundary, and so does make_npy_header; a file whose
// header length leaves the data misaligned for its dtype (e.g. int64 data at byte offset
// 75) is valid numpy, though, so open() then copies the data into an aligned buffer owned
// by the NpyArray (memory as large as the data; release_elements() is then a no-op) rather
// than reading it through a misaligned pointer. copied() tells which case applies.
//
// Fortran order: the data of a Fortran-order file (header().fortran_order) is copied into
// C order in the same owned buffer when the file is opened (memory as large as the data,
// one info log line naming the file), so view() and shape() always mean C order.
class NpyArray {
 public:
  NpyArray() = default;
  static NpyArray open(const std::string& path);

  const NpyHeader& header() const { return header_; }
  const std::string& path() const { return file_.path(); }
  DType dtype() const { return header_.dtype; }
  int ndim() const { return static_cast<int>(header_.shape.size()); }
  int64_t dim(int i) const { return header_.shape.at(static_cast<size_t>(i)); }
  int64_t num_elements() const { return header_.num_elements(); }

  // Throws FormatError "<path>: expected dtype X, found Y" / "... expected N dimensions".
  void expect(DType dtype, int ndim) const;

  template <class T>
  ArrayView<const T> view() const {
    expect_dtype(dtype_of<T>());
    return {reinterpret_cast<const T*>(data()), num_elements()};
  }
  // First byte of the elements: in the mapping, or in the aligned copy.
  const unsigned char* data() const;
  // True when view() reads a copy (misaligned data, or Fortran order reordered).
  bool copied() const { return !aligned_copy_.empty(); }
  const MappedFile& file() const { return file_; }
  // Drops resident pages of the element range [begin, end) (see MappedFile::release).
  void release_elements(int64_t begin, int64_t end) const;

 private:
  void expect_dtype(DType dtype) const;
  MappedFile file_;
  NpyHeader header_;
  // The data, when misaligned in the file; uint64_t elements align it for every dtype.
  std::vector<uint64_t> aligned_copy_;
};

// Streams an array to `path`: data goes to `path.tmp`, finish() checks that exactly the
// announced number of bytes was written, flushes, renames onto `path` and returns the
// CRC-32 of the whole file. A writer destroyed before finish() removes its temp file.
class NpyWriter {
 public:
  NpyWriter(const std::string& path, DType dtype, std::vector<int64_t> shape);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;

  void write(const void* data, size_t bytes);
  template <class T>
  void write(ArrayView<const T> values) {
    write(values.data(), static_cast<size_t>(values.size()) * sizeof(T));
  }
  uint32_t finish();

 private:
  void flush_buffer();
  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  size_t expected_bytes_ = 0;
  size_t written_bytes_ = 0;
  uint32_t crc_ = 0;
  std::vector<unsigned char> buffer_;
  bool finished_ = false;
};

// Writes a whole array in one call; returns the file's CRC-32.
template <class T>
uint32_t write_npy(const std::string& path, ArrayView<const T> values, std::vector<int64_t> shape) {
  NpyWriter writer(path, dtype_of<T>(), std::move(shape));
  writer.write(values);
  return writer.finish();
}
template <class T>
uint32_t write_npy(const std::string& path, const std::vector<T>& values) {
  return write_npy<T>(path, ArrayView<const T>(values), {static_cast<int64_t>(values.size())});
}

// Reads a whole array into memory after checking dtype and number of dimensions.
template <class T>
std::vector<T> read_npy_vector(const std::string& path, int ndim = 1) {
  NpyArray array = NpyArray::open(path);
  array.expect(dtype_of<T>(), ndim);
  ArrayView<const T> v = array.view<T>();
  return std::vector<T>(v.begin(), v.end());
}

// CRC-32 (zlib polynomial) of a memory range, continuing from `crc` (0 to start).
uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes);
// CRC-32 of a whole file, read sequentially. Throws IoError naming `path`.
uint32_t crc32_file(const std::string& path);

}  // namespace partita
