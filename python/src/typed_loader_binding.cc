// Typed batches for Python: see typed_loader_binding.h. The batches are those of
// `partita train --model rgcn` (the same global plan, share, sampling keys, fanouts parsed by
// sample/fanout_spec.h, and the pipeline with BatchPipelineOptions::typed), each block
// split into one CSC per relation over per-type local ids (DGL's heterograph blocks, PyG's
// edge_index_dict).
#include "typed_loader_binding.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "embedding_binding.h"
#include "graph_binding.h"
#include "partita/core/error.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/seeds.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/relation_names.h"
#include "partita/train/batch_staging.h"
#include "partita/train/device.h"

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

struct TypedBatch {
  int64_t step = 0;
  int64_t global_size = 0;  // seeds of the whole global batch (all ranks)
  double sample_s = 0, fetch_s = 0;
  torch::Tensor seeds, input_nodes, y;
  // Per node type, the batch's input nodes of that type in input order (= blocks[0]'s src
  // nodes of the type): their positions among input_nodes, their global ids, and their
  // features as float32 [n, feat_dim] (undefined for a featureless type).
  std::vector<torch::Tensor> type_positions, type_ids, type_x;
  std::vector<TypedBlock> blocks;  // input layer first; empty when the batch has no seeds
};

// A tensor over `values` that keeps `owner` alive (no copy).
template <class T, class Owner>
torch::Tensor view_of(std::vector<T>& values, const std::shared_ptr<Owner>& owner,
                      torch::ScalarType type) {
  return torch::from_blob(
      values.data(), {static_cast<int64_t>(values.size())}, [owner](void*) {},
      torch::TensorOptions().dtype(type));
}

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
TypedBlock typed_block(sample::Block& b, const InputTypes& types, const partition::TypedMeta& meta,
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
      ++at;
    }
  }
  return out;
}

// The loader behind partita.NeighborLoader on a typed partition; its lifecycle is the
// homogeneous loader's (loader_binding.cc): each loop is a generation with a token, the
// loader is attached to its graph (closing the graph stops the pipeline), and pipeline_mu_
// makes a close() from another thread wait for a next() in progress.
class TypedLoader final : public GraphUser {
 public:
  TypedLoader(Graph& graph, const std::string& fanouts, int64_t batch_size,
              const std::string& split, bool shuffle, uint64_t seed, int prefetch, int threads,
              const std::string& device)
      : batch_size_(batch_size),
        shuffle_(shuffle),
        seed_(seed),
        prefetch_(prefetch),
        threads_(threads),
        staging_(checked_device(device)) {
    const store::DistGraph& g = graph.graph();
    PARTITA_CHECK(g.typed(), UsageError,
                  "typed loader: {} is not a typed (heterogeneous) partition", g.dir());
    meta_ = g.typed_meta();
    fanouts_ = sample::resolve_fanouts(fanouts, sample::relation_names(meta_));
    PARTITA_CHECK(batch_size >= 1, UsageError, "batch_size: must be >= 1, got {}", batch_size);
    loader::BatchPipelineOptions pipeline;  // the library's own checks, before any collective
    pipeline.prefetch = prefetch;
    pipeline.threads = threads;
    loader::check_pipeline_options(pipeline);
    const runtime::Split which =
        split == "train"                     ? runtime::Split::kTrain
        : split == "valid" || split == "val" ? runtime::Split::kValid
        : split == "test"
            ? runtime::Split::kTest
            : throw UsageError(fmt::format("split: '{}' is not one of train, valid, test", split));
    std::vector<loader::SeedId> ids = graph.all_ids(which);
    std::sort(ids.begin(), ids.end(), [](const loader::SeedId& a, const loader::SeedId& b) {
      return a.original < b.original;
    });
    for (const loader::SeedId& id : ids) ordered_.push_back(id.global);
    plan_ = std::make_unique<loader::GlobalBatches>(std::move(ids), batch_size);
    feature_dtype_ = g.feature_dtype();
    for (int t = 0; t < meta_.num_types(); ++t) type_dims_.push_back(g.type_feat_dim(t));
    graph_ = &graph;  // last but the attach: nothing after it may throw
    try {
      graph.attach(this);
    } catch (...) {
      graph_ = nullptr;
      throw;
    }
  }

  ~TypedLoader() {
    py::gil_scoped_release release;
    if (Graph* graph = graph_.load()) graph->detach(this);
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    pipeline_.reset();
  }

  TypedLoader(const TypedLoader&) = delete;
  TypedLoader& operator=(const TypedLoader&) = delete;

  int64_t steps() const { return plan_->steps(); }
  int64_t num_ids() const { return plan_->num_ids(); }
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  int64_t start() {
    Graph& graph = open_graph();
    const uint64_t key = static_cast<uint64_t>(epoch_);
    std::vector<std::vector<int64_t>> batches;
    const auto share = [&graph](const std::vector<int64_t>& b) { return graph.share_of(b); };
    if (shuffle_) {
      batches = plan_->epoch_batches(seed_, key, share);
    } else {
      for (const std::vector<int64_t>& b : loader::chunk(ordered_, batch_size_))
        batches.push_back(share(b));
    }
    loader::BatchPipelineOptions o;  // as train/node_task.cc's pipeline_options for rgcn
    o.threads = threads_;
    o.prefetch = prefetch_;
    o.fanouts = fanouts_;
    o.seed = seed_;
    o.epoch = key;
    o.typed = true;
    runtime::Session& session = graph.session();
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", kClosed);
    pipeline_.reset();
    pipeline_ = std::make_unique<loader::BatchPipeline>(o, std::move(batches), session.sampler(),
                                                        session.fetcher());
    ++generation_;
    ++epoch_;
    return generation_;
  }

  std::optional<TypedBatch> next(int64_t token) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    PARTITA_CHECK(graph_.load() != nullptr, UsageError, "{}", kClosed);
    PARTITA_CHECK(token == generation_, UsageError,
                  "NeighborLoader: this loop was replaced by a later loop over the same loader "
                  "(one loop at a time: each loop is the next epoch)");
    if (pipeline_ == nullptr) return std::nullopt;
    std::optional<loader::Batch> got = pipeline_->next();
    if (!got) {
      pipeline_.reset();
      return std::nullopt;
    }
    TypedBatch batch = convert(std::make_shared<loader::Batch>(std::move(*got)));
    if (!staging_.on_cpu()) to_device(batch);
    return batch;
  }

  void stop(int64_t token) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    if (token < 0 || token == generation_) pipeline_.reset();
  }

  // The next epoch run to its end in C++, every batch converted as next() does and none
  // handed to Python; returns the batches (benchmarks: the C++ side alone).
  int64_t drain() {
    const int64_t token = start();
    int64_t batches = 0;
    while (next(token)) ++batches;
    return batches;
  }

  void graph_closing() noexcept override {
    std::lock_guard<std::mutex> lock(pipeline_mu_);
    pipeline_.reset();
    graph_ = nullptr;
  }

 private:
  static constexpr const char* kClosed =
      "NeighborLoader: its DistGraph is closed (close the graph after the loops over its "
      "loaders, e.g. loop inside `with partita.DistGraph(...) as g:`)";

  Graph& open_graph() const {
    Graph* graph = graph_.load();
    PARTITA_CHECK(graph != nullptr, UsageError, "{}", kClosed);
    return *graph;
  }

  // `text` ("cpu", "cuda", "cuda:N") as a device this process can use (ParameterError(device)
  // otherwise), as the homogeneous loader checks it.
  static torch::Device checked_device(const std::string& text) {
    const train::DeviceSpec device = train::parse_device(text);
    train::check_device(device);
    return train::torch_device(device);
  }

  // Every tensor of `batch` copied to the loader's device through staging_ (pinned memory, a
  // side stream, the caller's current stream made to wait: train/batch_staging.h).
  void to_device(TypedBatch& batch) {
    for (torch::Tensor* t : {&batch.seeds, &batch.input_nodes, &batch.y})
      *t = staging_.to_device(*t);
    for (auto* list : {&batch.type_positions, &batch.type_ids, &batch.type_x})
      for (torch::Tensor& t : *list)
        if (t.defined()) t = staging_.to_device(t);
    for (TypedBlock& b : batch.blocks) {
      for (torch::Tensor* t : {&b.src_nodes, &b.indptr, &b.indices, &b.etypes})
        *t = staging_.to_device(*t);
      for (RelationBlock& r : b.relations) {
        r.indptr = staging_.to_device(r.indptr);
        r.edge_index = staging_.to_device(r.edge_index);
        r.indices = r.edge_index[0];
        r.edge_dst = r.edge_index[1];
      }
    }
    staging_.ready();
  }

  TypedBatch convert(const std::shared_ptr<loader::Batch>& owner) const {
    TypedBatch out;
    out.step = owner->step;
    out.global_size = plan_->batch_size(owner->step);
    out.sample_s = owner->sample_s;
    out.fetch_s = owner->fetch_s;
    out.seeds = view_of(owner->sampled.seeds, owner, torch::kInt64);
    out.input_nodes = view_of(owner->sampled.input_nodes, owner, torch::kInt64);
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
      torch::Tensor x = torch::from_blob(
          in.features.data(), {n, dim}, [owner](void*) {},
          torch::TensorOptions().dtype(torch_type(feature_dtype_)));
      out.type_x.push_back(x.scalar_type() == torch::kFloat32 ? x : x.to(torch::kFloat32));
    }
    if (!owner->sampled.seeds.empty()) {
      const InputTypes input_type = input_types(typed, input.size());
      std::vector<sample::Block>& blocks = owner->sampled.blocks;
      for (size_t i = blocks.size(); i-- > 0;)
        out.blocks.push_back(typed_block(blocks[i], input_type, meta_, owner));
    }
    return out;
  }

  std::atomic<Graph*> graph_{nullptr};  // null once the graph closed (graph_closing)
  partition::TypedMeta meta_;
  sample::Fanouts fanouts_;
  int64_t batch_size_;
  bool shuffle_;
  uint64_t seed_;
  int prefetch_, threads_;
  DType feature_dtype_ = DType::kFloat32;
  std::vector<int64_t> type_dims_;  // per node type; 0: featureless
  std::unique_ptr<loader::GlobalBatches> plan_;
  std::vector<int64_t> ordered_;  // every id of the split by original id (shuffle=False)
  int64_t epoch_ = 0;
  std::mutex pipeline_mu_;  // guards the two below
  int64_t generation_ = 0;
  std::unique_ptr<loader::BatchPipeline> pipeline_;
  train::BatchStaging staging_;  // batches to the loader's device (used by next())
};

// The raw typed blocks BlockBuilder samples for `seeds` under key (seed, epoch, step), input
// layer first, as dicts of int64/int32 tensors (src_nodes, indptr, indices, etypes): the
// reference the loader's typed batches are tested against.
py::list sample_typed_blocks(Graph& graph, std::vector<int64_t> seeds, const std::string& fanouts,
                             uint64_t seed, uint64_t epoch, uint64_t step) {
  const store::DistGraph& g = graph.graph();
  PARTITA_CHECK(g.typed(), UsageError, "sample_typed_blocks: {} is not a typed partition", g.dir());
  std::vector<std::string> names;
  for (const partition::TypedRelation& r : g.typed_meta().relations) names.push_back(r.name);
  sample::BlockOptions options;
  options.fanouts = sample::resolve_fanouts(fanouts, names);
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
      .def_readonly("edge_index", &RelationBlock::edge_index);
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
  py::class_<TypedBatch>(m, "TypedBatch", "One typed mini-batch of this rank")
      .def_readonly("step", &TypedBatch::step)
      .def_readonly("global_size", &TypedBatch::global_size)
      .def_readonly("sample_s", &TypedBatch::sample_s)
      .def_readonly("fetch_s", &TypedBatch::fetch_s)
      .def_readonly("seeds", &TypedBatch::seeds)
      .def_readonly("input_nodes", &TypedBatch::input_nodes)
      .def_readonly("y", &TypedBatch::y)
      .def_readonly("type_positions", &TypedBatch::type_positions)
      .def_readonly("type_ids", &TypedBatch::type_ids)
      .def_readonly("type_x", &TypedBatch::type_x)
      .def_readonly("blocks", &TypedBatch::blocks);
  py::class_<TypedLoader>(m, "TypedLoader",
                          "The C++ batch pipeline over a split of a typed DistGraph")
      .def(py::init<Graph&, const std::string&, int64_t, const std::string&, bool, uint64_t, int,
                    int, const std::string&>(),
           py::arg("graph"), py::arg("fanouts"), py::arg("batch_size"), py::arg("split"),
           py::arg("shuffle"), py::arg("seed"), py::arg("prefetch"), py::arg("threads"),
           py::arg("device") = "cpu", py::keep_alive<1, 2>())
      .def("__len__", &TypedLoader::steps)
      .def_property_readonly("num_ids", &TypedLoader::num_ids)
      .def_property_readonly("epoch", &TypedLoader::epoch)
      .def("set_epoch", &TypedLoader::set_epoch)
      .def("start", &TypedLoader::start)
      .def("next", &TypedLoader::next, py::arg("token"))
      .def("stop", &TypedLoader::stop, py::arg("token") = -1)
      .def("drain", &TypedLoader::drain);
}

}  // namespace partita::python
