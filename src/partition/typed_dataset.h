#pragma once
// Private to partition/: the pipeline's steps specific to typed (heterogeneous) datasets.
#include <string>

#include "partita/data/dataset.h"
#include "partita/graph/csr.h"
#include "partita/partition/format.h"
#include "writer.h"

namespace partita::partition {

// The typed parts of the dataset contract (data/hetero.h), checked once before anything
// indexes with them: type ranges tiling [0, num_nodes), type names usable in file names,
// per-type feature rows, relation ids in range and counted as the schema says, labels -1
// exactly outside the target type, splits of the target type. Throws Error naming `name`.
void check_typed_dataset(const data::Dataset& dataset, const std::string& name);

// METIS's view of a typed graph: each row's sources sorted and unique with relations
// ignored (a source may reach a node through several relations), as graph::Csr promises.
graph::Csr homogeneous_rows(const graph::Csr& in_edges, int threads);

// The "hetero" metadata of a written typed partition: the schema, with relation edge counts
// and type starts from what was written.
TypedMeta typed_meta(const data::HeteroSchema& schema, const WriteResult& written);
// Same, with the feature width of each type given (a schema whose NodeType::features are
// empty, as data::DatasetShard holds).
TypedMeta typed_meta(const data::HeteroSchema& schema, const std::vector<int64_t>& feat_dims,
                     const WriteResult& written);

}  // namespace partita::partition
