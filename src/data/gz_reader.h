#pragma once
// Streaming reader of gzip-compressed text files, delivered as blocks of whole lines, and
// the line/field helpers the CSV parsers share. Private to data/.
//
// The CSV parsers read from a LineSource, so the same code parses a file (GzLineReader)
// and text in memory (MemoryLineReader: unit tests and the fuzz targets under fuzz/).
//
// Contract: GzLineReader decompresses on a background thread (one per open reader) into
// three buffers of block_bytes (a buffer grows only to hold one longer line, up to 64 MiB),
// so parsing one block overlaps inflating the next. Every failure (open/read error, corrupt
// data, a stream that ends without its gzip trailer, trailing garbage) is thrown from next()
// as IoError/FormatError whose message starts with the file path. A reader is used by one
// thread; destroying it stops and joins its background thread promptly.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "partita/core/error.h"

namespace partita::data {

// A run of complete lines: [begin, end) starts at a line start and ends right after a '\n',
// or at the end of the file for a last line without newline.
struct TextBlock {
  const char* begin = nullptr;
  const char* end = nullptr;
  int64_t first_line = 1;  // 1-based number of the line starting at `begin`
};

// Blocks of whole lines from somewhere. Used by one thread.
class LineSource {
 public:
  virtual ~LineSource() = default;
  // Next block of lines; false at the end. The block stays valid until the next call.
  virtual bool next(TextBlock* block) = 0;
  // Names the source in error messages.
  virtual const std::string& path() const = 0;
  // An upper bound on the text bytes the whole source can deliver, known before reading
  // it: counts claimed by other files are checked against it before allocating for them.
  virtual int64_t max_text_bytes() const = 0;
  // What that bound comes from, for messages: "a file of N compressed bytes".
  virtual std::string size_text() const = 0;
};

// Largest number of decompressed bytes a deflate stream of `compressed` bytes can hold
// (deflate cannot compress better than 1032:1). Used to reject counts a file cannot back
// before allocating for them.
inline int64_t max_inflated_bytes(int64_t compressed) { return compressed * 1032 + 4096; }

class GzLineReader : public LineSource {
 public:
  static constexpr size_t kDefaultBlockBytes = size_t{8} << 20;
  // Opens `path` (IoError naming it if that fails) and starts decompressing.
  explicit GzLineReader(const std::string& path, size_t block_bytes = kDefaultBlockBytes);
  ~GzLineReader() override;  // stops and joins the background thread
  GzLineReader(const GzLineReader&) = delete;
  GzLineReader& operator=(const GzLineReader&) = delete;

  // Rethrows any error of the decompressing thread.
  bool next(TextBlock* block) override;

  const std::string& path() const override { return path_; }
  int64_t max_text_bytes() const override { return max_inflated_bytes(compressed_bytes_); }
  std::string size_text() const override {
    return "a file of " + std::to_string(compressed_bytes_) + " compressed bytes";
  }
  int64_t compressed_bytes() const { return compressed_bytes_; }  // file size
  int64_t text_bytes() const { return text_bytes_; }  // decompressed bytes delivered so far

 private:
  struct Shared;
  std::string path_;
  int64_t compressed_bytes_ = 0;
  int64_t text_bytes_ = 0;
  std::unique_ptr<Shared> shared_;
};

// Text already in memory (not owned; it must outlive the reader), delivered like
// GzLineReader delivers a file: blocks of whole lines of about `block_bytes` (a longer line
// makes a longer block), the last one possibly without its newline.
class MemoryLineReader : public LineSource {
 public:
  MemoryLineReader(std::string path, const char* text, size_t size,
                   size_t block_bytes = GzLineReader::kDefaultBlockBytes);
  bool next(TextBlock* block) override;
  const std::string& path() const override { return path_; }
  int64_t max_text_bytes() const override { return static_cast<int64_t>(size_); }
  std::string size_text() const override { return std::to_string(size_) + " bytes of text"; }

 private:
  std::string path_;
  const char* text_;
  size_t size_;
  size_t block_bytes_;
  size_t pos_ = 0;
  int64_t next_line_ = 1;
};

// Calls fn(line_begin, line_end, line_number) for every non-empty line, with a trailing
// '\r' removed. Empty lines are accepted only at the end of the file; an empty line followed
// by data is a FormatError. Returns the number of non-empty lines.
template <class Fn>
int64_t for_each_line(LineSource& reader, Fn&& fn) {
  TextBlock block;
  int64_t lines = 0;
  int64_t first_blank = 0;  // number of the first empty line seen, 0 if none
  while (reader.next(&block)) {
    const char* p = block.begin;
    int64_t number = block.first_line;
    while (p < block.end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', block.end - p));
      const char* e = nl != nullptr ? nl : block.end;
      const char* le = (e > p && e[-1] == '\r') ? e - 1 : e;
      if (le == p) {
        if (first_blank == 0) first_blank = number;
      } else {
        PARTITA_CHECK(first_blank == 0, FormatError, "{}: line {}: empty line", reader.path(),
                      first_blank);
        fn(p, le, number);
        ++lines;
      }
      p = nl != nullptr ? nl + 1 : block.end;
      ++number;
    }
  }
  return lines;
}

// Quotes a field for an error message: at most 24 characters, "..." when cut.
std::string quote_field(const char* begin, const char* end);

// Parses a whole field [begin, end) as a decimal int64; false if it is not one.
bool parse_int_field(const char* begin, const char* end, int64_t* value);

// Parses a line holding exactly one integer. Throws FormatError "<path>: line N: ...".
int64_t parse_int_line(const std::string& path, const char* begin, const char* end, int64_t line);

// Parses a line "a,b" of two integers. Throws FormatError "<path>: line N: ...".
void parse_int_pair_line(const std::string& path, const char* begin, const char* end, int64_t line,
                         int64_t* a, int64_t* b);

// Parses a line of exactly `cols` comma-separated finite floats into out[0..cols).
// Throws FormatError "<path>: line N: ..." naming the field and the problem.
void parse_float_row(const std::string& path, const char* begin, const char* end, int64_t line,
                     int64_t cols, float* out);

// Number of comma-separated fields in [begin, end).
int64_t count_fields(const char* begin, const char* end);

}  // namespace partita::data
