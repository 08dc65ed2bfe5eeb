// Arrays beside the graph (partita/data/edge_arrays.h): their files in the numpy layout,
// their values, and the in-edge CSC that carries them in one process.
#include "partita/data/edge_arrays.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/parallel.h"
#include "partita/data/order_rows.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {
namespace {

bool present(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// Checks the header of `path` (array `name`): dtype among `dtypes` (the first named in the
// message), rank 1 (dim 0) or 2 (dim > 0, C order), `rows` rows (`rows_what` says why).
ArrayFile check_file(const std::string& path, const char* name, std::vector<DType> dtypes,
                     bool matrix, int64_t rows, const std::string& rows_what) {
  ArrayFile out;
  out.name = name;
  out.path = path;
  out.rows = rows;
  const MappedNpy f = MappedNpy::open(out.path);
  if (std::find(dtypes.begin(), dtypes.end(), f.dtype()) == dtypes.end()) {
    std::string names;
    for (size_t i = 0; i < dtypes.size(); ++i)
      names += std::string(i == 0                   ? ""
                           : i + 1 == dtypes.size() ? " or "
                                                    : ", ") +
               dtype_name(dtypes[i]);
    throw FormatError(
        fmt::format("{}: expected dtype {}, found {}", out.path, names, dtype_name(f.dtype())));
  }
  out.dtype = f.dtype();
  const int ndim = matrix ? 2 : 1;
  PARTITA_CHECK(f.ndim() == ndim, FormatError, "{}: expected {} dimension(s), found shape {}",
                out.path, ndim, f.shape());
  PARTITA_CHECK(f.dim(0) == rows, FormatError, "{}: {} rows, but {}", out.path, f.dim(0),
                rows_what);
  if (matrix) {
    PARTITA_CHECK(f.dim(1) > 0, FormatError, "{}: shape {} has no feature columns", out.path,
                  f.shape());
    PARTITA_CHECK(!f.header().fortran_order, FormatError,
                  "{}: Fortran order is not read; save it in C order (np.ascontiguousarray)",
                  out.path);
    out.dim = f.dim(1);
  }
  return out;
}

// An edge array's file: edge_time int64 [rows], edge_weight float32 [rows], edge_feat
// float32/float16/bfloat16 [rows, d > 0].
ArrayFile check_edge_file(const std::string& path, const char* name, int64_t rows,
                          const std::string& rows_what) {
  const std::string n = name;
  if (n == kEdgeTimeName) return check_file(path, name, {DType::kInt64}, false, rows, rows_what);
  if (n == kEdgeWeightName)
    return check_file(path, name, {DType::kFloat32}, false, rows, rows_what);
  return check_file(path, name, {DType::kFloat32, DType::kFloat16, DType::kBFloat16}, true, rows,
                    rows_what);
}

// Every entry of `folder` is <stem>.npy for one of `stems` (`what` describes them).
void check_folder(const std::string& folder, const std::vector<std::string>& stems,
                  const char* what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  PARTITA_CHECK(fs::is_directory(folder, ec), FormatError, "{}: expected a folder of {} files",
                folder, what);
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const fs::path p = entry.path();
    PARTITA_CHECK(p.extension() == ".npy" &&
                      std::find(stems.begin(), stems.end(), p.stem().string()) != stems.end(),
                  FormatError, "{}: not {} of hetero.json", p.string(), what);
  }
}

}  // namespace

const ExtraArray* find_array(const std::vector<ExtraArray>& arrays, const std::string& name) {
  for (const ExtraArray& a : arrays)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<ExtraArray> gather_rows(const std::vector<ExtraArray>& listed,
                                    const std::vector<int64_t>& positions) {
  std::vector<ExtraArray> out;
  for (const ExtraArray& a : listed) {
    ExtraArray& o = out.emplace_back();
    o.name = a.name;
    o.dtype = a.dtype;
    o.dim = a.dim;
    const size_t w = a.row_bytes();
    o.values.resize(positions.size() * w);
    for (size_t i = 0; i < positions.size(); ++i)
      std::memcpy(o.values.data() + i * w, a.values.data() + positions[i] * w, w);
  }
  return out;
}

void find_array_files(const std::string& dir, const std::string& edges, int64_t num_edges,
                      const std::string& feat, int64_t num_nodes, std::vector<ArrayFile>& edge,
                      std::vector<ArrayFile>& node) {
  const std::string per_edge =
      fmt::format("{} lists {} edges (one row per edge)", edges, num_edges);
  for (const char* name : {kEdgeTimeName, kEdgeWeightName, kEdgeFeatName}) {
    const std::string path = dir + "/" + name + ".npy";
    if (present(path)) edge.push_back(check_edge_file(path, name, num_edges, per_edge));
  }
  if (present(dir + "/" + kNodeTimeName + ".npy"))
    node.push_back(check_file(dir + "/" + kNodeTimeName + ".npy", kNodeTimeName, {DType::kInt64},
                              false, num_nodes,
                              fmt::format("{} has {} rows (one per node)", feat, num_nodes)));
}

void find_typed_array_files(const std::string& dir, const HeteroSchema& schema,
                            NumpyHeteroLayout& files) {
  for (const char* name : {kEdgeTimeName, kEdgeWeightName, kEdgeFeatName, kNodeTimeName}) {
    const std::string path = dir + "/" + name + ".npy";
    PARTITA_CHECK(!present(path), FormatError,
                  "{}: with hetero.json, {} is per {}: {}/{}.npy (docs/dataset-format.md)", path,
                  name, name == std::string(kNodeTimeName) ? "node type" : "relation", name,
                  name == std::string(kNodeTimeName) ? "<type>" : "<head>___<relation>___<tail>");
  }
  const int relations = schema.num_relations();
  for (const char* name : {kEdgeTimeName, kEdgeWeightName, kEdgeFeatName}) {
    const std::string folder = dir + "/" + name;
    if (!present(folder)) continue;
    std::vector<std::string> stems;
    for (int r = 0; r < relations; ++r) stems.push_back(schema.triplet(r));
    check_folder(folder, stems, "<head>___<relation>___<tail>.npy for a relation");
    std::vector<ArrayFile>& out = files.edge_arrays.emplace_back();
    for (int r = 0; r < relations; ++r) {
      const std::string path = folder + "/" + stems[r] + ".npy";
      PARTITA_CHECK(present(path), FormatError,
                    "{}: missing: {}/ holds one file per relation of hetero.json, and relation "
                    "{} has none",
                    path, name, stems[r]);
      out.push_back(check_edge_file(path, name, files.edge_counts[r],
                                    fmt::format("{} lists {} edges (one row per edge)",
                                                files.edges[r], files.edge_counts[r])));
      const ArrayFile& first = out.front();
      PARTITA_CHECK(out.back().dtype == first.dtype && out.back().dim == first.dim, FormatError,
                    "{}: dtype {} with {} columns, but {} has {} with {} (relation {}: one {} "
                    "dtype and width for every relation)",
                    path, dtype_name(out.back().dtype), out.back().dim, first.path,
                    dtype_name(first.dtype), first.dim, stems[r], name);
    }
  }
  const std::string folder = dir + "/" + kNodeTimeName;
  if (!present(folder)) return;
  std::vector<std::string> types;
  for (const NodeType& t : schema.node_types) types.push_back(t.name);
  check_folder(folder, types, "<type>.npy for a node type");
  std::vector<ArrayFile>& out = files.node_arrays.emplace_back();
  for (const NodeType& t : schema.node_types) {
    const std::string path = folder + "/" + t.name + ".npy";
    PARTITA_CHECK(present(path), FormatError,
                  "{}: missing: {}/ holds one file per node type of hetero.json, and type '{}' "
                  "has none",
                  path, kNodeTimeName, t.name);
    out.push_back(check_file(path, kNodeTimeName, {DType::kInt64}, false, t.count,
                             fmt::format("hetero.json says type '{}' has {} nodes (one row per "
                                         "node)",
                                         t.name, t.count)));
  }
}

ArrayFile check_chunk_file(const std::string& path, const std::string& name, DType dtype,
                           int64_t dim, int64_t rows) {
  for (const char* known : {kEdgeTimeName, kEdgeWeightName, kEdgeFeatName, kNodeTimeName})
    if (name == known) {
      ArrayFile f = check_file(path, known, {dtype}, dim > 0, rows,
                               fmt::format("the manifest says {}", rows));
      PARTITA_CHECK(f.dim == dim, FormatError, "{}: {} columns, but the manifest says {}", path,
                    f.dim, dim);
      return f;
    }
  throw Error(fmt::format("internal: unknown array '{}'", name));
}

ExtraArray read_joined_rows(const std::vector<ArrayFile>& files, int64_t begin, int64_t end) {
  ExtraArray out;
  out.name = files.at(0).name;
  out.dtype = files[0].dtype;
  out.dim = files[0].dim;
  int64_t offset = 0;
  for (const ArrayFile& f : files) {
    const int64_t b = std::clamp(begin - offset, int64_t{0}, f.rows);
    const int64_t e = std::clamp(end - offset, int64_t{0}, f.rows);
    offset += f.rows;
    if (b >= e) continue;
    const ExtraArray part = read_array_rows(f, b, e);
    out.values.insert(out.values.end(), part.values.begin(), part.values.end());
  }
  PARTITA_CHECK(out.rows() == end - begin || (out.values.empty() && begin == end), Error,
                "internal: rows [{}, {}) of {} files of {} rows in all", begin, end, files.size(),
                offset);
  return out;
}

ExtraArray read_array_rows(const ArrayFile& file, int64_t begin, int64_t end) {
  ExtraArray a;
  a.name = file.name;
  a.dtype = file.dtype;
  a.dim = file.dim;
  const int64_t per_row = file.dim > 0 ? file.dim : 1;
  a.values.resize(static_cast<size_t>(end - begin) * a.row_bytes());
  MappedNpy::open(file.path).copy_elements(begin * per_row, end * per_row, a.values.data());
  check_array_values(a, file.path, begin, /*lines=*/false);
  return a;
}

void check_array_values(const ExtraArray& a, const std::string& source, int64_t first, bool lines) {
  const int64_t per_row = a.dim > 0 ? a.dim : 1, base = first + (lines ? 1 : 0);
  const char* unit = lines ? "line" : "entry";
  if (a.name == kEdgeWeightName) {
    const float* w = reinterpret_cast<const float*>(a.values.data());
    for (int64_t i = 0; i < a.rows(); ++i)
      PARTITA_CHECK(std::isfinite(w[i]) && w[i] > 0, FormatError,
                    "{}: {} {} is {}; a weight must be finite and > 0", source, unit, base + i,
                    w[i]);
  } else if (a.name == kEdgeFeatName) {
    std::vector<float> row(static_cast<size_t>(per_row));
    for (int64_t i = 0; i < a.rows(); ++i) {
      widen_to_floats(a.values.data() + i * a.row_bytes(), per_row, a.dtype, row.data());
      for (int64_t c = 0; c < per_row; ++c)
        PARTITA_CHECK(std::isfinite(row[c]), FormatError,
                      "{}: {} {} column {}: value {} is not finite", source, lines ? "line" : "row",
                      base + i, c, row[c]);
    }
  }
}

void build_keyed_graph(Dataset& ds, const std::vector<int64_t>& src,
                       const std::vector<int64_t>& dst, const std::vector<ExtraArray>& listed,
                       bool undirected, int threads) {
  const int64_t n = ds.num_nodes, m = static_cast<int64_t>(src.size());
  const ExtraArray* time = find_array(listed, kEdgeTimeName);
  const int64_t* t = time ? reinterpret_cast<const int64_t*>(time->values.data()) : nullptr;
  graph::Csr& csc = ds.in_edges;
  csc.indptr.assign(static_cast<size_t>(n) + 1, 0);
  ds.input_edges = m;
  ds.self_loops_dropped = 0;
  for (int64_t i = 0; i < m; ++i) {
    if (src[i] == dst[i]) {
      ++ds.self_loops_dropped;
      continue;
    }
    ++csc.indptr[dst[i] + 1];
    if (undirected) ++csc.indptr[src[i] + 1];
  }
  for (int64_t v = 0; v < n; ++v) csc.indptr[v + 1] += csc.indptr[v];
  std::vector<EdgeOrderKey> keys(static_cast<size_t>(csc.indptr[n]));
  {
    std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t s = src[i], d = dst[i], when = t ? t[i] : 0;
      if (s == d) continue;
      keys[cursor[d]++] = {s, when, 2 * i};
      if (undirected) keys[cursor[s]++] = {d, when, 2 * i + 1};
    }
  }
  const int64_t total = static_cast<int64_t>(keys.size());
  const int64_t out = order_rows(&csc.indptr, &keys, time != nullptr, resolve_threads(threads),
                                 [](const EdgeOrderKey& k) { return k; });
  ds.duplicates_dropped = total - out;
  csc.indices.resize(static_cast<size_t>(out));
  std::vector<int64_t> positions(static_cast<size_t>(out));
  for (int64_t k = 0; k < out; ++k) {
    csc.indices[k] = keys[k].source;
    positions[k] = keys[k].position / 2;
  }
  ds.edge_arrays = gather_rows(listed, positions);
}

}  // namespace partita::data
