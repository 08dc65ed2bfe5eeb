#pragma once
// How a typed graph's relations are named to the user: one form printed everywhere, two
// accepted (docs/training.md, "Relation names").
//
// Printed: the canonical name "src___rel___dst" (OGB's folder name of a relation, unique in a
// graph): `partita info` lists it, and every error and log line that names a relation
// (`fanouts`, `metapaths`, the default metapaths' names) uses it.
// Accepted: the canonical name, or the short name `rel` alone when exactly one relation has
// it (ogbn-mag's `cites`, `writes`, `rev_writes`; a graph with author___cites___paper and
// paper___cites___paper needs the full names).
//
// Pure functions.
#include <string>
#include <vector>

#include "partita/partition/format.h"

namespace partita::sample {

// The canonical names of `meta`'s relations, in relation id order.
std::vector<std::string> relation_names(const partition::TypedMeta& meta);

// "rel" of "src___rel___dst"; empty for a name that is not of that form.
std::string short_relation_name(const std::string& canonical);

// The indices of the names among `names` that `name` gives: an exact match (names are
// unique, so at most one), else every entry whose short name is `name`. Empty: unknown; more
// than one: an ambiguous short name. `names` may also hold names of another form (metapaths'),
// which match exactly, or by their short name when they are canonical relation names.
std::vector<int> match_relation_name(const std::vector<std::string>& names,
                                     const std::string& name);

// "a, b, c": names joined for a message.
std::string joined_names(const std::vector<std::string>& names);

}  // namespace partita::sample
