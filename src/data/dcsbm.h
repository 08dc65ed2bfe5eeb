#pragma once
// The pieces of generate_synthetic's degree-corrected stochastic block model
// (generate.cc; the model is stated in docs/dataset-format.md), shared with the chunked
// writer (generate_chunked.cc) so that both layouts hold the same graph. Every random
// quantity comes from a stream keyed by (seed, purpose, chunk index) over fixed-size chunks:
// generating chunk k alone gives the same values as generating all of them. Private to data/.
#include <cstdint>
#include <vector>

#include "alias_table.h"
#include "partita/data/generate.h"

namespace partita::data::dcsbm {

// Stream purposes (part of every stream key; changing one changes the output).
enum Purpose : uint64_t {
  kClasses = 1,
  kTheta,
  kCentroids,
  kEdges,
  kFeatures,
  kSplit,
  // The optional arrays (GenerateOptions::edge_time ...), appended so that the others keep
  // their streams.
  kEdgeTime,
  kEdgeWeight,
  kEdgeFeat,
  kNodeTime
};

constexpr int64_t kNodeChunk = int64_t{1} << 16;           // nodes per class/theta stream
constexpr int64_t kEdgeChunk = int64_t{1} << 18;           // edges per edge stream
constexpr int64_t kFeatureChunkValues = int64_t{1} << 18;  // floats per feature stream
constexpr int kMaxRedraws = 64;                            // then fall back to uniform draws

// Rows of one feature stream: whole rows, about kFeatureChunkValues values.
inline int64_t feature_chunk_rows(int64_t feat_dim) {
  return feat_dim >= kFeatureChunkValues ? 1 : kFeatureChunkValues / feat_dim;
}

// ParameterError naming the field at fault (generate.h's limits).
void validate(const GenerateOptions& o);

// The sampling structure of the model: node classes, and alias tables drawing nodes with
// probability proportional to theta, globally and within each community (~40 bytes a node).
struct Model {
  int64_t nodes = 0;
  std::vector<int64_t> label;             // class of each node (written as label.npy)
  std::vector<AliasSlot> global;          // [nodes], tags = classes
  std::vector<int64_t> community_offset;  // [classes + 1] into `community`
  std::vector<AliasSlot> community;       // [nodes], grouped by class
};
Model build_model(const GenerateOptions& o, int threads);

// Edge stream `chunk` (edges [chunk * kEdgeChunk, + count)): `count` (src, dst) pairs.
void generate_edge_chunk(const Model& m, const GenerateOptions& o, int64_t chunk, int64_t count,
                         int64_t* out);

// max label + 1: the classes of build_model's labels, without building the model (the
// class streams only; stops at the first node of the last class).
int64_t classes_present(const GenerateOptions& o);

// The classes' centroids, [classes, feat_dim].
std::vector<float> centroids(const GenerateOptions& o);

// Feature stream `chunk`: rows [row_begin, row_end) = the chunk's rows
// (feature_chunk_rows(feat_dim) each, the last one shorter), float32.
void generate_feature_chunk(const Model& m, const std::vector<float>& centroids,
                            const GenerateOptions& o, int64_t chunk, int64_t row_begin,
                            int64_t row_end, float* out);

}  // namespace partita::data::dcsbm
