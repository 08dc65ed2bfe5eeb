// A .npy file written at given offsets.
#include "npy_file_at.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "partita/core/error.h"

namespace partita::partition {

NpyFileAt::NpyFileAt(const std::string& path, DType dtype, const std::vector<int64_t>& shape,
                     bool create)
    : path_(path),
      tmp_path_(path + ".tmp"),
      header_bytes_(static_cast<int64_t>(make_npy_header(dtype, shape).size())),
      data_bytes_(static_cast<int64_t>(NpyHeader{dtype, shape}.data_bytes())),
      fd_(::open(tmp_path_.c_str(),
                 create ? O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC : O_WRONLY | O_CLOEXEC, 0644)),
      creator_(create) {
  PARTITA_CHECK(fd_ >= 0, IoError, "{}: cannot {}: {}", tmp_path_,
                create ? "create" : "open for writing", std::strerror(errno));
}

NpyFileAt NpyFileAt::create(const std::string& path, DType dtype, std::vector<int64_t> shape) {
  NpyFileAt f(path, dtype, shape, /*create=*/true);
  PARTITA_CHECK(::ftruncate(f.fd_, f.header_bytes_ + f.data_bytes_) == 0, IoError,
                "{}: cannot size to {} bytes: {}", f.tmp_path_, f.header_bytes_ + f.data_bytes_,
                std::strerror(errno));
  // The header goes through the same path as the data: offset -header_bytes_.
  const std::string header = make_npy_header(dtype, shape);
  f.write_at(-f.header_bytes_, header.data(), header.size());
  return f;
}

NpyFileAt::NpyFileAt(NpyFileAt&& o) noexcept
    : path_(std::move(o.path_)),
      tmp_path_(std::move(o.tmp_path_)),
      header_bytes_(o.header_bytes_),
      data_bytes_(o.data_bytes_),
      fd_(std::exchange(o.fd_, -1)),
      creator_(std::exchange(o.creator_, false)),
      finished_(o.finished_),
      pieces_(std::move(o.pieces_)) {}

NpyFileAt::~NpyFileAt() {
  if (fd_ >= 0) ::close(fd_);
  if (creator_ && !finished_) ::unlink(tmp_path_.c_str());
}

void NpyFileAt::write_at(int64_t offset, const void* data, size_t bytes) {
  PARTITA_CHECK(
      fd_ >= 0 && offset >= -header_bytes_ && offset + static_cast<int64_t>(bytes) <= data_bytes_,
      Error, "{}: internal: writing {} bytes at data offset {} of {}", tmp_path_, bytes, offset,
      data_bytes_);
  const char* p = static_cast<const char*>(data);
  if (bytes > 0)
    pieces_.push_back(
        {offset, static_cast<int64_t>(bytes),
         static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(p), bytes))});
  off_t at = static_cast<off_t>(header_bytes_ + offset);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, bytes, at);
    if (n < 0 && errno == EINTR) continue;
    PARTITA_CHECK(n > 0, IoError, "{}: write failed: {}", tmp_path_, std::strerror(errno));
    p += n;
    at += n;
    bytes -= static_cast<size_t>(n);
  }
}

void NpyFileAt::close() {
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  PARTITA_CHECK(::close(fd) == 0, IoError, "{}: close failed: {}", tmp_path_, std::strerror(errno));
}

uint32_t NpyFileAt::finish() {
  PARTITA_CHECK(creator_ && !finished_, Error, "{}: internal: finish() by a non-creator",
                tmp_path_);
  close();
  // The writes, in file order, combined when they tile the file exactly.
  std::sort(pieces_.begin(), pieces_.end(),
            [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
  uLong combined = 0;
  int64_t end = -header_bytes_;
  for (const Piece& piece : pieces_) {
    if (piece.offset != end) break;
    combined = crc32_combine(combined, piece.crc, static_cast<z_off_t>(piece.bytes));
    end += piece.bytes;
  }
  const uint32_t crc = end == data_bytes_ ? static_cast<uint32_t>(combined) : crc32_file(tmp_path_);
  PARTITA_CHECK(::rename(tmp_path_.c_str(), path_.c_str()) == 0, IoError,
                "{}: cannot rename into place: {}", path_, std::strerror(errno));
  finished_ = true;
  return crc;
}

}  // namespace partita::partition
