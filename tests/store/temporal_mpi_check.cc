// Under mpirun: temporal and weighted sampling on a real partition (edge_time, edge_weight and
// node_time written by `partita generate`, carried by `partita partition`), every rank over
// real MPI, in one sampling mode after another (a session each):
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
//    src entry carries t, and block 0's dst entries carry the seeds' node times. The same
//    brute force over the pipeline WITHOUT temporal sampling must find later edges, so the
//    check is not vacuous.
//   mpirun -np P temporal_mpi_check DATASET_DIR PARTS_DIR
// Exit code 0 when every rank matched in every mode; prints the first mismatch otherwise.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

template <class T>
std::vector<T> array_values(const std::vector<data::ExtraArray>& arrays, const char* name) {
  const data::ExtraArray* a = data::find_array(arrays, name);
  if (a == nullptr) throw Error(std::string("the dataset has no ") + name);
  std::vector<T> out(a->values.size() / sizeof(T));
  std::memcpy(out.data(), a->values.data(), a->values.size());
  return out;
}

// The dataset, in original ids, with its times and weights.
struct Reference {
  const data::Dataset& dataset;
  std::vector<int64_t> edge_time, node_time;
  std::vector<float> edge_weight;

  sample::CscView view() const {
    sample::CscView v = sample::csc_view_of(dataset.in_edges, edge_weight);
    v.times = edge_time;
    return v;
  }

  // The earliest time of an edge src -> dst (original ids), or -1 when there is none. A row
  // is ordered by (source, time) (data/edge_arrays.h): the first entry of src is the earliest.
  int64_t earliest(int64_t dst, int64_t src) const {
    const auto& g = dataset.in_edges;
    const auto first = g.indices.begin() + g.indptr[dst],
               last = g.indices.begin() + g.indptr[dst + 1];
    const auto it = std::lower_bound(first, last, src);
    if (it == last || *it != src) return -1;
    return edge_time[static_cast<size_t>(it - g.indices.begin())];
  }
};

// Empty when every block edge of `batch` (partition ids) is allowed at its dst entry's time;
// counts the edges checked. Without temporal sampling the blocks have no times: each edge is
// then judged against the time of the seed it descends from, which the caller gives per
// seed in `seed_times` (block 0's dst order) and which is propagated here hop by hop.
std::string leaks(const sample::SampledBatch& batch, const std::vector<int64_t>& seed_times,
                  const Reference& ref, const std::vector<int64_t>& node_map, bool strict,
                  int64_t* edges, int64_t* later) {
  std::vector<int64_t> dst_times = seed_times;
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const sample::Block& b = batch.blocks[l];
    const bool timed = !b.src_times.empty();
    std::vector<int64_t> src_times(static_cast<size_t>(b.num_src), -1);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t t = dst_times[static_cast<size_t>(i)];
      src_times[static_cast<size_t>(i)] = t;
      if (timed && b.src_times[static_cast<size_t>(i)] != t)
        return "block " + std::to_string(l) + ": dst entry " + std::to_string(i) + " has time " +
               std::to_string(b.src_times[static_cast<size_t>(i)]) + ", its seed's is " +
               std::to_string(t);
      const int64_t d = node_map[static_cast<size_t>(b.src_nodes[static_cast<size_t>(i)])];
      for (int64_t k = b.indptr[static_cast<size_t>(i)]; k < b.indptr[static_cast<size_t>(i) + 1];
           ++k) {
        const int64_t j = b.indices[static_cast<size_t>(k)];
        const int64_t s = node_map[static_cast<size_t>(b.src_nodes[static_cast<size_t>(j)])];
        if (j >= b.num_dst) src_times[static_cast<size_t>(j)] = t;
        if (timed && b.src_times[static_cast<size_t>(j)] != t)
          return "block " + std::to_string(l) + ": src entry " + std::to_string(j) + " has time " +
                 std::to_string(b.src_times[static_cast<size_t>(j)]) + ", its dst entry's is " +
                 std::to_string(t);
        const int64_t first = ref.earliest(d, s);
        if (first < 0)
          return "block " + std::to_string(l) + ": edge " + std::to_string(s) + " -> " +
                 std::to_string(d) + " is not in the dataset";
        ++*edges;
        if (strict ? first >= t : first > t) ++*later;
      }
    }
    dst_times = src_times;
  }
  return "";
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
  int64_t edges = 0, later = 0;
  if (temporal && failure.empty()) {
    loader::BatchPipelineOptions po;
    po.threads = 2;
    po.fanouts = fanouts;
    po.seed = 7;
    po.feature_row_bytes = graph.feature_row_bytes();
    po.temporal = true;
    loader::BatchPipeline pipeline(po, batches, session.sampler(), session.fetcher());
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      if (batch->sampled.seeds.empty()) continue;
      const std::vector<int64_t> original = testing::map_ids(batch->sampled.seeds, node_map);
      std::vector<int64_t> times;
      for (int64_t v : original) times.push_back(ref.node_time[static_cast<size_t>(v)]);
      if (batch->sampled.seed_times != times) failure = "the pipeline's seed times differ";
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
  const int64_t total_remote = coll.allreduce_one(remote, ReduceOp::kSum);
  const int64_t total_host = coll.allreduce_one(host, ReduceOp::kSum);
  if (!failure.empty())
    std::fprintf(stderr, "rank %d, %s: %s\n", mpi.rank(), mode.name, failure.c_str());
  if (mpi.rank() == 0)
    std::printf(
        "%d ranks, %s: %lld edges checked for leakage, %lld remote / %lld host-local "
        "sampled nodes, %s\n",
        mpi.size(), mode.name, static_cast<long long>(total_edges),
        static_cast<long long>(total_remote), static_cast<long long>(total_host),
        failed == 0 ? "all equal, no leakage" : "MISMATCH");
  if (failed != 0) return 1;
  if (temporal && total_edges == 0) {
    if (mpi.rank() == 0) std::fprintf(stderr, "%s: no edge checked: vacuous\n", mode.name);
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
    std::printf("%d ranks, not temporal: %lld of %lld sampled edges later than their seed\n",
                mpi.size(), static_cast<long long>(total_later),
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
  try {
    MpiScope mpi(&argc, &argv);
    try {
      const data::Dataset dataset = data::load_dataset(argv[1], {});
      Reference ref{dataset, array_values<int64_t>(dataset.edge_arrays, data::kEdgeTimeName),
                    array_values<int64_t>(dataset.node_arrays, data::kNodeTimeName),
                    array_values<float>(dataset.edge_arrays, data::kEdgeWeightName)};
      const std::vector<int64_t> node_map = testing::read_node_map(argv[2]);
      int failed = check_untimed_leaks(mpi, argv[2], ref, node_map);
      for (const Mode& mode : kModes) failed |= check_mode(mpi, mode, argv[2], ref, node_map);
      return failed;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: rank %d: %s\n", mpi.rank(), e.what());
      MPI_Abort(mpi.world(), 1);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
