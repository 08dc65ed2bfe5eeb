#pragma once
// Private to partition/: the "hetero" object of a typed partition's partita.json (format
// version 2), and the cross-checks it adds to read_meta's.
#include "json_reader.h"
#include "partita/partition/format.h"

namespace partita::partition {

// The "hetero" object: node_types, relations (types by name), target_type (a name),
// reverse_relations, type_starts.
Json typed_meta_json(const TypedMeta& typed);
// Parses it (types only: names, indices and counts are checked by check_typed_meta).
TypedMeta parse_typed_meta(const Reader& rd, const Json& hetero);
// Type names valid and unique, relation types and target in range, counts summing to
// num_nodes and num_edges, type_starts consistent with ranges, the per-part type and relation
// figures of the summary equal to the starts and summing to the relation totals.
void check_typed_meta(const Reader& rd, const PartitionMeta& meta);

}  // namespace partita::partition
