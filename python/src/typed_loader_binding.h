#pragma once
// Typed (heterogeneous) batches for Python (issue 27, docs/python.md "Typed partitions"): the
// loader behind partita.NeighborLoader on a typed partition, which runs the C++ trainer's
// batch pipeline (loader/batch_pipeline.h with `typed`) and hands every batch out per node
// type and per relation; and the learned embeddings of featureless types
// (embedding_binding.h). Registered on the module by add_typed_bindings().
#include <torch/extension.h>

namespace partita::python {

// Adds TypedLoader, TypedBatch, TypedBlock, RelationBlock, sample_typed_blocks and the
// embedding bindings to `m` (after add_graph_bindings: it extends DistGraph).
void add_typed_bindings(pybind11::module_& m);

}  // namespace partita::python
