// Learned embeddings for Python: see embedding_binding.h.
#include "embedding_binding.h"

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "graph_binding.h"
#include "partita/core/error.h"
#include "partita/optim/sparse_optimizer.h"
#include "partita/store/dist_embedding.h"

namespace py = pybind11;

namespace partita::python {
namespace {

optim::SparseOptimizerOptions optimizer_options(const std::string& kind, double lr, double beta1,
                                                double beta2, double eps) {
  optim::SparseOptimizerOptions o;
  o.kind = value_named(optim::sparse_optimizer_names(), "sparse_optimizer", kind);
  PARTITA_CHECK(std::isfinite(lr) && lr > 0, UsageError, "lr: must be > 0, got {}", lr);
  PARTITA_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, UsageError,
                "betas: each must be in [0, 1), got ({}, {})", beta1, beta2);
  PARTITA_CHECK(std::isfinite(eps) && eps > 0, UsageError, "eps: must be > 0, got {}", eps);
  o.lr = static_cast<float>(lr);
  o.beta1 = static_cast<float>(beta1);
  o.beta2 = static_cast<float>(beta2);
  o.eps = static_cast<float>(eps);
  return o;
}

// A graph's table of one node type; every call finds it again through the graph, so a closed
// graph raises UsageError instead of reaching a table that is gone.
class EmbeddingTable {
 public:
  EmbeddingTable(Graph& graph, int type) : graph_(graph), type_(type) {
    const store::DistGraph& g = graph.graph();
    PARTITA_CHECK(g.typed(), UsageError,
                  "DistEmbedding: {} is not a typed (heterogeneous) partition", g.dir());
    PARTITA_CHECK(type >= 0 && type < g.num_node_types(), UsageError,
                  "DistEmbedding: node type {} is not one of the graph's {} types", type,
                  g.num_node_types());
    const std::string& name = g.typed_meta().node_types[static_cast<size_t>(type)].name;
    PARTITA_CHECK(g.type_feat_dim(type) == 0, UsageError,
                  "DistEmbedding: node type {} has features ({} columns); learned embeddings "
                  "are for the types without features",
                  name, g.type_feat_dim(type));
    PARTITA_CHECK(graph.session().embedding(type) != nullptr, UsageError,
                  "DistEmbedding: the graph was opened without learned embeddings; open it "
                  "with partita.DistGraph(..., embedding_dim=D, sparse_optimizer=...)");
  }

  store::DistEmbedding& table() const {
    store::DistEmbedding* t = graph_.session().embedding(type_);
    PARTITA_CHECK(t != nullptr, UsageError, "DistEmbedding: its DistGraph is closed");
    return *t;
  }

  int type() const { return type_; }

  // Rows [ids, dim] float32 (a new tensor).
  torch::Tensor lookup(const torch::Tensor& ids) const {
    const torch::Tensor i = checked_ids(ids);
    store::DistEmbedding& t = table();
    torch::Tensor out = torch::empty({i.size(0), t.dim()}, torch::kFloat32);
    if (i.size(0) == 0) return out;
    py::gil_scoped_release release;
    t.lookup(ArrayView<const int64_t>(i.data_ptr<int64_t>(), static_cast<size_t>(i.size(0))),
             out.data_ptr<float>());
    return out;
  }

  // Sends the gradients [ids, dim] of rows `ids` to their owners (store: push_gradients).
  void push(const torch::Tensor& ids, const torch::Tensor& grads) const {
    const torch::Tensor i = checked_ids(ids);
    store::DistEmbedding& t = table();
    const torch::Tensor g = grads.detach().to(torch::kCPU).to(torch::kFloat32).contiguous();
    PARTITA_CHECK(g.dim() == 2 && g.size(0) == i.size(0) && g.size(1) == t.dim(), UsageError,
                  "DistEmbedding: gradients of shape {} for {} ids of dim {}",
                  fmt::format("{}", fmt::join(g.sizes(), "x")), i.size(0), t.dim());
    if (i.size(0) == 0) return;
    py::gil_scoped_release release;
    t.push_gradients(
        ArrayView<const int64_t>(i.data_ptr<int64_t>(), static_cast<size_t>(i.size(0))),
        g.data_ptr<float>());
  }

  void apply_pending() const {
    store::DistEmbedding& t = table();
    py::gil_scoped_release release;
    t.apply_pending();
  }

 private:
  static torch::Tensor checked_ids(const torch::Tensor& ids) {
    PARTITA_CHECK(ids.dim() == 1 && !ids.is_floating_point(), UsageError,
                  "DistEmbedding: ids must be a 1-d integer tensor");
    return ids.to(torch::kCPU).to(torch::kInt64).contiguous();
  }

  Graph& graph_;
  int type_;
};

// A RowOptimizer over a table tensor the caller owns (float32 [rows, dim], contiguous, CPU).
class LocalRowOptimizer {
 public:
  LocalRowOptimizer(const std::string& kind, double lr, double beta1, double beta2, double eps,
                    int64_t rows, int64_t dim)
      : rows_(rows), dim_(dim) {
    PARTITA_CHECK(rows >= 0 && dim > 0, UsageError, "RowOptimizer: {} rows of dim {}", rows, dim);
    optimizer_ =
        optim::make_row_optimizer(optimizer_options(kind, lr, beta1, beta2, eps), rows, dim);
  }

  void step(torch::Tensor table, const torch::Tensor& rows, const torch::Tensor& grads) {
    PARTITA_CHECK(table.is_contiguous() && table.scalar_type() == torch::kFloat32 &&
                      table.device().is_cpu() && table.dim() == 2 && table.size(0) == rows_ &&
                      table.size(1) == dim_,
                  UsageError, "RowOptimizer: table must be a contiguous CPU float32 [{}, {}]",
                  rows_, dim_);
    const torch::Tensor r = rows.to(torch::kInt64).contiguous();
    const torch::Tensor g = grads.to(torch::kFloat32).contiguous();
    PARTITA_CHECK(g.numel() == r.numel() * dim_, UsageError,
                  "RowOptimizer: {} gradient values for {} rows", g.numel(), r.numel());
    const int64_t* rp = r.data_ptr<int64_t>();
    for (int64_t k = 0; k < r.numel(); ++k)
      PARTITA_CHECK(rp[k] >= 0 && rp[k] < rows_, UsageError, "RowOptimizer: row {} out of range",
                    rp[k]);
    optimizer_->step(table.data_ptr<float>(),
                     ArrayView<const int64_t>(rp, static_cast<size_t>(r.numel())),
                     g.data_ptr<float>());
  }

 private:
  int64_t rows_, dim_;
  std::unique_ptr<optim::RowOptimizer> optimizer_;
};

}  // namespace

void add_embedding_bindings(py::module_& m) {
  // DistGraph with learned embeddings: a constructor beside graph_binding.cc's.
  auto graph = py::reinterpret_borrow<py::class_<Graph>>(m.attr("DistGraph"));
  graph.def(py::init([](const std::string& parts_dir, double timeout, bool in_memory,
                        int64_t embedding_dim, const std::string& optimizer, double lr,
                        double beta1, double beta2, double eps, uint64_t embedding_seed,
                        double embedding_init, bool edge_features, const std::string& host_local) {
              PARTITA_CHECK(embedding_dim >= 0, UsageError,
                            "embedding_dim: must be >= 0 (0: none), got {}", embedding_dim);
              PARTITA_CHECK(std::isfinite(embedding_init) && embedding_init > 0, UsageError,
                            "embedding_init: must be > 0, got {}", embedding_init);
              store::EmbeddingOptions e;
              e.dim = embedding_dim;
              e.seed = embedding_seed;
              e.init_scale = static_cast<float>(embedding_init);
              e.optimizer = optimizer_options(optimizer, lr, beta1, beta2, eps);
              return std::make_unique<Graph>(
                  parts_dir, timeout, in_memory, e, edge_features,
                  value_named(runtime::host_local_names(), "host_local", host_local));
            }),
            py::arg("parts_dir"), py::arg("timeout"), py::arg("in_memory"),
            py::arg("embedding_dim"), py::arg("optimizer"), py::arg("lr"), py::arg("beta1"),
            py::arg("beta2"), py::arg("eps"), py::arg("embedding_seed"), py::arg("embedding_init"),
            py::arg("edge_features") = false, py::arg("host_local") = "auto");
  // The schema of a typed partition (empty lists and -1 for a homogeneous one).
  graph.def_property_readonly("typed", [](Graph& g) { return g.graph().typed(); });
  graph.def_property_readonly("node_types", [](Graph& g) {
    std::vector<std::string> names;
    if (g.graph().typed())
      for (const auto& t : g.graph().typed_meta().node_types) names.push_back(t.name);
    return names;
  });
  graph.def_property_readonly("type_feat_dims", [](Graph& g) {
    std::vector<int64_t> dims;
    if (g.graph().typed())
      for (int t = 0; t < g.graph().num_node_types(); ++t)
        dims.push_back(g.graph().type_feat_dim(t));
    return dims;
  });
  graph.def_property_readonly("relations", [](Graph& g) {
    std::vector<std::tuple<int, std::string, int>> out;
    if (g.graph().typed())
      for (const auto& r : g.graph().typed_meta().relations)
        out.emplace_back(r.src_type, r.name, r.dst_type);
    return out;
  });
  graph.def_property_readonly("target_type", [](Graph& g) {
    return g.graph().typed() ? g.graph().typed_meta().target_type : -1;
  });

  py::class_<EmbeddingTable>(m, "EmbeddingTable",
                             "The learned embedding table of one featureless node type")
      .def(py::init<Graph&, int>(), py::arg("graph"), py::arg("type"), py::keep_alive<1, 2>())
      .def_property_readonly("type", &EmbeddingTable::type)
      .def_property_readonly("dim", [](const EmbeddingTable& e) { return e.table().dim(); })
      .def_property_readonly("owned",
                             [](const EmbeddingTable& e) {
                               const store::IdRange r = e.table().owned();
                               return std::make_pair(r.begin, r.end);
                             })
      .def("lookup", &EmbeddingTable::lookup, py::arg("ids"))
      .def("push", &EmbeddingTable::push, py::arg("ids"), py::arg("grads"))
      .def("apply_pending", &EmbeddingTable::apply_pending)
      .def_property_readonly("pending_rows",
                             [](const EmbeddingTable& e) { return e.table().pending_rows(); })
      .def_property_readonly("stats", [](const EmbeddingTable& e) {
        const store::EmbeddingStats s = e.table().stats();
        py::dict d;
        d["local_rows"] = s.local_rows;
        d["remote_rows"] = s.remote_rows;
        d["remote_requests"] = s.remote_requests;
        d["pushed_rows"] = s.pushed_rows;
        d["applied_rows"] = s.applied_rows;
        return d;
      });

  py::class_<LocalRowOptimizer>(m, "RowOptimizer",
                                "optim/sparse_optimizer.h's rules on a local table (tests)")
      .def(py::init<const std::string&, double, double, double, double, int64_t, int64_t>(),
           py::arg("kind"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"),
           py::arg("rows"), py::arg("dim"))
      .def("step", &LocalRowOptimizer::step, py::arg("table"), py::arg("rows"), py::arg("grads"));
}

}  // namespace partita::python
