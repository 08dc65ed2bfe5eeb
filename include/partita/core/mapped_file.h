#pragma once
// Read-only memory map of a whole file. Move-only; unmaps on destruction.
// An empty file maps to data() == nullptr, size() == 0.
#include <cstddef>
#include <string>

namespace partita {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws IoError naming `path` if it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Tells the kernel the pages in [offset, offset+length) will not be needed soon, so a
  // sequential pass over a large file does not keep it all resident.
  void release(size_t offset, size_t length) const;

 private:
  void reset();
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace partita
