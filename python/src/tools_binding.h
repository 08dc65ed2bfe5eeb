#pragma once
// The data tools and inference, for Python (docs/python.md: partita.generate,
// partita.partition, partita.infer): the library functions behind `partita generate`,
// `partita partition` and `partita infer`, called directly (no subprocess), so that their
// errors arrive as the package's exceptions and their results as Python objects.
#include <torch/extension.h>

namespace partita::python {

// Adds _C.generate, _C.partition and _C.infer (graph_binding.h's DistGraph must be bound
// first: infer takes one).
void add_tools_bindings(pybind11::module_& m);

}  // namespace partita::python
