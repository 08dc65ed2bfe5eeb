#pragma once
// The pipelined neighbor loader, for Python (docs/python.md: partita.NeighborLoader).
#include <torch/extension.h>

namespace partita::python {

void add_loader_bindings(pybind11::module_& m);

}  // namespace partita::python
