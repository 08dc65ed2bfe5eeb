// See device_blocks.h. The CPU's construction (nn/block_tensors.cc: from_csc and
// add_relations) restated in torch ops that need no host read: sizes come from the caller.
#include "device_blocks.h"

namespace partita::train {
namespace {

// Entries `values` where `keep`, in order, into [count]: `position` is each kept entry's
// slot (the rest go to a spare slot past the end, dropped).
torch::Tensor compact(const torch::Tensor& values, const torch::Tensor& keep,
                      const torch::Tensor& position, int64_t count) {
  const torch::Tensor slot = torch::where(keep, position, torch::full_like(position, count));
  return torch::empty({count + 1}, values.options())
      .index_copy_(0, slot, values)
      .slice(0, 0, count);
}

torch::Tensor with_leading_zero(const torch::Tensor& sums) {
  return torch::cat({torch::zeros({1}, sums.options()), sums});
}

void add_relations(nn::BlockTensors& t, const DeviceCsc& csc) {
  const int64_t n = csc.num_dst;
  const int64_t R = csc.run_counts.size(1);
  const int64_t S = csc.relation_rows;
  const auto i64 = csc.indptr.options();
  t.num_relations = csc.num_relations;
  t.etypes = csc.etypes;
  // Relation rows: the (dst, relation) pairs with edges, relation-major.
  const torch::Tensor counts = csc.run_counts.t().reshape({-1});  // [R * n], relation-major
  const torch::Tensor has = counts.gt(0);
  const torch::Tensor row_of_pair = has.cumsum(0).sub_(1);
  t.rel_offsets =
      with_leading_zero(csc.run_counts.gt(0).sum(0).cumsum(0)).slice(0, 0, csc.num_relations + 1);
  const torch::Tensor pair = torch::arange(R * n, i64);
  t.rel_row_dst = compact(pair.remainder(n), has, row_of_pair, S);
  t.rel_indptr = with_leading_zero(compact(counts, has, row_of_pair, S).cumsum(0));
  // Each edge's relation row and entry (the row's first entry plus its place in the run).
  const torch::Tensor row_of_edge = row_of_pair.index_select(0, csc.etypes * n + t.edge_dst);
  const torch::Tensor entry_of_edge = t.rel_indptr.index_select(0, row_of_edge) + csc.run_entry;
  t.rel_src = torch::empty_like(csc.indices).index_copy_(0, entry_of_edge, csc.indices);
  t.t_rel_row = row_of_edge.index_select(0, t.t_eid);
  t.t_rel_entry = entry_of_edge.index_select(0, t.t_eid);
}

}  // namespace

nn::BlockTensors device_block_tensors(const DeviceCsc& csc) {
  const int64_t n = csc.num_dst;
  const int64_t edges = csc.indices.size(0);
  const auto i64 = csc.indptr.options();
  nn::BlockTensors t;
  t.num_dst = n;
  t.num_src = csc.num_src;
  t.indptr = csc.indptr;
  t.indices = csc.indices;
  t.deg_dst = csc.indptr.slice(0, 1) - csc.indptr.slice(0, 0, n);
  t.edge_dst = torch::arange(n, i64).repeat_interleave(t.deg_dst, /*dim=*/0, edges);
  // Not bincount: on CUDA it reads the largest id on the host to size its output.
  t.deg_src =
      torch::zeros({csc.num_src}, i64).index_add_(0, csc.indices, torch::ones({edges}, i64));
  t.t_indptr = with_leading_zero(t.deg_src.cumsum(0));
  // The edges of each src in increasing edge id: a stable sort by src.
  t.t_eid = std::get<1>(torch::sort(csc.indices, c10::optional<bool>(true), /*dim=*/0));
  t.t_dst = t.edge_dst.index_select(0, t.t_eid);
  if (csc.etypes.defined()) add_relations(t, csc);
  return t;
}

}  // namespace partita::train
