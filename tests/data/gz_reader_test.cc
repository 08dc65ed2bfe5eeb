// GzLineReader with tiny blocks: lines split across buffer boundaries, CRLF, a missing
// final newline, lines longer than a block, multi-member gzip files.
#include "gz_reader.h"

#include <fast_float/fast_float.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <vector>

#include "helpers/test_paths.h"
#include "partita/core/random.h"

namespace partita::data {
namespace {

using partita::testing::read_file;
using partita::testing::TempDir;
using partita::testing::write_file;
using partita::testing::write_gz;

struct Line {
  std::string text;
  int64_t number;
  bool operator==(const Line& o) const { return text == o.text && number == o.number; }
};

std::vector<Line> read_lines(const std::string& path, size_t block_bytes) {
  GzLineReader reader(path, block_bytes);
  std::vector<Line> lines;
  for_each_line(reader, [&](const char* b, const char* e, int64_t number) {
    lines.push_back({std::string(b, e), number});
  });
  return lines;
}

TEST(GzLineReader, LinesAcrossBlockBoundaries) {
  TempDir dir;
  std::string text;
  std::vector<Line> want;
  for (int i = 0; i < 500; ++i) {
    std::string line = std::to_string(i) + "," + std::string(static_cast<size_t>(i % 37), 'x');
    text += line + (i % 3 == 0 ? "\r\n" : "\n");
    want.push_back({line, i + 1});
  }
  text += "last-without-newline";
  want.push_back({"last-without-newline", 501});
  write_gz(dir / "a.gz", text);
  for (size_t block : {size_t{64}, size_t{100}, size_t{4096}, size_t{8} << 20}) {
    EXPECT_EQ(read_lines(dir / "a.gz", block), want) << "block " << block;
  }
  GzLineReader reader(dir / "a.gz", 64);
  for_each_line(reader, [](const char*, const char*, int64_t) {});
  EXPECT_EQ(reader.text_bytes(), static_cast<int64_t>(text.size()));
}

// The text-in-memory source (unit tests, fuzz/) cuts lines into blocks like the file reader.
TEST(MemoryLineReader, BlocksOfWholeLinesLikeGzLineReader) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 300; ++i)
    text += std::to_string(i) + std::string(static_cast<size_t>(i % 91), 'y') + "\r\n";
  text += "\n\nlast";  // blank lines inside the file: an error at the same line
  write_gz(dir / "a.gz", text);
  auto lines = [](LineSource& source) {
    std::vector<Line> out;
    try {
      for_each_line(source, [&](const char* b, const char* e, int64_t number) {
        out.push_back({std::string(b, e), number});
      });
    } catch (const FormatError& e) {
      out.push_back({e.what(), -1});
    }
    return out;
  };
  GzLineReader file(dir / "a.gz", 64);
  const std::vector<Line> want = lines(file);
  ASSERT_EQ(want.size(), 301u);
  EXPECT_EQ(want.back().text, dir / "a.gz: line 301: empty line");
  for (size_t block : {size_t{1}, size_t{7}, size_t{64}, text.size(), text.size() + 1}) {
    MemoryLineReader memory(dir / "a.gz", text.data(), text.size(), block);
    EXPECT_EQ(lines(memory), want) << "block " << block;
  }
  MemoryLineReader empty("e", text.data(), 0);
  TextBlock block;
  EXPECT_FALSE(empty.next(&block));
}

TEST(GzLineReader, LineLongerThanBlock) {
  TempDir dir;
  const std::string long_line(10000, '7');
  write_gz(dir / "a.gz", "1\n" + long_line + "\n2\n");
  std::vector<Line> want = {{"1", 1}, {long_line, 2}, {"2", 3}};
  EXPECT_EQ(read_lines(dir / "a.gz", 64), want);
}

TEST(GzLineReader, TrailingBlankLinesAndEmptyFile) {
  TempDir dir;
  write_gz(dir / "a.gz", "1\n2\n\n\r\n\n");
  EXPECT_EQ(read_lines(dir / "a.gz", 64), (std::vector<Line>{{"1", 1}, {"2", 2}}));
  write_gz(dir / "b.gz", "");
  EXPECT_TRUE(read_lines(dir / "b.gz", 64).empty());
}

TEST(GzLineReader, MultiMemberGzip) {
  TempDir dir;
  write_gz(dir / "a.gz", "1\n2\n3");
  write_gz(dir / "b.gz", "4\n5\n");
  write_file(dir / "c.gz", read_file(dir / "a.gz") + read_file(dir / "b.gz"));
  // Members join like `cat`: "3" and "4" are one line.
  EXPECT_EQ(read_lines(dir / "c.gz", 64),
            (std::vector<Line>{{"1", 1}, {"2", 2}, {"34", 3}, {"5", 4}}));
}

TEST(GzLineReader, ErrorsNameFileAndLine) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919 % 10007) + "\n";
  write_gz(dir / "a.gz", text);
  const std::string bytes = read_file(dir / "a.gz");
  write_file(dir / "cut.gz", bytes.substr(0, bytes.size() / 2));
  try {
    read_lines(dir / "cut.gz", 4096);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir / "cut.gz: line ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated gzip stream"), std::string::npos);
  }
  write_file(dir / "empty.gz", "");
  EXPECT_THROW(read_lines(dir / "empty.gz", 64), FormatError);
  EXPECT_THROW(read_lines(dir / "absent.gz", 64), IoError);
}

// What zlib can inflate of a damaged gzip file before it stops: the text a reader sees.
std::string inflate_what_we_can(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(size_t{64} << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  while (inflate(&z, Z_NO_FLUSH) == Z_OK) {
  }
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

// The line number in "<path>: line N: ..." or -1.
int64_t error_line(const std::string& what) {
  std::smatch m;
  return std::regex_search(what, m, std::regex(": line ([0-9]+): ")) ? std::stoll(m[1]) : -1;
}

// A gzip error names the line being inflated when it happened, not the first line of the
// buffer being filled (with the default 8 MiB buffers, that was always line 1 here).
TEST(GzLineReader, InflateErrorsNameTheLineWhereTheDataBreaks) {
  TempDir dir;
  std::string text;
  Rng rng(7);
  for (int i = 0; i < 40000; ++i) text += std::to_string(rng.below(1000003)) + ",x\n";
  write_gz(dir / "a.gz", text);
  const std::string bytes = read_file(dir / "a.gz");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x5a);
  write_file(dir / "cut.gz", bytes.substr(0, bytes.size() / 2));
  write_file(dir / "flip.gz", flipped);
  for (const char* name : {"cut.gz", "flip.gz"}) {
    // cut.gz stops mid-text; flip.gz may decode to the end and fail only its CRC check.
    const std::string seen = inflate_what_we_can(read_file(dir / name));
    const int64_t want = 1 + std::count(seen.begin(), seen.end(), '\n');
    ASSERT_GT(want, 1000) << name;
    for (size_t block : {size_t{4096}, GzLineReader::kDefaultBlockBytes}) {
      try {
        read_lines(dir / name, block);
        ADD_FAILURE() << name << ": no error";
      } catch (const FormatError& e) {
        EXPECT_EQ(error_line(e.what()), want) << name << " block " << block << ": " << e.what();
      }
    }
  }
}

TEST(GzLineReader, ReaderDestroyedEarlyDoesNotHang) {
  TempDir dir;
  write_gz(dir / "a.gz", std::string(1 << 20, 'a') + "\n" + std::string(1 << 20, 'b'));
  GzLineReader reader(dir / "a.gz", 64);
  TextBlock block;
  EXPECT_TRUE(reader.next(&block));
}  // destructor stops the decompressing thread

TEST(ParseFloatRow, AcceptsAndRejects) {
  float out[3];
  const std::string ok = "1.5,-2e-3,7";
  parse_float_row("f", ok.data(), ok.data() + ok.size(), 1, 3, out);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -2e-3f);
  EXPECT_EQ(out[2], 7.0f);
  const std::string halfway = "16777217,16777219,-0";  // ties between floats round to even
  parse_float_row("f", halfway.data(), halfway.data() + halfway.size(), 1, 3, out);
  EXPECT_EQ(out[0], 16777216.0f);
  EXPECT_EQ(out[1], 16777220.0f);
  EXPECT_TRUE(std::signbit(out[2]));
  for (const std::string bad : {"1,,3", "1,2", "1,2,3,", "1,2,3 ", "1, 2,3", "1,2,inf"}) {
    EXPECT_THROW(parse_float_row("f", bad.data(), bad.data() + bad.size(), 1, 3, out), FormatError)
        << bad;
  }
}

TEST(ParseFloatRow, SameValuesAsFastFloat) {
  // The short-decimal fast path must round exactly like fast_float.
  Rng rng(7);
  std::string row;
  std::vector<float> want;
  for (int i = 0; i < 300000; ++i) {
    char buf[64];
    const int kind = static_cast<int>(rng.below(7));
    const int digits = 1 + static_cast<int>(rng.below(17));
    const double x = (rng.uniform() - 0.5) * std::pow(10.0, static_cast<int>(rng.below(12)) - 4);
    if (kind == 0) std::snprintf(buf, sizeof buf, "%d", static_cast<int>(rng.below(10)));
    if (kind == 1) std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(rng.below(11)), x);
    if (kind == 2) std::snprintf(buf, sizeof buf, "%.17g", x);
    if (kind == 3) std::snprintf(buf, sizeof buf, "%.6e", x);
    if (kind == 4) {
      std::snprintf(buf, sizeof buf, "%u.%u", static_cast<unsigned>(rng.below(20000000)),
                    static_cast<unsigned>(rng.below(100000)));
    }
    if (kind == 5)
      std::snprintf(buf, sizeof buf, "-%u", static_cast<unsigned>(rng.below(1u << 26)));
    if (kind == 6) std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    float v = 0;
    const std::string s = buf;
    fast_float::from_chars(s.data(), s.data() + s.size(), v);
    want.push_back(v);
    row += (i > 0 ? "," : "") + s;
  }
  std::vector<float> got(want.size());
  parse_float_row("f", row.data(), row.data() + row.size(), 1, static_cast<int64_t>(got.size()),
                  got.data());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << i << " " << want[i];
  }
}

}  // namespace
}  // namespace partita::data
