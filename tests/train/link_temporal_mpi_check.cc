// Under mpirun: the temporal link task's batches leak nothing (issue 41's goal "no leakage,
// proved", for link prediction). A partition split by time (`partition --edge-split-by
// time`), every rank over real MPI: the link task (train/train_task.h make_link_task, as
// `train --task link --temporal` makes it) gives the steps of an epoch, their seeds (each
// pair's endpoints and its negatives' destinations) and the seeds' times; the real pipeline
// (loader::BatchPipeline with those times) samples them. Brute force over every hop of every
// batch: every block edge s -> d whose dst entry has time t is an edge of the dataset with a
// time <= t (< t with STRICT 1), its src entry carries t, and block 0's dst entries carry the
// given seed times, each the time of some training pair. Not vacuous: edges were checked, some
// sampled nodes across ranks, and the seeds' nodes have in-edges later than their time
// that temporal sampling kept out. The walk is tests/helpers/temporal_leaks.h's, shared with
// tests/store/temporal_mpi_check.cc.
//   mpirun -np P link_temporal_mpi_check DATASET_DIR PARTS_DIR STRICT
// Exit code 0 when every rank found no leak; prints the first one otherwise.
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "helpers/mpi_check_main.h"
#include "helpers/temporal_leaks.h"
#include "partita/core/npy.h"
#include "partita/data/dataset.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/partition/format.h"
#include "partita/runtime/mpi_rank.h"
#include "partita/train/train_task.h"

using namespace partita;

namespace {

// The dataset in original ids with its edge times (entries of in_edges, reverses included).
struct Reference {
  data::Dataset dataset;
  std::vector<int64_t> time;

  testing::TimedEdges edges() const { return {dataset.in_edges, time, dataset.edge_relation}; }
};

// Empty when every block edge of `batch` (partition ids) is an edge of the dataset no later
// than its seed's time (testing::walk_sampled_edges, the blocks' own times required); counts
// the edges checked.
std::string leaks(const sample::SampledBatch& batch, const Reference& ref,
                  const std::vector<int64_t>& node_map, bool strict, int64_t* edges) {
  const testing::TimedEdges timed = ref.edges();
  return testing::walk_sampled_edges(
      batch, batch.seed_times, node_map, /*need_times=*/true,
      [&](const testing::SampledEdge& e) -> std::string {
        const int64_t first = timed.earliest(e.dst, e.src, e.relation);
        if (first < 0)
          return "edge " + std::to_string(e.src) + " -> " + std::to_string(e.dst) +
                 " is not an edge";
        if (testing::later_than(first, e.time, strict))
          return "edge " + std::to_string(e.src) + " -> " + std::to_string(e.dst) + " at time " +
                 std::to_string(first) + " sampled for a seed at time " + std::to_string(e.time);
        ++*edges;
        return "";
      });
}

int check(MpiScope& mpi, const std::string& parts_dir, const Reference& ref, bool strict) {
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.timeout_s = 30;
  options.host_local = runtime::HostLocal::kOff;  // every remote node by request
  options.sampling.temporal = sample::Temporal::kUniform;
  options.sampling.strict = strict;
  runtime::MpiRank rank(mpi, options);
  runtime::Session& session = rank.session();
  const store::DistGraph& graph = session.graph();
  const std::vector<int64_t> node_map = read_npy_vector<int64_t>(parts_dir + "/node_map.npy");
  std::set<int64_t> train_times;
  const partition::PartitionMeta& meta = graph.meta();
  for (int p = 0; p < meta.num_parts; ++p)
    for (int64_t t : read_npy_vector<int64_t>(
             parts_dir + "/" + partition::part_file(p, partition::kTrainEdgeTimeName)))
      train_times.insert(t);

  train::TrainOptions o;
  o.task = train::Task::kLink;
  o.loader.batch_size = 64;
  o.link.negatives = 2;
  o.seed = 3;
  std::unique_ptr<train::TrainTask> task = train::make_link_task(session, o);
  std::vector<std::vector<int64_t>> seeds = task->epoch_seeds(0);
  loader::BatchPipelineOptions po;
  po.threads = 2;
  po.fanouts = {5, 4, 3};
  po.seed = 3;
  po.feature_row_bytes = graph.feature_row_bytes();
  po.fetch_labels = false;
  po.temporal = true;
  po.seed_times = task->epoch_seed_times();
  std::string failure;
  if (po.seed_times.size() != seeds.size()) failure = "no seed times for the steps";
  int64_t edges = 0, kept_out = 0, batches = 0;
  if (failure.empty()) {
    loader::BatchPipeline pipeline(po, std::move(seeds), session.sampler(), session.fetcher());
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      if (!failure.empty() || batch->sampled.seeds.empty()) continue;
      ++batches;
      const sample::SampledBatch& s = batch->sampled;
      if (s.seed_times != po.seed_times[static_cast<size_t>(batch->step)])
        failure = "the batch's seed times are not the task's";
      for (size_t i = 0; i < s.seeds.size() && failure.empty(); ++i) {
        if (!train_times.count(s.seed_times[i]))
          failure = "seed time " + std::to_string(s.seed_times[i]) + " is no training pair's";
        if (ref.edges().has_later(node_map[static_cast<size_t>(s.seeds[i])], s.seed_times[i],
                                  strict))
          ++kept_out;
      }
      if (failure.empty()) failure = leaks(s, ref, node_map, strict, &edges);
    }
  }
  const int64_t remote = session.sampler().stats().remote_nodes;
  session.finish();
  Collectives& coll = session.collectives();
  const int64_t failed = coll.allreduce_one<int64_t>(failure.empty() ? 0 : 1, ReduceOp::kSum);
  const int64_t total_edges = coll.allreduce_one(edges, ReduceOp::kSum);
  const int64_t total_kept_out = coll.allreduce_one(kept_out, ReduceOp::kSum);
  const int64_t total_remote = coll.allreduce_one(remote, ReduceOp::kSum);
  const int64_t total_batches = coll.allreduce_one(batches, ReduceOp::kSum);
  if (!failure.empty()) std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), failure.c_str());
  if (mpi.rank() == 0)
    std::printf(
        "%d ranks, link, %s: %lld batches, %lld block edges checked, %lld seeds with later "
        "in-edges, %lld remote sampled nodes: %s\n",
        mpi.size(), strict ? "strict" : "not strict", static_cast<long long>(total_batches),
        static_cast<long long>(total_edges), static_cast<long long>(total_kept_out),
        static_cast<long long>(total_remote), failed == 0 ? "no leakage" : "LEAK");
  if (failed != 0) return 1;
  if (total_edges == 0 || total_kept_out == 0 || (mpi.size() > 1 && total_remote == 0)) {
    if (mpi.rank() == 0) std::fprintf(stderr, "vacuous check\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: link_temporal_mpi_check DATASET_DIR PARTS_DIR STRICT\n");
    return 2;
  }
  return testing::run_mpi_check(&argc, &argv, [&](MpiScope& mpi) {
    data::LoadOptions load;
    load.undirected = true;  // as the fixture partitions it (--undirected)
    Reference ref{data::load_dataset(argv[1], load), {}};
    ref.time = testing::array_values<int64_t>(ref.dataset.edge_arrays, data::kEdgeTimeName);
    return check(mpi, argv[2], ref, std::string(argv[3]) == "1");
  });
}
