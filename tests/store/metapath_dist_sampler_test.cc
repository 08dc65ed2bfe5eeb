// Metapath sampling (model han, issue 28) distributed: a MetapathSampler over DistSampler on
// 1, 2 and 3 parts (ranks as threads over the in-process transport) builds, for every batch,
// exactly the blocks (src nodes mapped back through node_map, indptr, indices, metapath ids)
// that a MetapathSampler over LocalSampler on the whole typed dataset builds, under uniform,
// all-neighbour and per-metapath fanouts; so 1 rank and P ranks give identical blocks. The
// typed batch pipeline over it, with 1 and 2 loader threads: inputs of the target type only,
// with their feature rows, and the same blocks. And the default metapaths of the real HeCo
// schemas (read from the shared datasets' raw/ files when present).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "../partition/test_datasets.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/metapath_sampler.h"
#include "partita/sample/metapath_spec.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"
#include "serving_ranks.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

constexpr int kPaper = 0;      // target type of testing::typed_dataset
constexpr int kRelations = 6;  // writes, cites, has_topic and their reverses

// Throws unless `got` (partition ids) equals `want` (original ids) block by block, metapath
// ids included.
void expect_same_batch(const sample::SampledBatch& got, const sample::SampledBatch& want,
                       const std::vector<int64_t>& node_map, const std::string& what) {
  const std::string diff = testing::compare_batches(got, want, node_map);
  if (!diff.empty()) throw Error(what + ": " + diff);
  for (size_t l = 0; l < got.blocks.size(); ++l)
    if (got.blocks[l].etypes != want.blocks[l].etypes)
      throw Error(what + ": block " + std::to_string(l) + ": metapath ids differ");
}

class MetapathDistSampler : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    dataset_ = new data::Dataset(testing::typed_dataset({}));
    partition_into("one", 1, partition::Method::kRandom);
    partition_into("metis2", 2, partition::Method::kMetis);
    partition_into("random3", 3, partition::Method::kRandom);
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }

  static void partition_into(const std::string& name, int parts, partition::Method method) {
    partition::PartitionOptions p;
    p.num_parts = parts;
    p.method = method;
    p.seed = 4;
    p.threads = 2;
    p.out_dir = *dir_ / name;
    partition::partition_dataset(*dataset_, p);
  }

  // Runs `work(rank, graph, endpoint)` on every rank of `name` (serving_ranks.h).
  static int64_t on_every_rank(const std::string& name, int ranks, const testing::RankWork& work) {
    return testing::run_serving_ranks(*dir_ / name, ranks, sampling_, work);
  }

  // The papers rank r owns.
  static std::vector<int64_t> owned_papers(const store::DistGraph& g, int r) {
    const auto [first, end] = g.typed_meta().type_range(r, kPaper);
    std::vector<int64_t> ids(static_cast<size_t>(end - first));
    std::iota(ids.begin(), ids.end(), first);
    return ids;
  }

  // The schema's metapaths through other types (its default adds cites and rev_cites).
  static std::vector<sample::Metapath> metapaths() {
    return sample::resolve_metapaths("paper-author-paper,paper-field-paper", meta());
  }
  static partition::TypedMeta meta() {
    return store::DistGraph::open(*dir_ / "one", 0, 1).typed_meta();
  }

  static TempDir* dir_;
  static data::Dataset* dataset_;
  static sample::LocalSamplerOptions sampling_;
};
TempDir* MetapathDistSampler::dir_ = nullptr;
data::Dataset* MetapathDistSampler::dataset_ = nullptr;
sample::LocalSamplerOptions MetapathDistSampler::sampling_;

TEST_F(MetapathDistSampler, DefaultMetapathsOfTheTypedDataset) {
  const std::vector<sample::Metapath> m = sample::resolve_metapaths("", meta());
  // A one-relation metapath is named by its relation as `partita info` lists it.
  EXPECT_EQ(sample::metapath_names(m),
            (std::vector<std::string>{"paper___cites___paper", "paper___rev_cites___paper",
                                      "paper-author-paper", "paper-field-paper"}));
}

TEST_F(MetapathDistSampler, BlocksEqualTheWholeDatasetsForOneTwoAndThreeRanks) {
  const data::Dataset& ds = *dataset_;
  const std::vector<sample::Metapath> paths = metapaths();
  sample::LocalSampler whole(sample::csc_view_of(ds.in_edges, {}, ds.edge_relation), sampling_);
  sample::MetapathSampler reference(whole, paths, kRelations);
  std::vector<sample::Fanouts> cases;
  for (const char* spec : {"3,2", "-1,1", "2,paper-field-paper=0:4"})
    cases.push_back(sample::resolve_fanouts(spec, sample::metapath_names(paths)));
  for (const auto& [name, ranks] :
       {std::make_pair("one", 1), std::make_pair("metis2", 2), std::make_pair("random3", 3)}) {
    SCOPED_TRACE(name);
    const std::vector<int64_t> node_map = testing::read_node_map(*dir_ / name);
    std::mutex mu;
    std::vector<int64_t> per_metapath(2, 0);
    const int64_t sent =
        on_every_rank(name, ranks, [&](int r, const store::DistGraph& g, RpcEndpoint* endpoint) {
          sample::DistSampler dist(g, ranks > 1 ? endpoint : nullptr, sampling_);
          sample::MetapathSampler sampler(dist, paths, kRelations);
          sample::BlockBuilder builder, reference_builder;
          const std::vector<std::vector<int64_t>> batches = loader::chunk(owned_papers(g, r), 9);
          for (size_t c = 0; c < cases.size(); ++c) {
            for (uint64_t b = 0; b < batches.size(); ++b) {
              sample::BlockOptions options;
              options.fanouts = cases[c];
              // Keyed by original ids' batch: the same batches on every rank count would need
              // the same seeds; here every batch is compared with its own reference.
              options.key = {17, c, static_cast<uint64_t>(r) * 1000 + b};
              const sample::SampledBatch got = builder.build(batches[b], options, sampler);
              const sample::SampledBatch want = reference_builder.build(
                  testing::map_ids(batches[b], node_map), options, reference);
              expect_same_batch(got, want, node_map,
                                std::string(name) + " case " + std::to_string(c) + " rank " +
                                    std::to_string(r) + " batch " + std::to_string(b));
              std::lock_guard<std::mutex> lock(mu);
              for (const sample::Block& block : got.blocks)
                for (int32_t e : block.etypes) ++per_metapath.at(static_cast<size_t>(e));
            }
          }
        });
    if (ranks > 1) {
      EXPECT_GT(sent, 0) << "no remote traffic: the test would be vacuous";
    }
    EXPECT_GT(per_metapath[0], 0);
    EXPECT_GT(per_metapath[1], 0);
  }
}

// The same seeds (original ids) give the same blocks on 1 and 2 ranks, also through the
// typed batch pipeline with 1 and 2 loader threads; inputs are papers only, with their rows.
TEST_F(MetapathDistSampler, TypedPipelineOnOneAndTwoRanksWithOneAndTwoThreads) {
  const data::Dataset& ds = *dataset_;
  const std::vector<sample::Metapath> paths = metapaths();
  const sample::Fanouts fanouts =
      sample::resolve_fanouts("paper-author-paper=4:2,3", sample::metapath_names(paths));
  // The same 30 papers (original ids), in batches of 10, on rank 0.
  std::vector<int64_t> seeds_original(30);
  for (int64_t i = 0; i < 30; ++i) seeds_original[static_cast<size_t>(i)] = (i * 37) % 120;
  std::map<std::string, std::vector<std::vector<int64_t>>> results;  // per run: blocks' src
  for (const auto& [name, ranks] : {std::make_pair("one", 1), std::make_pair("metis2", 2)}) {
    const std::vector<int64_t> node_map = testing::read_node_map(*dir_ / name);
    std::vector<int64_t> to_new(node_map.size());
    for (size_t i = 0; i < node_map.size(); ++i) to_new[static_cast<size_t>(node_map[i])] = i;
    for (int threads : {1, 2}) {
      const std::string run = std::string(name) + "/" + std::to_string(threads);
      std::vector<std::vector<int64_t>>& out = results[run];
      on_every_rank(name, ranks, [&](int r, const store::DistGraph& g, RpcEndpoint* endpoint) {
        if (r != 0) return;  // serves only
        sample::DistSampler dist(g, endpoint, sampling_);
        sample::MetapathSampler sampler(dist, paths, kRelations);
        store::FeatureFetcher fetcher(g, endpoint);
        loader::BatchPipelineOptions options;
        options.threads = threads;
        options.fanouts = fanouts;
        options.seed = 5;
        options.epoch = 2;
        options.typed = true;
        std::vector<int64_t> seeds;
        for (int64_t s : seeds_original) seeds.push_back(to_new[static_cast<size_t>(s)]);
        loader::BatchPipeline pipeline(options, loader::chunk(seeds, 10), sampler, fetcher);
        const data::NodeType& paper = ds.hetero->node_types[kPaper];
        while (std::optional<loader::Batch> batch = pipeline.next()) {
          const sample::SampledBatch& got = batch->sampled;
          for (const sample::Block& b : got.blocks) {
            std::vector<int64_t> row;
            for (int64_t u : b.src_nodes) row.push_back(node_map[static_cast<size_t>(u)]);
            row.insert(row.end(), b.indptr.begin(), b.indptr.end());
            row.insert(row.end(), b.indices.begin(), b.indices.end());
            row.insert(row.end(), b.etypes.begin(), b.etypes.end());
            out.push_back(row);
          }
          if (batch->typed_inputs.size() != 3) throw Error("not one input per type");
          if (!batch->typed_inputs[1].positions.empty() ||
              !batch->typed_inputs[2].positions.empty())
            throw Error("inputs of another type than paper");
          const loader::TypedInput& in = batch->typed_inputs[kPaper];
          if (in.positions.size() != got.input_nodes.size())
            throw Error("not every input node is a paper input");
          const int64_t dim = paper.feat_dim();
          const float* rows = reinterpret_cast<const float*>(in.features.data());
          for (size_t i = 0; i < in.positions.size(); ++i) {
            const int64_t original = node_map[static_cast<size_t>(
                got.input_nodes[static_cast<size_t>(in.positions[i])])];
            for (int64_t c = 0; c < dim; ++c)
              if (rows[i * dim + c] != paper.features.row(original - paper.offset)[c])
                throw Error("feature row of paper " + std::to_string(original) + " differs");
          }
        }
      });
    }
  }
  ASSERT_FALSE(results["one/1"].empty());
  EXPECT_EQ(results["one/1"], results["one/2"]);
  EXPECT_EQ(results["one/1"], results["metis2/1"]);
  EXPECT_EQ(results["one/1"], results["metis2/2"]);
}

// ---------------------------------------------------------------------------------------
// The real HeCo schemas: types from raw/num-node-dict.csv.gz (header order), relations from
// raw/triplet-type-list.csv.gz then their reverses, the target from
// raw/nodetype-has-label.csv.gz, as the OGB reader builds them (data/hetero.h).
std::vector<std::string> gz_lines(const std::string& path) {
  std::vector<std::string> lines;
  FILE* f = popen(("gzip -dc '" + path + "'").c_str(), "r");
  if (!f) return lines;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  pclose(f);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::vector<std::string> csv(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  return out;
}

std::optional<partition::TypedMeta> heco_schema(const std::string& name) {
  const std::string raw = testing::shared_datasets_dir() + "/ogb-layout/" + name + "/raw";
  if (!std::filesystem::exists(raw)) return std::nullopt;
  partition::TypedMeta m;
  const std::vector<std::string> types = csv(gz_lines(raw + "/num-node-dict.csv.gz").at(0));
  for (const std::string& t : types) m.node_types.push_back({t, 1, 0, 0});
  const std::vector<std::string> labelled = gz_lines(raw + "/nodetype-has-label.csv.gz");
  const std::vector<std::string> head = csv(labelled.at(0)), flags = csv(labelled.at(1));
  for (size_t i = 0; i < head.size(); ++i)
    if (flags.at(i) == "True") m.target_type = m.find_type(head[i]);
  for (const std::string& line : gz_lines(raw + "/triplet-type-list.csv.gz")) {
    const std::vector<std::string> t = csv(line);
    m.relations.push_back({t.at(1), m.find_type(t.at(0)), m.find_type(t.at(2)), 1, false});
  }
  const size_t inputs = m.relations.size();
  for (size_t i = 0; i < inputs; ++i) {
    const partition::TypedRelation r = m.relations[i];
    m.relations.push_back({"rev_" + r.name, r.dst_type, r.src_type, 1, true});
  }
  return m;
}

TEST(HecoMetapaths, DefaultsOfTheRealSchemas) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> want = {
      {"heco-acm", {"paper-author-paper", "paper-subject-paper"}},
      {"heco-dblp",
       {"author-paper-author", "author-paper-conference-paper-author",
        "author-paper-term-paper-author"}},
      {"heco-freebase", {"movie-actor-movie", "movie-director-movie", "movie-writer-movie"}}};
  int checked = 0;
  for (const auto& [name, names] : want) {
    const std::optional<partition::TypedMeta> meta = heco_schema(name);
    if (!meta) continue;
    ++checked;
    const std::vector<sample::Metapath> m = sample::resolve_metapaths("", *meta);
    EXPECT_EQ(sample::metapath_names(m), names) << name;
    // Named by types or relations, the same metapaths.
    std::string by_relations;
    for (const sample::Metapath& p : m) {
      for (size_t s = 0; s < p.relations.size(); ++s)
        by_relations += (s ? "-" : "") + meta->relations[static_cast<size_t>(p.relations[s])].name;
      by_relations += ",";
    }
    by_relations.pop_back();
    const std::vector<sample::Metapath> again = sample::resolve_metapaths(by_relations, *meta);
    ASSERT_EQ(again.size(), m.size()) << by_relations;
    for (size_t i = 0; i < m.size(); ++i) EXPECT_EQ(again[i].relations, m[i].relations);
  }
  if (checked == 0) GTEST_SKIP() << "the HeCo datasets are absent";
  EXPECT_EQ(sample::resolve_metapaths("paper-author-paper", *heco_schema("heco-acm"))[0].relations,
            sample::resolve_metapaths("writes-rev_writes", *heco_schema("heco-acm"))[0].relations);
}

}  // namespace
}  // namespace partita
