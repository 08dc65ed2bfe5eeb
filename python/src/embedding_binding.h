#pragma once
// Learned embeddings of a typed partition's featureless node types, for Python (issue 27;
// docs/python.md, partita.DistEmbedding): the tables the C++ trainer trains
// (store/dist_embedding.h, built by the graph's session when the DistGraph is opened with
// an embedding dim), their lookups, gradient pushes and sparse optimizer steps, with the
// GIL released while they wait for other ranks.
#include <torch/extension.h>

namespace partita::python {

// Adds DistGraph's constructor with embedding options, EmbeddingTable and RowOptimizer (the
// sparse rules of optim/sparse_optimizer.h on a local table, for tests) to `m`. Call after
// add_graph_bindings.
void add_embedding_bindings(pybind11::module_& m);

}  // namespace partita::python
