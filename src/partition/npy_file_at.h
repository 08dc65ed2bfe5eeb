#pragma once
// Private to partition/: a .npy file whose data is written at given offsets, in any order and
// by several writers, for the distributed writer (rows of one part arrive from every rank,
// each rank's rows at a position known in advance). The file is built as `<path>.tmp` and
// renamed into place by finish(), like NpyWriter; its bytes (header included) are exactly
// those NpyWriter writes for the same dtype, shape and data.
//
// Several processes may write one file: one creates it (create()), the others open it
// (attach()) after the creator's constructor returned, each writes its own disjoint ranges
// and closes (close()), and the creator calls finish() after all of them closed.
//
// Each write's CRC-32 is taken as it is written: when the creator's own writes cover the
// whole file (one process wrote it all), finish() combines them and reads nothing back.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/npy.h"

namespace partita::partition {

class NpyFileAt {
 public:
  // Creates `<path>.tmp` with the header and the full size (data zero until written).
  static NpyFileAt create(const std::string& path, DType dtype, std::vector<int64_t> shape);
  // Opens the `<path>.tmp` another writer created, for writing.
  static NpyFileAt attach(const std::string& path, DType dtype, std::vector<int64_t> shape) {
    return NpyFileAt(path, dtype, shape, /*create=*/false);
  }
  NpyFileAt(NpyFileAt&& other) noexcept;
  ~NpyFileAt();  // a created file never finished is removed

  // Writes `bytes` bytes at byte `offset` of the data (after the header). Throws IoError.
  void write_at(int64_t offset, const void* data, size_t bytes);
  // Closes this writer's descriptor (attached writers, before the creator finishes).
  void close();
  // Creator only: closes, takes the CRC-32 of the whole file (from the writes' when they
  // cover it, else reading the file back), renames it into place and returns the CRC.
  uint32_t finish();

 private:
  // `<path>.tmp` opened: created empty (`create`) or as another writer created it.
  NpyFileAt(const std::string& path, DType dtype, const std::vector<int64_t>& shape, bool create);
  std::string path_, tmp_path_;
  int64_t header_bytes_ = 0, data_bytes_ = 0;
  int fd_ = -1;
  bool creator_ = false, finished_ = false;
  struct Piece {
    int64_t offset, bytes;
    uint32_t crc;
  };
  std::vector<Piece> pieces_;  // this writer's writes
};

}  // namespace partita::partition
