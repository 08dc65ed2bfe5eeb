#pragma once
// The syntax of the `metapaths` parameter (the CLI's --metapaths, model han), parsed and
// resolved here against a typed partition's schema (pure functions, no CLI).
//
//   metapaths := PATH[,PATH...]
//   PATH := TYPE-TYPE[-TYPE...]     node type names, e.g. paper-author-paper
//         | REL[-REL...]            relation names, e.g. writes-rev_writes
//
// A metapath starts and ends on the labelled (target) type. Its steps are followed the way
// the sampler samples, along IN-edges: a step from node v of type A over relation r reaches
// v's in-neighbours of relation r (r's destination type is A, its source type is the type
// reached). Hence the relation form lists, from the target outwards, the relation of each
// in-edge walked: on heco-acm (author-writes-paper and its reverse rev_writes),
// paper-author-paper is writes-rev_writes. A type step A-B is the one relation whose
// destination type is A and whose source type is B; two such relations make it ambiguous
// (then name the relations).
//
// Default (empty text): first, every relation from the target type to itself, alone, named
// by the relation (ogbn-mag's paper: cites, rev_cites); then, for each node type X other than
// the target, in type order, the paths target-X-target through every relation into the
// target from X followed by every relation into X from the target; then, for each such X and each
// further type Y (neither the target nor X) joined to X both ways, in type order, the paths
// target-X-Y-X-target: the target's neighbours that share a Y through X. On the HeCo graphs these
// are the metapaths of the HeCo and HAN papers: heco-acm: paper-author-paper, paper-subject-paper;
// heco-dblp: author-paper-author, author-paper-conference-paper-author,
// author-paper-term-paper-author (conference and term in the schema's type order);
// heco-freebase: movie-actor-movie, movie-director-movie, movie-writer-movie. A default
// path is named by its types, or by its relations when two types are joined by several
// relations.
//
// A metapath's name is its text as given (or the default's name); `fanouts` may name
// metapaths where it names relations for R-GCN (e.g. 10,paper-subject-paper=5:10).
//
// Errors are ParameterError("metapaths", ...), one line each: an empty path or step, an
// unknown name (the known types and relations are listed), a path mixing types and
// relations, a path through no relation, steps that do not chain, an ambiguous type step,
// a path that does not end on the type it starts from, a path that does not start on the
// target type, the same metapath twice, and a schema without any default metapath.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/partition/format.h"

namespace partita::sample {

struct Metapath {
  std::string name;                // as given, or the default's name (above)
  std::vector<int32_t> relations;  // relation ids, the step from the target first (>= 1)
  int node_type = 0;               // the type it starts and ends on: the target type
};

// The metapaths of `text` (empty: the default) resolved against `meta`, in the order given.
// Throws ParameterError("metapaths", ...).
std::vector<Metapath> resolve_metapaths(const std::string& text, const partition::TypedMeta& meta);

// The default metapaths of `meta` (see above). Throws ParameterError("metapaths", ...) when
// the schema has none (e.g. a partition without reverse relations).
std::vector<Metapath> default_metapaths(const partition::TypedMeta& meta);

// The names of `metapaths`, in order: what `fanouts` is resolved against for model han.
std::vector<std::string> metapath_names(const std::vector<Metapath>& metapaths);

// "paper-author-paper (writes-rev_writes)": a metapath's types and relations, for logs.
std::string describe_metapath(const Metapath& metapath, const partition::TypedMeta& meta);

}  // namespace partita::sample
