// R-GCN inputs and embedding updates: see typed_inputs.h.
#include "typed_inputs.h"

#include "feature_tensors.h"
#include "partita/core/error.h"
#include "partita/train/batch_staging.h"

namespace partita::train {

bool has_embeddings(runtime::Session& session) {
  for (int t = 0; t < session.graph().num_node_types(); ++t)
    if (session.embedding(t) != nullptr) return true;
  return false;
}

TypedBatchInputs typed_inputs(loader::Batch& batch, runtime::Session& session, bool training,
                              bool normalize, BatchStaging& staging) {
  const store::DistGraph& graph = session.graph();
  const int types = graph.num_node_types();
  PARTITA_CHECK(static_cast<int>(batch.typed_inputs.size()) == types, Error,
                "internal: batch has inputs of {} node types, the graph {}",
                batch.typed_inputs.size(), types);
  TypedBatchInputs out;
  out.inputs.resize(static_cast<size_t>(types));
  for (int t = 0; t < types; ++t) {
    loader::TypedInput& in = batch.typed_inputs[static_cast<size_t>(t)];
    const auto n = static_cast<int64_t>(in.positions.size());
    nn::RgcnInput& input = out.inputs[static_cast<size_t>(t)];
    input.positions = staging.to_device(torch::from_blob(in.positions.data(), {n}, torch::kInt64));
    const int64_t dim = graph.type_feat_dim(t);
    if (dim > 0) {
      input.x = staging.to_device(
          torch::from_blob(in.features.data(), {n, dim}, torch_type_of(graph.feature_dtype())));
      staging.ready();  // widened on the compute stream
      input.x = input.x.to(torch::kFloat32);
      if (normalize && n > 0) {
        input.x = row_normalized(input.x, [&](int64_t row, double sum) {
          return fmt::format(
              "`normalize_features`: the features of node {} (partition id, type {}) sum to "
              "{:g}; row normalization needs non-negative features; leave it off",
              batch.sampled.input_nodes[static_cast<size_t>(in.positions[row])],
              graph.typed_meta().node_types[static_cast<size_t>(t)].name, sum);
        });
      }
      continue;
    }
    store::DistEmbedding* table = session.embedding(t);
    // A type without rows in this batch needs no table (HAN's batches hold one type only).
    if (n == 0 && table == nullptr) continue;
    PARTITA_CHECK(table != nullptr, Error,
                  "internal: node type {} has no features and no learned embedding", t);
    std::vector<int64_t> ids(in.positions.size());
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = batch.sampled.input_nodes[static_cast<size_t>(in.positions[i])];
    torch::Tensor rows = torch::empty({n, table->dim()}, torch::kFloat32);
    if (n > 0) table->lookup(ids, rows.data_ptr<float>());
    rows = staging.to_device(rows);
    if (training) rows.requires_grad_(true);
    input.x = rows;
    out.embedded_types.push_back(t);
    out.embedded_ids.push_back(std::move(ids));
  }
  return out;
}

void push_embedding_gradients(const TypedBatchInputs& inputs, runtime::Session& session) {
  for (size_t i = 0; i < inputs.embedded_types.size(); ++i) {
    const int t = inputs.embedded_types[i];
    const torch::Tensor& rows = inputs.inputs[static_cast<size_t>(t)].x;
    if (!rows.grad().defined() || rows.size(0) == 0) continue;
    const torch::Tensor grad = rows.grad().to(torch::kCPU).to(torch::kFloat32).contiguous();
    session.embedding(t)->push_gradients(inputs.embedded_ids[i], grad.data_ptr<float>());
  }
}

void apply_embedding_updates(runtime::Session& session) {
  const store::DistGraph& graph = session.graph();
  for (int t = 0; t < graph.num_node_types(); ++t) {
    store::DistEmbedding* table = session.embedding(t);
    if (table == nullptr) continue;
    if (session.role() == runtime::Role::kTrainer) {
      // The owners (servers) do not train: one trainer has them apply.
      if (session.rank() == 0) table->apply_remote(session.embedding_owners());
    } else {
      table->apply_pending();
    }
  }
  session.collectives().barrier();
}

}  // namespace partita::train
