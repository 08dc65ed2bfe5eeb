#include "batch_views.h"

#include <utility>

#include "partita/core/error.h"

namespace py = pybind11;

namespace partita::python {
namespace {

torch::ScalarType torch_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return torch::kFloat16;
    case DType::kBFloat16:
      return torch::kBFloat16;
    default:
      return torch::kFloat32;
  }
}

}  // namespace

torch::Tensor float_rows(uint8_t* bytes, int64_t rows, int64_t dim, DType dtype,
                         const std::shared_ptr<const void>& owner) {
  torch::Tensor x = torch::from_blob(
      bytes, {rows, dim}, [owner](void*) {}, torch::TensorOptions().dtype(torch_type(dtype)));
  return x.scalar_type() == torch::kFloat32 ? x : x.to(torch::kFloat32);
}

BatchHead head_of(const std::shared_ptr<loader::Batch>& batch, int64_t global_size) {
  BatchHead out;
  out.step = batch->step;
  out.global_size = global_size;
  out.sample_s = batch->sample_s;
  out.fetch_s = batch->fetch_s;
  out.seeds = view_of(batch->sampled.seeds, batch, torch::kInt64);
  out.input_nodes = view_of(batch->sampled.input_nodes, batch, torch::kInt64);
  return out;
}

std::vector<Block> input_layer_first(std::vector<sample::Block>& sampled,
                                     std::vector<nn::BlockTensors> tensors,
                                     const std::shared_ptr<const void>& owner) {
  std::vector<Block> out;
  for (size_t i = tensors.size(); i-- > 0;)
    out.push_back({std::move(tensors[i]), view_of(sampled[i].src_nodes, owner, torch::kInt64)});
  return out;
}

void fill_block_batch(const std::shared_ptr<loader::Batch>& batch, int64_t global_size,
                      int64_t feat_dim, DType dtype, BlockBatch& out) {
  static_cast<BatchHead&>(out) = head_of(batch, global_size);
  const auto rows = static_cast<int64_t>(batch->sampled.input_nodes.size());
  out.x = float_rows(batch->features.data(), rows, feat_dim, dtype, batch);
  if (batch->sampled.seeds.empty()) return;
  std::vector<sample::Block>& blocks = batch->sampled.blocks;
  out.blocks = input_layer_first(blocks, nn::to_block_tensors(blocks, batch->degrees), batch);
}

std::vector<torch::Tensor> block_edge_rows(const std::shared_ptr<loader::Batch>& batch,
                                           int64_t edge_dim, DType dtype) {
  const std::vector<sample::Block>& blocks = batch->sampled.blocks;
  std::vector<torch::Tensor> out(blocks.size());
  if (edge_dim == 0) return out;
  const int64_t edges = batch->sampled.num_sampled_edges();
  PARTITA_CHECK(
      batch->edge_features.size() == static_cast<size_t>(edges * edge_dim) * dtype_size(dtype),
      Error, "internal: a batch has {} edge feature bytes for {} edges",
      batch->edge_features.size(), edges);
  const torch::Tensor rows = float_rows(batch->edge_features.data(), edges, edge_dim, dtype, batch);
  int64_t offset = 0;
  for (size_t l = 0; l < blocks.size(); ++l) {
    out[l] = rows.narrow(0, offset, blocks[l].num_edges());
    offset += blocks[l].num_edges();
  }
  return out;
}

void set_edge_attrs(const std::shared_ptr<loader::Batch>& batch, int64_t edge_dim, DType dtype,
                    BlockBatch& out) {
  if (edge_dim == 0 || out.blocks.empty()) return;
  std::vector<torch::Tensor> rows = block_edge_rows(batch, edge_dim, dtype);
  // out.blocks are input layer first: out.blocks[i] is sampled block n - 1 - i.
  const size_t n = rows.size();
  for (size_t l = 0; l < n; ++l) out.blocks[n - 1 - l].tensors.edge_feat = std::move(rows[l]);
}

void to_device(BlockBatch& batch, train::BatchStaging& staging) {
  for (torch::Tensor* t : {&batch.seeds, &batch.input_nodes, &batch.x}) *t = staging.to_device(*t);
  for (Block& b : batch.blocks) {
    // The block's index tensors move as one int64 buffer; its float edge features apart.
    torch::Tensor edge_feat = std::move(b.tensors.edge_feat);
    b.tensors.edge_feat = torch::Tensor();
    b.tensors = staging.to_device(std::move(b.tensors));
    if (edge_feat.defined()) b.tensors.edge_feat = staging.to_device(edge_feat);
    b.src_nodes = staging.to_device(b.src_nodes);
  }
}

void bind_block(py::module_& m) {
  py::class_<Block>(m, "Block", "One sampled block (layer) of a batch")
      .def_readonly("tensors", &Block::tensors)
      .def_readonly("src_nodes", &Block::src_nodes)
      .def_property_readonly("num_src", [](const Block& b) { return b.tensors.num_src; })
      .def_property_readonly("num_dst", [](const Block& b) { return b.tensors.num_dst; })
      .def_property_readonly("num_edges", [](const Block& b) { return b.tensors.num_edges(); })
      .def_property_readonly("indptr", [](const Block& b) { return b.tensors.indptr; })
      .def_property_readonly("indices", [](const Block& b) { return b.tensors.indices; })
      .def_property_readonly("edge_index",
                             [](const Block& b) {
                               return torch::stack({b.tensors.indices, b.tensors.edge_dst});
                             })
      .def_property_readonly("graph_deg", [](const Block& b) { return b.tensors.graph_deg; })
      .def_property_readonly(
          "edge_attr",
          [](const Block& b) -> py::object {
            if (!b.tensors.edge_feat.defined()) return py::none();
            return py::cast(b.tensors.edge_feat);
          },
          "float32 [num_edges, edge_feat_dim]: each edge's features, aligned with indices "
          "(NeighborLoader(..., edge_features=True)); None otherwise");
}

}  // namespace partita::python
