#include "partita/core/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "helpers/test_paths.h"

namespace partita {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

// Builds a .npy file from a raw header dict and payload, as a hostile writer would.
std::string raw_npy(const std::string& dict, const std::string& payload, int major = 1) {
  std::string h = dict + "\n";
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>((h.size() >> 8) & 0xff));
  if (major >= 2) out += std::string(2, '\0');
  return out + h + payload;
}

std::string expect_format_error(const std::string& path) {
  try {
    NpyArray::open(path);
  } catch (const FormatError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no FormatError for " << path;
  return "";
}

TEST(Npy, RoundTripKeepsValuesShapeAndCrc) {
  TempDir dir;
  std::vector<float> values{1.5f, -2.f, 3.25f, 4.f, 5.f, 6.f};
  uint32_t crc = write_npy<float>(dir / "a.npy", ArrayView<const float>(values), {2, 3});
  NpyArray a = NpyArray::open(dir / "a.npy");
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  ASSERT_EQ(a.ndim(), 2);
  EXPECT_EQ(a.dim(0), 2);
  EXPECT_EQ(a.dim(1), 3);
  EXPECT_EQ(a.header().data_offset % 64, 0u);
  auto v = a.view<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), values);
  EXPECT_EQ(crc, crc32_file(dir / "a.npy"));
  std::string bytes = read_file(dir / "a.npy");
  EXPECT_EQ(crc, crc32_update(0, bytes.data(), bytes.size()));
}

TEST(Npy, WriterStreamsChunksAndLeavesNoTempFile) {
  TempDir dir;
  std::vector<int64_t> all(3'000'000);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i * 7);
  {
    NpyWriter w(dir / "b.npy", DType::kInt64, {static_cast<int64_t>(all.size())});
    for (size_t off = 0; off < all.size(); off += 999'999) {
      size_t n = std::min<size_t>(999'999, all.size() - off);
      w.write(ArrayView<const int64_t>(all.data() + off, static_cast<int64_t>(n)));
    }
    w.finish();
  }
  EXPECT_EQ(read_npy_vector<int64_t>(dir / "b.npy"), all);
  EXPECT_FALSE(std::ifstream(dir / "b.npy.tmp").good());
}

TEST(Npy, AbandonedWriterRemovesTempAndNeverCreatesTarget) {
  TempDir dir;
  {
    NpyWriter w(dir / "c.npy", DType::kInt32, {4});
    int32_t x = 1;
    w.write(&x, sizeof(x));
  }
  EXPECT_FALSE(std::ifstream(dir / "c.npy").good());
  EXPECT_FALSE(std::ifstream(dir / "c.npy.tmp").good());
}

TEST(Npy, FinishWithMissingDataIsAnError) {
  TempDir dir;
  NpyWriter w(dir / "d.npy", DType::kInt32, {4});
  EXPECT_THROW(w.finish(), Error);
}

TEST(Npy, ReadsVersion2AndScalarsAndEmptyArrays) {
  TempDir dir;
  int64_t v = 42;
  write_file(dir / "v2.npy", raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
                                     std::string(reinterpret_cast<char*>(&v), 8), 2));
  EXPECT_EQ(read_npy_vector<int64_t>(dir / "v2.npy"), std::vector<int64_t>{42});
  write_file(dir / "empty.npy",
             raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", ""));
  NpyArray e = NpyArray::open(dir / "empty.npy");
  EXPECT_EQ(e.num_elements(), 0);
  EXPECT_EQ(e.dim(1), 5);
}

// np.save of a transposed array writes Fortran order: open() reads it in C order, for 2 and 3
// dimensions and for every element size; a 1-D Fortran array is simply C order.
TEST(Npy, FortranOrderIsCopiedIntoCOrder) {
  TempDir dir;
  const auto bytes = [](const auto& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
  };
  // The C-order (2, 3) array [[0, 1, 2], [3, 4, 5]] stored column by column.
  const std::vector<int64_t> columns = {0, 3, 1, 4, 2, 5};
  write_file(dir / "f2.npy",
             raw_npy("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }", bytes(columns)));
  NpyArray a = NpyArray::open(dir / "f2.npy");
  EXPECT_TRUE(a.header().fortran_order);
  EXPECT_TRUE(a.copied());
  ASSERT_EQ(a.ndim(), 2);
  EXPECT_EQ(a.dim(0), 2);
  EXPECT_EQ(a.dim(1), 3);
  ArrayView<const int64_t> v = a.view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));

  // (2, 3, 2) in Fortran order: element (i, j, k) = 100 i + 10 j + k at i + 2 j + 6 k.
  std::vector<float> f3(12);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) f3[i + 2 * j + 6 * k] = 100.0f * i + 10.0f * j + k;
  write_file(dir / "f3.npy",
             raw_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 2), }", bytes(f3)));
  NpyArray b = NpyArray::open(dir / "f3.npy");
  ArrayView<const float> w = b.view<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k)
        EXPECT_EQ(w[(i * 3 + j) * 2 + k], 100.0f * i + 10.0f * j + k) << i << j << k;

  const std::vector<uint8_t> u8 = {1, 2, 3, 4, 5, 6};  // (3, 2): [[1, 4], [2, 5], [3, 6]]
  write_file(dir / "u1.npy",
             raw_npy("{'descr': '|u1', 'fortran_order': True, 'shape': (3, 2), }", bytes(u8)));
  NpyArray small = NpyArray::open(dir / "u1.npy");
  ArrayView<const uint8_t> u = small.view<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(u.begin(), u.end()), (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));

  write_file(dir / "f1.npy", raw_npy("{'descr': '<i8', 'fortran_order': True, 'shape': (3,), }",
                                     bytes(std::vector<int64_t>{7, 8, 9})));
  NpyArray c = NpyArray::open(dir / "f1.npy");
  EXPECT_FALSE(c.header().fortran_order);
  EXPECT_EQ(c.view<int64_t>()[2], 9);
}

// A header whose length leaves the data at an odd offset is valid numpy (np.load reads it):
// view() must still hand out aligned pointers with the right values (no misaligned casts).
TEST(Npy, MisalignedDataIsCopiedToAlignedMemory) {
  TempDir dir;
  const std::vector<int64_t> longs = {1, -2, int64_t{1} << 40};
  const std::vector<double> doubles = {0.5, -1e300};
  const std::vector<int32_t> ints = {7, -8, 9};
  const auto bytes = [](const auto& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
  };
  // 10-byte prefix + dict + "  " + "\n": data offsets 74, 74 and 73 (not multiples of 8, 8, 4).
  write_file(dir / "i8.npy", raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }" +
                                         std::string(6, ' '),
                                     bytes(longs)));
  write_file(dir / "f8.npy", raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }" +
                                         std::string(6, ' '),
                                     bytes(doubles)));
  write_file(dir / "i4.npy", raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" +
                                         std::string(5, ' '),
                                     bytes(ints)));
  NpyArray a = NpyArray::open(dir / "i8.npy");
  ASSERT_NE(a.header().data_offset % 8, 0u);
  EXPECT_TRUE(a.copied());
  ArrayView<const int64_t> v = a.view<int64_t>();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % alignof(int64_t), 0u);
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()), longs);
  a.release_elements(0, 3);  // a no-op on the copy: the values stay
  EXPECT_EQ(a.view<int64_t>()[2], int64_t{1} << 40);
  NpyArray moved = std::move(a);  // the copy moves with the array
  EXPECT_EQ(moved.view<int64_t>()[1], -2);

  NpyArray d = NpyArray::open(dir / "f8.npy");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.view<double>().data()) % alignof(double), 0u);
  EXPECT_EQ(read_npy_vector<double>(dir / "f8.npy"), doubles);
  NpyArray i = NpyArray::open(dir / "i4.npy");
  ASSERT_NE(i.header().data_offset % 4, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(i.view<int32_t>().data()) % alignof(int32_t), 0u);
  EXPECT_EQ(read_npy_vector<int32_t>(dir / "i4.npy"), ints);

  // Aligned files (ours, numpy's) stay mapped; bytes need no alignment.
  write_npy<int64_t>(dir / "ok.npy", longs);
  EXPECT_FALSE(NpyArray::open(dir / "ok.npy").copied());
  write_file(dir / "u1.npy", raw_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\x05\x06", 2)));
  EXPECT_FALSE(NpyArray::open(dir / "u1.npy").copied());
  EXPECT_EQ(read_npy_vector<uint8_t>(dir / "u1.npy"), (std::vector<uint8_t>{5, 6}));
}

TEST(Npy, RejectsMissingFile) {
  TempDir dir;
  try {
    NpyArray::open(dir / "nope.npy");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.npy: cannot open"), std::string::npos) << e.what();
  }
}

TEST(Npy, RejectsHostileHeaders) {
  TempDir dir;
  struct Case {
    std::string name, bytes, expected;
  };
  const std::string eight(8, '\0');
  std::vector<Case> cases{
      {"magic", "NOTNUMPYATALL", "bad magic"},
      {"short", "\x93NUM", "bad magic"},
      {"version", raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", eight, 9),
       "unsupported .npy version 9"},
      {"truncated_header", std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18),
       "truncated .npy header"},
      {"dtype", raw_npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", eight),
       "unsupported dtype '<c16'"},
      {"bigendian", raw_npy("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", eight),
       "unsupported dtype '>i8'"},
      {"negative", raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (-1,), }", eight),
       "non-negative integers"},
      {"nokey", raw_npy("{'descr': '<i8', 'shape': (1,), }", eight), "lacks"},
      {"garbage", raw_npy("{'descr': '<i8', 'fortran_order': Maybe, 'shape': (1,), }", eight),
       "True or False"},
      {"truncated_data",
       raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", eight),
       "truncated: header claims shape (2,) (16 bytes of data) but the file holds 8"},
      {"lying_huge",
       raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000), }",
               eight),
       "(4000000000000000000 bytes of data) but the file holds 8"},
      {"overflow_product",
       raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
               eight),
       "too large"},
      {"trailing",
       raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", eight + "x"),
       "1 unexpected bytes"},
  };
  for (const Case& c : cases) {
    std::string path = dir / (c.name + ".npy");
    write_file(path, c.bytes);
    std::string msg = expect_format_error(path);
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.name << ": " << msg;
  }
}

TEST(Npy, ExpectNamesDtypeAndShapeMismatch) {
  TempDir dir;
  std::vector<int32_t> v{1, 2, 3};
  write_npy(dir / "i.npy", v);
  NpyArray a = NpyArray::open(dir / "i.npy");
  try {
    a.expect(DType::kInt64, 1);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("expected dtype int64, found int32"), std::string::npos);
  }
  try {
    a.expect(DType::kInt32, 2);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 2 dimension(s), found shape (3,)"),
              std::string::npos);
  }
}

TEST(Npy, Crc32MatchesKnownValue) {
  // zlib.crc32(b"123456789") == 0xCBF43926, the standard check value.
  EXPECT_EQ(crc32_update(0, "123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32_update(crc32_update(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

}  // namespace
}  // namespace partita
