#include "partita/nn/block_tensors.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "generic_ops.h"
#include "partita/core/error.h"
#include "partita/nn/block_transfer.h"
#include "partita/nn/kernel_path.h"

namespace partita::nn {

namespace {

torch::Tensor to_tensor(const int64_t* data, int64_t n) {
  // from_blob does not own the data: clone before the caller's buffer can go away.
  return torch::from_blob(const_cast<int64_t*>(data), {n}, torch::kInt64).clone();
}

// Edges per chunk of from_csc's parallel transpose (below it, one chunk: the serial loop).
constexpr int64_t kEdgesPerChunk = int64_t{1} << 15;

// Builds every tensor of a checked CSC (indptr [num_dst + 1], indices [E] in [0, num_src)).
// On the CPU (move_blocks moves the result to a device). Runs on torch's intra-op
// threads; the result does not depend on their number (the transpose keeps edge ids
// increasing in each src row).
BlockTensors from_csc(int64_t num_dst, int64_t num_src, const int64_t* indptr,
                      const int64_t* indices) {
  const int64_t num_edges = indptr[num_dst];
  BlockTensors t;
  t.num_dst = num_dst;
  t.num_src = num_src;
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  t.indptr = to_tensor(indptr, num_dst + 1);
  t.indices = to_tensor(indices, num_edges);
  t.deg_dst = t.indptr.slice(0, 1) - t.indptr.slice(0, 0, num_dst);
  t.edge_dst = torch::empty({num_edges}, i64);
  t.deg_src = torch::empty({num_src}, i64);
  t.t_indptr = torch::empty({num_src + 1}, i64);
  t.t_dst = torch::empty({num_edges}, i64);
  t.t_eid = torch::empty({num_edges}, i64);
  int64_t* edge_dst = t.edge_dst.data_ptr<int64_t>();
  int64_t* deg_src = t.deg_src.data_ptr<int64_t>();
  int64_t* t_indptr = t.t_indptr.data_ptr<int64_t>();
  int64_t* t_dst = t.t_dst.data_ptr<int64_t>();
  int64_t* t_eid = t.t_eid.data_ptr<int64_t>();
  at::parallel_for(0, num_dst, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      std::fill(edge_dst + indptr[i], edge_dst + indptr[i + 1], i);
  });
  // Counting sort of the edges by src, over contiguous chunks of edges: count[c][j] = edges
  // of chunk c with src j, turned into each chunk's first slot in row j. Chunks fill a row
  // in chunk order, so edge ids stay increasing inside each src row for any chunk count.
  const int64_t chunks =
      std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), num_edges / kEdgesPerChunk));
  const auto chunk_begin = [&](int64_t c) { return num_edges * c / chunks; };
  std::unique_ptr<int64_t[]> count(new int64_t[static_cast<size_t>(chunks * num_src)]);
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t* n = count.get() + c * num_src;
      std::fill(n, n + num_src, 0);
      for (int64_t k = chunk_begin(c); k < chunk_begin(c + 1); ++k) ++n[indices[k]];
    }
  });
  at::parallel_for(0, num_src, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      int64_t sum = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        int64_t& n = count[static_cast<size_t>(c * num_src + j)];
        const int64_t here = n;
        n = sum;
        sum += here;
      }
      deg_src[j] = sum;
    }
  });
  t_indptr[0] = 0;
  for (int64_t j = 0; j < num_src; ++j) t_indptr[j + 1] = t_indptr[j] + deg_src[j];
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t* next = count.get() + c * num_src;
      for (int64_t k = chunk_begin(c); k < chunk_begin(c + 1); ++k) {
        const int64_t j = indices[k];
        const int64_t pos = t_indptr[j] + next[j]++;
        t_dst[pos] = edge_dst[k];
        t_eid[pos] = k;
      }
    }
  });
  return t;
}

// Sets the relation fields of `t` (built by from_csc, on the CPU) from a checked `etypes`
// (relations grouped inside each dst row).
void add_relations(BlockTensors& t, const std::vector<int32_t>& etypes) {
  const int64_t num_edges = t.num_edges();
  int64_t max_rel = -1;
  for (int32_t r : etypes) max_rel = std::max<int64_t>(max_rel, r);
  const int64_t R = max_rel + 1;
  // Runs of one relation inside a dst row, dst-major: (first edge, relation).
  const int64_t* indptr = t.indptr.data_ptr<int64_t>();
  std::vector<int64_t> run_start, run_rel;
  for (int64_t i = 0; i < t.num_dst; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      if (k > indptr[i] && etypes[k] == etypes[k - 1]) continue;
      run_start.push_back(k);
      run_rel.push_back(etypes[k]);
    }
  }
  const auto S = static_cast<int64_t>(run_start.size());
  run_start.push_back(num_edges);  // runs are contiguous: run s ends where s + 1 starts
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  t.num_relations = R;
  t.etypes = torch::empty({num_edges}, i64);
  t.rel_offsets = torch::zeros({R + 1}, i64);
  t.rel_row_dst = torch::empty({S}, i64);
  t.rel_indptr = torch::empty({S + 1}, i64);
  t.rel_src = torch::empty({num_edges}, i64);
  t.t_rel_row = torch::empty({num_edges}, i64);
  t.t_rel_entry = torch::empty({num_edges}, i64);
  int64_t* et = t.etypes.data_ptr<int64_t>();
  int64_t* offsets = t.rel_offsets.data_ptr<int64_t>();
  for (int64_t k = 0; k < num_edges; ++k) et[k] = etypes[static_cast<size_t>(k)];
  // Counting sort of the runs by relation (stable: dst stays increasing).
  for (int64_t r : run_rel) ++offsets[r + 1];
  for (int64_t r = 0; r < R; ++r) offsets[r + 1] += offsets[r];
  std::vector<int64_t> next(offsets, offsets + R);
  std::vector<int64_t> row_of_run(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) row_of_run[s] = next[static_cast<size_t>(run_rel[s])]++;
  const int64_t* edge_dst = t.edge_dst.data_ptr<int64_t>();
  const int64_t* indices = t.indices.data_ptr<int64_t>();
  int64_t* row_dst = t.rel_row_dst.data_ptr<int64_t>();
  int64_t* rel_indptr = t.rel_indptr.data_ptr<int64_t>();
  std::vector<int64_t> run_of_row(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) run_of_row[row_of_run[s]] = s;
  // Rows in relation-major order; entry_of_edge / row_of_edge for the transposed block.
  std::vector<int64_t> entry_of_edge(static_cast<size_t>(num_edges));
  std::vector<int64_t> row_of_edge(static_cast<size_t>(num_edges));
  int64_t* rel_src = t.rel_src.data_ptr<int64_t>();
  rel_indptr[0] = 0;
  for (int64_t row = 0; row < S; ++row) {
    const int64_t run = run_of_row[row];
    int64_t entry = rel_indptr[row];
    row_dst[row] = edge_dst[run_start[run]];
    for (int64_t k = run_start[run]; k < run_start[run + 1]; ++k, ++entry) {
      rel_src[entry] = indices[k];
      entry_of_edge[k] = entry;
      row_of_edge[k] = row;
    }
    rel_indptr[row + 1] = entry;
  }
  const int64_t* t_eid = t.t_eid.data_ptr<int64_t>();
  int64_t* t_rel_row = t.t_rel_row.data_ptr<int64_t>();
  int64_t* t_rel_entry = t.t_rel_entry.data_ptr<int64_t>();
  for (int64_t k = 0; k < num_edges; ++k) {
    t_rel_row[k] = row_of_edge[t_eid[k]];
    t_rel_entry[k] = entry_of_edge[t_eid[k]];
  }
}

// Throws partita::Error if `block` is inconsistent (block_tensors.h, to_block_tensors).
void check_block(const sample::Block& block) {
  PARTITA_CHECK(block.num_dst >= 0 && block.num_src >= block.num_dst, Error,
                "block: num_src {} < num_dst {}", block.num_src, block.num_dst);
  PARTITA_CHECK(static_cast<int64_t>(block.indptr.size()) == block.num_dst + 1, Error,
                "block: indptr has {} entries, expected num_dst + 1 = {}", block.indptr.size(),
                block.num_dst + 1);
  PARTITA_CHECK(block.indptr.front() == 0 && block.indptr.back() == block.num_edges(), Error,
                "block: indptr must run from 0 to {} edges", block.num_edges());
  for (int64_t i = 0; i < block.num_dst; ++i) {
    PARTITA_CHECK(block.indptr[i] <= block.indptr[i + 1], Error,
                  "block: indptr decreases at dst {}", i);
  }
  // Range check of the src ids on torch's threads; the first bad one is reported.
  std::atomic<bool> ids_ok{true};
  at::parallel_for(0, block.num_edges(), int64_t{1} << 15, [&](int64_t begin, int64_t end) {
    bool ok = true;
    for (int64_t k = begin; k < end; ++k)
      ok &= static_cast<uint64_t>(block.indices[k]) < static_cast<uint64_t>(block.num_src);
    if (!ok) ids_ok.store(false, std::memory_order_relaxed);
  });
  for (int64_t k = 0; !ids_ok.load() && k < block.num_edges(); ++k) {
    const int64_t s = block.indices[k];
    PARTITA_CHECK(s >= 0 && s < block.num_src, Error, "block: src id {} out of [0, {})", s,
                  block.num_src);
  }
  const bool typed = !block.etypes.empty();
  PARTITA_CHECK(!typed || block.etypes.size() == block.indices.size(), Error,
                "block: {} relation ids for {} edges", block.etypes.size(), block.indices.size());
  for (int64_t i = 0; typed && i < block.num_dst; ++i) {
    for (int64_t k = block.indptr[i]; k < block.indptr[i + 1]; ++k) {
      PARTITA_CHECK(block.etypes[k] >= 0, Error, "block: negative relation id {} at edge {}",
                    block.etypes[k], k);
      PARTITA_CHECK(k == block.indptr[i] || block.etypes[k - 1] <= block.etypes[k], Error,
                    "block: relation ids decrease inside the row of dst {}", i);
    }
  }
}

}  // namespace

BlockTensors to_block_tensors(const sample::Block& block, torch::Device device) {
  if (uses_generic_ops(device) && block.etypes.empty())
    return std::move(to_block_tensors(std::vector<sample::Block>{block}, device)[0]);
  check_block(block);
  BlockTensors t =
      from_csc(block.num_dst, block.num_src, block.indptr.data(), block.indices.data());
  if (!block.etypes.empty()) add_relations(t, block.etypes);
  if (!device.is_cpu()) {
    std::vector<BlockTensors> one{std::move(t)};
    move_blocks(one, nullptr, transfer_to(device));
    return std::move(one[0]);
  }
  return t;
}

namespace {

// The edge features of `looped` (= with_self_loops(block)): block edge k of dst i moves to
// row k + i + 1, and the self loop of dst i (row looped.indptr[i]) gets the mean of i's
// edge features, zeros without edges. Torch ops on the block's device, differentiable in
// block.edge_feat; sums in float32 (float64 for float64 features).
torch::Tensor self_loop_edge_feat(const BlockTensors& block, const BlockTensors& looped) {
  const torch::Tensor& f = block.edge_feat;
  PARTITA_CHECK(f.dim() == 2 && f.size(0) == block.num_edges(), Error,
                "with_self_loops: edge_feat must be [{}, d], got {} dims, {} rows",
                block.num_edges(), f.dim(), f.dim() > 0 ? f.size(0) : 0);
  PARTITA_CHECK(f.device() == block.indptr.device(), Error,
                "with_self_loops: edge_feat is on {}, the block on {}", f.device().str(),
                block.indptr.device().str());
  const int64_t n = block.num_dst;
  const int64_t e = block.num_edges();
  const torch::ScalarType type =
      f.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  const torch::Tensor sum = torch::zeros({n, f.size(1)}, f.options().dtype(type))
                                .index_add(0, block.edge_dst, f.to(type));
  const torch::Tensor mean =
      (sum / block.deg_dst.clamp_min(1).to(type).unsqueeze(1)).to(f.scalar_type());
  // Row p of the result is row source[p] of [mean; f].
  const auto i64 = block.indices.options();
  const torch::Tensor source =
      torch::empty({e + n}, i64)
          .index_copy(0, looped.indptr.slice(0, 0, n), torch::arange(n, i64))
          .index_copy(0, torch::arange(e, i64) + block.edge_dst + 1, torch::arange(n, n + e, i64));
  return torch::cat({mean, f}).index_select(0, source);
}

BlockTensors loops_of(const BlockTensors& block) {
  if (uses_generic_ops(block.indptr.device())) return generic::with_self_loops(block);
  const int64_t n = block.num_dst;
  const int64_t* indptr = block.indptr.data_ptr<int64_t>();
  const int64_t* indices = block.indices.data_ptr<int64_t>();
  std::vector<int64_t> ptr(static_cast<size_t>(n + 1));
  std::vector<int64_t> idx(static_cast<size_t>(block.num_edges() + n));
  for (int64_t i = 0; i < n; ++i) {
    ptr[i] = indptr[i] + i;
    idx[ptr[i]] = i;
    std::copy(indices + indptr[i], indices + indptr[i + 1], idx.begin() + ptr[i] + 1);
  }
  ptr[n] = block.num_edges() + n;
  BlockTensors t = from_csc(n, block.num_src, ptr.data(), idx.data());
  t.graph_deg = block.graph_deg;
  return t;
}

}  // namespace

BlockTensors with_self_loops(const BlockTensors& block) {
  BlockTensors t = loops_of(block);
  if (block.edge_feat.defined()) t.edge_feat = self_loop_edge_feat(block, t);
  return t;
}

BlockTransfer transfer_to(const torch::Device& device) {
  return {device, device.is_cuda() && torch::cuda::is_available(), nullptr};
}

namespace {

torch::Tensor copied(const torch::Tensor& host, const BlockTransfer& transfer) {
  return transfer.copy ? transfer.copy(host) : host.to(transfer.device, transfer.pin);
}

}  // namespace

std::vector<BlockTensors> blocks_on_device(const std::vector<sample::Block>& blocks,
                                           const std::vector<int64_t>* input_degrees,
                                           const BlockTransfer& transfer) {
  RECORD_USER_SCOPE("partita::to_block_tensors");  // a stage of train/step_profile.h
  const bool typed = std::any_of(blocks.begin(), blocks.end(),
                                 [](const sample::Block& b) { return !b.etypes.empty(); });
  if (uses_generic_ops(transfer.device) && !typed) {
    // One copy of the index arrays, the rest derived on the device.
    const PackedBlocks packed = pack_blocks(blocks, input_degrees, transfer.pin);
    return unpack_blocks(packed, copied(packed.host, transfer));
  }
  std::vector<BlockTensors> out;
  out.reserve(blocks.size());
  for (const sample::Block& b : blocks) out.push_back(to_block_tensors(b));
  torch::Tensor degrees;
  if (input_degrees != nullptr) {
    const int64_t num_input = blocks.empty() ? 0 : blocks.back().num_src;
    PARTITA_CHECK(static_cast<int64_t>(input_degrees->size()) == num_input, Error,
                  "block: {} input degrees for {} input nodes", input_degrees->size(), num_input);
    degrees = to_tensor(input_degrees->data(), static_cast<int64_t>(input_degrees->size()));
  }
  // The blocks and the degrees in one transfer; graph_deg are views of the moved degrees.
  if (!transfer.device.is_cpu()) move_blocks(out, &degrees, transfer);
  if (degrees.defined())
    for (BlockTensors& t : out) t.graph_deg = degrees.slice(0, 0, t.num_src);
  return out;
}

std::vector<BlockTensors> to_block_tensors(const std::vector<sample::Block>& blocks,
                                           torch::Device device) {
  return blocks_on_device(blocks, nullptr, transfer_to(device));
}

std::vector<BlockTensors> to_block_tensors(const std::vector<sample::Block>& blocks,
                                           const std::vector<int64_t>& input_degrees,
                                           torch::Device device) {
  return blocks_on_device(blocks, &input_degrees, transfer_to(device));
}

void move_blocks(std::vector<BlockTensors>& blocks, torch::Tensor* extra,
                 const BlockTransfer& transfer) {
  std::vector<torch::Tensor*> fields;
  const auto add = [&fields](const char*, torch::Tensor& f) {
    if (f.defined()) fields.push_back(&f);
  };
  for (BlockTensors& t : blocks) for_each_tensor(add, t);
  if (extra != nullptr) add("extra", *extra);
  int64_t total = 0;
  for (const torch::Tensor* f : fields) {
    PARTITA_CHECK(f->scalar_type() == torch::kInt64 && f->device().is_cpu(), Error,
                  "internal: move_blocks of a {} tensor on {}", c10::toString(f->scalar_type()),
                  f->device().str());
    total += f->numel();
  }
  // Pinned host memory lets the copy run asynchronously (CUDA's host allocator keeps the
  // buffer until the copy is done, although `host` goes out of scope here).
  const torch::Tensor host = torch::empty(
      {total}, torch::TensorOptions().dtype(torch::kInt64).pinned_memory(transfer.pin));
  int64_t offset = 0;
  for (const torch::Tensor* f : fields) {
    host.narrow(0, offset, f->numel()).copy_(f->reshape({-1}));
    offset += f->numel();
  }
  const torch::Tensor moved = copied(host, transfer);
  offset = 0;
  for (torch::Tensor* f : fields) {
    const int64_t n = f->numel();
    *f = moved.narrow(0, offset, n).view(f->sizes());
    offset += n;
  }
}

PackedBlocks pack_blocks(const std::vector<sample::Block>& blocks,
                         const std::vector<int64_t>* input_degrees, bool pin) {
  PackedBlocks packed;
  int64_t total = 0;
  for (const sample::Block& b : blocks) {
    check_block(b);
    PARTITA_CHECK(b.etypes.empty(), Error, "internal: pack_blocks of a typed block");
    packed.shapes.push_back({b.num_dst, b.num_src, b.num_edges()});
    total += b.num_dst + 1 + b.num_edges();
  }
  if (input_degrees != nullptr) {
    const int64_t num_input = blocks.empty() ? 0 : blocks.back().num_src;
    PARTITA_CHECK(static_cast<int64_t>(input_degrees->size()) == num_input, Error,
                  "block: {} input degrees for {} input nodes", input_degrees->size(), num_input);
    packed.degrees = true;
    total += num_input;
  }
  packed.host =
      torch::empty({total}, torch::TensorOptions().dtype(torch::kInt64).pinned_memory(pin));
  int64_t* out = packed.host.data_ptr<int64_t>();
  for (const sample::Block& b : blocks) {
    out = std::copy(b.indptr.begin(), b.indptr.end(), out);
    out = std::copy(b.indices.begin(), b.indices.end(), out);
  }
  if (input_degrees != nullptr) std::copy(input_degrees->begin(), input_degrees->end(), out);
  return packed;
}

std::vector<BlockTensors> unpack_blocks(const PackedBlocks& packed, const torch::Tensor& data) {
  std::vector<BlockTensors> out;
  out.reserve(packed.shapes.size());
  int64_t offset = 0;
  for (const auto& [num_dst, num_src, edges] : packed.shapes) {
    const torch::Tensor ptr = data.narrow(0, offset, num_dst + 1);
    const torch::Tensor idx = data.narrow(0, offset + num_dst + 1, edges);
    offset += num_dst + 1 + edges;
    out.push_back(generic::from_csc(num_dst, num_src, ptr, idx));
  }
  if (packed.degrees) {
    const torch::Tensor degrees = data.narrow(0, offset, data.size(0) - offset);
    for (BlockTensors& t : out) t.graph_deg = degrees.slice(0, 0, t.num_src);
  }
  return out;
}

}  // namespace partita::nn
