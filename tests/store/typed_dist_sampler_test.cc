// Distributed sampling of typed (heterogeneous) partitions equals single-process sampling
// of the whole typed dataset: DistSampler over 2 and 3 parts (ranks as threads over the
// in-process transport) builds, for every batch, exactly the blocks (src nodes mapped back
// through node_map, indptr, indices, relations) that a BlockBuilder over LocalSampler on
// csc_view_of(dataset.in_edges, {}, dataset.edge_relation) builds, with uniform and
// per-relation fanouts (one relation left out with REL=0), also when a part holds no edge
// of some relation. And the loader: BatchPipeline with typed=true groups the input nodes by
// type (Batch::typed_inputs) with the dataset's per-type feature rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>

#include "../partition/test_datasets.h"
#include "helpers/temporal_leaks.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/seeds.h"
#include "partita/partition/partition.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/dist_sampler.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/local_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"
#include "serving_ranks.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

// Relation ids of testing::typed_dataset: writes, cites, has_topic, then their reverses.
constexpr int32_t kHasTopic = 2;
constexpr int32_t kRevWrites = 3;

// The fanouts a batch is sampled with, resolved from --fanouts text against the relation
// names of the dataset.
struct FanoutCase {
  std::string spec;
  sample::Fanouts resolved;
};

std::vector<std::string> relation_names(const data::Dataset& ds) {
  std::vector<std::string> names;
  for (const data::Relation& r : ds.hetero->relations) names.push_back(r.name);
  return names;
}

std::vector<FanoutCase> fanout_cases(const data::Dataset& ds) {
  std::vector<FanoutCase> cases;
  for (const char* spec :
       {"3,2", "-1,1", "writes=2:cites=1:rev_writes=0:-1,3", "2,rev_cites=-1:has_topic=0:1"})
    cases.push_back({spec, sample::resolve_fanouts(spec, relation_names(ds))});
  return cases;
}

// Throws unless `got` (partition ids) equals `want` (original ids) block by block, relations
// included.
void expect_same_typed_batch(const sample::SampledBatch& got, const sample::SampledBatch& want,
                             const std::vector<int64_t>& node_map, const std::string& what) {
  const std::string diff = testing::compare_batches(got, want, node_map);
  if (!diff.empty()) throw Error(what + ": " + diff);
  for (size_t l = 0; l < got.blocks.size(); ++l) {
    const sample::Block& b = got.blocks[l];
    if (b.etypes != want.blocks[l].etypes)
      throw Error(what + ": block " + std::to_string(l) + ": relations differ");
    if (b.etypes.size() != b.indices.size())
      throw Error(what + ": block " + std::to_string(l) + ": relations not aligned");
  }
}

// How often each relation occurs in `batch`'s blocks, per block.
std::vector<std::vector<int64_t>> relation_counts(const sample::SampledBatch& batch,
                                                  int relations) {
  std::vector<std::vector<int64_t>> counts;
  for (const sample::Block& b : batch.blocks) {
    counts.emplace_back(static_cast<size_t>(relations), 0);
    for (int32_t r : b.etypes) ++counts.back()[static_cast<size_t>(r)];
  }
  return counts;
}

class TypedDistSampler : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    dense_ = new data::Dataset(testing::typed_dataset({}));
    // One field only: every has_topic edge ends at it, so the parts that do not own it hold
    // no edge of that relation.
    testing::TypedOptions one_field;
    one_field.fields = 1;
    one_field.seed = 9;
    sparse_ = new data::Dataset(testing::typed_dataset(one_field));
    partition_into(*dense_, "dense-metis2", 2, partition::Method::kMetis);
    partition_into(*dense_, "dense-random3", 3, partition::Method::kRandom);
    partition_into(*sparse_, "sparse-metis3", 3, partition::Method::kMetis);
    partition_into(*sparse_, "sparse-random2", 2, partition::Method::kRandom);
  }
  static void TearDownTestSuite() {
    delete dense_;
    delete sparse_;
    delete dir_;
  }

  static void partition_into(const data::Dataset& ds, const std::string& name, int parts,
                             partition::Method method) {
    partition::PartitionOptions p;
    p.num_parts = parts;
    p.method = method;
    p.seed = 4;
    p.threads = 2;
    p.out_dir = *dir_ / name;
    partition::partition_dataset(ds, p);
  }

  // Runs `work(rank, graph, endpoint)` on every rank of `name` (serving_ranks.h).
  static int64_t on_every_rank(const std::string& name, int ranks, const testing::RankWork& work) {
    return testing::run_serving_ranks(*dir_ / name, ranks, sampling_, work);
  }

  // Every rank samples batches of its owned nodes of every type under every fanout case and
  // compares them with the whole-dataset reference; the relation counts of all batches,
  // summed over ranks, per case and block, go to *counts.
  static void expect_blocks_equal_reference(
      const data::Dataset& ds, const std::string& name, int ranks,
      std::vector<std::vector<std::vector<int64_t>>>* counts) {
    sample::LocalSampler reference(sample::csc_view_of(ds.in_edges, {}, ds.edge_relation),
                                   sampling_);
    const std::vector<FanoutCase> cases = fanout_cases(ds);
    const std::vector<int64_t> node_map = testing::read_node_map(*dir_ / name);
    const int relations = ds.hetero->num_relations();
    std::mutex mu;
    counts->assign(cases.size(), std::vector<std::vector<int64_t>>(
                                     2, std::vector<int64_t>(static_cast<size_t>(relations), 0)));
    const int64_t sent =
        on_every_rank(name, ranks, [&](int r, const store::DistGraph& g, RpcEndpoint* endpoint) {
          sample::DistSampler sampler(g, ranks > 1 ? endpoint : nullptr, sampling_);
          std::vector<int64_t> owned(static_cast<size_t>(g.num_local_nodes()));
          std::iota(owned.begin(), owned.end(), g.first_node());
          const std::vector<std::vector<int64_t>> batches = loader::chunk(owned, 24);
          sample::BlockBuilder builder, reference_builder;
          for (size_t c = 0; c < cases.size(); ++c) {
            for (uint64_t b = 0; b < batches.size(); ++b) {
              sample::BlockOptions options;
              options.fanouts = cases[c].resolved;
              options.key = {13, static_cast<uint64_t>(c), static_cast<uint64_t>(r) * 1000 + b};
              const sample::SampledBatch got = builder.build(batches[b], options, sampler);
              const sample::SampledBatch want = reference_builder.build(
                  testing::map_ids(batches[b], node_map), options, reference);
              expect_same_typed_batch(got, want, node_map,
                                      name + " --fanouts " + cases[c].spec + ", rank " +
                                          std::to_string(r) + " batch " + std::to_string(b));
              const auto batch_counts = relation_counts(got, relations);
              std::lock_guard<std::mutex> lock(mu);
              for (size_t l = 0; l < 2; ++l)
                for (int rel = 0; rel < relations; ++rel)
                  (*counts)[c][l][static_cast<size_t>(rel)] +=
                      batch_counts[l][static_cast<size_t>(rel)];
            }
          }
        });
    EXPECT_GT(sent, 0) << name << ": no remote traffic, the test would be vacuous";
  }

  static TempDir* dir_;
  static data::Dataset* dense_;
  static data::Dataset* sparse_;
  static sample::LocalSamplerOptions sampling_;
};
TempDir* TypedDistSampler::dir_ = nullptr;
data::Dataset* TypedDistSampler::dense_ = nullptr;
data::Dataset* TypedDistSampler::sparse_ = nullptr;
sample::LocalSamplerOptions TypedDistSampler::sampling_;

TEST_F(TypedDistSampler, BlocksEqualTheWholeDatasetsForTwoAndThreeParts) {
  for (const auto& [name, ranks] :
       {std::make_pair("dense-metis2", 2), std::make_pair("dense-random3", 3)}) {
    SCOPED_TRACE(name);
    std::vector<std::vector<std::vector<int64_t>>> counts;
    expect_blocks_equal_reference(*dense_, name, ranks, &counts);
    // Not vacuous: the uniform case reaches every relation; REL=0 leaves rev_writes out of
    // hop 0 (and has_topic=0 out of hop 1) while other relations are still sampled there.
    for (int32_t rel = 0; rel < 6; ++rel) EXPECT_GT(counts[0][0][rel], 0) << "relation " << rel;
    EXPECT_EQ(counts[2][0][kRevWrites], 0);
    EXPECT_GT(counts[2][1][kRevWrites], 0);
    EXPECT_GT(counts[2][0][kHasTopic], 0);
    EXPECT_EQ(counts[3][1][kHasTopic], 0);
    EXPECT_GT(counts[3][0][kHasTopic], 0);
  }
}

TEST_F(TypedDistSampler, PartsWithoutEdgesOfARelation) {
  for (const auto& [name, ranks] :
       {std::make_pair("sparse-metis3", 3), std::make_pair("sparse-random2", 2)}) {
    SCOPED_TRACE(name);
    // The premise: some part stores no has_topic edge (they all end at the one field).
    int parts_without = 0;
    for (int r = 0; r < ranks; ++r) {
      const store::DistGraph g = store::DistGraph::open(*dir_ / name, r, ranks);
      const auto rels = g.edge_relations();
      if (std::count(rels.begin(), rels.end(), kHasTopic) == 0) ++parts_without;
    }
    EXPECT_EQ(parts_without, ranks - 1);
    std::vector<std::vector<std::vector<int64_t>>> counts;
    expect_blocks_equal_reference(*sparse_, name, ranks, &counts);
    EXPECT_GT(counts[0][0][kHasTopic], 0) << "the one field's edges were sampled";
  }
}

// The loader over DistSampler: typed_inputs' positions group the input nodes by type, in
// ascending order, covering each input node once; the feature rows are the dataset's per-type
// rows (float32 partitions: exact) and the featureless type (author) has none; the labels
// are the seeds'; and the blocks are the reference's.
TEST_F(TypedDistSampler, TypedBatchPipelineGroupsInputsByTypeWithTheirFeatures) {
  const data::Dataset& ds = *dense_;
  const std::string name = "dense-random3";
  const int ranks = 3;
  sample::LocalSampler reference(sample::csc_view_of(ds.in_edges, {}, ds.edge_relation), sampling_);
  const std::vector<int64_t> node_map = testing::read_node_map(*dir_ / name);
  const sample::Fanouts fanouts =
      sample::resolve_fanouts("cites=2:rev_writes=0:3,2", relation_names(ds));
  std::atomic<int64_t> authors{0}, fields{0};
  on_every_rank(name, ranks, [&](int r, const store::DistGraph& g, RpcEndpoint* endpoint) {
    sample::DistSampler sampler(g, endpoint, sampling_);
    store::FeatureFetcher fetcher(g, endpoint);
    loader::BatchPipelineOptions options;
    options.threads = 2;
    options.fanouts = fanouts;
    options.seed = 21;
    options.epoch = 3;
    options.typed = true;
    const std::vector<int64_t> train(g.train_ids().begin(), g.train_ids().end());
    loader::BatchPipeline pipeline(options, loader::chunk(train, 10), sampler, fetcher);
    sample::BlockBuilder reference_builder;
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      const std::string what = "rank " + std::to_string(r) + " step " + std::to_string(batch->step);
      const sample::SampledBatch& got = batch->sampled;
      sample::BlockOptions block_options;
      block_options.fanouts = options.fanouts;
      block_options.key = {options.seed, options.epoch, static_cast<uint64_t>(batch->step)};
      expect_same_typed_batch(
          got,
          reference_builder.build(testing::map_ids(got.seeds, node_map), block_options, reference),
          node_map, what);
      if (!batch->features.empty()) throw Error(what + ": untyped features filled");
      if (batch->typed_inputs.size() != 3) throw Error(what + ": not one input per type");
      std::vector<int> seen(got.input_nodes.size(), 0);
      for (int t = 0; t < 3; ++t) {
        const loader::TypedInput& in = batch->typed_inputs[static_cast<size_t>(t)];
        if (!std::is_sorted(in.positions.begin(), in.positions.end()))
          throw Error(what + ": positions of type " + std::to_string(t) + " not ascending");
        const data::NodeType& type = ds.hetero->node_types[static_cast<size_t>(t)];
        const int64_t dim = type.feat_dim();
        if (in.features.size() != in.positions.size() * static_cast<size_t>(dim) * 4)
          throw Error(what + ": " + std::to_string(in.features.size()) + " feature bytes of type " +
                      std::to_string(t));
        const float* rows = reinterpret_cast<const float*>(in.features.data());
        for (size_t i = 0; i < in.positions.size(); ++i) {
          const int64_t pos = in.positions[i];
          ++seen.at(static_cast<size_t>(pos));
          const int64_t original = node_map[got.input_nodes[static_cast<size_t>(pos)]];
          if (ds.hetero->type_of(original) != t)
            throw Error(what + ": node " + std::to_string(original) + " grouped under type " +
                        std::to_string(t));
          for (int64_t c = 0; c < dim; ++c)
            if (rows[i * dim + c] != type.features.row(original - type.offset)[c])
              throw Error(what + ": feature " + std::to_string(c) + " of node " +
                          std::to_string(original) + " differs");
        }
      }
      if (std::any_of(seen.begin(), seen.end(), [](int n) { return n != 1; }))
        throw Error(what + ": positions do not cover each input node once");
      for (size_t i = 0; i < got.seeds.size(); ++i)
        if (batch->labels[i] != ds.labels[node_map[got.seeds[i]]])
          throw Error(what + ": label of seed " + std::to_string(i) + " differs");
      authors += static_cast<int64_t>(batch->typed_inputs[1].positions.size());
      fields += static_cast<int64_t>(batch->typed_inputs[2].positions.size());
    }
  });
  EXPECT_GT(authors.load(), 0) << "no featureless input node: the test is vacuous";
  EXPECT_GT(fields.load(), 0);
}

// The dense dataset with edge_time and edge_weight per entry of in_edges and node_time per
// node (times in [0, 40): many ties, and many seeds with later in-edges). Rows hold each
// (relation, source) once, so they are in the (relation, source, time) order already.
data::Dataset timed_typed_dataset() {
  data::Dataset ds = testing::typed_dataset({});
  Rng rng(stream_key(17, 3));
  const int64_t entries = ds.in_edges.num_entries();
  std::vector<int64_t> edge_time(static_cast<size_t>(entries)), node_time(ds.labels.size());
  std::vector<float> edge_weight(static_cast<size_t>(entries));
  for (size_t e = 0; e < edge_time.size(); ++e) {
    edge_time[e] = static_cast<int64_t>(rng.below(40));
    edge_weight[e] = 0.5f + static_cast<float>(rng.uniform());
  }
  for (int64_t& t : node_time) t = static_cast<int64_t>(rng.below(40));
  auto array = [](const char* name, DType dtype, const auto& values) {
    data::ExtraArray a{name, dtype, 0, {}};
    const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
    a.values.assign(bytes, bytes + values.size() * sizeof(values[0]));
    return a;
  };
  ds.edge_arrays = {array(data::kEdgeTimeName, DType::kInt64, edge_time),
                    array(data::kEdgeWeightName, DType::kFloat32, edge_weight)};
  ds.node_arrays = {array(data::kNodeTimeName, DType::kInt64, node_time)};
  return ds;
}

struct TemporalCase {
  const char* name;
  sample::Temporal temporal;
  bool strict;
  sample::Replacement replacement;
  sample::Weighting weighting;
};

// Typed temporal sampling on real partitions (edge_time, edge_weight and node_time carried
// by the partitioner): over 1, 2 and 3 parts, every rank samples batches of its training
// seeds, each at its node_time fetched through FeatureFetcher (remote ones by request), and
// gets exactly the blocks (src nodes, src times, relations) of LocalSampler over the whole
// typed dataset with its times, for every temporal mode. Not vacuous: remote nodes are
// sampled, and some seeds have in-edges later than their time (left out: fewer edges than
// the same batches sampled without time).
TEST_F(TypedDistSampler, TemporalBlocksEqualTheWholeDatasetsForOneTwoAndThreeParts) {
  const data::Dataset ds = timed_typed_dataset();
  const std::vector<int64_t> edge_time =
      testing::array_values<int64_t>(ds.edge_arrays, data::kEdgeTimeName);
  const std::vector<int64_t> node_time =
      testing::array_values<int64_t>(ds.node_arrays, data::kNodeTimeName);
  const std::vector<float> edge_weight =
      testing::array_values<float>(ds.edge_arrays, data::kEdgeWeightName);
  partition_into(ds, "timed-metis1", 1, partition::Method::kMetis);
  partition_into(ds, "timed-metis2", 2, partition::Method::kMetis);
  partition_into(ds, "timed-random3", 3, partition::Method::kRandom);
  sample::CscView whole = sample::csc_view_of(ds.in_edges, edge_weight, ds.edge_relation);
  whole.times = edge_time;
  const sample::Fanouts fanouts =
      sample::resolve_fanouts("writes=2:cites=1:rev_writes=0:3,2", relation_names(ds));
  constexpr TemporalCase kCases[] = {
      {"uniform", sample::Temporal::kUniform, false, sample::Replacement::kWithout,
       sample::Weighting::kUniform},
      {"recent", sample::Temporal::kRecent, false, sample::Replacement::kWithout,
       sample::Weighting::kUniform},
      {"uniform strict", sample::Temporal::kUniform, true, sample::Replacement::kWithout,
       sample::Weighting::kUniform},
      {"uniform with replacement", sample::Temporal::kUniform, false, sample::Replacement::kWith,
       sample::Weighting::kUniform},
      {"weighted uniform", sample::Temporal::kUniform, false, sample::Replacement::kWithout,
       sample::Weighting::kEdgeWeight},
  };
  for (const auto& [name, ranks] :
       {std::make_pair("timed-metis1", 1), std::make_pair("timed-metis2", 2),
        std::make_pair("timed-random3", 3)}) {
    const std::vector<int64_t> node_map = testing::read_node_map(*dir_ / name);
    for (const TemporalCase& c : kCases) {
      SCOPED_TRACE(std::string(name) + ", " + c.name);
      sample::LocalSamplerOptions options;
      options.temporal = c.temporal;
      options.strict = c.strict;
      options.replacement = c.replacement;
      options.weighting = c.weighting;
      sample::LocalSamplerOptions untimed = options;
      untimed.temporal = sample::Temporal::kNone;
      untimed.strict = false;
      sample::LocalSampler reference(whole, options);
      sample::LocalSampler reference_untimed(whole, untimed);
      std::atomic<int64_t> edges{0}, untimed_edges{0}, remote{0};
      testing::run_serving_ranks(
          *dir_ / name, ranks, options, [&](int r, const store::DistGraph& g, RpcEndpoint* e) {
            sample::check_sampling_data(g, options);
            sample::DistSampler sampler(g, ranks > 1 ? e : nullptr, options);
            store::FeatureFetcher fetcher(g, ranks > 1 ? e : nullptr);
            const std::vector<int64_t> train(g.train_ids().begin(), g.train_ids().end());
            sample::BlockBuilder builder, reference_builder;
            const std::vector<std::vector<int64_t>> batches = loader::chunk(train, 16);
            for (size_t b = 0; b < batches.size(); ++b) {
              const std::string what = "rank " + std::to_string(r) + " batch " + std::to_string(b);
              std::vector<int64_t> times(batches[b].size());
              fetcher.fetch_node_times(batches[b], times.data());
              const std::vector<int64_t> original = testing::map_ids(batches[b], node_map);
              for (size_t i = 0; i < times.size(); ++i)
                if (times[i] != node_time[static_cast<size_t>(original[i])])
                  throw Error(what + ": node time of seed " + std::to_string(original[i]));
              sample::BlockOptions block_options;
              block_options.fanouts = fanouts;
              block_options.key = {5, 2, static_cast<uint64_t>(r) * 1000 + b};
              block_options.seed_times = times;
              const sample::SampledBatch got = builder.build(batches[b], block_options, sampler);
              const sample::SampledBatch want =
                  reference_builder.build(original, block_options, reference);
              expect_same_typed_batch(got, want, node_map, what);
              for (size_t l = 0; l < got.blocks.size(); ++l)
                if (got.blocks[l].src_times != want.blocks[l].src_times)
                  throw Error(what + ": block " + std::to_string(l) + ": src times differ");
              edges += got.num_sampled_edges();
              block_options.seed_times = {};
              untimed_edges += reference_builder.build(original, block_options, reference_untimed)
                                   .num_sampled_edges();
            }
            remote += sampler.stats().remote_nodes;
          });
      EXPECT_GT(edges.load(), 0) << "nothing sampled";
      EXPECT_LT(edges.load(), untimed_edges.load()) << "no later in-edge was left out";
      if (ranks > 1) {
        EXPECT_GT(remote.load(), 0) << "nothing sampled remotely";
      }
    }
  }
}

// A typed partition without edge or node times is refused by name (a parameter error).
TEST_F(TypedDistSampler, TemporalNeedsTheTimes) {
  const store::DistGraph g = store::DistGraph::open(*dir_ / "dense-metis2", 0, 2);
  sample::LocalSamplerOptions options;
  options.temporal = sample::Temporal::kUniform;
  try {
    sample::check_sampling_data(g, options);
    FAIL() << "no error";
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no edge or node times"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace partita
