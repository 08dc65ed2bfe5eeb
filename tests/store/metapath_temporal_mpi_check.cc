// Under mpirun: temporal metapath sampling (model han with `temporal`, metapath_sampler.h) on
// a real typed partition (the mag-shaped dataset of temporal_mpi_typed_*: edge_time per
// relation, node_time per node type), every rank over real MPI, a session per mode:
//  - Distributed = single process: each rank samples batches of its own training papers, each
//    at its node time, through a MetapathSampler over the session's DistSampler (remote walk
//    steps go to the owners with their times), and compares the blocks (structure, src nodes,
//    src times, metapath ids) with a MetapathSampler over LocalSampler on the unpartitioned
//    dataset (ids mapped back through node_map). Modes: temporal uniform, recent strict, and
//    uniform strict with host-local reads (every peer's part mapped here).
//  - No leakage over every sampled metapath neighbour, through the real pipeline
//    (loader::BatchPipeline with `temporal`, the seeds' times fetched by the pipeline): every
//    block edge s -> d of metapath m whose dst entry has time t joins d to s by a walk of m
//    over dataset edges no later than t (< t strict), every edge on the walk checked (the
//    endpoints of all such walks, brute force), and src entries carry t
//    (tests/helpers/temporal_leaks.h). Not vacuous: edges were checked, some were remote
//    (> 1 rank), and the same brute force over the pipeline WITHOUT temporal sampling finds
//    neighbours that only later edges reach.
//   mpirun -np P metapath_temporal_mpi_check DATASET_DIR PARTS_DIR
// Exit code 0 when every rank matched in every mode; prints the first mismatch otherwise.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "helpers/mpi_check_main.h"
#include "helpers/temporal_leaks.h"
#include "partita/data/dataset.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/runtime/mpi_rank.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/metapath_sampler.h"
#include "partita/sample/metapath_spec.h"
#include "store_test_util.h"

using namespace partita;

namespace {

struct Mode {
  const char* name;
  sample::Temporal temporal;
  bool strict;
  runtime::HostLocal host_local;
};

constexpr Mode kModes[] = {
    {"temporal uniform", sample::Temporal::kUniform, false, runtime::HostLocal::kOff},
    {"temporal recent strict", sample::Temporal::kRecent, true, runtime::HostLocal::kOff},
    {"temporal uniform strict, host-local", sample::Temporal::kUniform, true,
     runtime::HostLocal::kAuto},
};

// Two hops, per metapath: the second hop's walks start at the first's endpoints, at the time
// of the seed they descend from.
const sample::Fanouts kFanouts{4, 3};

// The dataset, in original ids, with its edge and node times, and the endpoints of allowed
// walks (memoized: a dst is met at one time by many block edges).
class Reference {
 public:
  Reference(const data::Dataset& dataset, const partition::TypedMeta& meta)
      : dataset_(dataset),
        metapaths_(sample::resolve_metapaths("", meta)),
        num_relations_(meta.num_relations()),
        edge_time_(testing::array_values<int64_t>(dataset.edge_arrays, data::kEdgeTimeName)),
        node_time_(testing::array_values<int64_t>(dataset.node_arrays, data::kNodeTimeName)) {}

  sample::CscView view() const {
    sample::CscView v = sample::csc_view_of(dataset_.in_edges, {}, dataset_.edge_relation);
    v.times = edge_time_;
    return v;
  }
  const std::vector<sample::Metapath>& metapaths() const { return metapaths_; }
  int num_relations() const { return num_relations_; }
  int64_t node_time(int64_t v) const { return node_time_[static_cast<size_t>(v)]; }

  // Whether a walk of metapath m from dst over edges no later than t (strict: earlier)
  // reaches src: step by step, the set of nodes the allowed edges of the step's relation
  // lead to from the last step's set.
  bool reaches(int64_t dst, int32_t m, int64_t t, bool strict, int64_t src) {
    const auto key = std::make_tuple(dst, m, t, strict);
    auto it = reachable_.find(key);
    if (it == reachable_.end()) {
      const graph::Csr& g = dataset_.in_edges;
      std::set<int64_t> at{dst};
      for (int32_t relation : metapaths_[static_cast<size_t>(m)].relations) {
        std::set<int64_t> next;
        for (int64_t v : at)
          for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
            if (dataset_.edge_relation[static_cast<size_t>(e)] == relation &&
                !testing::later_than(edge_time_[static_cast<size_t>(e)], t, strict))
              next.insert(g.indices[e]);
        at = std::move(next);
      }
      it = reachable_.emplace(key, std::move(at)).first;
    }
    return it->second.count(src) > 0;
  }

 private:
  const data::Dataset& dataset_;
  std::vector<sample::Metapath> metapaths_;
  int num_relations_;
  std::vector<int64_t> edge_time_, node_time_;
  std::map<std::tuple<int64_t, int32_t, int64_t, bool>, std::set<int64_t>> reachable_;
};

// Walks every block edge of the pipeline's batches (testing::walk_sampled_edges: a metapath
// id in place of a relation); counts the edges and those no allowed walk explains.
std::string pipeline_leaks(runtime::Session& session, sample::NeighborSampler& sampler,
                           bool temporal, bool strict, Reference& ref,
                           const std::vector<int64_t>& node_map, int64_t* edges, int64_t* later) {
  const store::DistGraph& graph = session.graph();
  const std::vector<int64_t> seeds(graph.train_ids().begin(), graph.train_ids().end());
  std::vector<std::vector<int64_t>> batches;
  for (size_t start = 0; start < seeds.size(); start += 64)
    batches.emplace_back(seeds.begin() + start, seeds.begin() + std::min(seeds.size(), start + 64));
  loader::BatchPipelineOptions po;
  po.threads = 2;
  po.fanouts = kFanouts;
  po.seed = 7;
  po.feature_row_bytes = graph.feature_row_bytes();
  po.typed = true;
  po.temporal = temporal;
  loader::BatchPipeline pipeline(po, batches, sampler, session.fetcher());
  std::string failure;
  while (std::optional<loader::Batch> batch = pipeline.next()) {
    if (batch->sampled.seeds.empty() || !failure.empty()) continue;
    std::vector<int64_t> times;
    for (int64_t v : testing::map_ids(batch->sampled.seeds, node_map))
      times.push_back(ref.node_time(v));
    if (temporal && batch->sampled.seed_times != times)
      failure = "the pipeline's seed times differ";
    if (failure.empty())
      failure =
          testing::walk_sampled_edges(batch->sampled, times, node_map, /*need_times=*/temporal,
                                      [&](const testing::SampledEdge& e) -> std::string {
                                        ++*edges;
                                        if (!ref.reaches(e.dst, e.relation, e.time, strict, e.src))
                                          ++*later;
                                        return "";
                                      });
  }
  return failure;
}

int check_mode(MpiScope& mpi, const Mode& mode, const std::string& parts_dir, Reference& ref,
               const std::vector<int64_t>& node_map) {
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.timeout_s = 30;
  options.host_local = mode.host_local;
  options.sampling.temporal = mode.temporal;
  options.sampling.strict = mode.strict;
  runtime::MpiRank rank(mpi, options);
  runtime::Session& session = rank.session();
  const store::DistGraph& graph = session.graph();
  sample::MetapathSampler sampler(session.sampler(), ref.metapaths(), ref.num_relations());
  sample::LocalSampler whole(ref.view(), options.sampling);
  sample::MetapathSampler reference(whole, ref.metapaths(), ref.num_relations());
  const std::vector<int64_t> seeds(graph.train_ids().begin(), graph.train_ids().end());

  std::string failure;
  int64_t sampled = 0;
  // Distributed = single process, batch by batch.
  for (size_t start = 0, b = 0; start < seeds.size() && failure.empty(); start += 48, ++b) {
    const std::vector<int64_t> batch(seeds.begin() + start,
                                     seeds.begin() + std::min(seeds.size(), start + 48));
    std::vector<int64_t> times(batch.size());
    session.fetcher().fetch_node_times(batch, times.data());
    sample::BlockOptions block_options;
    block_options.fanouts = kFanouts;
    block_options.key = {7, 1, static_cast<uint64_t>(b)};
    block_options.seed_times = times;
    const sample::SampledBatch got = sample::sample_blocks(batch, block_options, sampler);
    const sample::SampledBatch want =
        sample::sample_blocks(testing::map_ids(batch, node_map), block_options, reference);
    failure = testing::compare_batches(got, want, node_map);
    sampled += got.num_sampled_edges();
  }
  // No leakage through the pipeline.
  int64_t edges = 0, later = 0;
  if (failure.empty())
    failure = pipeline_leaks(session, sampler, true, mode.strict, ref, node_map, &edges, &later);
  if (failure.empty() && later > 0)
    failure = std::to_string(later) + " of " + std::to_string(edges) +
              " sampled metapath neighbours are reached only through later edges";
  const int64_t remote = session.sampler().stats().remote_nodes;
  const int64_t host = session.sampler().stats().host_nodes;
  session.finish();
  Collectives& coll = session.collectives();
  const int64_t failed = coll.allreduce_one<int64_t>(failure.empty() ? 0 : 1, ReduceOp::kSum);
  const int64_t total_edges = coll.allreduce_one(edges, ReduceOp::kSum);
  const int64_t total_sampled = coll.allreduce_one(sampled, ReduceOp::kSum);
  const int64_t total_remote = coll.allreduce_one(remote, ReduceOp::kSum);
  const int64_t total_host = coll.allreduce_one(host, ReduceOp::kSum);
  if (!failure.empty())
    std::fprintf(stderr, "rank %d, %s: %s\n", mpi.rank(), mode.name, failure.c_str());
  if (mpi.rank() == 0)
    std::printf(
        "%d ranks, han %s: %lld block edges compared, %lld checked for leakage, %lld remote / "
        "%lld host-local sampled nodes, %s\n",
        mpi.size(), mode.name, static_cast<long long>(total_sampled),
        static_cast<long long>(total_edges), static_cast<long long>(total_remote),
        static_cast<long long>(total_host), failed == 0 ? "all equal, no leakage" : "MISMATCH");
  if (failed != 0) return 1;
  if (total_edges == 0 || total_sampled == 0) {
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

// The brute force has teeth: the same pipeline without temporal sampling reaches metapath
// neighbours that only edges later than the seed's time lead to.
int check_untimed_leaks(MpiScope& mpi, const std::string& parts_dir, Reference& ref,
                        const std::vector<int64_t>& node_map) {
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.timeout_s = 30;
  runtime::MpiRank rank(mpi, options);
  runtime::Session& session = rank.session();
  sample::MetapathSampler sampler(session.sampler(), ref.metapaths(), ref.num_relations());
  int64_t edges = 0, later = 0;
  const std::string failure =
      pipeline_leaks(session, sampler, false, false, ref, node_map, &edges, &later);
  session.finish();
  Collectives& coll = session.collectives();
  const int64_t total_later = coll.allreduce_one(later, ReduceOp::kSum);
  const int64_t total_edges = coll.allreduce_one(edges, ReduceOp::kSum);
  if (mpi.rank() == 0)
    std::printf(
        "%d ranks, han not temporal: %lld of %lld sampled metapath neighbours reached "
        "only through later edges\n",
        mpi.size(), static_cast<long long>(total_later), static_cast<long long>(total_edges));
  if (!failure.empty()) std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), failure.c_str());
  return failure.empty() && total_later > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: metapath_temporal_mpi_check DATASET_DIR PARTS_DIR\n");
    return 2;
  }
  return testing::run_mpi_check(&argc, &argv, [&](MpiScope& mpi) {
    const data::Dataset dataset = data::load_dataset(argv[1], {});
    const partition::TypedMeta meta = store::DistGraph::open(argv[2], 0, mpi.size()).typed_meta();
    Reference ref(dataset, meta);  // the default metapaths
    const std::vector<int64_t> node_map = testing::read_node_map(argv[2]);
    int failed = check_untimed_leaks(mpi, argv[2], ref, node_map);
    for (const Mode& mode : kModes) failed |= check_mode(mpi, mode, argv[2], ref, node_map);
    return failed;
  });
}
