#include "partita/sample/fanout_spec.h"

#include <gtest/gtest.h>

#include "partita/core/parameter_error.h"
#include "partita/sample/relation_names.h"

namespace partita::sample {
namespace {

const std::vector<std::string> kMag{"affiliated_with", "writes", "cites", "has_topic",
                                    "rev_writes"};

// The ParameterError message of resolving `text` against `names` ("" if none is thrown):
// "fanouts: <detail>", the parameter in the library's words.
std::string error_of(const std::string& text, const std::vector<std::string>& names = kMag) {
  try {
    resolve_fanouts(text, names);
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "fanouts");
    return e.what();
  }
  return "";
}

TEST(FanoutSpec, PlainHopsApplyToEveryRelation) {
  Fanouts r = resolve_fanouts("25,20", kMag);
  EXPECT_EQ(r.hops, (std::vector<int64_t>{25, 20}));
  EXPECT_TRUE(r.relations.empty());
  r = resolve_fanouts("15,-1,5", {});  // homogeneous graph
  EXPECT_EQ(r.hops, (std::vector<int64_t>{15, -1, 5}));
  EXPECT_TRUE(r.relations.empty());
  r = resolve_fanouts("*=7", {});  // a default alone is a plain hop
  EXPECT_EQ(r.hops, std::vector<int64_t>{7});
  EXPECT_TRUE(r.relations.empty());
}

TEST(FanoutSpec, PerRelationHops) {
  Fanouts r = resolve_fanouts("25,cites=10:writes=5:20", kMag);
  EXPECT_EQ(r.hops, (std::vector<int64_t>{25, 20}));
  ASSERT_EQ(r.relations.size(), 2u);
  EXPECT_TRUE(r.relations[0].empty());
  EXPECT_EQ(r.relations[1], (std::vector<int64_t>{20, 5, 10, 20, 20}));

  r = resolve_fanouts("*=3:rev_writes=-1:has_topic=0", kMag);
  EXPECT_EQ(r.hops, std::vector<int64_t>{3});
  EXPECT_EQ(r.relations[0], (std::vector<int64_t>{3, 3, 3, 0, -1}));

  // Every relation named, no default: fanouts[h] holds the largest (-1 if one is -1).
  r = resolve_fanouts("a=4:b=9,b=2:a=-1", {"a", "b"});
  EXPECT_EQ(r.hops, (std::vector<int64_t>{9, -1}));
  EXPECT_EQ(r.relations, (std::vector<std::vector<int64_t>>{{4, 9}, {-1, 2}}));

  // Before the relation names are known: a hop that names relations is -1.
  EXPECT_EQ(unresolved_fanouts(parse_fanout_spec("25,cites=10:writes=5:20,-1,*=4")).hops,
            (std::vector<int64_t>{25, -1, -1, 4}));

  FanoutSpec spec = parse_fanout_spec("10,cites=3:7");
  ASSERT_EQ(spec.num_hops(), 2);
  EXPECT_FALSE(spec.hops[0].per_relation());
  EXPECT_EQ(spec.hops[0].fallback, 10);
  ASSERT_EQ(spec.hops[1].named.size(), 1u);
  EXPECT_EQ(spec.hops[1].named[0].relation, "cites");
  EXPECT_EQ(spec.hops[1].named[0].fanout, 3);
  EXPECT_EQ(spec.hops[1].fallback, 7);
}

TEST(FanoutSpec, SyntaxErrorsNameTheEntry) {
  EXPECT_EQ(error_of(""), "fanouts: empty (e.g. 15,10,5, or 25,cites=10:writes=5:20 per relation)");
  EXPECT_EQ(error_of("25,,10"), "fanouts: hop 2 is empty");
  EXPECT_EQ(error_of("25,"), "fanouts: hop 2 is empty");
  EXPECT_EQ(error_of("cites=1::5"), "fanouts: hop 1 ('cites=1::5') has an empty entry");
  EXPECT_EQ(error_of("5,x"),
            "fanouts: 'x' in hop 2: 'x' is not a fanout (an integer k >= 0, or -1 for all)");
  EXPECT_EQ(error_of("cites=ten:5"),
            "fanouts: 'cites=ten' in hop 1: 'ten' is not a fanout (an integer k >= 0, or -1 "
            "for all)");
  EXPECT_EQ(error_of("cites=:5"),
            "fanouts: 'cites=' in hop 1: '' is not a fanout (an integer k >= 0, or -1 for all)");
  EXPECT_EQ(error_of(" 5"),
            "fanouts: ' 5' in hop 1: ' 5' is not a fanout (an integer k >= 0, or -1 for all)");
  EXPECT_EQ(error_of("10,cites=-2:5"),
            "fanouts: 'cites=-2' in hop 2: fanout -2 is invalid (use k >= 0, or -1 for all)");
  EXPECT_EQ(error_of("-3"),
            "fanouts: '-3' in hop 1: fanout -3 is invalid (use k >= 0, or -1 for all)");
  EXPECT_EQ(error_of("=4:5"), "fanouts: '=4' in hop 1: no relation name before '='");
  EXPECT_EQ(error_of("cites=1:5:*=6"),
            "fanouts: '*=6' in hop 1: a second default fanout (the hop already has '5')");
  EXPECT_EQ(error_of("5,0"),
            "fanouts: hop 2 ('0') samples no neighbor at all (use a positive integer, or -1 for "
            "all)");
}

TEST(FanoutSpec, ResolutionErrorsNameTheEntry) {
  EXPECT_EQ(error_of("10,cite=3:5"),
            "fanouts: 'cite=3' in hop 2: unknown relation 'cite' (relations: affiliated_with, "
            "writes, cites, has_topic, rev_writes)");
  EXPECT_EQ(error_of("cites=3:writes=1:cites=4:5"),
            "fanouts: 'cites=4' in hop 1: relation 'cites' is named twice");
  EXPECT_EQ(error_of("10,cites=3:writes=2"),
            "fanouts: hop 2 ('cites=3:writes=2') gives no fanout for affiliated_with, "
            "has_topic, rev_writes (name them, or add a default N or *=N)");
  EXPECT_EQ(error_of("10,cites=3:5", {}),
            "fanouts: 'cites=3' in hop 2 names a relation, but the graph has a single edge "
            "type (give a plain number per hop)");
  EXPECT_EQ(error_of("a=0:b=0", {"a", "b"}),
            "fanouts: hop 1 ('a=0:b=0') samples no neighbor at all (every relation's fanout "
            "is 0)");
  EXPECT_EQ(error_of("a=0:0", {"a", "b"}),
            "fanouts: hop 1 ('a=0:0') samples no neighbor at all (every relation's fanout is 0)");
  EXPECT_EQ(error_of("a=1:0", {"a", "b"}), "");  // b left out, a sampled
  EXPECT_EQ(error_of("x=1:2", {"x", "x"}),
            "fanouts: 'x=1' in hop 1: relation name 'x' is ambiguous (any of x, x): give the "
            "full name");
}

// A typed graph's relations by their full names (partita info's), as train resolves them.
const std::vector<std::string> kMagFull{
    "author___affiliated_with___institution", "author___writes___paper", "paper___cites___paper",
    "paper___has_topic___field_of_study", "paper___rev_writes___author"};

TEST(FanoutSpec, RelationsByFullOrUnambiguousShortName) {
  const Fanouts full = resolve_fanouts("25,author___writes___paper=5:20", kMagFull);
  EXPECT_EQ(full.relations[1], (std::vector<int64_t>{20, 5, 20, 20, 20}));
  EXPECT_EQ(resolve_fanouts("25,writes=5:20", kMagFull), full);
  EXPECT_EQ(resolve_fanouts("25,rev_writes=1:author___writes___paper=5:20", kMagFull).relations[1],
            (std::vector<int64_t>{20, 5, 20, 20, 1}));
  // Errors list the full names.
  EXPECT_EQ(error_of("10,cite=3:5", kMagFull),
            "fanouts: 'cite=3' in hop 2: unknown relation 'cite' (relations: "
            "author___affiliated_with___institution, author___writes___paper, "
            "paper___cites___paper, paper___has_topic___field_of_study, "
            "paper___rev_writes___author)");
  EXPECT_EQ(error_of("writes=1:author___writes___paper=2:3", kMagFull),
            "fanouts: 'author___writes___paper=2' in hop 1: relation 'author___writes___paper' is "
            "named twice");
  // Two relations share a short name: only their full names resolve.
  const std::vector<std::string> two_cites{"author___cites___paper", "paper___cites___paper"};
  EXPECT_EQ(error_of("cites=1:2", two_cites),
            "fanouts: 'cites=1' in hop 1: relation name 'cites' is ambiguous (any of "
            "author___cites___paper, paper___cites___paper): give the full name");
  EXPECT_EQ(resolve_fanouts("paper___cites___paper=1:2", two_cites).relations[0],
            (std::vector<int64_t>{2, 1}));
}

TEST(RelationNames, ShortNameOfACanonicalName) {
  EXPECT_EQ(short_relation_name("author___writes___paper"), "writes");
  EXPECT_EQ(short_relation_name("writes"), "");
  EXPECT_EQ(short_relation_name("a___b"), "");
  EXPECT_EQ(short_relation_name("a______c"), "");
  EXPECT_EQ(short_relation_name("a___b___c___d"), "");
  // A metapath named by full relation names is no relation name.
  EXPECT_EQ(short_relation_name("author___writes___paper-paper___rev_writes___author"), "");
}

}  // namespace
}  // namespace partita::sample
