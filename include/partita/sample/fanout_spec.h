#pragma once
// The syntax of the `fanouts` parameter (the CLI's --fanouts), parsed here (pure functions,
// no CLI) and resolved against a graph's relation names into a sample::Fanouts.
//
//   fanouts := HOP[,HOP...]     one HOP per hop, hop 0 (around the seeds) first
//   HOP  := N                   N in-neighbors of every relation (-1: all of them)
//         | ENTRY[:ENTRY...]    per relation, e.g. cites=10:writes=5:20
//   ENTRY := REL=N              N in-neighbors of relation REL: its canonical name
//                               (paper___rev_writes___author) or, when unambiguous, its short
//                               name (rev_writes): sample/relation_names.h
//          | *=N | N            the default: N for every relation the hop does not name
//
// A hop that names relations needs a default unless it names them all. On a typed graph a
// plain N means N per incoming relation (DGL's semantics), not N in all. N is >= 0 or -1;
// a hop that samples nothing at all (every fanout 0, e.g. a plain 0) is rejected as a
// mistake, but REL=0 leaves out one relation. Examples:
//   25,20                      25 per relation at hop 0, 20 at hop 1
//   25,cites=10:writes=5:20    hop 1: 10 cites, 5 writes, 20 of each other relation
//
// Errors are ParameterError("fanouts", ...) (core/parameter_error.h) naming the bad entry and its
// hop (numbered from 1): an empty hop or entry, a value that is not an integer or is < -1, two
// defaults in a hop, a hop that samples nothing, and (when resolving) an unknown relation (the
// known ones are listed), a relation named twice in a hop, a hop with no default that leaves
// relations unnamed, or REL=N on a graph without relation types.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partita/sample/fanouts.h"

namespace partita::sample {

struct HopFanoutSpec {
  std::string text;                 // the hop as given, for messages
  std::optional<int64_t> fallback;  // N or *=N: relations not named; absent if not given
  struct Named {
    std::string text;  // "REL=N" as given
    std::string relation;
    int64_t fanout = -1;
  };
  std::vector<Named> named;  // REL=N entries, in the order given

  bool per_relation() const { return !named.empty(); }
};

struct FanoutSpec {
  std::vector<HopFanoutSpec> hops;

  int num_hops() const { return static_cast<int>(hops.size()); }
};

// Parses the text of `fanouts`. Throws ParameterError("fanouts", ...).
FanoutSpec parse_fanout_spec(const std::string& text);

// Resolves `spec` against the relation names of the graph (indexed by relation id; empty
// for a homogeneous graph): canonical names (sample::relation_names), which messages list, or
// other names (model han's metapaths) matched as relation_names.h says. Throws
// ParameterError("fanouts", ...). In the result, hops[h] is the hop's N, or its default; a hop
// naming every relation and no default holds the largest of its fanouts (-1 if one is -1): the most
// any relation takes. relations[h] is empty for a hop naming no relation, and `relations` is empty
// altogether when no hop names one.
Fanouts resolve_fanouts(const FanoutSpec& spec, const std::vector<std::string>& relation_names);

// parse_fanout_spec then resolve_fanouts.
Fanouts resolve_fanouts(const std::string& text, const std::vector<std::string>& relation_names);

// The fanouts of `spec` before its relation names are resolved, to count and check its hops
// without a graph: a hop's N or default, -1 for a hop that names relations.
Fanouts unresolved_fanouts(const FanoutSpec& spec);

}  // namespace partita::sample
