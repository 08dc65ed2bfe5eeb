// Metapaths (metapath_spec.h): the defaults and resolution on the HeCo schemas (built here as
// the readers build them: input relations, then rev_<name> in input order), and one clear
// error for each hostile metapath of issue 28. MetapathSampler (metapath_sampler.h) on a
// small typed graph: with fanout -1 the exact metapath neighbour sets (brute force over the
// in-CSC), with budgets the walks re-derived node by node from the kernel with the
// documented keys; independent of the frontier, the kernel's thread count and reruns; and
// blocks whose relations are metapath ids over target-type nodes only.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/metapath_sampler.h"
#include "partita/sample/metapath_spec.h"
#include "temporal_test_util.h"

namespace partita::sample {
namespace {

using partition::TypedMeta;
using Rel = std::tuple<std::string, int, int>;  // name, src type, dst type

// A schema as the readers build it: `rels` (src -> dst), then their reverses if asked.
TypedMeta schema(const std::vector<std::string>& types, const std::vector<Rel>& rels, int target,
                 bool reverse = true) {
  TypedMeta m;
  for (const std::string& t : types) m.node_types.push_back({t, 10, 0, 0});
  for (const auto& [name, src, dst] : rels) m.relations.push_back({name, src, dst, 1, false});
  if (reverse)
    for (const auto& [name, src, dst] : rels)
      m.relations.push_back({"rev_" + name, dst, src, 1, true});
  m.target_type = target;
  m.reverse_relations = reverse;
  return m;
}

TypedMeta acm(bool reverse = true) {
  return schema({"paper", "author", "subject"}, {{"writes", 1, 0}, {"has_subject", 0, 2}}, 0,
                reverse);
}
TypedMeta dblp() {
  return schema({"author", "paper", "term", "conference"},
                {{"writes", 0, 1}, {"published_in", 1, 3}, {"has_term", 1, 2}}, 0);
}
TypedMeta freebase() {
  return schema({"movie", "actor", "director", "writer"},
                {{"has_actor", 0, 1}, {"has_director", 0, 2}, {"has_writer", 0, 3}}, 0);
}
// paper, author, field; writes, cites (paper -> paper), has_topic, and their reverses.
TypedMeta toy() {
  return schema({"paper", "author", "field"},
                {{"writes", 1, 0}, {"cites", 0, 0}, {"has_topic", 0, 2}}, 0);
}

// The two metapaths of toy() through another type (its default without cites).
std::vector<Metapath> two_metapaths() {
  return resolve_metapaths("paper-author-paper,paper-field-paper", toy());
}

using Expected = std::vector<std::pair<std::string, std::vector<int32_t>>>;

void expect_metapaths(const std::vector<Metapath>& got, const Expected& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].first) << i;
    EXPECT_EQ(got[i].relations, want[i].second) << i;
    EXPECT_EQ(got[i].node_type, 0) << i;
  }
}

TEST(MetapathSpec, DefaultsOfTheHecoSchemas) {
  expect_metapaths(resolve_metapaths("", acm()),
                   {{"paper-author-paper", {0, 2}}, {"paper-subject-paper", {3, 1}}});
  // Through paper, then through paper and each of its other neighbour types (type order).
  expect_metapaths(resolve_metapaths("", dblp()),
                   {{"author-paper-author", {3, 0}},
                    {"author-paper-term-paper-author", {3, 5, 2, 0}},
                    {"author-paper-conference-paper-author", {3, 4, 1, 0}}});
  expect_metapaths(resolve_metapaths("", freebase()), {{"movie-actor-movie", {3, 0}},
                                                       {"movie-director-movie", {4, 1}},
                                                       {"movie-writer-movie", {5, 2}}});
  // The target's own relations (cites and its reverse) first, alone, named by the relation's
  // full name; the others as above.
  expect_metapaths(default_metapaths(toy()), {{"paper___cites___paper", {1}},
                                              {"paper___rev_cites___paper", {4}},
                                              {"paper-author-paper", {0, 3}},
                                              {"paper-field-paper", {5, 2}}});
  EXPECT_EQ(
      describe_metapath(default_metapaths(acm())[1], acm()),
      "paper-subject-paper (subject___rev_has_subject___paper-paper___has_subject___subject)");
  EXPECT_EQ(metapath_names(default_metapaths(acm())),
            (std::vector<std::string>{"paper-author-paper", "paper-subject-paper"}));
}

TEST(MetapathSpec, ByTypesAndByRelations) {
  expect_metapaths(resolve_metapaths("paper-subject-paper,writes-rev_writes", acm()),
                   {{"paper-subject-paper", {3, 1}}, {"writes-rev_writes", {0, 2}}});
  // Longer paths, and a relation path through the target type itself.
  expect_metapaths(
      resolve_metapaths("author-paper-conference-paper-author,rev_writes-rev_has_term-has_term-"
                        "writes",
                        dblp()),
      {{"author-paper-conference-paper-author", {3, 4, 1, 0}},
       {"rev_writes-rev_has_term-has_term-writes", {3, 5, 2, 0}}});
  expect_metapaths(resolve_metapaths("cites,rev_cites-writes-rev_writes", toy()),
                   {{"cites", {1}}, {"rev_cites-writes-rev_writes", {4, 0, 3}}});
  // Relations by their full names (partita info's), or mixed with short ones.
  expect_metapaths(resolve_metapaths("author___writes___paper-paper___rev_writes___author,"
                                     "subject___rev_has_subject___paper-has_subject",
                                     acm()),
                   {{"author___writes___paper-paper___rev_writes___author", {0, 2}},
                    {"subject___rev_has_subject___paper-has_subject", {3, 1}}});
  // The default's full names read back as the same metapaths.
  expect_metapaths(resolve_metapaths("paper___cites___paper,paper___rev_cites___paper", toy()),
                   {{"paper___cites___paper", {1}}, {"paper___rev_cites___paper", {4}}});
}

TEST(MetapathSpec, AnAmbiguousShortRelationNameNeedsTheFullName) {
  // paper -> paper and author -> paper, both named cites.
  const TypedMeta meta =
      schema({"paper", "author"}, {{"writes", 1, 0}, {"cites", 0, 0}, {"cites", 1, 0}}, 0);
  try {
    resolve_metapaths("cites", meta);
    ADD_FAILURE();
  } catch (const ParameterError& e) {
    EXPECT_EQ(std::string(e.what()),
              "metapaths: 'cites': relation name 'cites' is ambiguous (any of "
              "paper___cites___paper, author___cites___paper): give the full name");
  }
  expect_metapaths(resolve_metapaths("paper___cites___paper", meta),
                   {{"paper___cites___paper", {1}}});
}

// The message of resolving `text` against `meta`, which must fail.
std::string error_of(const std::string& text, const TypedMeta& meta) {
  try {
    resolve_metapaths(text, meta);
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "metapaths");
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << text << " was accepted";
  return "";
}

TEST(MetapathSpec, HostileMetapathsGetOneClearError) {
  const struct {
    const char* text;
    std::string message;
  } cases[] = {
      {"paper-venue-paper",
       "metapaths: 'paper-venue-paper': 'venue' is neither a node type (paper, author, subject) "
       "nor a relation (author___writes___paper, paper___has_subject___subject, "
       "paper___rev_writes___author, subject___rev_has_subject___paper)"},
      {"paper-author-subject-paper",
       "metapaths: 'paper-author-subject-paper': steps do not chain: no relation leads from "
       "author to subject (in-edges of author come from: paper)"},
      {"writes-writes",
       "metapaths: 'writes-writes': steps do not chain: 'author___writes___paper' reaches author "
       "but 'author___writes___paper' leaves from paper"},
      {"paper-author",
       "metapaths: 'paper-author' (paper-author) starts on paper but ends on author: a "
       "metapath ends on the type it starts from"},
      {"writes",
       "metapaths: 'writes' (paper-author) starts on paper but ends on author: a metapath "
       "ends on the type it starts from"},
      {"paper", "metapaths: 'paper' is a path through no relation"},
      {"author-paper-author",
       "metapaths: 'author-paper-author' starts on author, but the labelled node type is paper"},
      {"rev_writes-writes",
       "metapaths: 'rev_writes-writes' starts on author, but the labelled node type is paper "
       "(relations are followed along in-edges, from the target outwards: did you mean "
       "'author___writes___paper-paper___rev_writes___author'?)"},
      {"paper-author-paper,writes-rev_writes",
       "metapaths: 'paper-author-paper' and 'writes-rev_writes' are the same metapath "
       "(author___writes___paper-paper___rev_writes___author)"},
      {"paper-author-paper,", "metapaths: a metapath is empty"},
      {"paper--paper", "metapaths: 'paper--paper' has an empty step"},
      {"paper-writes-paper", "metapaths: 'paper-writes-paper' mixes node types and relations"},
  };
  for (const auto& c : cases) {
    const std::string got = error_of(c.text, acm());
    EXPECT_EQ(got.substr(0, c.message.size()), c.message) << c.text;
  }
  EXPECT_EQ(error_of("paper-paper", toy()),
            "metapaths: 'paper-paper': the step paper-paper is ambiguous, 2 relations join "
            "these types (paper___cites___paper, paper___rev_cites___paper): name the metapath by "
            "its relations");
  EXPECT_EQ(error_of("", acm(/*reverse=*/false)).substr(0, 50),
            "metapaths: the schema has no default metapath pape");
  EXPECT_EQ(error_of("", TypedMeta{}), "metapaths: need a typed (heterogeneous) partition");
}

// ---------------------------------------------------------------------------------------
// The sampler on a typed graph of the toy schema: papers [0, 40), authors [40, 100),
// fields [100, 108). Rows sorted by (relation, source), unique within a relation.
constexpr int64_t kPapers = 40, kAuthors = 60, kFields = 8;
constexpr int64_t kNodes = kPapers + kAuthors + kFields;

struct ToyGraph {
  graph::Csr g;
  std::vector<int32_t> relations;
  CscView view() const { return csc_view_of(g, {}, relations); }
};

ToyGraph toy_graph() {
  Rng rng(stream_key(28, 1));
  std::set<std::tuple<int64_t, int32_t, int64_t>> edges;  // (dst, relation, src)
  auto add = [&](int64_t src, int64_t dst, int32_t rel, int32_t rev) {
    edges.insert({dst, rel, src});
    edges.insert({src, rev, dst});
  };
  for (int64_t a = 0; a < kAuthors; ++a) {
    const int64_t n = 1 + static_cast<int64_t>(rng.below(a < 3 ? 30 : 4));  // a few hubs
    for (int64_t k = 0; k < n; ++k)
      add(kPapers + a, static_cast<int64_t>(rng.below(kPapers)), 0, 3);
  }
  for (int64_t p = 0; p < kPapers; ++p) {
    for (int k = 0; k < 2; ++k) {
      const int64_t q = static_cast<int64_t>(rng.below(kPapers));
      if (q != p) add(p, q, 1, 4);
    }
    if (p % 9 != 4)  // a few papers without a field
      add(p, kPapers + kAuthors + static_cast<int64_t>(rng.below(kFields)), 2, 5);
  }
  ToyGraph t;
  t.g.indptr.assign(1, 0);
  auto it = edges.begin();
  for (int64_t v = 0; v < kNodes; ++v) {
    for (; it != edges.end() && std::get<0>(*it) == v; ++it) {
      t.g.indices.push_back(std::get<2>(*it));
      t.relations.push_back(std::get<1>(*it));
    }
    t.g.indptr.push_back(static_cast<int64_t>(t.g.indices.size()));
  }
  return t;
}

std::vector<int64_t> papers() {
  std::vector<int64_t> v(kPapers);
  for (int64_t i = 0; i < kPapers; ++i) v[i] = i;
  return v;
}

// Node i's neighbours of metapath m in `s`.
std::vector<int64_t> of_metapath(const NeighborSample& s, int64_t i, int32_t m) {
  int64_t b = 0;
  for (int64_t j = 0; j < i; ++j) b += s.counts[j];
  std::vector<int64_t> out;
  for (int64_t e = b; e < b + s.counts[i]; ++e)
    if (s.relations[e] == m) out.push_back(s.neighbors[e]);
  return out;
}

void append_unique(std::vector<int64_t>* out, int64_t v) {
  if (std::find(out->begin(), out->end(), v) == out->end()) out->push_back(v);
}

// Every walk of `m` from v over the in-CSC, depth first in stored order.
void brute_force(const ToyGraph& t, const Metapath& m, size_t step, int64_t v,
                 std::vector<int64_t>* out) {
  if (step == m.relations.size()) return append_unique(out, v);
  for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e)
    if (t.relations[e] == m.relations[step]) brute_force(t, m, step + 1, t.g.indices[e], out);
}

// The budget walks of the header, one kernel call per node with the documented keys.
void reference_walk(const CscView& view, const Metapath& m, int index, size_t step, int64_t v,
                    int64_t budget, uint64_t hop_key, std::vector<int64_t>* out) {
  if (step == m.relations.size()) return append_unique(out, v);
  std::vector<int64_t> fanouts(6, 0);
  fanouts[m.relations[step]] = budget;
  KernelOptions o;
  o.fanout = budget;
  o.relation_fanouts = fanouts;
  NeighborSample s;
  const std::vector<int64_t> node{v};
  sample_neighbors(view, node, metapath_step_key(hop_key, index, static_cast<int>(step), budget), o,
                   &s);
  const int64_t k = s.counts[0];
  for (int64_t i = 0; i < k; ++i) {
    const int64_t child = budget < 0 ? -1 : budget / k + (i < budget % k ? 1 : 0);
    reference_walk(view, m, index, step + 1, s.neighbors[i], child, hop_key, out);
  }
}

TEST(MetapathSampler, AllNeighboursAreTheExactMetapathNeighbourSets) {
  const ToyGraph t = toy_graph();
  const std::vector<Metapath> metapaths =
      resolve_metapaths("paper-author-paper,paper-field-paper,cites-rev_cites", toy());
  LocalSampler local(t.view(), {});
  MetapathSampler sampler(local, metapaths, 6);
  HopRequest request;
  const std::vector<int64_t> frontier = papers();
  request.frontier = frontier;
  request.hop_key = 77;
  NeighborSample s;
  sampler.sample_hop(request, &s);
  ASSERT_EQ(s.counts.size(), frontier.size());
  int64_t total = 0;
  for (int64_t i = 0; i < kPapers; ++i) {
    for (int32_t m = 0; m < 3; ++m) {
      std::vector<int64_t> want;
      brute_force(t, metapaths[m], 0, i, &want);
      EXPECT_EQ(of_metapath(s, i, m), want) << "paper " << i << " metapath " << m;
      total += static_cast<int64_t>(want.size());
    }
    // Grouped by metapath, in increasing index.
    int64_t b = 0;
    for (int64_t j = 0; j < i; ++j) b += s.counts[j];
    EXPECT_TRUE(std::is_sorted(s.relations.begin() + b, s.relations.begin() + b + s.counts[i]));
  }
  EXPECT_EQ(total, static_cast<int64_t>(s.neighbors.size()));
  EXPECT_GT(total, 3 * kPapers) << "the graph is too sparse for the test to mean much";
}

TEST(MetapathSampler, BudgetWalksEqualTheKernelNodeByNode) {
  const ToyGraph t = toy_graph();
  const CscView view = t.view();
  const std::vector<Metapath> metapaths = two_metapaths();
  const std::vector<int64_t> frontier = papers();
  for (const std::vector<int64_t>& fanouts :
       {std::vector<int64_t>{1, 1}, {3, 5}, {7, 0}, {25, 2}, {-1, 3}}) {
    for (int threads : {1, 2}) {
      LocalSamplerOptions lo;
      lo.threads = threads;
      lo.chunk = 3;
      LocalSampler local(view, lo);
      MetapathSampler sampler(local, metapaths, 6);
      HopRequest request;
      request.frontier = frontier;
      request.hop_key = hop_key({5, 2, 9}, 1);
      request.relation_fanouts = fanouts;
      NeighborSample s, again;
      sampler.sample_hop(request, &s);
      sampler.sample_hop(request, &again);
      EXPECT_EQ(s.neighbors, again.neighbors);
      EXPECT_EQ(s.counts, again.counts);
      int64_t reached = 0;
      for (int64_t i = 0; i < kPapers; ++i) {
        for (int32_t m = 0; m < 2; ++m) {
          std::vector<int64_t> want;
          if (fanouts[m] != 0)
            reference_walk(view, metapaths[m], m, 0, i, fanouts[m], request.hop_key, &want);
          const std::vector<int64_t> got = of_metapath(s, i, m);
          EXPECT_EQ(got, want) << "paper " << i << " metapath " << m << " fanout " << fanouts[m];
          if (fanouts[m] >= 0) {
            EXPECT_LE(static_cast<int64_t>(got.size()), fanouts[m]);
          }
          for (int64_t u : got) EXPECT_LT(u, kPapers) << "not a paper";
          reached += static_cast<int64_t>(got.size());
        }
      }
      EXPECT_GT(reached, kPapers / 2);
      // One node alone gets what it got inside the frontier.
      for (int64_t v : {int64_t{0}, int64_t{13}, int64_t{39}}) {
        const std::vector<int64_t> one{v};
        request.frontier = one;
        NeighborSample alone;
        sampler.sample_hop(request, &alone);
        for (int32_t m = 0; m < 2; ++m) EXPECT_EQ(of_metapath(alone, 0, m), of_metapath(s, v, m));
        request.frontier = frontier;
      }
    }
  }
}

TEST(MetapathSampler, BlocksHoldMetapathIdsOverTargetNodes) {
  const ToyGraph t = toy_graph();
  const std::vector<Metapath> metapaths = two_metapaths();
  const Fanouts fanouts = resolve_fanouts("4,paper-field-paper=3:2", metapath_names(metapaths));
  ASSERT_EQ(fanouts.relations.size(), 2u);
  EXPECT_EQ(fanouts.relations[1], (std::vector<int64_t>{2, 3}));
  auto build = [&](int threads) {
    LocalSamplerOptions lo;
    lo.threads = threads;
    lo.chunk = 5;
    LocalSampler local(t.view(), lo);
    MetapathSampler sampler(local, metapaths, 6);
    BlockOptions o;
    o.fanouts = fanouts;
    o.key = {11, 1, 4};
    const std::vector<int64_t> seeds{3, 17, 8, 30, 22};
    return sample_blocks(seeds, o, sampler);
  };
  const SampledBatch one = build(1), two = build(2);
  ASSERT_EQ(one.blocks.size(), 2u);
  std::set<int32_t> seen;
  for (size_t l = 0; l < 2; ++l) {
    const Block& b = one.blocks[l];
    EXPECT_EQ(b.indices, two.blocks[l].indices);
    EXPECT_EQ(b.src_nodes, two.blocks[l].src_nodes);
    EXPECT_EQ(b.etypes, two.blocks[l].etypes);
    ASSERT_EQ(b.etypes.size(), b.indices.size());
    for (int32_t e : b.etypes) {
      EXPECT_TRUE(e == 0 || e == 1) << e;
      seen.insert(e);
    }
    for (int64_t u : b.src_nodes) EXPECT_LT(u, kPapers);
  }
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(MetapathSampler, RejectsFanoutsThatDoNotFitItsMetapaths) {
  const ToyGraph t = toy_graph();
  LocalSampler local(t.view(), {});
  MetapathSampler sampler(local, two_metapaths(), 6);
  const std::vector<int64_t> frontier{1}, three{1, 1, 1};
  HopRequest request;
  request.frontier = frontier;
  request.relation_fanouts = three;
  NeighborSample s;
  EXPECT_THROW(sampler.sample_hop(request, &s), Error);
  request.relation_fanouts = {};
  request.fanout = -2;
  EXPECT_THROW(sampler.sample_hop(request, &s), Error);
  EXPECT_THROW(MetapathSampler(local, {}, 6), Error);
  EXPECT_THROW(MetapathSampler(local, two_metapaths(), 3), Error);
}

// ---------------------------------------------------------------------------------------
// Temporal walks (metapath_sampler.h, "Temporal"): the toy graph with every third entry of
// a row repeated (one (source, destination) pair of a relation at two times), a time per
// entry in [0, 20) (many ties), each paper at a time of its own in [0, 20).
constexpr int64_t kTimeRange = 20;

struct TimedToy {
  ToyGraph t;
  std::vector<int64_t> times;        // one per entry
  std::vector<int64_t> paper_times;  // one per paper
  CscView view() const {
    CscView v = t.view();
    v.times = times;
    return v;
  }
};

TimedToy timed_toy() {
  const ToyGraph plain = toy_graph();
  TimedToy out;
  out.t.g = testing::with_repeats(plain.g, plain.relations, out.t.relations);
  out.times = testing::random_times(static_cast<int64_t>(out.t.g.indices.size()), kTimeRange, 41);
  out.paper_times = testing::random_times(kPapers, kTimeRange, 42);
  return out;
}

// Every walk of `m` from v over the entries a node at time `time` may follow, depth first in
// stored order: with fanout -1 exactly the sampler's endpoints.
void brute_force_timed(const TimedToy& t, const Metapath& m, size_t step, int64_t v, int64_t time,
                       bool strict, std::vector<int64_t>* out) {
  if (step == m.relations.size()) return append_unique(out, v);
  for (int64_t e = t.t.g.indptr[v]; e < t.t.g.indptr[v + 1]; ++e)
    if (t.t.relations[e] == m.relations[step] && testing::allowed(t.times[e], time, strict))
      brute_force_timed(t, m, step + 1, t.t.g.indices[e], time, strict, out);
}

// The budget walks with times, one temporal kernel call per node with the documented keys
// and the frontier node's time at every step.
void reference_timed_walk(const CscView& view, const testing::TemporalMode& mode, const Metapath& m,
                          int index, size_t step, int64_t v, int64_t time, int64_t budget,
                          uint64_t hop_key, std::vector<int64_t>* out) {
  if (step == m.relations.size()) return append_unique(out, v);
  std::vector<int64_t> fanouts(6, 0);
  fanouts[m.relations[step]] = budget;
  KernelOptions o;
  o.fanout = budget;
  o.relation_fanouts = fanouts;
  o.temporal = mode.temporal;
  o.strict = mode.strict;
  NeighborSample s;
  const std::vector<int64_t> node{v}, node_time{time};
  sample_neighbors(view, node, node_time,
                   metapath_step_key(hop_key, index, static_cast<int>(step), budget), o, &s);
  const int64_t k = s.counts[0];
  for (int64_t i = 0; i < k; ++i) {
    const int64_t child = budget < 0 ? -1 : budget / k + (i < budget % k ? 1 : 0);
    reference_timed_walk(view, mode, m, index, step + 1, s.neighbors[i], time, child, hop_key, out);
  }
}

LocalSamplerOptions temporal_options(const testing::TemporalMode& mode, int threads = 1) {
  LocalSamplerOptions lo;
  lo.temporal = mode.temporal;
  lo.strict = mode.strict;
  lo.threads = threads;
  lo.chunk = 3;
  return lo;
}

// The temporal modes of training: uniform and recent, strict or not.
std::vector<testing::TemporalMode> walk_modes() {
  return {{Temporal::kUniform, false},
          {Temporal::kUniform, true},
          {Temporal::kRecent, false},
          {Temporal::kRecent, true}};
}

TEST(MetapathSamplerTemporal, AllNeighboursAreTheEndpointsOfTheAllowedWalks) {
  const TimedToy t = timed_toy();
  const std::vector<Metapath> metapaths =
      resolve_metapaths("paper-author-paper,paper-field-paper,cites-rev_cites", toy());
  const std::vector<int64_t> frontier = papers();
  for (const testing::TemporalMode& mode : walk_modes()) {
    LocalSampler local(t.view(), temporal_options(mode));
    MetapathSampler sampler(local, metapaths, 6);
    HopRequest request;
    request.frontier = frontier;
    request.times = t.paper_times;
    request.hop_key = 77;
    NeighborSample s;
    sampler.sample_hop(request, &s);
    ASSERT_EQ(s.counts.size(), frontier.size());
    int64_t total = 0, fewer = 0;
    for (int64_t i = 0; i < kPapers; ++i) {
      for (int32_t m = 0; m < 3; ++m) {
        std::vector<int64_t> want, untimed;
        brute_force_timed(t, metapaths[m], 0, i, t.paper_times[i], mode.strict, &want);
        brute_force(t.t, metapaths[m], 0, i, &untimed);
        EXPECT_EQ(of_metapath(s, i, m), want)
            << "paper " << i << " at " << t.paper_times[i] << " metapath " << m;
        total += static_cast<int64_t>(want.size());
        if (want.size() < untimed.size()) ++fewer;
      }
    }
    EXPECT_EQ(total, static_cast<int64_t>(s.neighbors.size()));
    EXPECT_GT(total, kPapers) << "the times leave too little for the test to mean much";
    EXPECT_GT(fewer, kPapers / 2) << "the times keep out too little for the test to mean much";
  }
}

// Records, for every inner call of the metapath sampler, each sampled edge (by its edge id)
// with the time its head was asked at, and checks it against the view: the edge leads from
// the neighbour to the head, has the step's relation (the only one with a fanout), and is no
// later than the time allows. The no-leak proof edge by edge along every walk.
class LeakRecorder final : public NeighborSampler {
 public:
  LeakRecorder(LocalSampler& inner, const TimedToy& t, bool strict, bool timed)
      : inner_(inner), t_(t), strict_(strict), timed_(timed) {}

  void sample_hop(const HopRequest& request, NeighborSample* out) override {
    HopRequest untimed = request;
    if (!timed_) untimed.times = {};  // the teeth: the same walks without times
    inner_.sample_hop(untimed, out);
    int32_t relation = -1;
    for (int64_t r = 0; r < request.relation_fanouts.size(); ++r)
      if (request.relation_fanouts[r] != 0) relation = static_cast<int32_t>(r);
    std::lock_guard<std::mutex> lock(mu_);
    if (request.times.size() != request.frontier.size()) {
      failure_ = "an inner call without one time per node";
      return;
    }
    int64_t at = 0;
    for (int64_t j = 0; j < request.frontier.size(); ++j) {
      const int64_t v = request.frontier[j], time = request.times[j];
      if (t_.t.g.indptr[v + 1] > t_.t.g.indptr[v]) {
        for (int64_t e = t_.t.g.indptr[v]; e < t_.t.g.indptr[v + 1]; ++e)
          if (t_.t.relations[e] == relation && !testing::allowed(t_.times[e], time, strict_))
            ++later_in_rows_;
      }
      for (int64_t k = at; k < at + out->counts[j]; ++k) {
        const int64_t e = out->edge_ids[k];
        ++edges_;
        if (e < t_.t.g.indptr[v] || e >= t_.t.g.indptr[v + 1] ||
            t_.t.g.indices[e] != out->neighbors[k] || t_.t.relations[e] != relation) {
          failure_ = "edge " + std::to_string(e) + " is not the sampled one";
        } else if (!testing::allowed(t_.times[e], time, strict_)) {
          ++leaks_;
        }
      }
      at += out->counts[j];
    }
  }
  std::string failure_;
  int64_t edges_ = 0, leaks_ = 0, later_in_rows_ = 0;

 private:
  LocalSampler& inner_;
  const TimedToy& t_;
  bool strict_, timed_;
  std::mutex mu_;
};

TEST(MetapathSamplerTemporal, NoWalkFollowsAnEdgeLaterThanItsFrontierNode) {
  const TimedToy t = timed_toy();
  const std::vector<Metapath> metapaths =
      resolve_metapaths("paper-author-paper,paper-field-paper,cites-rev_cites", toy());
  const std::vector<int64_t> frontier = papers();
  for (const testing::TemporalMode& mode : walk_modes()) {
    for (const std::vector<int64_t>& fanouts :
         {std::vector<int64_t>{2, 2, 2}, {5, 3, 7}, {-1, -1, -1}}) {
      SCOPED_TRACE(std::string(mode.temporal == Temporal::kRecent ? "recent" : "uniform") +
                   (mode.strict ? " strict" : "") + " fanout " + std::to_string(fanouts[0]));
      for (bool timed : {true, false}) {
        LocalSamplerOptions lo = temporal_options(mode, /*threads=*/2);
        lo.edge_ids = true;
        if (!timed) lo.temporal = Temporal::kNone;
        LocalSampler local(t.view(), lo);
        LeakRecorder recorder(local, t, mode.strict, timed);
        MetapathSampler sampler(recorder, metapaths, 6);
        HopRequest request;
        request.frontier = frontier;
        request.times = t.paper_times;
        request.hop_key = hop_key({3, 1, 4}, 0);
        request.relation_fanouts = fanouts;
        NeighborSample s;
        sampler.sample_hop(request, &s);
        EXPECT_EQ(recorder.failure_, "");
        EXPECT_GT(recorder.edges_, 2 * kPapers);
        EXPECT_GT(recorder.later_in_rows_, 0) << "no walked row holds a later edge: vacuous";
        if (timed) {
          EXPECT_EQ(recorder.leaks_, 0) << "of " << recorder.edges_ << " walked edges";
          // And every endpoint is one an allowed walk reaches.
          for (int64_t i = 0; i < kPapers; ++i) {
            for (int32_t m = 0; m < 3; ++m) {
              std::vector<int64_t> reachable;
              brute_force_timed(t, metapaths[m], 0, i, t.paper_times[i], mode.strict, &reachable);
              for (int64_t u : of_metapath(s, i, m))
                EXPECT_NE(std::find(reachable.begin(), reachable.end(), u), reachable.end())
                    << "paper " << i << " reaches " << u << " by metapath " << m;
            }
          }
        } else {
          EXPECT_GT(recorder.leaks_, 0) << "without times the walks should reach later edges";
        }
      }
    }
  }
}

TEST(MetapathSamplerTemporal, BudgetWalksEqualTheTemporalKernelNodeByNode) {
  const TimedToy t = timed_toy();
  const CscView view = t.view();
  const std::vector<Metapath> metapaths = two_metapaths();
  // Every paper twice: at its time and at a later one (the same node at two times).
  std::vector<int64_t> frontier = papers(), times = t.paper_times;
  for (int64_t i = 0; i < kPapers; ++i) {
    frontier.push_back(i);
    times.push_back(t.paper_times[i] + 7);
  }
  for (const testing::TemporalMode& mode : walk_modes()) {
    for (const std::vector<int64_t>& fanouts :
         {std::vector<int64_t>{1, 1}, {3, 5}, {7, 0}, {25, 2}, {-1, 3}}) {
      std::vector<NeighborSample> by_threads;
      for (int threads : {1, 2}) {
        LocalSampler local(view, temporal_options(mode, threads));
        MetapathSampler sampler(local, metapaths, 6);
        HopRequest request;
        request.frontier = frontier;
        request.times = times;
        request.hop_key = hop_key({5, 2, 9}, 1);
        request.relation_fanouts = fanouts;
        NeighborSample s, again;
        sampler.sample_hop(request, &s);
        sampler.sample_hop(request, &again);
        EXPECT_EQ(s.neighbors, again.neighbors);
        EXPECT_EQ(s.counts, again.counts);
        EXPECT_EQ(s.relations, again.relations);
        int64_t differ = 0;
        for (int64_t i = 0; i < static_cast<int64_t>(frontier.size()); ++i) {
          for (int32_t m = 0; m < 2; ++m) {
            std::vector<int64_t> want;
            if (fanouts[m] != 0)
              reference_timed_walk(view, mode, metapaths[m], m, 0, frontier[i], times[i],
                                   fanouts[m], request.hop_key, &want);
            const std::vector<int64_t> got = of_metapath(s, i, m);
            EXPECT_EQ(got, want) << "entry " << i << " metapath " << m << " fanout " << fanouts[m];
            if (fanouts[m] >= 0) {
              EXPECT_LE(static_cast<int64_t>(got.size()), fanouts[m]);
            }
            if (i >= kPapers && got != of_metapath(s, i - kPapers, m)) ++differ;
          }
        }
        EXPECT_GT(differ, 0) << "a later time changes no sample: the times are not used";
        // One entry alone gets what it got inside the frontier.
        for (int64_t i : {int64_t{0}, int64_t{13}, int64_t{kPapers + 13}}) {
          const std::vector<int64_t> one{frontier[i]}, one_time{times[i]};
          request.frontier = one;
          request.times = one_time;
          NeighborSample alone;
          sampler.sample_hop(request, &alone);
          for (int32_t m = 0; m < 2; ++m) EXPECT_EQ(of_metapath(alone, 0, m), of_metapath(s, i, m));
        }
        by_threads.push_back(std::move(s));
      }
      EXPECT_EQ(by_threads[0].neighbors, by_threads[1].neighbors);
    }
  }
}

TEST(MetapathSamplerTemporal, RejectsTimesThatAreNotOnePerNode) {
  const TimedToy t = timed_toy();
  LocalSampler local(t.view(), temporal_options({Temporal::kUniform, false}));
  MetapathSampler sampler(local, two_metapaths(), 6);
  const std::vector<int64_t> frontier{1, 2}, one_time{3};
  HopRequest request;
  request.frontier = frontier;
  request.times = one_time;
  NeighborSample s;
  try {
    sampler.sample_hop(request, &s);
    ADD_FAILURE() << "one time for two nodes was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("metapath sampler: 1 times for 2 frontier nodes"),
              std::string::npos)
        << e.what();
  }
  // A temporal inner sampler asked without times refuses (the kernel's error), not samples
  // every edge.
  request.times = {};
  EXPECT_THROW(sampler.sample_hop(request, &s), Error);
}

}  // namespace
}  // namespace partita::sample
