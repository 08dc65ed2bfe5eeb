#include "gz_reader.h"

#include <fast_float/fast_float.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace partita::data {
namespace {

constexpr int kBuffers = 3;                         // blocks in flight: parsed, ready, filling
constexpr size_t kInputBytes = size_t{1} << 20;     // compressed bytes per read()
constexpr size_t kMaxLineBytes = size_t{64} << 20;  // a longer line is an error

}  // namespace

struct GzLineReader::Shared {
  struct Buffer {
    std::vector<char> data;
    size_t len = 0;  // bytes of whole lines in data
    int64_t first_line = 1;
  };

  // Owned by the decompressing thread.
  std::string path;
  size_t block_bytes = 0;
  int fd = -1;
  z_stream strm{};
  bool strm_ready = false;
  std::vector<unsigned char> input;
  int64_t input_total = 0;   // compressed bytes read so far
  bool file_eof = false;     // read() returned 0
  bool member_done = false;  // the last gzip member ended with its trailer
  std::vector<char> carry;   // incomplete last line of the previous block
  int64_t next_line = 1;     // number of the first line of the buffer being filled
  // Text of that buffer inflated so far (the carry included), for error line numbers.
  const char* filling = nullptr;

  // Shared between the threads, guarded by `mutex`.
  std::mutex mutex;
  std::condition_variable cv;
  Buffer buffers[kBuffers];
  std::deque<int> free_buffers, ready_buffers;
  int held = -1;  // buffer the consumer is reading
  bool done = false, stop = false;
  std::exception_ptr error;
  std::thread thread;

  ~Shared() {
    if (strm_ready) inflateEnd(&strm);
    if (fd >= 0) ::close(fd);
  }

  // Names the line being inflated when `what` happened: the first line of the buffer plus
  // the newlines inflated into it so far (not just the buffer's first line, which with
  // 8 MiB buffers can be a million lines earlier).
  [[noreturn]] void fail(const std::string& what) const {
    int64_t line = next_line;
    if (filling != nullptr)
      line += std::count(filling, reinterpret_cast<const char*>(strm.next_out), '\n');
    throw FormatError(fmt::format("{}: line {}: {}", path, line, what));
  }

  // Reads more compressed input; false at the end of the file.
  bool refill() {
    ssize_t n;
    do {
      n = ::read(fd, input.data(), input.size());
    } while (n < 0 && errno == EINTR);
    PARTITA_CHECK(n >= 0, IoError, "{}: read failed: {}", path, std::strerror(errno));
    if (n == 0) {
      file_eof = true;
      return false;
    }
    if (input_total == 0 && (n < 2 || input[0] != 0x1f || input[1] != 0x8b)) {
      throw FormatError(fmt::format("{}: not a gzip file (bad magic bytes)", path));
    }
    input_total += n;
    strm.next_in = input.data();
    strm.avail_in = static_cast<uInt>(n);
    return true;
  }

  // Inflates into out[0, cap); returns the bytes produced. Sets *eof at the clean end.
  size_t inflate_some(char* out, size_t cap, bool* eof) {
    strm.next_out = reinterpret_cast<Bytef*>(out);
    strm.avail_out = static_cast<uInt>(std::min<size_t>(cap, 1u << 30));
    const uInt avail = strm.avail_out;
    while (strm.avail_out > 0) {
      if (strm.avail_in == 0 && (file_eof || !refill())) {
        if (input_total == 0) fail("empty file, not a gzip stream");
        if (!member_done) fail("truncated gzip stream (ends without the gzip trailer)");
        *eof = true;
        break;
      }
      if (member_done) {  // more bytes after a complete member: another member must follow
        if (strm.next_in[0] != 0x1f) fail("trailing garbage after the gzip stream");
        PARTITA_CHECK(inflateReset(&strm) == Z_OK, Error, "{}: inflateReset failed", path);
        member_done = false;
      }
      int rc = inflate(&strm, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done = true;
      } else if (rc == Z_MEM_ERROR) {
        throw Error(fmt::format("{}: out of memory while decompressing", path));
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(fmt::format("corrupt gzip data ({})", strm.msg != nullptr ? strm.msg : "error"));
      }
    }
    return avail - strm.avail_out;
  }

  // Fills `buf` with the carried-over partial line plus fresh text, cut after the last
  // newline. Returns true at the end of the file.
  bool fill(Buffer& buf) {
    if (buf.data.size() < std::max(block_bytes, 2 * carry.size())) {
      buf.data.resize(std::max(block_bytes, 2 * carry.size()));
    }
    std::copy(carry.begin(), carry.end(), buf.data.begin());
    size_t filled = carry.size();
    carry.clear();
    bool eof = false;
    while (true) {
      filling = buf.data.data();  // after a resize too
      filled += inflate_some(buf.data.data() + filled, buf.data.size() - filled, &eof);
      if (eof) {
        buf.len = filled;
        break;
      }
      const char* base = buf.data.data();
      const void* nl = ::memrchr(base, '\n', filled);
      if (nl != nullptr) {
        buf.len = static_cast<size_t>(static_cast<const char*>(nl) - base) + 1;
        carry.assign(base + buf.len, base + filled);
        break;
      }
      if (buf.data.size() >= kMaxLineBytes) fail("line longer than 64 MiB");  // no '\n' in it
      buf.data.resize(buf.data.size() * 2);  // one line longer than the block: grow
    }
    filling = nullptr;
    buf.first_line = next_line;
    next_line += std::count(buf.data.data(), buf.data.data() + buf.len, '\n');
    return eof;
  }

  void run() {
    try {
      while (true) {
        int b;
        {
          std::unique_lock<std::mutex> lock(mutex);
          cv.wait(lock, [&] { return stop || !free_buffers.empty(); });
          if (stop) return;
          b = free_buffers.front();
          free_buffers.pop_front();
        }
        const bool eof = fill(buffers[b]);
        std::lock_guard<std::mutex> lock(mutex);
        (buffers[b].len > 0 ? ready_buffers : free_buffers).push_back(b);
        done = eof;
        cv.notify_all();
        if (eof) return;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      error = std::current_exception();
      done = true;
      cv.notify_all();
    }
  }
};

GzLineReader::GzLineReader(const std::string& path, size_t block_bytes)
    : path_(path), shared_(std::make_unique<Shared>()) {
  Shared& s = *shared_;
  s.path = path;
  s.block_bytes = std::max<size_t>(block_bytes, 64);
  s.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block
  PARTITA_CHECK(s.fd >= 0, IoError, "{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  PARTITA_CHECK(::fstat(s.fd, &st) == 0 && S_ISREG(st.st_mode), IoError,
                "{}: not a readable regular file", path);
  compressed_bytes_ = static_cast<int64_t>(st.st_size);
  PARTITA_CHECK(inflateInit2(&s.strm, 15 + 16) == Z_OK, Error, "{}: inflateInit2 failed",
                path);  // 15 + 16: gzip wrapper only
  s.strm_ready = true;
  s.input.resize(kInputBytes);
  for (int b = 0; b < kBuffers; ++b) s.free_buffers.push_back(b);
  s.thread = std::thread([&s] { s.run(); });
}

GzLineReader::~GzLineReader() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stop = true;
    shared_->cv.notify_all();
  }
  shared_->thread.join();
}

bool GzLineReader::next(TextBlock* block) {
  Shared& s = *shared_;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.held >= 0) {
    s.free_buffers.push_back(s.held);
    s.held = -1;
    s.cv.notify_all();
  }
  s.cv.wait(lock, [&] { return !s.ready_buffers.empty() || s.done; });
  if (s.ready_buffers.empty()) {  // blocks read before an error are delivered first
    if (s.error) std::rethrow_exception(s.error);
    return false;
  }
  s.held = s.ready_buffers.front();
  s.ready_buffers.pop_front();
  const Shared::Buffer& buf = s.buffers[s.held];
  block->begin = buf.data.data();
  block->end = buf.data.data() + buf.len;
  block->first_line = buf.first_line;
  text_bytes_ += static_cast<int64_t>(buf.len);
  return true;
}

MemoryLineReader::MemoryLineReader(std::string path, const char* text, size_t size,
                                   size_t block_bytes)
    : path_(std::move(path)),
      text_(text),
      size_(size),
      block_bytes_(std::max<size_t>(block_bytes, 1)) {}

bool MemoryLineReader::next(TextBlock* block) {
  if (pos_ >= size_) return false;
  const char* begin = text_ + pos_;
  const size_t left = size_ - pos_;
  // Cut after the last newline within block_bytes, else after the first one beyond.
  const void* nl = ::memrchr(begin, '\n', std::min(left, block_bytes_));
  if (nl == nullptr) nl = std::memchr(begin, '\n', left);
  const size_t len =
      nl != nullptr ? static_cast<size_t>(static_cast<const char*>(nl) - begin) + 1 : left;
  block->begin = begin;
  block->end = begin + len;
  block->first_line = next_line_;
  next_line_ += std::count(block->begin, block->end, '\n');
  pos_ += len;
  return true;
}

std::string quote_field(const char* begin, const char* end) {
  if (begin == end) return "empty field";
  const size_t n = static_cast<size_t>(end - begin);
  std::string s(begin, std::min<size_t>(n, 24));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return "'" + s + (n > 24 ? "...'" : "'");
}

bool parse_int_field(const char* begin, const char* end, int64_t* value) {
  auto r = std::from_chars(begin, end, *value);
  return r.ec == std::errc() && r.ptr == end && begin != end;
}

int64_t parse_int_line(const std::string& path, const char* begin, const char* end, int64_t line) {
  int64_t v = 0;
  if (parse_int_field(begin, end, &v)) return v;
  if (count_fields(begin, end) != 1) {
    throw FormatError(fmt::format("{}: line {}: expected 1 value, found {}", path, line,
                                  count_fields(begin, end)));
  }
  throw FormatError(
      fmt::format("{}: line {}: {} is not an integer", path, line, quote_field(begin, end)));
}

void parse_int_pair_line(const std::string& path, const char* begin, const char* end, int64_t line,
                         int64_t* a, int64_t* b) {
  const char* comma = static_cast<const char*>(std::memchr(begin, ',', end - begin));
  if (comma != nullptr && parse_int_field(begin, comma, a) && parse_int_field(comma + 1, end, b))
    return;
  const int64_t fields = count_fields(begin, end);
  if (fields != 2) {
    throw FormatError(
        fmt::format("{}: line {}: expected 2 values (src,dst), found {}", path, line, fields));
  }
  const char* bad_end = parse_int_field(begin, comma, a) ? end : comma;
  const char* bad_begin = bad_end == end ? comma + 1 : begin;
  throw FormatError(fmt::format("{}: line {}: {} is not an integer", path, line,
                                quote_field(bad_begin, bad_end)));
}

namespace {

// Clinger's fast path: a decimal "[-]digits[.digits]" whose digits form an integer
// m <= 2^53 with k <= 22 fraction digits is exactly m / 10^k, and double(m) / 1e<k> is
// that value correctly rounded to double (one IEEE division of exact operands). Rounding
// that double to float is then exact too unless it sits exactly halfway between two floats
// (the only case where double rounding can differ), which goes to fast_float like
// anything else unusual (exponents, long mantissas, "1.", malformed text): nullptr.
// Feature files are mostly such short decimals, and this is several times faster.
inline const char* parse_simple_float(const char* p, const char* end, float* out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = p < end && *p == '-';
  p += negative;
  const char* const first = p;
  uint64_t m = 0;
  int digits = 0, k = 0;
  while (p < end && static_cast<unsigned>(*p - '0') < 10 && digits < 19) {
    m = m * 10 + static_cast<uint64_t>(*p++ - '0');
    ++digits;
  }
  if (p == first) return nullptr;
  if (p < end && *p == '.') {
    const char* const fraction = ++p;
    while (p < end && static_cast<unsigned>(*p - '0') < 10 && digits < 19) {
      m = m * 10 + static_cast<uint64_t>(*p++ - '0');
      ++digits;
    }
    k = static_cast<int>(p - fraction);
    if (k == 0) return nullptr;
  }
  if (m > (uint64_t{1} << 53) || k > 22 || (p < end && *p != ',')) return nullptr;
  const double d = static_cast<double>(m) / kPow10[k];
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  if ((bits & ((uint64_t{1} << 29) - 1)) == (uint64_t{1} << 28)) return nullptr;  // halfway
  const float v = static_cast<float>(d);
  *out = negative ? -v : v;
  return p;
}

}  // namespace

void parse_float_row(const std::string& path, const char* begin, const char* end, int64_t line,
                     int64_t cols, float* out) {
  const char* p = begin;
  for (int64_t j = 0; j < cols; ++j) {
    if (end - p >= 2 && static_cast<unsigned>(p[0] - '0') < 10 && p[1] == ',' && j + 1 < cols) {
      out[j] = static_cast<float>(p[0] - '0');  // one digit: bag-of-words files
      p += 2;
      continue;
    }
    if (const char* q = parse_simple_float(p, end, &out[j])) {
      p = q;
      if (j + 1 < cols) {
        if (p == end) {
          throw FormatError(
              fmt::format("{}: line {}: expected {} values, found {}", path, line, cols, j + 1));
        }
        ++p;  // the comma
      }
      continue;
    }
    auto r = fast_float::from_chars(p, end, out[j]);
    if (r.ec != std::errc() || (r.ptr != end && *r.ptr != ',')) {
      const char* field_end = static_cast<const char*>(std::memchr(p, ',', end - p));
      throw FormatError(fmt::format("{}: line {}: field {}: {} is not a number", path, line, j + 1,
                                    quote_field(p, field_end ? field_end : end)));
    }
    if (!std::isfinite(out[j])) {
      throw FormatError(fmt::format("{}: line {}: field {}: {} is not a finite float32", path, line,
                                    j + 1, quote_field(p, r.ptr)));
    }
    p = r.ptr;
    if (j + 1 < cols) {
      if (p == end) {
        throw FormatError(
            fmt::format("{}: line {}: expected {} values, found {}", path, line, cols, j + 1));
      }
      ++p;  // the comma
    }
  }
  if (p != end) {
    throw FormatError(fmt::format("{}: line {}: expected {} values, found {}", path, line, cols,
                                  count_fields(begin, end)));
  }
}

int64_t count_fields(const char* begin, const char* end) { return 1 + std::count(begin, end, ','); }

}  // namespace partita::data
