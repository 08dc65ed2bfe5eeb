#pragma once
// Link-prediction batches for Python (docs/python.md: partita.LinkNeighborLoader and
// partita.LinkEvalLoader): the batches of `partita train --task link`, and its held-out pairs
// in the batches its evaluation scores, handed out as torch tensors.
#include <torch/extension.h>

namespace partita::python {

void add_link_loader_bindings(pybind11::module_& m);

}  // namespace partita::python
