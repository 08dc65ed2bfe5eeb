// partita._C: the Python binding of Partita's data path (issue 14; docs/python.md). The
// engine stays C++: Python gets the job (MPI), the distributed graph, the pipelined neighbor
// loader, the fused message-passing kernels as autograd functions, and the gradient
// allreduce. Everything that waits (a batch, a collective) releases the GIL.
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "graph_binding.h"
#include "keyword_names.h"
#include "link_loader_binding.h"
#include "loader_binding.h"
#include "partita/core/error.h"
#include "partita/core/log_rewrite.h"
#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/message_passing.h"
#include "partita/runtime/failure.h"
#include "partita/store/single_process_error.h"
#include "partita/train/train_options.h"
#include "tools_binding.h"
#include "typed_loader_binding.h"

namespace py = pybind11;

namespace partita::python {
namespace {

// A GnnModel's initial parameters, built exactly as `partita train` builds them
// (torch::manual_seed(seed), then the model): lets a Python model start from the weights
// of the C++ trainer, to compare the two.
// The GnnModel kinds by their --model names (train::model_kind_names, less R-GCN and HAN).
const NameTable<nn::ConvKind>& conv_kind_names() {
  static const NameTable<nn::ConvKind> names = [] {
    NameTable<nn::ConvKind> out;
    for (const auto& [name, kind] : train::model_kind_names())
      if (const std::optional<nn::ConvKind> conv = train::conv_kind(kind))
        out.emplace_back(name, *conv);
    return out;
  }();
  return names;
}

std::vector<std::pair<std::string, torch::Tensor>> initial_parameters(
    const std::string& kind, int64_t in_dim, int64_t hidden, int64_t out_dim, int64_t layers,
    int64_t heads, uint64_t seed) {
  nn::GnnOptions o;
  o.kind = value_named(conv_kind_names(), "kind", kind);
  o.in_dim = in_dim;
  o.hidden = hidden;
  o.out_dim = out_dim;
  o.layers = layers;
  o.heads = heads;
  torch::manual_seed(seed);
  nn::GnnModel model(o);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : model.named_parameters())
    out.emplace_back(item.key(), item.value().detach().clone());
  return out;
}

// The script this Python process runs (sys.argv[0]) for a hint, or "<script>" when there is
// none (python3 -c, an interactive session). Needs the GIL; never throws.
std::string script_name() {
  try {
    const py::list argv = py::module_::import("sys").attr("argv");
    if (!argv.empty()) {
      const std::string script = py::str(argv[0]);
      std::error_code error;
      if (!script.empty() && script != "-c" && std::filesystem::is_regular_file(script, error))
        return script;
    }
  } catch (const std::exception&) {
  }
  return "<script>";
}

// The package's exception classes (set once by the module's initialisation).
struct PythonErrors {
  PyObject* error = nullptr;
  PyObject* usage = nullptr;
  PyObject* format = nullptr;
  PyObject* io = nullptr;
};
PythonErrors python_errors;

// The class of a failure of kind `kind` (runtime/failure.h).
PyObject* python_class_of(runtime::FailureKind kind) {
  switch (kind) {
    case runtime::FailureKind::kUsage:
      return python_errors.usage;
    case runtime::FailureKind::kFormat:
      return python_errors.format;
    case runtime::FailureKind::kIo:
      return python_errors.io;
    default:
      return python_errors.error;
  }
}

// Sets the Python error of a C++ exception in the package's words (keyword_names.h); leaves
// exceptions that are no partita::Error to pybind11's own translators (rethrows them).
// A set-up failure agreed by every rank (runtime::SetupError) is its cause on the rank
// that reports it, and on the other ranks an error of the same class naming that rank.
void set_python_error(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const runtime::SetupError& e) {
    if (e.report()) return set_python_error(e.cause());
    const std::string message =
        fmt::format("set-up failed on rank {} (its error is reported there)", e.failed_rank());
    PyErr_SetString(python_class_of(e.kind()), message.c_str());
  } catch (const store::SingleProcessError& e) {
    // The library stops at "start one rank per part"; how to, for this script.
    const std::string script = script_name();
    const std::string message =
        fmt::format("{}: `partita launch -- python3 {}` or `mpirun -np {} python3 {}`",
                    in_keyword_words(e.what()), script, e.num_parts(), script);
    PyErr_SetString(python_errors.usage, message.c_str());
  } catch (const ParameterError& e) {
    PyErr_SetString(python_errors.usage, describe(e, keyword_name).c_str());
  } catch (const UsageError& e) {
    PyErr_SetString(python_errors.usage, in_keyword_words(e.what()).c_str());
  } catch (const FormatError& e) {
    PyErr_SetString(python_errors.format, in_keyword_words(e.what()).c_str());
  } catch (const IoError& e) {
    PyErr_SetString(python_errors.io, in_keyword_words(e.what()).c_str());
  } catch (const Error& e) {
    PyErr_SetString(python_errors.error, in_keyword_words(e.what()).c_str());
  }
}

}  // namespace
}  // namespace partita::python

PYBIND11_MODULE(_C, m) {
  using namespace partita;
  using namespace partita::python;
  m.doc() = "Partita's C++ data path: job, distributed graph, neighbor loader, fused kernels";

  // C++ errors arrive as Python exceptions with the same message in the package's words
  // (keyword_names.h: a parameter as its keyword); the base class first (pybind11 tries the
  // translators of later registrations first).
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<UsageError> usage_error(m, "UsageError", error.ptr());
  static py::exception<FormatError> format_error(m, "FormatError", error.ptr());
  static py::exception<IoError> io_error(m, "IoError", error.ptr());
  python_errors = {error.ptr(), usage_error.ptr(), format_error.ptr(), io_error.ptr()};
  py::register_exception_translator([](std::exception_ptr p) {
    if (p) set_python_error(p);
  });
  // Library warnings name parameters as its errors do: show keywords.
  set_log_rewriter([](const std::string& line) { return in_keyword_words(line); });

  add_graph_bindings(m);
  add_loader_bindings(m);
  add_link_loader_bindings(m);
  add_typed_bindings(m);
  add_tools_bindings(m);

  py::class_<nn::BlockTensors>(m, "BlockTensors",
                               "One sampled block as tensors (nn/block_tensors.h)")
      .def_readonly("num_src", &nn::BlockTensors::num_src)
      .def_readonly("num_dst", &nn::BlockTensors::num_dst)
      .def_readonly("indptr", &nn::BlockTensors::indptr)
      .def_readonly("indices", &nn::BlockTensors::indices)
      .def_readonly("edge_dst", &nn::BlockTensors::edge_dst)
      .def_readonly("deg_dst", &nn::BlockTensors::deg_dst)
      .def_readonly("deg_src", &nn::BlockTensors::deg_src)
      .def_readonly("graph_deg", &nn::BlockTensors::graph_deg)
      .def("num_edges", &nn::BlockTensors::num_edges);

  m.def("aggregate", &nn::aggregate, py::arg("block"), py::arg("x"),
        py::arg("edge_weight") = torch::Tensor(),
        "Weighted sum over each dst's in-edges (fused, differentiable; nn/message_passing.h)");
  m.def("aggregate_mean", &nn::aggregate_mean, py::arg("block"), py::arg("x"),
        "Mean over each dst's in-edges (fused, differentiable)");
  m.def(
      "gat_edge_softmax",
      [](const nn::BlockTensors& block, const torch::Tensor& score_src,
         const torch::Tensor& score_dst, double negative_slope,
         const std::optional<torch::Tensor>& score_edge) {
        return nn::gat_edge_softmax(block, score_src, score_dst, negative_slope,
                                    score_edge.value_or(torch::Tensor()));
      },
      py::arg("block"), py::arg("score_src"), py::arg("score_dst"), py::arg("negative_slope") = 0.2,
      py::arg("score_edge") = py::none(),
      "GAT's attention softmax over each dst's in-edges, with an optional per-edge score "
      "term (fused, differentiable)");
  m.def("with_self_loops", &nn::with_self_loops, py::arg("block"),
        "The block with a self loop leading each dst row (for GAT)");
  m.def("initial_parameters", &initial_parameters, py::arg("kind"), py::arg("in_dim"),
        py::arg("hidden"), py::arg("out_dim"), py::arg("layers"), py::arg("heads") = 1,
        py::arg("seed") = 0,
        "(name, tensor) pairs of the GnnModel `partita train` builds with this seed");
}
