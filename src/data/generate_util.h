#pragma once
// Pieces shared by the synthetic generators (generate.cc, generate_hetero.cc). Private to
// data/.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/parallel.h"
#include "partita/core/random.h"
#include "partita/data/generate.h"

namespace partita::data {

constexpr int64_t kBatchChunks = 8;  // chunks generated per write batch

// Standard normals in pairs (Marsaglia's polar method, both values used).
class NormalSource {
 public:
  explicit NormalSource(Rng& rng) : rng_(rng) {}
  double next() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * rng_.uniform() - 1.0;
      v = 2.0 * rng_.uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    have_spare_ = true;
    return u * f;
  }

 private:
  Rng& rng_;
  double spare_ = 0;
  bool have_spare_ = false;
};

// Generates `total` items in chunks of `chunk` (chunk index = stream index), kBatchChunks
// chunks at a time in parallel, and hands each batch to `write` in order. Two batch buffers:
// writing batch k is one more task of the parallel loop that generates batch k+1.
template <class T, class Gen, class Write>
void generate_batched(int64_t total, int64_t chunk, int64_t item_width, int threads, const Gen& gen,
                      const Write& write) {
  const int64_t batch_items = chunk * kBatchChunks;
  std::vector<T> buffers[2];
  for (auto& b : buffers) b.resize(static_cast<size_t>(std::min(total, batch_items) * item_width));
  int pending = -1;  // buffer holding a generated batch not yet written
  size_t pending_bytes = 0;
  int64_t index = 0;
  for (int64_t batch = 0; batch < total; batch += batch_items, ++index) {
    const int64_t batch_end = std::min(total, batch + batch_items);
    const int64_t chunks = (batch_end - batch + chunk - 1) / chunk;
    const int64_t with_write = pending >= 0 ? 1 : 0;
    T* const buffer = buffers[index % 2].data();
    parallel_chunks(0, chunks + with_write, 1, threads, [&](int64_t t, int64_t) {
      if (t < with_write) {
        write(buffers[pending].data(), pending_bytes);
        return;
      }
      const int64_t b = batch + (t - with_write) * chunk, e = std::min(batch_end, b + chunk);
      gen(b / chunk, b, e, buffer + (b - batch) * item_width);
    });
    pending = static_cast<int>(index % 2);
    pending_bytes = static_cast<size_t>((batch_end - batch) * item_width) * sizeof(T);
  }
  if (pending >= 0) write(buffers[pending].data(), pending_bytes);
}

// Checks train_fraction, valid_fraction, test_fraction for o.nodes items (ParameterError
// naming the fraction; a UsageError naming all three when they sum past 1).
void validate_split_fractions(const GenerateOptions& o);

// The parameters of the class model both generators share, for `items` featured nodes (all
// nodes, or the papers of a mag-shaped graph): feat_dim, classes, homophily, power_law,
// feature_noise. ParameterError naming the parameter; messages call the items `items_name`
// ("nodes x `feat_dim`") and bound `classes` by `items_bound` ("min(`nodes`, ...)").
struct ClassModelFlags {
  int64_t items = 0;
  std::string items_name;
  std::string items_bound;
  int64_t feat_dim = 0;
  int64_t classes = 0;
  double homophily = 0, power_law = 0, feature_noise = 0;
};
void validate_class_model(const ClassModelFlags& flags);

// Sorts `ids`, writes them as a 1-D int64 .npy and returns the file's size.
int64_t write_sorted_ids(const std::string& path, std::vector<int64_t> ids);
// A random split of [0, n) into dir/{train,valid,test}_idx.npy: one Fisher-Yates
// permutation drawn from Rng(stream), cut into sizes.train, .valid and .test ids (the rest
// are in no split), each file sorted. Returns the bytes written.
int64_t write_random_split(const std::string& dir, int64_t n, uint64_t stream,
                           const SplitSizes& sizes);

}  // namespace partita::data
