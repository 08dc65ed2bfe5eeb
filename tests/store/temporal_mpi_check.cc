// Under mpirun: temporal and weighted sampling on a real partition (edge_time, edge_weight and
// node_time written by `partita generate`, carried by `partita partition`), homogeneous or
// typed (a dataset with hetero.json: `generate --hetero mag`; relations then count: blocks'
// relations are compared, and an edge is judged by the times of its own relation), every
// rank over real MPI, in one sampling mode after another (a session each):
//  - Node times of ids all over the graph (FeatureFetcher::fetch_node_times: the owners'
//    node_time, by request or from a mapped peer) equal the dataset's.
//  - Distributed = single process: each rank samples batches of its own training seeds, each
//    seed at its node time (FeatureFetcher::fetch_node_times), and compares the blocks
//    (structure, src nodes, src times) with LocalSampler over the unpartitioned dataset
//    (ids mapped back through node_map). Modes: temporal uniform, recent, uniform strict,
//    weighted, weighted temporal uniform; requests only (host-local reads off), and temporal
//    uniform again with host-local reads (every peer's part mapped here).
//  - No leakage over every sampled hop, through the real pipeline (loader::BatchPipeline with
//    `temporal`, the seeds' times fetched by the pipeline itself): every block edge s -> d
//    whose dst entry has time t is an edge of the dataset with a time <= t (< t strict), its
//    src entry carries t, and block 0's dst entries carry the seeds' node times (the walk:
//    tests/helpers/temporal_leaks.h). Not vacuous: edges were checked, some seeds have
//    in-edges later than their time, some nodes were sampled remotely (> 1 rank), and the
//    same brute force over the pipeline WITHOUT temporal sampling finds later edges.
//   mpirun -np P temporal_mpi_check DATASET_DIR PARTS_DIR
// Exit code 0 when every rank matched in every mode; prints the first mismatch otherwise.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "helpers/mpi_check_main.h"
#include "helpers/temporal_leaks.h"
#include "partita/data/dataset.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/runtime/mpi_rank.h"
#include "partita/sample/block_builder.h"
#include "store_test_util.h"

using namespace partita;

namespace {

struct Mode {
  const char* name;
  sample::Temporal temporal;
  bool strict;
  sample::Weighting weighting;
  runtime::HostLocal host_local;
};

constexpr Mode kModes[] = {
    {"temporal uniform", sample::Temporal::kUniform, false, sample::Weighting::kUniform,
     runtime::HostLocal::kOff},
    {"temporal recent", sample::Temporal::kRecent, false, sample::Weighting::kUniform,
     runtime::HostLocal::kOff},
    {"temporal uniform strict", sample::Temporal::kUniform, true, sample::Weighting::kUniform,
     runtime::HostLocal::kOff},
    {"weighted", sample::Temporal::kNone, false, sample::Weighting::kEdgeWeight,
     runtime::HostLocal::kOff},
    {"weighted temporal uniform", sample::Temporal::kUniform, false, sample::Weighting::kEdgeWeight,
     runtime::HostLocal::kOff},
    {"temporal uniform, host-local", sample::Temporal::kUniform, false, sample::Weighting::kUniform,
     runtime::HostLocal::kAuto},
};

// The dataset, in original ids, with its times and weights (typed: and relations).
struct Reference {
  const data::Dataset& dataset;
  std::vector<int64_t> edge_time, node_time;
  std::vector<float> edge_weight;

  bool typed() const { return dataset.hetero.has_value(); }
  sample::CscView view() const {
    sample::CscView v = sample::csc_view_of(dataset.in_edges, edge_weight, dataset.edge_relation);
    v.times = edge_time;
    return v;
  }
  testing::TimedEdges edges() const { return {dataset.in_edges, edge_time, dataset.edge_relation}; }
};

// Empty when every block edge of `batch` (partition ids) is an edge of the dataset (of its
// relation, typed); counts the edges checked and those later than the time of the seed they
// descend from (testing::walk_sampled_edges: `seed_times` per seed in block 0's dst order;
// blocks sampled without times are judged by the same propagated seed times).
std::string leaks(const sample::SampledBatch& batch, const std::vector<int64_t>& seed_times,
                  const Reference& ref, const std::vector<int64_t>& node_map, bool strict,
                  int64_t* edges, int64_t* later) {
  const testing::TimedEdges timed = ref.edges();
  return testing::walk_sampled_edges(
      batch, seed_times, node_map, /*need_times=*/false,
      [&](const testing::SampledEdge& e) -> std::string {
        const int64_t first = timed.earliest(e.dst, e.src, e.relation);
        if (first < 0)
          return "edge " + std::to_string(e.src) + " -> " + std::to_string(e.dst) + " (relation " +
                 std::to_string(e.relation) + ") is not in the dataset";
        ++*edges;
        if (testing::later_than(first, e.time, strict)) ++*later;
        return "";
      });
}

int check_mode(MpiScope& mpi, const Mode& mode, const std::string& parts_dir, const Reference& ref,
               const std::vector<int64_t>& node_map) {
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.timeout_s = 30;
  options.host_local = mode.host_local;
  options.sampling.temporal = mode.temporal;
  options.sampling.strict = mode.strict;
  options.sampling.weighting = mode.weighting;
  runtime::MpiRank rank(mpi, options);
  runtime::Session& session = rank.session();
  const store::DistGraph& graph = session.graph();
  const bool temporal = mode.temporal != sample::Temporal::kNone;
  sample::LocalSampler reference(ref.view(), options.sampling);
  const std::vector<int64_t> seeds(graph.train_ids().begin(), graph.train_ids().end());
  std::vector<std::vector<int64_t>> batches;
  for (size_t start = 0; start < seeds.size(); start += 64)
    batches.emplace_back(seeds.begin() + start, seeds.begin() + std::min(seeds.size(), start + 64));
  const sample::Fanouts fanouts{6, 4, 3};

  std::string failure;
  // Node times of ids all over the graph (remote ones by request, or from mapped peers).
  std::vector<int64_t> ids;
  for (int64_t gid = mpi.rank(); gid < graph.num_nodes(); gid += 7) ids.push_back(gid);
  std::vector<int64_t> id_times(ids.size());
  session.fetcher().fetch_node_times(ids, id_times.data());
  for (size_t i = 0; i < ids.size() && failure.empty(); ++i)
    if (id_times[i] != ref.node_time[static_cast<size_t>(node_map[static_cast<size_t>(ids[i])])])
      failure = "node time of node " + std::to_string(ids[i]) + " differs";
  // Distributed = single process, batch by batch.
  for (size_t b = 0; b < batches.size() && failure.empty(); ++b) {
    std::vector<int64_t> times(batches[b].size());
    if (temporal) session.fetcher().fetch_node_times(batches[b], times.data());
    const std::vector<int64_t> original = testing::map_ids(batches[b], node_map);
    for (size_t i = 0; i < times.size() && temporal && failure.empty(); ++i)
      if (times[i] != ref.node_time[static_cast<size_t>(original[i])])
        failure = "node time of seed " + std::to_string(original[i]) + " differs";
    sample::BlockOptions block_options;
    block_options.fanouts = fanouts;
    block_options.key = {7, 1, static_cast<uint64_t>(b)};
    if (temporal) block_options.seed_times = times;
    const sample::SampledBatch got =
        sample::sample_blocks(batches[b], block_options, session.sampler());
    const sample::SampledBatch want = sample::sample_blocks(original, block_options, reference);
    if (failure.empty()) failure = testing::compare_batches(got, want, node_map);
    if (failure.empty() && got.num_sampled_edges() == 0) failure = "nothing sampled";
  }
  // No leakage through the pipeline (temporal modes), and the same brute force finds later
  // edges without temporal sampling (the pipeline of a plain session: below).
  int64_t edges = 0, later = 0, kept_out = 0;
  const testing::TimedEdges timed = ref.edges();
  if (temporal && failure.empty()) {
    loader::BatchPipelineOptions po;
    po.threads = 2;
    po.fanouts = fanouts;
    po.seed = 7;
    po.feature_row_bytes = graph.feature_row_bytes();
    po.typed = graph.typed();
    po.temporal = true;
    loader::BatchPipeline pipeline(po, batches, session.sampler(), session.fetcher());
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      if (batch->sampled.seeds.empty()) continue;
      const std::vector<int64_t> original = testing::map_ids(batch->sampled.seeds, node_map);
      std::vector<int64_t> times;
      for (int64_t v : original) times.push_back(ref.node_time[static_cast<size_t>(v)]);
      if (batch->sampled.seed_times != times) failure = "the pipeline's seed times differ";
      for (size_t i = 0; i < original.size(); ++i)
        if (timed.has_later(original[i], times[i], mode.strict)) ++kept_out;
      if (failure.empty())
        failure = leaks(batch->sampled, times, ref, node_map, mode.strict, &edges, &later);
      if (!failure.empty()) break;
    }
    if (failure.empty() && later > 0)
      failure = std::to_string(later) + " of " + std::to_string(edges) +
                " sampled edges are later than their seed's time";
  }
  const int64_t remote = session.sampler().stats().remote_nodes;
  const int64_t host = session.sampler().stats().host_nodes;
  session.finish();
  Collectives& coll = session.collectives();
  const int64_t failed = coll.allreduce_one<int64_t>(failure.empty() ? 0 : 1, ReduceOp::kSum);
  const int64_t total_edges = coll.allreduce_one(edges, ReduceOp::kSum);
  const int64_t total_kept_out = coll.allreduce_one(kept_out, ReduceOp::kSum);
  const int64_t total_remote = coll.allreduce_one(remote, ReduceOp::kSum);
  const int64_t total_host = coll.allreduce_one(host, ReduceOp::kSum);
  if (!failure.empty())
    std::fprintf(stderr, "rank %d, %s: %s\n", mpi.rank(), mode.name, failure.c_str());
  if (mpi.rank() == 0)
    std::printf(
        "%d ranks, %s%s: %lld edges checked for leakage, %lld seeds with later in-edges, "
        "%lld remote / %lld host-local sampled nodes, %s\n",
        mpi.size(), ref.typed() ? "typed, " : "", mode.name, static_cast<long long>(total_edges),
        static_cast<long long>(total_kept_out), static_cast<long long>(total_remote),
        static_cast<long long>(total_host), failed == 0 ? "all equal, no leakage" : "MISMATCH");
  if (failed != 0) return 1;
  if (temporal && total_edges == 0) {
    if (mpi.rank() == 0) std::fprintf(stderr, "%s: no edge checked: vacuous\n", mode.name);
    return 1;
  }
  if (temporal && total_kept_out == 0) {
    if (mpi.rank() == 0)
      std::fprintf(stderr, "%s: no seed has a later in-edge: vacuous\n", mode.name);
    return 1;
  }
  if (mpi.size() > 1 &&
      (mode.host_local == runtime::HostLocal::kOff ? total_remote : total_host) == 0) {
    if (mpi.rank() == 0) std::fprintf(stderr, "%s: no remote sampling: vacuous\n", mode.name);
    return 1;
  }
  return 0;
}

// The brute force has teeth: the same seeds at the same times, sampled without temporal
// sampling, reach edges later than their seed's time.
int check_untimed_leaks(MpiScope& mpi, const std::string& parts_dir, const Reference& ref,
                        const std::vector<int64_t>& node_map) {
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.timeout_s = 30;
  runtime::MpiRank rank(mpi, options);
  runtime::Session& session = rank.session();
  const store::DistGraph& graph = session.graph();
  const std::vector<int64_t> seeds(graph.train_ids().begin(), graph.train_ids().end());
  loader::BatchPipelineOptions po;
  po.fanouts = {6, 4, 3};
  po.seed = 7;
  po.feature_row_bytes = graph.feature_row_bytes();
  po.typed = graph.typed();
  loader::BatchPipeline pipeline(po, {seeds}, session.sampler(), session.fetcher());
  int64_t edges = 0, later = 0;
  std::string failure;
  while (std::optional<loader::Batch> batch = pipeline.next()) {
    std::vector<int64_t> times;
    for (int64_t v : testing::map_ids(batch->sampled.seeds, node_map))
      times.push_back(ref.node_time[static_cast<size_t>(v)]);
    failure = leaks(batch->sampled, times, ref, node_map, false, &edges, &later);
  }
  session.finish();
  Collectives& coll = session.collectives();
  const int64_t total_later = coll.allreduce_one(later, ReduceOp::kSum);
  const int64_t total_edges = coll.allreduce_one(edges, ReduceOp::kSum);
  if (mpi.rank() == 0)
    std::printf("%d ranks, %snot temporal: %lld of %lld sampled edges later than their seed\n",
                mpi.size(), ref.typed() ? "typed, " : "", static_cast<long long>(total_later),
                static_cast<long long>(total_edges));
  if (!failure.empty()) std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), failure.c_str());
  return failure.empty() && total_later > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: temporal_mpi_check DATASET_DIR PARTS_DIR\n");
    return 2;
  }
  return testing::run_mpi_check(&argc, &argv, [&](MpiScope& mpi) {
    const data::Dataset dataset = data::load_dataset(argv[1], {});
    Reference ref{dataset, testing::array_values<int64_t>(dataset.edge_arrays, data::kEdgeTimeName),
                  testing::array_values<int64_t>(dataset.node_arrays, data::kNodeTimeName),
                  testing::array_values<float>(dataset.edge_arrays, data::kEdgeWeightName)};
    const std::vector<int64_t> node_map = testing::read_node_map(argv[2]);
    int failed = check_untimed_leaks(mpi, argv[2], ref, node_map);
    for (const Mode& mode : kModes) failed |= check_mode(mpi, mode, argv[2], ref, node_map);
    return failed;
  });
}
