#pragma once
// generate_synthetic's graph (generate.h) written in the chunked layout
// (chunked_layout.h), by one process or shared among the ranks of a job, and the
// papers100M shape. The chunk files hold exactly the arrays generate_synthetic writes for
// the same options (edges.npy's rows cut into edge chunks, feat.npy's and label.npy's into
// node chunks, features narrowed to feature_dtype), so their bytes depend on the options alone,
// never on the rank or thread count. No process holds the edge list or the feature matrix:
// each holds the model's per-node tables (~40 bytes a node; rank 0 also the split's
// permutation, 8 bytes a node) plus bounded chunk buffers.
//
// Protocol for R ranks: every rank calls generate_chunked_share(options, chunked, r, R); once
// all have returned, one process calls write_chunked_manifest(out_dir,
// chunked_generate_manifest(options, chunked)). A directory without manifest.json is not a
// dataset yet, so a job that died halfway is never mistaken for a whole one.
#include <cstdint>
#include <string>

#include "partita/core/npy.h"
#include "partita/data/chunked_layout.h"
#include "partita/data/generate.h"

namespace partita::data {

struct ChunkedWriteOptions {
  int64_t chunk_rows = int64_t{1} << 22;       // edges per edge chunk file (64 MiB), >= 1
  int64_t node_chunk_rows = int64_t{1} << 18;  // nodes per node chunk file (features and
                                               //   labels), >= 1: small enough that every
                                               //   rank gets some of the feature work
  DType feature_dtype = DType::kFloat32;       // float32, float16 or bfloat16
};

// The manifest of the chunked dataset these options give (file names, rows): edge chunk k
// is edges/edges-KKKKK.npy with rows [k * chunk_rows, ...) of the edge list, node chunk k
// (rows [k * node_chunk_rows, ...)) is nodes/feat-KKKKK.npy and nodes/label-KKKKK.npy. Validates
// the options (ParameterError).
ChunkedManifest chunked_generate_manifest(const GenerateOptions& options,
                                          const ChunkedWriteOptions& chunked);

// Writes rank `rank`'s chunks of out_dir (created): edge chunks [C*rank/ranks,
// C*(rank+1)/ranks) of the C edge chunks, node chunks likewise, and on rank 0 the three split
// files; never the manifest (rank 0 first removes one left by an earlier run). Logs progress
// (info) as chunks complete. The stats count this rank's files. Throws ParameterError for bad
// options, IoError naming a path that cannot be written.
GenerateStats generate_chunked_share(const GenerateOptions& options,
                                     const ChunkedWriteOptions& chunked, int rank, int ranks);

// papers100M (ogbn-papers100M: 111,059,956 nodes, 1,615,685,872 listed edges, 128 features,
// 172 classes, 1,207,179 / 125,265 / 214,338 train / valid / test nodes) scaled by `scale` in
// (0, 1]: nodes = round(111,059,956 x scale), edges = round(1,615,685,872 x scale), the split
// fractions of papers100M, power-law degrees (exponent 2.2, homophily 0.6). The other fields
// (out_dir, seed, threads) keep their defaults. ParameterError naming `scale` outside (0, 1]
// or below 172 nodes.
struct Papers100mShape {
  static constexpr int64_t kNodes = 111059956, kEdges = 1615685872;
  static constexpr int64_t kTrain = 1207179, kValid = 125265, kTest = 214338;
  static constexpr int64_t kFeatDim = 128, kClasses = 172;
};
GenerateOptions papers100m_options(double scale);

// Converts OGB's raw node-property layout (raw/*.csv.gz, split/<split>/; the only split
// when `split` is empty) at `ogb_dir` into the chunked layout at `out_dir`, in one process:
// each file is decompressed once, front to back, and written out a chunk at a time (chunked's
// chunk_rows edges, node_chunk_rows feature rows and labels, features narrowed to
// feature_dtype), so memory is one chunk's buffer plus the split ids, not the graph.
// manifest.json is written last. Checks as load_dataset does (ids in range, counts agree
// with num-node-list / num-edge-list, labels in [0, 2^24), finite features, valid split ids);
// FormatError/IoError naming the file and line. Heterogeneous OGB datasets are refused.
GenerateStats convert_ogb_to_chunked(const std::string& ogb_dir, const std::string& out_dir,
                                     const ChunkedWriteOptions& chunked,
                                     const std::string& split = "");

}  // namespace partita::data
