// Typed batches for Python: see typed_loader_binding.h. The batches are those of
// `partita train --model rgcn` (the same global plan, share, sampling keys, fanouts resolved
// as the trainer resolves --fanouts, and the pipeline with BatchPipelineOptions::typed), each block
// split into one CSC per relation over per-type local ids (DGL's heterograph blocks, PyG's
// edge_index_dict).
#include "typed_loader_binding.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch_views.h"
#include "embedding_binding.h"
#include "graph_binding.h"
#include "loader_base.h"
#include "partita/core/error.h"
#include "partita/train/trainer.h"
#include "split_plan.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// One relation's edges in one block, over per-type local ids: the src nodes of the relation's
// source type and the dst nodes of its destination type, each numbered in block order
// (TypedBlock: a type's dst nodes are the first of its src nodes).
struct RelationBlock {
  int relation = 0;
  int src_type = 0, dst_type = 0;
  int64_t num_src = 0;       // src nodes of src_type in the block
  int64_t num_dst = 0;       // dst nodes of dst_type in the block
  torch::Tensor indptr;      // [num_dst + 1] CSC offsets over the dst_type dst nodes
  torch::Tensor indices;     // [E] local src id (within src_type) of each edge
  torch::Tensor edge_dst;    // [E] local dst id (within dst_type) of each edge
  torch::Tensor edge_index;  // [2, E]: rows indices and edge_dst (they are its row views)
  // With edge features (TypedNeighborLoader(..., edge_features=True)): float32 [E, d], row j
  // the edge_feat row of edge j (aligned with indices); undefined otherwise.
  torch::Tensor edge_attr;
};

// One block (layer) of a typed batch. Homogeneous form: the sampler's block (src_nodes with
// the dst nodes first, CSC indptr/indices over local ids, etypes per edge). Typed form: per
// node type t its src nodes are the block's src nodes of type t in block order, of which
// the first type_dst[t] are its dst nodes; relations[r] holds relation r's edges over them.
struct TypedBlock {
  int64_t num_src = 0, num_dst = 0;
  torch::Tensor src_nodes, indptr, indices, etypes;
  std::vector<int64_t> type_src, type_dst;  // per node type
  std::vector<RelationBlock> relations;     // per relation id, every relation of the graph
};

struct TypedBatch : BatchHead {
  torch::Tensor y;
  // Per node type, the batch's input nodes of that type in input order (= blocks[0]'s src
  // nodes of the type): their positions among input_nodes, their global ids, and their
  // features as float32 [n, feat_dim] (undefined for a featureless type).
  std::vector<torch::Tensor> type_positions, type_ids, type_x;
  std::vector<TypedBlock> blocks;  // input layer first; empty when the batch has no seeds
};

// The node type and per-type local id of every input node of a batch (every block's src
// nodes are a prefix of the input nodes, so these serve every block).
struct InputTypes {
  std::vector<int32_t> type;
  std::vector<int64_t> local;
};

InputTypes input_types(const std::vector<loader::TypedInput>& typed, size_t num_inputs) {
  InputTypes out;
  out.type.assign(num_inputs, -1);
  out.local.assign(num_inputs, -1);
  for (size_t t = 0; t < typed.size(); ++t) {
    const std::vector<int64_t>& positions = typed[t].positions;
    for (size_t k = 0; k < positions.size(); ++k) {
      const auto p = static_cast<size_t>(positions[k]);
      PARTITA_CHECK(p < num_inputs && out.type[p] < 0, Error,
                    "internal: typed input position {} out of range or repeated", p);
      out.type[p] = static_cast<int32_t>(t);
      out.local[p] = static_cast<int64_t>(k);
    }
  }
  for (size_t p = 0; p < num_inputs; ++p)
    PARTITA_CHECK(out.type[p] >= 0, Error, "internal: input node {} has no type", p);
  return out;
}

// Splits `b` into its relations over per-type local ids (two passes: count, then fill).
// `edge_rows`: float32 [b's edges, d], the edge features of b's edges in b's edge order, which
// each relation gathers in its own order (RelationBlock::edge_attr); undefined: none.
TypedBlock typed_block(sample::Block& b, const InputTypes& types, const partition::TypedMeta& meta,
                       const torch::Tensor& edge_rows,
                       const std::shared_ptr<loader::Batch>& owner) {
  const int num_types = meta.num_types();
  const int num_relations = meta.num_relations();
  TypedBlock out;
  out.num_src = b.num_src;
  out.num_dst = b.num_dst;
  out.src_nodes = view_of(b.src_nodes, owner, torch::kInt64);
  out.indptr = view_of(b.indptr, owner, torch::kInt64);
  out.indices = view_of(b.indices, owner, torch::kInt64);
  out.etypes = view_of(b.etypes, owner, torch::kInt32);
  PARTITA_CHECK(b.etypes.size() == b.indices.size(), Error,
                "internal: a typed block has {} relations for {} edges", b.etypes.size(),
                b.indices.size());
  out.type_src.assign(static_cast<size_t>(num_types), 0);
  out.type_dst.assign(static_cast<size_t>(num_types), 0);
  for (int64_t p = 0; p < b.num_src; ++p) {
    const auto t = static_cast<size_t>(types.type[static_cast<size_t>(p)]);
    ++out.type_src[t];
    if (p < b.num_dst) ++out.type_dst[t];
  }
  std::vector<std::vector<int64_t>> counts(static_cast<size_t>(num_relations));
  for (int r = 0; r < num_relations; ++r) {
    const partition::TypedRelation& rel = meta.relations[static_cast<size_t>(r)];
    counts[static_cast<size_t>(r)].assign(
        static_cast<size_t>(out.type_dst[static_cast<size_t>(rel.dst_type)]) + 1, 0);
  }
  for (int64_t i = 0; i < b.num_dst; ++i) {
    const int32_t dst_type = types.type[static_cast<size_t>(i)];
    const int64_t dst_local = types.local[static_cast<size_t>(i)];
    for (int64_t e = b.indptr[static_cast<size_t>(i)]; e < b.indptr[static_cast<size_t>(i) + 1];
         ++e) {
      const int32_t r = b.etypes[static_cast<size_t>(e)];
      PARTITA_CHECK(r >= 0 && r < num_relations, Error, "internal: relation {} out of range", r);
      const partition::TypedRelation& rel = meta.relations[static_cast<size_t>(r)];
      PARTITA_CHECK(
          rel.dst_type == dst_type && rel.src_type == types.type[static_cast<size_t>(b.indices[e])],
          Error, "internal: an edge of relation {} joins types {} -> {}", rel.name,
          types.type[static_cast<size_t>(b.indices[e])], dst_type);
      ++counts[static_cast<size_t>(r)][static_cast<size_t>(dst_local) + 1];
    }
  }
  std::vector<int64_t*> src_out(static_cast<size_t>(num_relations));
  std::vector<int64_t*> dst_out(static_cast<size_t>(num_relations));
  // Per relation, the block edge of each of its edges (with edge_rows only).
  std::vector<torch::Tensor> block_edge(static_cast<size_t>(num_relations));
  std::vector<int64_t*> block_edge_out(static_cast<size_t>(num_relations), nullptr);
  std::vector<std::vector<int64_t>> cursor(static_cast<size_t>(num_relations));
  for (int r = 0; r < num_relations; ++r) {
    const partition::TypedRelation& rel = meta.relations[static_cast<size_t>(r)];
    std::vector<int64_t>& c = counts[static_cast<size_t>(r)];
    for (size_t k = 1; k < c.size(); ++k) c[k] += c[k - 1];
    RelationBlock rb;
    rb.relation = r;
    rb.src_type = rel.src_type;
    rb.dst_type = rel.dst_type;
    rb.num_src = out.type_src[static_cast<size_t>(rel.src_type)];
    rb.num_dst = out.type_dst[static_cast<size_t>(rel.dst_type)];
    rb.indptr = torch::empty({static_cast<int64_t>(c.size())}, torch::kInt64);
    std::memcpy(rb.indptr.data_ptr<int64_t>(), c.data(), c.size() * sizeof(int64_t));
    rb.edge_index = torch::empty({2, c.back()}, torch::kInt64);
    rb.indices = rb.edge_index[0];
    rb.edge_dst = rb.edge_index[1];
    src_out[static_cast<size_t>(r)] = rb.indices.data_ptr<int64_t>();
    dst_out[static_cast<size_t>(r)] = rb.edge_dst.data_ptr<int64_t>();
    if (edge_rows.defined()) {
      block_edge[static_cast<size_t>(r)] = torch::empty({c.back()}, torch::kInt64);
      block_edge_out[static_cast<size_t>(r)] =
          block_edge[static_cast<size_t>(r)].data_ptr<int64_t>();
    }
    cursor[static_cast<size_t>(r)] = c;
    out.relations.push_back(std::move(rb));
  }
  // Within a relation, dst rows come in block order, which is local order: appending keeps
  // each row's edges contiguous and in the block's edge order.
  for (int64_t i = 0; i < b.num_dst; ++i) {
    const int64_t dst_local = types.local[static_cast<size_t>(i)];
    for (int64_t e = b.indptr[static_cast<size_t>(i)]; e < b.indptr[static_cast<size_t>(i) + 1];
         ++e) {
      const auto r = static_cast<size_t>(b.etypes[static_cast<size_t>(e)]);
      int64_t& at = cursor[r][static_cast<size_t>(dst_local)];
      src_out[r][at] = types.local[static_cast<size_t>(b.indices[static_cast<size_t>(e)])];
      dst_out[r][at] = dst_local;
      if (block_edge_out[r] != nullptr) block_edge_out[r][at] = e;
      ++at;
    }
  }
  if (edge_rows.defined()) {
    PARTITA_CHECK(edge_rows.size(0) == b.num_edges(), Error,
                  "internal: a typed block has {} edge feature rows for {} edges",
                  edge_rows.size(0), b.num_edges());
    for (int r = 0; r < num_relations; ++r)
      out.relations[static_cast<size_t>(r)].edge_attr =
          edge_rows.index_select(0, block_edge[static_cast<size_t>(r)]);
  }
  return out;
}

// The fanouts of a typed NeighborLoader (`partita train --model rgcn`'s): the spec resolved
// against the graph's relations as the trainer resolves --fanouts.
sample::Fanouts typed_fanouts(const std::string& spec, const store::DistGraph& graph) {
  PARTITA_CHECK(graph.typed(), UsageError,
                "typed loader: {} is not a typed (heterogeneous) partition", graph.dir());
  return train::resolve_fanouts(spec, graph);
}

// The loader behind partita.NeighborLoader on a typed partition (loader_base.h); its batches
// are the pipeline's with BatchPipelineOptions::typed, split per node type and relation.
class TypedLoader final : public SplitLoader {
 public:
  TypedLoader(Graph& graph, const std::string& fanouts, int64_t batch_size,
              const std::string& split, bool shuffle, uint64_t seed, int prefetch, int threads,
              const std::string& device, bool edge_features)
      : SplitLoader("NeighborLoader",
                    with_edge_features(trainer_options(typed_fanouts(fanouts, graph.graph()),
                                                       batch_size, seed, prefetch, threads),
                                       edge_features),
                    {/*degrees=*/false, /*labels=*/true}, device) {
    const store::DistGraph& g = graph.graph();
    edge_attrs_ = edge_attrs_of(graph, options().loader.edge_features, name());
    meta_ = g.typed_meta();
    plan_split(graph, split, shuffle);
    feature_dtype_ = g.feature_dtype();
    for (int t = 0; t < meta_.num_types(); ++t) type_dims_.push_back(g.type_feat_dim(t));
    attach(graph);
  }

  // The next batch of loop `token`, on the loader's device; nullopt after its last step.
  std::optional<TypedBatch> next(int64_t token) {
    return next_with(token, [this](const std::shared_ptr<loader::Batch>& batch) {
      TypedBatch out = convert(batch);
      if (!staging().on_cpu()) to_device(out);
      return out;
    });
  }

 private:
  // Every tensor of `batch` copied to the loader's device through staging() (pinned memory,
  // a side stream, the caller's current stream made to wait: train/batch_staging.h).
  void to_device(TypedBatch& batch) {
    train::BatchStaging& staging = this->staging();
    for (torch::Tensor* t : {&batch.seeds, &batch.input_nodes, &batch.y})
      *t = staging.to_device(*t);
    for (auto* list : {&batch.type_positions, &batch.type_ids, &batch.type_x})
      for (torch::Tensor& t : *list)
        if (t.defined()) t = staging.to_device(t);
    for (TypedBlock& b : batch.blocks) {
      for (torch::Tensor* t : {&b.src_nodes, &b.indptr, &b.indices, &b.etypes})
        *t = staging.to_device(*t);
      for (RelationBlock& r : b.relations) {
        r.indptr = staging.to_device(r.indptr);
        r.edge_index = staging.to_device(r.edge_index);
        if (r.edge_attr.defined()) r.edge_attr = staging.to_device(r.edge_attr);
        r.indices = r.edge_index[0];
        r.edge_dst = r.edge_index[1];
      }
    }
    staging.ready();
  }

  TypedBatch convert(const std::shared_ptr<loader::Batch>& owner) const {
    TypedBatch out;
    static_cast<BatchHead&>(out) = head_of(owner, global_size(owner->step));
    out.y = view_of(owner->labels, owner, torch::kInt64);
    const auto types = static_cast<size_t>(meta_.num_types());
    std::vector<loader::TypedInput>& typed = owner->typed_inputs;
    if (typed.empty()) typed.resize(types);  // a step without seeds fetched nothing
    PARTITA_CHECK(typed.size() == types, Error, "internal: batch has inputs of {} types, not {}",
                  typed.size(), types);
    const std::vector<int64_t>& input = owner->sampled.input_nodes;
    for (size_t t = 0; t < types; ++t) {
      loader::TypedInput& in = typed[t];
      const auto n = static_cast<int64_t>(in.positions.size());
      out.type_positions.push_back(view_of(in.positions, owner, torch::kInt64));
      torch::Tensor ids = torch::empty({n}, torch::kInt64);
      int64_t* id = ids.data_ptr<int64_t>();
      for (int64_t k = 0; k < n; ++k) id[k] = input[static_cast<size_t>(in.positions[k])];
      out.type_ids.push_back(ids);
      const int64_t dim = type_dims_[t];
      if (dim == 0) {
        out.type_x.emplace_back();
        continue;
      }
      PARTITA_CHECK(in.features.size() == static_cast<size_t>(n * dim) * dtype_size(feature_dtype_),
                    Error, "internal: type {} has {} feature bytes for {} rows", t,
                    in.features.size(), n);
      out.type_x.push_back(float_rows(in.features.data(), n, dim, feature_dtype_, owner));
    }
    if (!owner->sampled.seeds.empty()) {
      const InputTypes input_type = input_types(typed, input.size());
      std::vector<sample::Block>& blocks = owner->sampled.blocks;
      const std::vector<torch::Tensor> rows =
          block_edge_rows(owner, edge_attrs_.dim, edge_attrs_.dtype);
      for (size_t i = blocks.size(); i-- > 0;)
        out.blocks.push_back(typed_block(blocks[i], input_type, meta_, rows[i], owner));
    }
    return out;
  }

  partition::TypedMeta meta_;
  DType feature_dtype_ = DType::kFloat32;
  std::vector<int64_t> type_dims_;  // per node type; 0: featureless
  EdgeAttrs edge_attrs_;            // dim 0: no edge features
};

// The raw typed blocks BlockBuilder samples for `seeds` under key (seed, epoch, step), input
// layer first, as dicts of int64/int32 tensors (src_nodes, indptr, indices, etypes): the
// reference the loader's typed batches are tested against.
py::list sample_typed_blocks(Graph& graph, std::vector<int64_t> seeds, const std::string& fanouts,
                             uint64_t seed, uint64_t epoch, uint64_t step) {
  const store::DistGraph& g = graph.graph();
  PARTITA_CHECK(g.typed(), UsageError, "sample_typed_blocks: {} is not a typed partition", g.dir());
  sample::BlockOptions options;
  options.fanouts = train::resolve_fanouts(fanouts, g);
  options.key = {seed, epoch, step};
  auto owner = std::make_shared<sample::SampledBatch>();
  {
    py::gil_scoped_release release;
    *owner =
        sample::sample_blocks(ArrayView<const int64_t>(seeds), options, graph.session().sampler());
  }
  py::list out;
  for (size_t i = owner->blocks.size(); i-- > 0;) {
    sample::Block& b = owner->blocks[i];
    py::dict d;
    d["num_src"] = b.num_src;
    d["num_dst"] = b.num_dst;
    d["src_nodes"] = view_of(b.src_nodes, owner, torch::kInt64);
    d["indptr"] = view_of(b.indptr, owner, torch::kInt64);
    d["indices"] = view_of(b.indices, owner, torch::kInt64);
    d["etypes"] = view_of(b.etypes, owner, torch::kInt32);
    out.append(d);
  }
  return out;
}

}  // namespace

void add_typed_bindings(py::module_& m) {
  add_embedding_bindings(m);
  m.def("sample_typed_blocks", &sample_typed_blocks, py::arg("graph"), py::arg("seeds"),
        py::arg("fanouts"), py::arg("seed"), py::arg("epoch"), py::arg("step"),
        "The typed blocks BlockBuilder samples for `seeds` under key (seed, epoch, step), input "
        "layer first, as dicts of tensors (the typed loader's reference)");
  py::class_<RelationBlock>(m, "RelationBlock",
                            "One relation's edges in one typed block, over per-type local ids")
      .def_readonly("relation", &RelationBlock::relation)
      .def_readonly("src_type", &RelationBlock::src_type)
      .def_readonly("dst_type", &RelationBlock::dst_type)
      .def_readonly("num_src", &RelationBlock::num_src)
      .def_readonly("num_dst", &RelationBlock::num_dst)
      .def_readonly("indptr", &RelationBlock::indptr)
      .def_readonly("indices", &RelationBlock::indices)
      .def_readonly("edge_dst", &RelationBlock::edge_dst)
      .def_property_readonly("num_edges", [](const RelationBlock& b) { return b.indices.size(0); })
      .def_readonly("edge_index", &RelationBlock::edge_index)
      .def_property_readonly(
          "edge_attr",
          [](const RelationBlock& b) -> py::object {
            if (!b.edge_attr.defined()) return py::none();
            return py::cast(b.edge_attr);
          },
          "float32 [num_edges, edge_feat_dim]: each edge's features, aligned with indices "
          "(NeighborLoader(..., edge_features=True)); None otherwise");
  py::class_<TypedBlock>(m, "TypedBlock", "One block (layer) of a typed batch")
      .def_readonly("num_src", &TypedBlock::num_src)
      .def_readonly("num_dst", &TypedBlock::num_dst)
      .def_readonly("src_nodes", &TypedBlock::src_nodes)
      .def_readonly("indptr", &TypedBlock::indptr)
      .def_readonly("indices", &TypedBlock::indices)
      .def_readonly("etypes", &TypedBlock::etypes)
      .def_readonly("type_src", &TypedBlock::type_src)
      .def_readonly("type_dst", &TypedBlock::type_dst)
      .def_readonly("relations", &TypedBlock::relations);
  py::class_<TypedBatch> batch(m, "TypedBatch", "One typed mini-batch of this rank");
  bind_head(batch);
  batch.def_readonly("y", &TypedBatch::y)
      .def_readonly("type_positions", &TypedBatch::type_positions)
      .def_readonly("type_ids", &TypedBatch::type_ids)
      .def_readonly("type_x", &TypedBatch::type_x)
      .def_readonly("blocks", &TypedBatch::blocks);
  py::class_<TypedLoader> loader(m, "TypedLoader",
                                 "The C++ batch pipeline over a split of a typed DistGraph");
  loader
      .def(py::init<Graph&, const std::string&, int64_t, const std::string&, bool, uint64_t, int,
                    int, const std::string&, bool>(),
           py::arg("graph"), py::arg("fanouts"), py::arg("batch_size"), py::arg("split"),
           py::arg("shuffle"), py::arg("seed"), py::arg("prefetch"), py::arg("threads"),
           py::arg("device") = "cpu", py::arg("edge_features") = false, py::keep_alive<1, 2>())
      .def_property_readonly("num_ids", &TypedLoader::num_ids);
  bind_loops(loader);
}

}  // namespace partita::python
