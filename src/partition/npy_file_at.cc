// A .npy file written at given offsets.
#include "npy_file_at.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "partita/core/error.h"

namespace partita::partition {

NpyFileAt NpyFileAt::create(const std::string& path, DType dtype, std::vector<int64_t> shape) {
  NpyHeader h;
  h.dtype = dtype;
  h.shape = shape;
  const std::string header = make_npy_header(dtype, shape);
  NpyFileAt f;
  f.path_ = path;
  f.tmp_path_ = path + ".tmp";
  f.header_bytes_ = static_cast<int64_t>(header.size());
  f.data_bytes_ = static_cast<int64_t>(h.data_bytes());
  f.creator_ = true;
  f.fd_ = ::open(f.tmp_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  PARTITA_CHECK(f.fd_ >= 0, IoError, "{}: cannot create: {}", f.tmp_path_, std::strerror(errno));
  PARTITA_CHECK(::ftruncate(f.fd_, f.header_bytes_ + f.data_bytes_) == 0, IoError,
                "{}: cannot size to {} bytes: {}", f.tmp_path_, f.header_bytes_ + f.data_bytes_,
                std::strerror(errno));
  // The header goes through the same path as the data: offset -header_bytes_.
  f.write_at(-f.header_bytes_, header.data(), header.size());
  return f;
}

NpyFileAt NpyFileAt::attach(const std::string& path, DType dtype, std::vector<int64_t> shape) {
  NpyHeader h;
  h.dtype = dtype;
  h.shape = shape;
  NpyFileAt f;
  f.path_ = path;
  f.tmp_path_ = path + ".tmp";
  f.header_bytes_ = static_cast<int64_t>(make_npy_header(dtype, shape).size());
  f.data_bytes_ = static_cast<int64_t>(h.data_bytes());
  f.fd_ = ::open(f.tmp_path_.c_str(), O_WRONLY | O_CLOEXEC);
  PARTITA_CHECK(f.fd_ >= 0, IoError, "{}: cannot open for writing: {}", f.tmp_path_,
                std::strerror(errno));
  return f;
}

NpyFileAt::NpyFileAt(NpyFileAt&& o) noexcept { *this = std::move(o); }

NpyFileAt& NpyFileAt::operator=(NpyFileAt&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    tmp_path_ = std::move(o.tmp_path_);
    fd_ = std::exchange(o.fd_, -1);
    header_bytes_ = o.header_bytes_;
    data_bytes_ = o.data_bytes_;
    creator_ = std::exchange(o.creator_, false);
    finished_ = o.finished_;
  }
  return *this;
}

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
  const uint32_t crc = crc32_file(tmp_path_);
  PARTITA_CHECK(::rename(tmp_path_.c_str(), path_.c_str()) == 0, IoError,
                "{}: cannot rename into place: {}", path_, std::strerror(errno));
  finished_ = true;
  return crc;
}

}  // namespace partita::partition
