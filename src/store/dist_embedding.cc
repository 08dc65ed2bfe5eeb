#include "partita/store/dist_embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "partita/comm/errors.h"
#include "partita/comm/sliced_exchange.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/core/random.h"

namespace partita::store {
namespace {

constexpr size_t kSliceBytes = size_t{1} << 20;  // row bytes per remote request, as fetches

// State byte string, version 1 (all little-endian, no padding):
//   magic "PTEMBED1" (8 bytes), u32 version, u32 optimizer (SparseOptimizer),
//   i64 table id, i64 dim, i64 begin, i64 end,
//   f32 rows [n, dim]; Adagrad: f32 sums [n, dim]; Adam: f32 m [n, dim], f32 v [n, dim],
//   i64 steps [n]; then u32 CRC-32 of every byte before it.
constexpr char kStateMagic[8] = {'P', 'T', 'E', 'M', 'B', 'E', 'D', '1'};
constexpr uint32_t kStateVersion = 1;

const char* optimizer_name(SparseOptimizer kind) {
  switch (kind) {
    case SparseOptimizer::kSgd:
      return "sgd";
    case SparseOptimizer::kAdagrad:
      return "adagrad";
    case SparseOptimizer::kAdam:
      return "adam";
  }
  return "unknown";
}

// Reads the fields of a state string, every length checked; errors name `source`.
class StateReader {
 public:
  StateReader(const uint8_t* data, size_t size, const std::string& source)
      : p_(data), end_(data + size), source_(source) {}
  template <class T>
  T get() {
    T value;
    read(&value, sizeof(T));
    return value;
  }
  template <class T>
  void read_array(std::vector<T>& out) {
    read(out.data(), out.size() * sizeof(T));
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

 private:
  void read(void* dst, size_t n) {
    PARTITA_CHECK(left() >= n, FormatError, "{}: embedding state truncated", source_);
    if (n > 0) std::memcpy(dst, p_, n);
    p_ += n;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  const std::string& source_;
};

template <class T>
void append(std::vector<uint8_t>& out, const T* data, size_t count) {
  const size_t at = out.size();
  out.resize(at + count * sizeof(T));
  if (count > 0) std::memcpy(out.data() + at, data, count * sizeof(T));
}

template <class T>
void append_one(std::vector<uint8_t>& out, T value) {
  append(out, &value, 1);
}

}  // namespace

DistEmbedding::DistEmbedding(const EmbeddingOptions& options, std::vector<IdRange> ranges, int rank,
                             ArrayView<const int64_t> original_ids)
    : options_(options), ranges_(std::move(ranges)), rank_(rank) {
  const int table = options_.table_id;
  PARTITA_CHECK(table >= 0 && table < kMaxEmbeddingTables, UsageError,
                "embedding table {}: table id out of [0, {})", table, kMaxEmbeddingTables);
  PARTITA_CHECK(options_.dim > 0, UsageError, "embedding table {}: dim {} must be > 0", table,
                options_.dim);
  PARTITA_CHECK(rank >= 0 && rank < static_cast<int>(ranges_.size()), UsageError,
                "embedding table {}: rank {} out of {} ranges", table, rank, ranges_.size());
  const SparseOptimizerOptions& opt = options_.optimizer;
  PARTITA_CHECK(opt.lr >= 0 && std::isfinite(opt.lr), UsageError,
                "embedding table {}: learning rate {} must be >= 0", table, opt.lr);
  PARTITA_CHECK(opt.eps > 0, UsageError, "embedding table {}: eps {} must be > 0", table, opt.eps);
  PARTITA_CHECK(opt.beta1 >= 0 && opt.beta1 < 1 && opt.beta2 >= 0 && opt.beta2 < 1, UsageError,
                "embedding table {}: Adam betas ({}, {}) must be in [0, 1)", table, opt.beta1,
                opt.beta2);
  for (int r = 0; r < static_cast<int>(ranges_.size()); ++r) {
    const IdRange& range = ranges_[static_cast<size_t>(r)];
    PARTITA_CHECK(range.begin >= 0 && range.begin <= range.end, UsageError,
                  "embedding table {}: rank {} has a bad range [{}, {})", table, r, range.begin,
                  range.end);
    if (range.size() > 0) by_begin_.push_back(r);
  }
  std::sort(by_begin_.begin(), by_begin_.end(), [&](int a, int b) {
    return ranges_[static_cast<size_t>(a)].begin < ranges_[static_cast<size_t>(b)].begin;
  });
  for (size_t k = 1; k < by_begin_.size(); ++k) {
    const IdRange& prev = ranges_[static_cast<size_t>(by_begin_[k - 1])];
    const IdRange& next = ranges_[static_cast<size_t>(by_begin_[k])];
    PARTITA_CHECK(prev.end <= next.begin, UsageError,
                  "embedding table {}: the ranges of ranks {} and {} overlap", table,
                  by_begin_[k - 1], by_begin_[k]);
  }
  const int64_t n = owned().size();
  PARTITA_CHECK(original_ids.size() == n, UsageError,
                "embedding table {}: {} original ids for the {} rows of rank {}", table,
                original_ids.size(), n, rank);

  const int64_t dim = options_.dim;
  rows_.resize(static_cast<size_t>(n * dim));
  const double scale = options_.init_scale;
  for (int64_t k = 0; k < n; ++k) {
    Rng rng(stream_key(options_.seed, kEmbeddingStream, static_cast<uint64_t>(table),
                       static_cast<uint64_t>(original_ids[k])));
    float* row = rows_.data() + k * dim;
    for (int64_t j = 0; j < dim; ++j) row[j] = static_cast<float>(scale * (2 * rng.uniform() - 1));
  }
  if (opt.kind != SparseOptimizer::kSgd) state1_.assign(rows_.size(), 0.0f);
  if (opt.kind == SparseOptimizer::kAdam) {
    state2_.assign(rows_.size(), 0.0f);
    steps_.assign(static_cast<size_t>(n), 0);
  }
  pending_.resize(ranges_.size());
}

int DistEmbedding::owner_rank(int64_t id) const {
  // The last non-empty range starting at or before id.
  auto it = std::upper_bound(by_begin_.begin(), by_begin_.end(), id, [&](int64_t v, int r) {
    return v < ranges_[static_cast<size_t>(r)].begin;
  });
  if (it != by_begin_.begin()) {
    const int r = *(it - 1);
    if (id < ranges_[static_cast<size_t>(r)].end) return r;
  }
  throw Error(
      fmt::format("embedding table {}: id {} is in no rank's range", options_.table_id, id));
}

void DistEmbedding::attach(RpcEndpoint* endpoint) {
  if (endpoint != nullptr) {
    PARTITA_CHECK(endpoint->size() == static_cast<int>(ranges_.size()) && endpoint->rank() == rank_,
                  Error, "embedding table {}: endpoint of rank {} of {} for rank {} of {} ranges",
                  options_.table_id, endpoint->rank(), endpoint->size(), rank_, ranges_.size());
  }
  endpoint_ = endpoint;
}

RpcEndpoint& DistEmbedding::endpoint(const char* what) const {
  PARTITA_CHECK(endpoint_ != nullptr, Error,
                "embedding table {}: {} needs other ranks but no endpoint is attached",
                options_.table_id, what);
  return *endpoint_;
}

void DistEmbedding::copy_row(int64_t id, float* dst) const {
  const int64_t dim = options_.dim;
  std::memcpy(dst, rows_.data() + (id - owned().begin) * dim,
              static_cast<size_t>(dim) * sizeof(float));
}

void DistEmbedding::add_routes(RpcRouter& router) {
  const int table = options_.table_id;
  auto check_owned = [this](ArrayView<const int64_t> ids) {
    for (const int64_t id : ids)
      PARTITA_CHECK(owns(id), CommError, "embedding table {}: rank {} does not own id {}",
                    options_.table_id, rank_, id);
  };
  router.add(embedding_request_kind(table, EmbeddingOp::kLookup),
             [this, check_owned](int, WireReader& request) {
               ArrayView<const int64_t> ids = request.get_array<int64_t>();
               request.expect_end();
               check_owned(ids);
               const int64_t dim = options_.dim;
               WireWriter reply(8 + static_cast<size_t>(ids.size() * dim) * sizeof(float));
               float* out = reply.put_uninitialized<float>(ids.size() * dim);
               std::shared_lock<std::shared_mutex> lock(table_mutex_);
               for (int64_t i = 0; i < ids.size(); ++i) copy_row(ids[i], out + i * dim);
               return reply.take();
             });
  router.add(embedding_request_kind(table, EmbeddingOp::kPush),
             [this, check_owned](int source, WireReader& request) {
               ArrayView<const int64_t> ids = request.get_array<int64_t>();
               ArrayView<const float> grads = request.get_array<float>();
               request.expect_end();
               PARTITA_CHECK(grads.size() == ids.size() * options_.dim, CommError,
                             "embedding table {}: push of rank {} has {} values for {} rows",
                             options_.table_id, source, grads.size(), ids.size());
               check_owned(ids);
               add_pending(source, ids.data(), grads.data(), ids.size());
               return std::vector<uint8_t>{};
             });
  router.add(embedding_request_kind(table, EmbeddingOp::kApply), [this](int, WireReader& request) {
    request.expect_end();
    apply_pending();
    return std::vector<uint8_t>{};
  });
  router.add(embedding_request_kind(table, EmbeddingOp::kState), [this](int, WireReader& request) {
    request.expect_end();
    return serialize_state();
  });
  router.add(embedding_request_kind(table, EmbeddingOp::kLoad),
             [this](int source, WireReader& request) {
               ArrayView<const char> name = request.get_array<char>();
               ArrayView<const uint8_t> bytes = request.get_array<uint8_t>();
               request.expect_end();
               load_state(bytes.data(), static_cast<size_t>(bytes.size()),
                          std::string(name.data(), static_cast<size_t>(name.size())) +
                              " (sent by rank " + std::to_string(source) + ")");
               return std::vector<uint8_t>{};
             });
}

template <class Fill, class OnReply>
void DistEmbedding::exchange(RpcEndpoint& ep, uint64_t kind,
                             const std::vector<std::vector<int64_t>>& positions, size_t slice_rows,
                             Fill fill, OnReply on_reply) {
  remote_requests_ += sliced_exchange(
      ep, kind, positions, slice_rows,
      [&](ArrayView<const int64_t> slice, WireWriter& request) {
        fill(slice, request);
        remote_bytes_ += static_cast<int64_t>(request.size());
      },
      on_reply);
}

void DistEmbedding::lookup(ArrayView<const int64_t> ids, float* out) {
  const int64_t dim = options_.dim;
  const size_t row_bytes = static_cast<size_t>(dim) * sizeof(float);
  std::vector<std::vector<int64_t>> positions;  // per remote owner: input positions
  int64_t local = 0;
  {
    std::shared_lock<std::shared_mutex> lock(table_mutex_);
    for (int64_t i = 0; i < ids.size(); ++i) {
      if (owns(ids[i])) {
        copy_row(ids[i], out + i * dim);
        ++local;
        continue;
      }
      const int owner = owner_rank(ids[i]);  // throws on an id in no range
      if (positions.empty()) positions.resize(ranges_.size());
      positions[static_cast<size_t>(owner)].push_back(i);
    }
  }
  local_rows_ += local;
  if (positions.empty()) return;
  const size_t slice_rows = std::max<size_t>(1, kSliceBytes / row_bytes);
  exchange(
      endpoint("a lookup of remote rows"),
      embedding_request_kind(options_.table_id, EmbeddingOp::kLookup), positions, slice_rows,
      [&](ArrayView<const int64_t> pos, WireWriter& request) {
        int64_t* req_ids = request.put_uninitialized<int64_t>(pos.size());
        for (int64_t k = 0; k < pos.size(); ++k) req_ids[k] = ids[pos[k]];
      },
      [&](int owner, ArrayView<const int64_t> pos, const std::vector<uint8_t>& bytes) {
        WireReader reply(
            bytes.data(), bytes.size(),
            fmt::format("embedding table {}: reply of rank {}", options_.table_id, owner));
        ArrayView<const float> rows = reply.get_array<float>();
        reply.expect_end();
        PARTITA_CHECK(rows.size() == pos.size() * dim, CommError,
                      "embedding table {}: reply of rank {}: {} values for {} rows of {}",
                      options_.table_id, owner, rows.size(), pos.size(), dim);
        for (int64_t k = 0; k < pos.size(); ++k)
          std::memcpy(out + pos[k] * dim, rows.data() + k * dim, row_bytes);
        remote_rows_ += pos.size();
        remote_bytes_ += static_cast<int64_t>(bytes.size());
      });
}

void DistEmbedding::push_gradients(ArrayView<const int64_t> ids, const float* grads) {
  const int64_t dim = options_.dim;
  // Distinct ids in first-appearance order, their gradients summed in input order.
  absl::flat_hash_map<int64_t, int64_t> slot;
  std::vector<int64_t> unique;
  std::vector<float> sums;
  for (int64_t i = 0; i < ids.size(); ++i) {
    const float* g = grads + i * dim;
    auto [it, inserted] = slot.try_emplace(ids[i], static_cast<int64_t>(unique.size()));
    if (inserted) {
      unique.push_back(ids[i]);
      sums.insert(sums.end(), g, g + dim);
    } else {
      float* s = sums.data() + it->second * dim;
      for (int64_t j = 0; j < dim; ++j) s[j] += g[j];
    }
  }
  // Owners first, so that an id in no range throws before anything is sent or kept.
  std::vector<int64_t> local;  // positions in `unique`
  std::vector<std::vector<int64_t>> positions;
  for (int64_t k = 0; k < static_cast<int64_t>(unique.size()); ++k) {
    if (owns(unique[k])) {
      local.push_back(k);
      continue;
    }
    const int owner = owner_rank(unique[k]);
    if (positions.empty()) positions.resize(ranges_.size());
    positions[static_cast<size_t>(owner)].push_back(k);
  }
  pushed_rows_ += static_cast<int64_t>(unique.size());
  if (!positions.empty()) {
    const size_t slice_rows =
        std::max<size_t>(1, kSliceBytes / (static_cast<size_t>(dim) * sizeof(float) + 8));
    exchange(
        endpoint("a push to remote rows"),
        embedding_request_kind(options_.table_id, EmbeddingOp::kPush), positions, slice_rows,
        [&](ArrayView<const int64_t> pos, WireWriter& request) {
          int64_t* req_ids = request.put_uninitialized<int64_t>(pos.size());
          for (int64_t k = 0; k < pos.size(); ++k) req_ids[k] = unique[pos[k]];
          float* req_grads = request.put_uninitialized<float>(pos.size() * dim);
          for (int64_t k = 0; k < pos.size(); ++k)
            std::memcpy(req_grads + k * dim, sums.data() + pos[k] * dim,
                        static_cast<size_t>(dim) * sizeof(float));
        },
        [&](int owner, ArrayView<const int64_t>, const std::vector<uint8_t>& bytes) {
          PARTITA_CHECK(bytes.empty(), CommError,
                        "embedding table {}: push acknowledged by rank {} with {} bytes",
                        options_.table_id, owner, bytes.size());
        });
  }
  if (local.empty()) return;
  std::vector<int64_t> local_ids(local.size());
  std::vector<float> local_grads(local.size() * static_cast<size_t>(dim));
  for (size_t k = 0; k < local.size(); ++k) {
    local_ids[k] = unique[static_cast<size_t>(local[k])];
    std::memcpy(local_grads.data() + k * static_cast<size_t>(dim), sums.data() + local[k] * dim,
                static_cast<size_t>(dim) * sizeof(float));
  }
  add_pending(rank_, local_ids.data(), local_grads.data(), static_cast<int64_t>(local.size()));
}

void DistEmbedding::add_pending(int source, const int64_t* ids, const float* grads, int64_t n) {
  const int64_t dim = options_.dim;
  const int64_t begin = owned().begin;
  std::lock_guard<std::mutex> lock(pending_mutex_);
  PARTITA_CHECK(source >= 0 && source < static_cast<int>(pending_.size()), CommError,
                "embedding table {}: push from rank {} of {} ranges", options_.table_id, source,
                pending_.size());
  Pending& p = pending_[static_cast<size_t>(source)];
  for (int64_t i = 0; i < n; ++i) {
    const float* g = grads + i * dim;
    const int64_t row = ids[i] - begin;
    auto [it, inserted] = p.slot.try_emplace(row, static_cast<int64_t>(p.rows.size()));
    if (inserted) {
      p.rows.push_back(row);
      p.grads.insert(p.grads.end(), g, g + dim);
    } else {
      float* s = p.grads.data() + it->second * dim;
      for (int64_t j = 0; j < dim; ++j) s[j] += g[j];
    }
  }
}

int64_t DistEmbedding::pending_rows() const {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  absl::flat_hash_map<int64_t, char> rows;
  for (const Pending& p : pending_)
    for (const int64_t row : p.rows) rows.emplace(row, 0);
  return static_cast<int64_t>(rows.size());
}

void DistEmbedding::apply_pending() {
  const int64_t dim = options_.dim;
  std::vector<Pending> taken(ranges_.size());
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    taken.swap(pending_);
  }
  // Per row: the sources' sums added in source-rank order, whatever order they arrived in.
  absl::flat_hash_map<int64_t, int64_t> slot;
  std::vector<int64_t> rows;
  std::vector<float> sums;
  for (const Pending& p : taken) {
    for (size_t k = 0; k < p.rows.size(); ++k) {
      const float* g = p.grads.data() + static_cast<int64_t>(k) * dim;
      auto [it, inserted] = slot.try_emplace(p.rows[k], static_cast<int64_t>(rows.size()));
      if (inserted) {
        rows.push_back(p.rows[k]);
        sums.insert(sums.end(), g, g + dim);
      } else {
        float* s = sums.data() + it->second * dim;
        for (int64_t j = 0; j < dim; ++j) s[j] += g[j];
      }
    }
  }
  std::unique_lock<std::shared_mutex> lock(table_mutex_);
  for (size_t k = 0; k < rows.size(); ++k)
    step_row(rows[k], sums.data() + static_cast<int64_t>(k) * dim);
  applied_rows_ += static_cast<int64_t>(rows.size());
}

void DistEmbedding::step_row(int64_t row, const float* g) {
  const int64_t dim = options_.dim;
  const SparseOptimizerOptions& opt = options_.optimizer;
  float* x = rows_.data() + row * dim;
  switch (opt.kind) {
    case SparseOptimizer::kSgd:
      for (int64_t j = 0; j < dim; ++j) x[j] -= opt.lr * g[j];
      return;
    case SparseOptimizer::kAdagrad: {
      float* s = state1_.data() + row * dim;
      for (int64_t j = 0; j < dim; ++j) {
        s[j] += g[j] * g[j];
        x[j] -= opt.lr * g[j] / (std::sqrt(s[j]) + opt.eps);
      }
      return;
    }
    case SparseOptimizer::kAdam: {
      float* m = state1_.data() + row * dim;
      float* v = state2_.data() + row * dim;
      const int64_t t = ++steps_[static_cast<size_t>(row)];
      const float c1 = static_cast<float>(1 - std::pow(static_cast<double>(opt.beta1), t));
      const float c2 = static_cast<float>(1 - std::pow(static_cast<double>(opt.beta2), t));
      for (int64_t j = 0; j < dim; ++j) {
        m[j] = opt.beta1 * m[j] + (1 - opt.beta1) * g[j];
        v[j] = opt.beta2 * v[j] + (1 - opt.beta2) * g[j] * g[j];
        x[j] -= opt.lr * (m[j] / c1) / (std::sqrt(v[j] / c2) + opt.eps);
      }
      return;
    }
  }
}

void DistEmbedding::apply_remote(const std::vector<int>& owners) {
  if (owners.empty()) return;
  std::vector<RpcRequest> requests;
  for (const int owner : owners) {
    WireWriter request;
    request.put<uint64_t>(embedding_request_kind(options_.table_id, EmbeddingOp::kApply));
    requests.push_back({owner, request.take()});
  }
  endpoint("apply_remote").call_all(std::move(requests));
}

std::vector<uint8_t> DistEmbedding::serialize_state() const {
  PARTITA_CHECK(pending_rows() == 0, Error,
                "embedding table {}: state saved with gradients pending (apply them first)",
                options_.table_id);
  std::shared_lock<std::shared_mutex> lock(table_mutex_);
  std::vector<uint8_t> out;
  out.reserve(64 + (rows_.size() + state1_.size() + state2_.size()) * sizeof(float) +
              steps_.size() * 8);
  append(out, kStateMagic, sizeof(kStateMagic));
  append_one<uint32_t>(out, kStateVersion);
  append_one<uint32_t>(out, static_cast<uint32_t>(options_.optimizer.kind));
  append_one<int64_t>(out, options_.table_id);
  append_one<int64_t>(out, options_.dim);
  append_one<int64_t>(out, owned().begin);
  append_one<int64_t>(out, owned().end);
  append(out, rows_.data(), rows_.size());
  append(out, state1_.data(), state1_.size());
  append(out, state2_.data(), state2_.size());
  append(out, steps_.data(), steps_.size());
  append_one<uint32_t>(out, crc32_update(0, out.data(), out.size()));
  return out;
}

void DistEmbedding::load_state(const uint8_t* data, size_t size, const std::string& source) {
  PARTITA_CHECK(pending_rows() == 0, Error,
                "embedding table {}: state loaded with gradients pending", options_.table_id);
  PARTITA_CHECK(
      size >= sizeof(kStateMagic) + 4 && std::memcmp(data, kStateMagic, sizeof(kStateMagic)) == 0,
      FormatError, "{}: not an embedding state (bad magic)", source);
  uint32_t stored_crc;
  std::memcpy(&stored_crc, data + size - 4, 4);
  PARTITA_CHECK(crc32_update(0, data, size - 4) == stored_crc, FormatError,
                "{}: embedding state checksum mismatch (corrupt or truncated)", source);
  StateReader in(data + sizeof(kStateMagic), size - sizeof(kStateMagic) - 4, source);
  const uint32_t version = in.get<uint32_t>();
  PARTITA_CHECK(version == kStateVersion, FormatError,
                "{}: embedding state version {} (this build reads {})", source, version,
                kStateVersion);
  const uint32_t kind = in.get<uint32_t>();
  const int64_t table = in.get<int64_t>();
  const int64_t dim = in.get<int64_t>();
  const int64_t begin = in.get<int64_t>();
  const int64_t end = in.get<int64_t>();
  const SparseOptimizer want = options_.optimizer.kind;
  PARTITA_CHECK(kind == static_cast<uint32_t>(want), FormatError,
                "{}: embedding state of optimizer {} for a table using {}", source,
                kind <= 2 ? optimizer_name(static_cast<SparseOptimizer>(kind)) : "unknown",
                optimizer_name(want));
  PARTITA_CHECK(table == options_.table_id && dim == options_.dim, FormatError,
                "{}: embedding state of table {} with dim {} for table {} with dim {}", source,
                table, dim, options_.table_id, options_.dim);
  PARTITA_CHECK(begin == owned().begin && end == owned().end, FormatError,
                "{}: embedding state of rows [{}, {}) for rank {} owning [{}, {})", source, begin,
                end, rank_, owned().begin, owned().end);
  std::vector<float> rows(rows_.size()), state1(state1_.size()), state2(state2_.size());
  std::vector<int64_t> steps(steps_.size());
  in.read_array(rows);
  in.read_array(state1);
  in.read_array(state2);
  in.read_array(steps);
  PARTITA_CHECK(in.left() == 0, FormatError, "{}: {} unexpected bytes after the embedding state",
                source, in.left());
  for (const int64_t t : steps)
    PARTITA_CHECK(t >= 0, FormatError, "{}: negative Adam step count {}", source, t);
  std::unique_lock<std::shared_mutex> lock(table_mutex_);
  rows_ = std::move(rows);
  state1_ = std::move(state1);
  state2_ = std::move(state2);
  steps_ = std::move(steps);
}

std::vector<uint8_t> DistEmbedding::fetch_remote_state(int owner) {
  WireWriter request;
  request.put<uint64_t>(embedding_request_kind(options_.table_id, EmbeddingOp::kState));
  return endpoint("fetch_remote_state").call(owner, request.take());
}

void DistEmbedding::load_remote_state(int owner, std::vector<uint8_t> bytes,
                                      const std::string& source) {
  WireWriter request(32 + source.size() + bytes.size());
  request.put<uint64_t>(embedding_request_kind(options_.table_id, EmbeddingOp::kLoad));
  request.put_array(ArrayView<const char>(source.data(), static_cast<int64_t>(source.size())));
  request.put_array(ArrayView<const uint8_t>(bytes.data(), static_cast<int64_t>(bytes.size())));
  endpoint("load_remote_state").call(owner, request.take());
}

EmbeddingStats DistEmbedding::stats() const {
  return {local_rows_.load(),   remote_rows_.load(), remote_requests_.load(),
          remote_bytes_.load(), pushed_rows_.load(), applied_rows_.load()};
}

}  // namespace partita::store
