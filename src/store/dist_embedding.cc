#include "partita/store/dist_embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "partita/comm/errors.h"
#include "partita/comm/sliced_exchange.h"
#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/store/embedding_format.h"

namespace partita::store {
namespace {

constexpr size_t kSliceBytes = size_t{1} << 20;  // row bytes per remote request, as fetches

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
  optimizer_ = optim::make_row_optimizer(opt, n, dim);
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
  optimizer_->step(rows_.data(),
                   ArrayView<const int64_t>(rows.data(), static_cast<int64_t>(rows.size())),
                   sums.data());
  applied_rows_ += static_cast<int64_t>(rows.size());
}

std::vector<uint8_t> DistEmbedding::serialize_state() const {
  PARTITA_CHECK(pending_rows() == 0, Error,
                "embedding table {}: state saved with gradients pending (apply them first)",
                options_.table_id);
  std::shared_lock<std::shared_mutex> lock(table_mutex_);
  EmbeddingStateHeader header;
  header.optimizer = options_.optimizer.kind;
  header.table_id = options_.table_id;
  header.dim = options_.dim;
  header.begin = owned().begin;
  header.end = owned().end;
  return encode_embedding_state(
      header, ArrayView<const float>(rows_.data(), static_cast<int64_t>(rows_.size())),
      optimizer_->state());
}

void DistEmbedding::load_state(const uint8_t* data, size_t size, const std::string& source) {
  PARTITA_CHECK(pending_rows() == 0, Error,
                "embedding table {}: state loaded with gradients pending", options_.table_id);
  EmbeddingState state = decode_embedding_state(data, size, source);
  const EmbeddingStateHeader& h = state.header;
  const SparseOptimizer want = options_.optimizer.kind;
  PARTITA_CHECK(h.optimizer == want, FormatError,
                "{}: embedding state of optimizer {} for a table using {}", source,
                optim::sparse_optimizer_name(h.optimizer), optim::sparse_optimizer_name(want));
  PARTITA_CHECK(h.table_id == options_.table_id && h.dim == options_.dim, FormatError,
                "{}: embedding state of table {} with dim {} for table {} with dim {}", source,
                h.table_id, h.dim, options_.table_id, options_.dim);
  PARTITA_CHECK(h.begin == owned().begin && h.end == owned().end, FormatError,
                "{}: embedding state of rows [{}, {}) for rank {} owning [{}, {})", source, h.begin,
                h.end, rank_, owned().begin, owned().end);
  std::unique_lock<std::shared_mutex> lock(table_mutex_);
  rows_ = std::move(state.rows);
  optimizer_->set_state(std::move(state.optimizer));
}

EmbeddingStats DistEmbedding::stats() const {
  return {local_rows_.load(),   remote_rows_.load(), remote_requests_.load(),
          remote_bytes_.load(), pushed_rows_.load(), applied_rows_.load()};
}

}  // namespace partita::store
