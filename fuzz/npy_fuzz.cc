// libFuzzer target: the .npy header parser. The input is a whole .npy file, parsed by
// parse_npy_header exactly as NpyArray::open parses a mapped file.
// Properties of an accepted file: the header accounts for every byte of it, and the header
// make_npy_header writes for the same dtype and shape parses back to the same array.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"

namespace {

using partita::fuzz::fuzz_require;

partita::NpyHeader parse(const std::string& bytes, const std::string& path) {
  return partita::parse_npy_header(reinterpret_cast<const unsigned char*>(bytes.data()),
                                   bytes.size(), bytes.size(), path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  partita::NpyHeader h;
  try {
    h = partita::parse_npy_header(data, size, size, "fuzz.npy");
  } catch (const partita::Error&) {
    return 0;  // rejected, as it should be
  }
  fuzz_require(h.num_elements() >= 0, "element count is non-negative");
  fuzz_require(h.data_offset <= size && size - h.data_offset == h.data_bytes(),
               "the header accounts for every byte of the file", h.shape_string());

  std::string again = partita::make_npy_header(h.dtype, h.shape);
  again.append(h.data_bytes(), '\0');  // no larger than the input
  partita::NpyHeader h2;
  try {
    h2 = parse(again, "again.npy");
  } catch (const partita::Error& e) {
    fuzz_require(false, "a header written by make_npy_header parses", e.what());
  }
  fuzz_require(h2.dtype == h.dtype && h2.shape == h.shape, "dtype and shape survive a rewrite",
               h.shape_string() + " vs " + h2.shape_string());
  fuzz_require(h2.data_offset % 64 == 0, "written headers end on a 64-byte boundary");
  return 0;
}
