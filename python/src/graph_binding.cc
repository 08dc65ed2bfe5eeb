// The job and the distributed graph, for Python: see graph_binding.h.
#include "graph_binding.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>

#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/name_table.h"
#include "partita/core/random.h"
#include "partita/runtime/split_ids.h"

namespace py = pybind11;

namespace partita::python {
namespace {

std::shared_ptr<MpiScope>& scope() {
  static std::shared_ptr<MpiScope> held;
  return held;
}

py::array_t<int64_t> to_numpy(ArrayView<const int64_t> ids) {
  py::array_t<int64_t> out(ids.size());
  std::copy(ids.begin(), ids.end(), out.mutable_data());
  return out;
}

// One step of a 64-bit hash: the word folded in by core's SplitMix64 finalizer.
uint64_t mix(uint64_t h, uint64_t word) { return mix64(h ^ word); }

// A hash of the tensors' dtypes and shapes, and with `values` of their bytes too. CPU tensors.
uint64_t fingerprint(const std::vector<torch::Tensor>& tensors, bool values) {
  uint64_t h = 0xcbf29ce484222325ULL ^ tensors.size();
  for (const torch::Tensor& t : tensors) {
    h = mix(h, static_cast<uint64_t>(t.scalar_type()));
    h = mix(h, static_cast<uint64_t>(t.dim()));
    for (int64_t d : t.sizes()) h = mix(h, static_cast<uint64_t>(d));
    if (!values) continue;
    const torch::Tensor c = t.detach().contiguous();
    const auto* bytes = static_cast<const uint8_t*>(c.data_ptr());
    const size_t n = c.nbytes();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      h = mix(h, word);
    }
    uint64_t tail = 0;
    if (i < n) std::memcpy(&tail, bytes + i, n - i);
    h = mix(h, tail ^ n);
  }
  return h;
}

// Whether `value` is the same on every rank: min and max agree (one allreduce of value and
// ~value by min). Collective.
bool same_on_every_rank(Collectives& c, uint64_t value) {
  uint64_t v[2] = {value, ~value};
  c.allreduce(v, 2, ReduceOp::kMin);
  return v[0] == ~v[1];
}

void check_cpu(const std::vector<torch::Tensor>& tensors, const char* what) {
  for (size_t i = 0; i < tensors.size(); ++i)
    PARTITA_CHECK(tensors[i].device().is_cpu(), UsageError, "{}: tensor {} is on {}, not the CPU",
                  what, i, tensors[i].device().str());
}

// Rank `root`'s values of every tensor into every rank's, in place and outside autograd,
// once every rank agreed that they hold the same dtypes and shapes. Collective.
void broadcast_tensors(Graph& g, const std::vector<torch::Tensor>& tensors, int root) {
  check_cpu(tensors, "broadcast");
  py::gil_scoped_release release;
  Collectives& c = g.session().collectives();
  PARTITA_CHECK(root >= 0 && root < c.size(), UsageError,
                "broadcast: root {} is not a rank of this job (0 to {})", root, c.size() - 1);
  PARTITA_CHECK(same_on_every_rank(c, fingerprint(tensors, /*values=*/false)), Error,
                "broadcast: the ranks hold different tensors (their number, dtypes or shapes "
                "differ; {} tensors on rank {})",
                tensors.size(), c.rank());
  size_t total = 0;
  for (const torch::Tensor& t : tensors) total += t.nbytes();
  std::vector<uint8_t> bytes(total);
  if (c.rank() == root) {
    size_t offset = 0;
    for (const torch::Tensor& t : tensors) {
      const torch::Tensor contiguous = t.detach().contiguous();
      if (contiguous.nbytes() > 0)
        std::memcpy(bytes.data() + offset, contiguous.data_ptr(), contiguous.nbytes());
      offset += contiguous.nbytes();
    }
  }
  constexpr size_t kChunk = size_t{1} << 30;  // each broadcast's bytes must fit an int
  for (size_t offset = 0; offset < total; offset += kChunk)
    c.broadcast(bytes.data() + offset, std::min(kChunk, total - offset), root);
  if (c.rank() == root) return;
  torch::NoGradGuard no_grad;
  size_t offset = 0;
  for (const torch::Tensor& t : tensors) {
    const size_t n = t.nbytes();
    if (n > 0) {
      torch::Tensor t_mut = t;
      t_mut.copy_(torch::from_blob(bytes.data() + offset, t.sizes(),
                                   torch::TensorOptions().dtype(t.scalar_type())));
    }
    offset += n;
  }
}

// set_log_level's words: quiet (the CLI's -q), info (the default), verbose (-v).
const NameTable<LogLevel>& log_level_names() {
  static const NameTable<LogLevel> names{
      {"quiet", LogLevel::kQuiet}, {"info", LogLevel::kInfo}, {"verbose", LogLevel::kDebug}};
  return names;
}

}  // namespace

runtime::Split split_of(const std::string& name) {
  // "val": DGL's and PyG's word for the validation split.
  return value_named(runtime::split_names(), "split", name == "val" ? "valid" : name);
}

std::shared_ptr<MpiScope> job() {
  if (!scope()) {
    py::gil_scoped_release release;
    scope() = std::make_shared<MpiScope>(nullptr, nullptr);
  }
  return scope();
}

Graph::Graph(const std::string& parts_dir, double timeout_s, bool in_memory,
             const store::EmbeddingOptions& embeddings, bool edge_ids,
             runtime::HostLocal host_local)
    : mpi_(job()) {
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.sampling.edge_ids = edge_ids;
  options.host_local = host_local;
  options.timeout_s = timeout_s;
  options.graph.in_memory = in_memory;
  options.embeddings = embeddings;
  py::gil_scoped_release release;
  rank_ = std::make_unique<runtime::MpiRank>(*mpi_, options);
}

Graph::~Graph() {
  // Not closed: the session goes without the collective goodbye (close() is the clean way),
  // but never under a loader's threads.
  py::gil_scoped_release release;
  stop_users();
  rank_.reset();
}

void Graph::attach(GraphUser* user) {
  std::lock_guard<std::mutex> lock(users_mu_);
  PARTITA_CHECK(!stopped_users_ && rank_ != nullptr, UsageError, "DistGraph: closed");
  users_.push_back(user);
}

void Graph::detach(GraphUser* user) {
  std::lock_guard<std::mutex> lock(users_mu_);
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Graph::stop_users() {
  std::lock_guard<std::mutex> lock(users_mu_);
  stopped_users_ = true;
  for (GraphUser* user : users_) user->graph_closing();
  users_.clear();
}

runtime::Session& Graph::session() {
  PARTITA_CHECK(rank_ != nullptr, UsageError, "DistGraph: closed");
  return rank_->session();
}

const store::DistGraph& Graph::graph() { return session().graph(); }

std::vector<loader::SeedId> Graph::all_ids(runtime::Split split) {
  runtime::Session& s = session();
  py::gil_scoped_release release;  // an allgather
  return runtime::split_ids(s, split);
}

std::vector<int64_t> Graph::share_of(const std::vector<int64_t>& global_batch) {
  const store::DistGraph& g = graph();
  if (g.replicated()) return loader::even_share(global_batch, session().rank(), session().size());
  std::vector<int64_t> mine;
  for (int64_t gid : global_batch)
    if (g.owns(gid)) mine.push_back(gid);
  return mine;
}

void Graph::close() {
  if (rank_ == nullptr) return;
  py::gil_scoped_release release;
  // The loaders' threads sample and fetch through the session: stop them before it ends.
  stop_users();
  rank_->session().finish();
  rank_.reset();
}

void add_graph_bindings(py::module_& m) {
  m.def(
      "init", [] { return job() != nullptr; },
      "Starts MPI in this process (once; under mpirun every rank calls it)");
  m.def(
      "finalize", [] { scope().reset(); }, "Lets MPI finalize once no DistGraph holds it any more");
  m.def(
      "rank", [] { return job()->rank(); }, "This process's rank in MPI_COMM_WORLD");
  m.def(
      "world_size", [] { return job()->size(); }, "The number of ranks of the job");
  m.def(
      "set_log_level",
      [](const std::string& level) {
        set_log_level(value_named(log_level_names(), "level", level));
      },
      py::arg("level"), "quiet, info or verbose: what the library logs to stderr");

  py::class_<Graph>(m, "DistGraph",
                    "One rank's view of a partition directory (collective to open and close)")
      .def(py::init<const std::string&, double, bool>(), py::arg("parts_dir"),
           py::arg("timeout") = 60.0, py::arg("in_memory") = false)
      .def("close", &Graph::close, "Ends the session on every rank (collective)")
      .def_property_readonly("closed", &Graph::closed)
      .def_property_readonly("dir", [](Graph& g) { return g.graph().dir(); })
      .def_property_readonly("rank", [](Graph& g) { return g.session().rank(); })
      .def_property_readonly("world_size", [](Graph& g) { return g.session().size(); })
      .def_property_readonly("num_parts", [](Graph& g) { return g.graph().meta().num_parts; })
      .def_property_readonly("num_nodes", [](Graph& g) { return g.graph().num_nodes(); })
      .def_property_readonly("num_edges", [](Graph& g) { return g.graph().meta().num_edges; })
      .def_property_readonly("feat_dim", [](Graph& g) { return g.graph().feat_dim(); })
      .def_property_readonly("edge_feat_dim", [](Graph& g) { return g.graph().edge_feat_dim(); })
      .def_property_readonly("edge_features",
                             [](Graph& g) { return g.session().sampler().options().edge_ids; })
      .def_property_readonly("num_classes", [](Graph& g) { return g.graph().num_classes(); })
      .def_property_readonly("replicated", [](Graph& g) { return g.graph().replicated(); })
      .def_property_readonly("first_node", [](Graph& g) { return g.graph().first_node(); })
      .def_property_readonly("end_node", [](Graph& g) { return g.graph().end_node(); })
      .def(
          "ids",
          [](Graph& g, const std::string& split) {
            const store::DistGraph& d = g.graph();
            switch (split_of(split)) {
              case runtime::Split::kTrain:
                return to_numpy(d.train_ids());
              case runtime::Split::kValid:
                return to_numpy(d.valid_ids());
              default:
                return to_numpy(d.test_ids());
            }
          },
          py::arg("split"), "This rank's ids of a split (global ids), ascending")
      .def_property_readonly(
          "node_map", [](Graph& g) { return to_numpy(g.graph().node_map()); },
          "Original (dataset) id of every global id, int64 [num_nodes]")
      .def("barrier",
           [](Graph& g) {
             py::gil_scoped_release release;
             g.session().collectives().barrier();
           })
      .def(
          "allreduce_",
          [](Graph& g, torch::Tensor t, int64_t bucket_bytes) {
            PARTITA_CHECK(
                t.is_contiguous() && t.device().is_cpu() &&
                    (t.scalar_type() == torch::kFloat32 || t.scalar_type() == torch::kFloat64 ||
                     t.scalar_type() == torch::kInt64),
                UsageError, "allreduce: a contiguous CPU float32, float64 or int64 tensor");
            const size_t n = static_cast<size_t>(t.numel());
            py::gil_scoped_release release;
            Collectives& c = g.session().collectives();
            const size_t bytes = std::max<int64_t>(8, bucket_bytes);
            if (t.scalar_type() == torch::kFloat32)
              c.allreduce_bucketed(t.data_ptr<float>(), n, std::max<size_t>(1, bytes / 4));
            else if (t.scalar_type() == torch::kFloat64)
              c.allreduce_bucketed(t.data_ptr<double>(), n, std::max<size_t>(1, bytes / 8));
            else
              c.allreduce_bucketed(t.data_ptr<int64_t>(), n, std::max<size_t>(1, bytes / 8));
          },
          py::arg("tensor"), py::arg("bucket_bytes") = 4 << 20,
          "Sums a tensor over the ranks in place, in buckets (collective)")
      .def("broadcast_", &broadcast_tensors, py::arg("tensors"), py::arg("root") = 0,
           "Rank root's values of a list of CPU tensors into every rank's, in place, outside "
           "autograd (collective; every rank passes the same dtypes and shapes)")
      .def(
          "tensors_agree",
          [](Graph& g, const std::vector<torch::Tensor>& tensors) {
            check_cpu(tensors, "tensors_agree");
            py::gil_scoped_release release;
            Collectives& c = g.session().collectives();
            return same_on_every_rank(c, fingerprint(tensors, /*values=*/true));
          },
          py::arg("tensors"),
          "Whether every rank holds the same list of tensors, dtypes, shapes and bytes (one "
          "64-bit hash each, compared by one allreduce; collective)");
}

}  // namespace partita::python
