#include "partita/core/npy.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "partita/core/log.h"

namespace partita {
namespace {

constexpr size_t kMaxHeaderBytes = 1 << 20;  // numpy's own headers are < 100 bytes
constexpr size_t kWriteBufferBytes = 8 << 20;

struct DTypeInfo {
  DType dtype;
  const char* descr;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kBool, "|b1", "bool", 1},       {DType::kUInt8, "|u1", "uint8", 1},
    {DType::kInt32, "<i4", "int32", 4},     {DType::kInt64, "<i8", "int64", 8},
    {DType::kFloat32, "<f4", "float32", 4}, {DType::kFloat64, "<f8", "float64", 8},
    {DType::kFloat16, "<f2", "float16", 2}, {DType::kBFloat16, "<u2", "bfloat16", 2},
};

const DTypeInfo& info(DType dtype) {
  for (const auto& i : kDTypes)
    if (i.dtype == dtype) return i;
  throw Error("internal: unknown dtype");
}

// Parser for the Python dict literal of a .npy header.
class HeaderDictParser {
 public:
  HeaderDictParser(const char* text, size_t size, const std::string& path)
      : p_(text), end_(text + size), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        std::string descr = parse_string();
        h.dtype = dtype_from_descr(descr);
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran_ = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unknown header key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail("expected ',' or '}' in header");
    }
    if (!have_descr || !have_order || !have_shape)
      fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    // A 1-D (or 0-D) array is the same in both orders.
    h.fortran_order = fortran_ && h.shape.size() > 1;
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(fmt::format("{}: not a valid .npy file: {}", path_, what));
  }
  char peek() const { return p_ < end_ ? *p_ : '\0'; }
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(fmt::format("expected '{}' in header", c));
    ++p_;
  }
  std::string parse_string() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string in header");
    ++p_;
    const char* start = p_;
    while (p_ < end_ && *p_ != quote) ++p_;
    if (p_ >= end_) fail("unterminated string in header");
    std::string s(start, p_);
    ++p_;
    return s;
  }
  bool parse_bool() {
    skip_space();
    if (end_ - p_ >= 4 && std::strncmp(p_, "True", 4) == 0) {
      p_ += 4;
      return true;
    }
    if (end_ - p_ >= 5 && std::strncmp(p_, "False", 5) == 0) {
      p_ += 5;
      return false;
    }
    fail("expected True or False for 'fortran_order'");
  }
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("shape must be a tuple of non-negative integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("shape dimension too large");
        v = v * 10 + (*p_ - '0');
        ++p_;
      }
      while (peek() == 'L') ++p_;  // Python 2 longs
      shape.push_back(v);
      if (shape.size() > 32) fail("too many dimensions");
      skip_space();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      skip_space();
      if (peek() != ')') fail("expected ',' or ')' in shape");
    }
    ++p_;
    return shape;
  }
  DType dtype_from_descr(const std::string& descr) const {
    std::string d = descr;
    // '=' (native) and '<' mean little-endian on every machine we run on.
    if (!d.empty() && d[0] == '=') d[0] = '<';
    if (d == "<b1") d = "|b1";
    if (d == "<u1") d = "|u1";
    for (const auto& i : kDTypes)
      if (d == i.descr) return i.dtype;
    fail("unsupported dtype '" + descr +
         "' (supported: bool, uint8, int32, int64, float32, float64, float16, bfloat16 as "
         "<u2, little-endian)");
  }

  const char* p_;
  const char* end_;
  const std::string& path_;
  bool fortran_ = false;
};

// Copies a Fortran-order array of `shape` (the first index varies fastest in `from`) into
// C order (the last index varies fastest). Reads sequentially, writes with C strides.
template <size_t kSize>
void fortran_to_c(const unsigned char* from, unsigned char* to, const std::vector<int64_t>& shape) {
  const size_t ndim = shape.size();
  std::vector<int64_t> c_stride(ndim, 1), index(ndim, 0);
  for (size_t d = ndim - 1; d > 0; --d) c_stride[d - 1] = c_stride[d] * shape[d];
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  int64_t c = 0;
  for (int64_t f = 0; f < elements; ++f) {
    std::memcpy(to + static_cast<size_t>(c) * kSize, from + static_cast<size_t>(f) * kSize, kSize);
    for (size_t d = 0; d < ndim; ++d) {  // next Fortran index: the first dimension first
      c += c_stride[d];
      if (++index[d] < shape[d]) break;
      c -= c_stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

void fortran_to_c(const unsigned char* from, unsigned char* to, const NpyHeader& h) {
  switch (dtype_size(h.dtype)) {
    case 1:
      return fortran_to_c<1>(from, to, h.shape);
    case 2:
      return fortran_to_c<2>(from, to, h.shape);
    case 4:
      return fortran_to_c<4>(from, to, h.shape);
    default:
      return fortran_to_c<8>(from, to, h.shape);
  }
}

uint32_t read_le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

const char* dtype_descr(DType dtype) { return info(dtype).descr; }
const char* dtype_name(DType dtype) { return info(dtype).name; }
size_t dtype_size(DType dtype) { return info(dtype).size; }

const NameTable<DType>& feature_dtype_names() {
  static const NameTable<DType> names{{dtype_name(DType::kFloat32), DType::kFloat32},
                                      {dtype_name(DType::kFloat16), DType::kFloat16},
                                      {dtype_name(DType::kBFloat16), DType::kBFloat16}};
  return names;
}

DType dtype_from_name(const std::string& name, const std::string& what) {
  for (const auto& i : kDTypes)
    if (name == i.name) return i.dtype;
  throw FormatError(fmt::format("{}: unknown dtype '{}'", what, name));
}

int64_t NpyHeader::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // overflow excluded by parse_npy_header
  return n;
}

std::string NpyHeader::shape_string() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

NpyHeader parse_npy_header(const unsigned char* bytes, size_t size, size_t file_size,
                           const std::string& path) {
  static const unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  PARTITA_CHECK(size >= 10 && std::memcmp(bytes, kMagic, 6) == 0, FormatError,
                "{}: not a .npy file (bad magic or shorter than 10 bytes)", path);
  const int major = bytes[6];
  PARTITA_CHECK(major >= 1 && major <= 3, FormatError, "{}: unsupported .npy version {}.{}", path,
                major, static_cast<int>(bytes[7]));
  const size_t prefix = major == 1 ? 10 : 12;
  PARTITA_CHECK(size >= prefix, FormatError, "{}: truncated .npy header", path);
  const size_t header_len = read_le(bytes + 8, major == 1 ? 2 : 4);
  PARTITA_CHECK(header_len <= kMaxHeaderBytes, FormatError,
                "{}: .npy header length {} is implausible", path, header_len);
  PARTITA_CHECK(prefix + header_len <= size, FormatError,
                "{}: truncated .npy header (claims {} bytes, file has {})", path,
                prefix + header_len, size);
  HeaderDictParser parser(reinterpret_cast<const char*>(bytes + prefix), header_len, path);
  NpyHeader h = parser.parse();
  h.data_offset = prefix + header_len;

  // Element and byte counts must fit; a lying header must not lead to a huge allocation.
  uint64_t elements = 1;
  for (int64_t d : h.shape) {
    PARTITA_CHECK(!__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements) &&
                      elements <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                  FormatError, "{}: shape {} is too large", path, h.shape_string());
  }
  uint64_t data_bytes = 0;
  PARTITA_CHECK(!__builtin_mul_overflow(elements, dtype_size(h.dtype), &data_bytes), FormatError,
                "{}: shape {} is too large", path, h.shape_string());
  const uint64_t have = file_size - h.data_offset;
  PARTITA_CHECK(have >= data_bytes, FormatError,
                "{}: truncated: header claims shape {} ({} bytes of data) but the file holds {}",
                path, h.shape_string(), data_bytes, have);
  PARTITA_CHECK(have == data_bytes, FormatError,
                "{}: {} unexpected bytes after the data of shape {}", path, have - data_bytes,
                h.shape_string());
  return h;
}

std::string make_npy_header(DType dtype, const std::vector<int64_t>& shape) {
  NpyHeader h;
  h.dtype = dtype;
  h.shape = shape;
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 dtype_descr(dtype), h.shape_string());
  size_t total = 10 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  const size_t len = dict.size();
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>(len >> 8));
  return out + dict;
}

NpyArray NpyArray::open(const std::string& path) {
  NpyArray a;
  a.file_ = MappedFile(path);
  a.header_ = parse_npy_header(a.file_.data(), a.file_.size(), a.file_.size(), path);
  // The mapping starts on a page boundary, so the offset alone decides the alignment.
  const size_t bytes = a.header_.data_bytes();
  if (bytes > 0 && a.header_.fortran_order) {
    a.aligned_copy_.resize((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    fortran_to_c(a.file_.data() + a.header_.data_offset,
                 reinterpret_cast<unsigned char*>(a.aligned_copy_.data()), a.header_);
    a.file_.release(a.header_.data_offset, bytes);
    log_info("{}: Fortran-order array of shape {} copied into C order ({} in memory)", path,
             a.header_.shape_string(), format_bytes(static_cast<double>(bytes)));
  } else if (bytes > 0 && a.header_.data_offset % dtype_size(a.header_.dtype) != 0) {
    a.aligned_copy_.resize((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(a.aligned_copy_.data(), a.file_.data() + a.header_.data_offset, bytes);
  }
  return a;
}

const unsigned char* NpyArray::data() const {
  if (!aligned_copy_.empty()) return reinterpret_cast<const unsigned char*>(aligned_copy_.data());
  return file_.data() + header_.data_offset;
}

void NpyArray::expect_dtype(DType dtype) const {
  PARTITA_CHECK(header_.dtype == dtype, FormatError, "{}: expected dtype {}, found {}", path(),
                dtype_name(dtype), dtype_name(header_.dtype));
}

void NpyArray::expect(DType dtype, int ndim) const {
  expect_dtype(dtype);
  PARTITA_CHECK(this->ndim() == ndim, FormatError, "{}: expected {} dimension(s), found shape {}",
                path(), ndim, header_.shape_string());
}

void NpyArray::release_elements(int64_t begin, int64_t end) const {
  if (copied()) return;  // the copy is the data now; the file's pages are not read again
  const size_t esize = dtype_size(header_.dtype);
  file_.release(header_.data_offset + static_cast<size_t>(begin) * esize,
                static_cast<size_t>(end - begin) * esize);
}

NpyWriter::NpyWriter(const std::string& path, DType dtype, std::vector<int64_t> shape)
    : path_(path), tmp_path_(path + ".tmp") {
  NpyHeader h;
  h.dtype = dtype;
  h.shape = std::move(shape);
  expected_bytes_ = h.data_bytes();
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  PARTITA_CHECK(fd_ >= 0, IoError, "{}: cannot create: {}", tmp_path_, std::strerror(errno));
  buffer_.reserve(kWriteBufferBytes);
  std::string header = make_npy_header(dtype, h.shape);
  buffer_.insert(buffer_.end(), header.begin(), header.end());
}

NpyWriter::~NpyWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) ::unlink(tmp_path_.c_str());
}

void NpyWriter::write(const void* data, size_t bytes) {
  PARTITA_CHECK(written_bytes_ + bytes <= expected_bytes_, Error,
                "{}: internal: writing more data than the shape holds", path_);
  written_bytes_ += bytes;
  const unsigned char* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    size_t take = std::min(bytes, kWriteBufferBytes - buffer_.size());
    buffer_.insert(buffer_.end(), p, p + take);
    p += take;
    bytes -= take;
    if (buffer_.size() == kWriteBufferBytes) flush_buffer();
  }
}

void NpyWriter::flush_buffer() {
  crc_ = crc32_update(crc_, buffer_.data(), buffer_.size());
  size_t off = 0;
  while (off < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + off, buffer_.size() - off);
    if (n < 0 && errno == EINTR) continue;
    PARTITA_CHECK(n > 0, IoError, "{}: write failed: {}", tmp_path_, std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  buffer_.clear();
}

uint32_t NpyWriter::finish() {
  PARTITA_CHECK(written_bytes_ == expected_bytes_, Error,
                "{}: internal: wrote {} bytes of data, shape needs {}", path_, written_bytes_,
                expected_bytes_);
  flush_buffer();
  int rc = ::close(fd_);
  fd_ = -1;
  PARTITA_CHECK(rc == 0, IoError, "{}: close failed: {}", tmp_path_, std::strerror(errno));
  PARTITA_CHECK(::rename(tmp_path_.c_str(), path_.c_str()) == 0, IoError,
                "{}: cannot rename into place: {}", path_, std::strerror(errno));
  finished_ = true;
  return crc_;
}

uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes) {
  const Bytef* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (bytes > 0) {
    uInt take = static_cast<uInt>(std::min<size_t>(bytes, 1u << 30));
    c = ::crc32(c, p, take);
    p += take;
    bytes -= take;
  }
  return static_cast<uint32_t>(c);
}

uint32_t crc32_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  PARTITA_CHECK(fd >= 0, IoError, "{}: cannot open: {}", path, std::strerror(errno));
  std::vector<unsigned char> buf(kWriteBufferBytes);
  uint32_t crc = 0;
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw IoError(fmt::format("{}: read failed: {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    crc = crc32_update(crc, buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return crc;
}

}  // namespace partita
