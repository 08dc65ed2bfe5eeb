// Thorough verification of a partition directory: checksums, then contents.
#include <zlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/partition/format.h"

namespace partita::partition {
namespace {

constexpr int64_t kCrcChunkBytes = int64_t{32} << 20;
constexpr int64_t kScanChunk = int64_t{1} << 16;  // rows or elements per parallel task

// CRC-32 of a whole mapped file: chunks in parallel, joined with crc32_combine, so the result
// equals the sequential zlib CRC. Pages are released once summed.
uint32_t file_crc32(const MappedFile& file, int threads) {
  const int64_t size = static_cast<int64_t>(file.size());
  const int64_t chunks = (size + kCrcChunkBytes - 1) / kCrcChunkBytes;
  std::vector<uint32_t> crcs(static_cast<size_t>(chunks));
  parallel_chunks(0, chunks, 1, threads, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t off = c * kCrcChunkBytes;
      const size_t len = static_cast<size_t>(std::min(kCrcChunkBytes, size - off));
      crcs[c] = crc32_update(0, file.data() + off, len);
      file.release(static_cast<size_t>(off), len);
    }
  });
  uLong crc = chunks > 0 ? crcs[0] : 0;
  for (int64_t c = 1; c < chunks; ++c) {
    const int64_t len = std::min(kCrcChunkBytes, size - c * kCrcChunkBytes);
    crc = ::crc32_combine(crc, crcs[c], static_cast<z_off_t>(len));
  }
  return static_cast<uint32_t>(crc);
}

// Runs check(begin, end) -> "" or a problem over chunks of [0, n) in parallel and throws
// FormatError "<path>: <problem>" for the first chunk (in index order) that found one.
template <class Check>
void scan(const std::string& path, int64_t n, int threads, Check check) {
  const int64_t chunks = (n + kScanChunk - 1) / kScanChunk;
  std::vector<std::string> problems(static_cast<size_t>(chunks));
  parallel_chunks(0, n, kScanChunk, threads,
                  [&](int64_t b, int64_t e) { problems[b / kScanChunk] = check(b, e); });
  for (const std::string& p : problems) PARTITA_CHECK(p.empty(), FormatError, "{}: {}", path, p);
}

void check_permutation(const NpyArray& a, int64_t n) {
  auto v = a.view<int64_t>();
  std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < v.size(); ++i) {
    PARTITA_CHECK(v[i] >= 0 && v[i] < n, FormatError, "{}: entry {} = {} is outside [0, {})",
                  a.path(), i, v[i], n);
    PARTITA_CHECK(!seen[v[i]], FormatError,
                  "{}: original id {} appears twice (entry {}); not a permutation", a.path(), v[i],
                  i);
    seen[v[i]] = 1;
  }
  a.release_elements(0, v.size());
}

// `node_map` is the checked permutation: rows must be strictly ascending in ORIGINAL ids.
void check_part(const std::string& dir, const PartitionMeta& m, int p, int threads,
                ArrayView<const int64_t> node_map) {
  const PartFiles f = open_part(dir, m, p);
  const int64_t lo = m.ranges[p], hi = m.ranges[p + 1], rows = hi - lo, n = m.num_nodes;

  auto indptr = f.indptr.view<int64_t>();
  const int64_t edges = f.indices.num_elements();
  PARTITA_CHECK(indptr[0] == 0, FormatError, "{}: starts at {}, expected 0", f.indptr.path(),
                indptr[0]);
  for (int64_t i = 0; i < rows; ++i)
    PARTITA_CHECK(indptr[i + 1] >= indptr[i], FormatError, "{}: decreases at row {} ({} then {})",
                  f.indptr.path(), i, indptr[i], indptr[i + 1]);
  PARTITA_CHECK(indptr[rows] == edges, FormatError, "{}: ends at {}, expected the edge count {}",
                f.indptr.path(), indptr[rows], edges);

  auto indices = f.indices.view<int64_t>();
  scan(f.indices.path(), rows, threads, [&](int64_t b, int64_t e) -> std::string {
    for (int64_t i = b; i < e; ++i) {
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int64_t s = indices[k];
        if (s < 0 || s >= n)
          return fmt::format("entry {} (row {}) = {} is outside [0, {})", k, i, s, n);
        if (k > indptr[i] && node_map[s] <= node_map[indices[k - 1]])
          return fmt::format("row {} is not strictly ascending in original ids at entry {}", i,
                             k);
        if (s == lo + i) return fmt::format("row {} lists its own node {} (self loop)", i, s);
      }
    }
    f.indices.release_elements(indptr[b], indptr[e]);
    return "";
  });

  auto label = f.label.view<int64_t>();
  scan(f.label.path(), rows, threads, [&](int64_t b, int64_t e) -> std::string {
    for (int64_t i = b; i < e; ++i)
      if (label[i] < 0 || label[i] >= m.num_classes)
        return fmt::format("label {} of row {} is outside [0, {})", label[i], i, m.num_classes);
    return "";
  });

  for (const NpyArray* split : {&f.train_idx, &f.valid_idx, &f.test_idx}) {
    auto ids = split->view<int64_t>();
    for (int64_t i = 0; i < ids.size(); ++i) {
      PARTITA_CHECK(ids[i] >= lo && ids[i] < hi, FormatError,
                    "{}: id {} at position {} is not owned by part {} (range [{}, {}))",
                    split->path(), ids[i], i, p, lo, hi);
      PARTITA_CHECK(i == 0 || ids[i] > ids[i - 1], FormatError,
                    "{}: not strictly ascending at position {}", split->path(), i);
    }
  }
}

}  // namespace

VerifyReport verify_partition(const std::string& dir, int threads) {
  threads = resolve_threads(threads);
  const PartitionMeta m = read_meta(dir);
  VerifyReport report;
  for (const FileEntry& entry : m.files) {
    const std::string path = dir + "/" + entry.path;
    std::error_code ec;
    PARTITA_CHECK(std::filesystem::is_regular_file(path, ec), FormatError,
                  "{}: missing (listed in {})", path, kMetaFileName);
    const NpyArray a = NpyArray::open(path);  // header, and size against the header
    PARTITA_CHECK(a.dtype() == entry.dtype && a.header().shape == entry.shape, FormatError,
                  "{}: holds {} {}, {} says {} {}", path, dtype_name(a.dtype()),
                  a.header().shape_string(), kMetaFileName, dtype_name(entry.dtype), [&] {
                    NpyHeader h;
                    h.shape = entry.shape;
                    return h.shape_string();
                  }());
    const uint32_t crc = file_crc32(a.file(), threads);
    PARTITA_CHECK(crc == entry.crc32, FormatError,
                  "{}: checksum mismatch: CRC-32 of the file is {}, {} says {}", path, crc,
                  kMetaFileName, entry.crc32);
    ++report.files;
    report.bytes += static_cast<int64_t>(a.file().size());
  }
  log_debug("verify: {} files, checksums OK; checking contents", report.files);
  const NpyArray node_map = NpyArray::open(dir + "/" + kNodeMapFile);
  check_permutation(node_map, m.num_nodes);
  for (int p = 0; p < m.num_parts; ++p)
    check_part(dir, m, p, threads, node_map.view<int64_t>());
  return report;
}

}  // namespace partita::partition
