// The edge and node arrays OGB ships beside a node-property graph (readers.h,
// read_ogb_arrays): raw/edge_year.csv.gz (edge_time), raw/edge_weight.csv.gz,
// raw/edge_feat.csv.gz and raw/node_year.csv.gz (node_time), one line per edge or node.
#include <cstring>
#include <filesystem>

#include "gz_reader.h"
#include "numpy_files.h"
#include "partita/core/error.h"
#include "readers.h"

namespace partita::data {
namespace {

// One OGB file and the array it becomes.
struct OgbArrayFile {
  const char* file;  // under raw/
  const char* name;  // kEdgeTimeName, ...
  bool per_edge;
};
constexpr OgbArrayFile kFiles[] = {{"edge_year.csv.gz", kEdgeTimeName, true},
                                   {"edge_weight.csv.gz", kEdgeWeightName, true},
                                   {"edge_feat.csv.gz", kEdgeFeatName, true},
                                   {"node_year.csv.gz", kNodeTimeName, false}};

// `rows` lines of `path`: one integer each (times), or equally many floats (the first line
// says how many; one for weights).
ExtraArray read_rows(const std::string& path, const char* name, int64_t rows,
                     const std::string& rows_what, LoadStats& stats) {
  GzLineReader reader(path);
  ExtraArray a;
  a.name = name;
  const bool time = a.name == kEdgeTimeName || a.name == kNodeTimeName;
  const bool feat = a.name == kEdgeFeatName;
  a.dtype = time ? DType::kInt64 : DType::kFloat32;
  int64_t cols = 1, read = 0;
  const int64_t lines = for_each_line(reader, [&](const char* b, const char* e, int64_t line) {
    PARTITA_CHECK(read < rows, FormatError, "{}: line {}: more than {} lines ({})", path, line,
                  rows, rows_what);
    if (read == 0) {
      cols = feat ? count_fields(b, e) : 1;
      // Each value takes at least 2 bytes of text (a digit and a separator).
      PARTITA_CHECK(cols <= reader.max_text_bytes() / 2 / rows, FormatError,
                    "{}: {} rows of {} values ({}) cannot fit in {}", path, rows, cols, rows_what,
                    reader.size_text());
      a.dim = feat ? cols : 0;
      a.values.resize(static_cast<size_t>(rows) * a.row_bytes());
    }
    if (time) {
      const int64_t v = parse_int_line(path, b, e, line);
      std::memcpy(a.values.data() + read * sizeof(int64_t), &v, sizeof(v));
    } else {
      parse_float_row(path, b, e, line, cols,
                      reinterpret_cast<float*>(a.values.data()) + read * cols);
    }
    ++read;
  });
  stats.text_bytes += reader.text_bytes();
  stats.compressed_bytes += reader.compressed_bytes();
  PARTITA_CHECK(lines == rows, FormatError, "{}: {} lines, but {}", path, lines, rows_what);
  check_array_values(a, path, 0, /*lines=*/true);
  return a;
}

}  // namespace

void read_ogb_arrays(const std::string& raw, int64_t edges, const std::string& edge_count_path,
                     int64_t nodes, const std::string& node_count_path,
                     std::vector<ExtraArray>& edge, std::vector<ExtraArray>& node,
                     LoadStats& stats) {
  for (const OgbArrayFile& f : kFiles) {
    const std::string path = raw + f.file;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    if (f.per_edge)
      edge.push_back(read_rows(
          path, f.name, edges,
          fmt::format("{} says {} edges (one line per edge)", edge_count_path, edges), stats));
    else
      node.push_back(read_rows(
          path, f.name, nodes,
          fmt::format("{} says {} nodes (one line per node)", node_count_path, nodes), stats));
  }
}

}  // namespace partita::data
