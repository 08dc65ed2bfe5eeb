// Under mpirun: every rank samples batches of its own training nodes over real MPI and
// checks blocks, features and labels against the single-process sampler on the
// unpartitioned dataset (after mapping ids back through node_map).
//   mpirun -np P dist_mpi_check DATASET_DIR PARTS_DIR [auto|off]
// The third argument is SessionOptions::host_local (default off: the request path). With
// auto, every rank is on this host, so no feature or hop request may be sent at all.
// Exit code 0 when every rank matched; prints the first mismatch otherwise.
#include <cstdio>
#include <memory>

#include "helpers/mpi_check_main.h"
#include "partita/data/dataset.h"
#include "partita/runtime/mpi_rank.h"
#include "partita/sample/block_builder.h"
#include "store_test_util.h"

using namespace partita;

namespace {

int check(MpiScope& mpi, const std::string& dataset_dir, const std::string& parts_dir,
          runtime::HostLocal host_local) {
  const data::Dataset dataset = data::load_dataset(dataset_dir, {});
  const std::vector<int64_t> node_map = testing::read_node_map(parts_dir);
  runtime::SessionOptions options;
  options.parts_dir = parts_dir;
  options.timeout_s = 30;
  options.host_local = host_local;
  runtime::MpiRank rank(mpi, options);
  runtime::Session& session = rank.session();
  const store::DistGraph& graph = session.graph();
  sample::DistSampler& sampler = session.sampler();
  store::FeatureFetcher& fetcher = session.fetcher();
  Collectives& collectives = session.collectives();
  sample::LocalSampler reference(sample::csc_view_of(dataset.in_edges), options.sampling);

  std::string failure;
  int64_t batches = 0;
  const std::vector<int64_t> seeds(graph.train_ids().begin(), graph.train_ids().end());
  for (size_t start = 0; start < seeds.size() && failure.empty(); start += 100, ++batches) {
    std::vector<int64_t> batch(seeds.begin() + start,
                               seeds.begin() + std::min(seeds.size(), start + 100));
    sample::BlockOptions block_options;
    block_options.fanouts = {10, 5, 3};
    block_options.key = {3, 2, static_cast<uint64_t>(batches)};
    sample::SampledBatch got = sample::sample_blocks(batch, block_options, sampler);
    sample::SampledBatch want =
        sample::sample_blocks(testing::map_ids(batch, node_map), block_options, reference);
    failure = testing::compare_batches(got, want, node_map);
    const int64_t f = dataset.features.cols();
    std::vector<float> feat(got.input_nodes.size() * static_cast<size_t>(f));
    std::vector<int64_t> labels(got.input_nodes.size());
    fetcher.fetch_features(got.input_nodes, feat.data());
    fetcher.fetch_labels(got.input_nodes, labels.data());
    for (size_t i = 0; i < got.input_nodes.size() && failure.empty(); ++i) {
      const int64_t orig = node_map[got.input_nodes[i]];
      for (int64_t c = 0; c < f; ++c)
        if (feat[i * f + c] != dataset.features.row(orig)[c]) failure = "feature mismatch";
      if (labels[i] != dataset.labels[orig]) failure = "label mismatch";
    }
  }
  const int64_t remote_nodes = sampler.stats().remote_nodes;
  const int64_t host_nodes = sampler.stats().host_nodes;
  const int64_t requests = sampler.stats().remote_requests + fetcher.stats().remote_requests;
  const int64_t host_rows = fetcher.stats().host_rows;
  session.finish();
  const int64_t failed =
      collectives.allreduce_one<int64_t>(failure.empty() ? 0 : 1, ReduceOp::kSum);
  const int64_t total_remote = collectives.allreduce_one(remote_nodes, ReduceOp::kSum);
  const int64_t total_host = collectives.allreduce_one(host_nodes, ReduceOp::kSum);
  const int64_t total_requests = collectives.allreduce_one(requests, ReduceOp::kSum);
  const int64_t total_host_rows = collectives.allreduce_one(host_rows, ReduceOp::kSum);
  if (!failure.empty()) std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), failure.c_str());
  if (mpi.rank() == 0)
    std::printf(
        "%d ranks: %lld batches on rank 0, %lld remote sampled nodes, %lld host-local sampled "
        "nodes, %lld host-local feature/label rows, %lld feature/hop requests, %s\n",
        mpi.size(), static_cast<long long>(batches), static_cast<long long>(total_remote),
        static_cast<long long>(total_host), static_cast<long long>(total_host_rows),
        static_cast<long long>(total_requests), failed == 0 ? "all equal" : "MISMATCH");
  if (mpi.size() > 1 && host_local == runtime::HostLocal::kAuto) {
    // One host, one directory: everything from memory, nothing requested.
    if (total_requests != 0 || total_remote != 0 || total_host == 0 || total_host_rows == 0) {
      if (mpi.rank() == 0) std::fprintf(stderr, "host-local reads were not used throughout\n");
      return 1;
    }
  } else if (mpi.size() > 1 && total_remote == 0) {
    if (mpi.rank() == 0) std::fprintf(stderr, "no remote sampling happened: vacuous\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[3] : "off";
  if ((argc != 3 && argc != 4) || (mode != "auto" && mode != "off")) {
    std::fprintf(stderr, "usage: dist_mpi_check DATASET_DIR PARTS_DIR [auto|off]\n");
    return 2;
  }
  const runtime::HostLocal host_local =
      mode == "auto" ? runtime::HostLocal::kAuto : runtime::HostLocal::kOff;
  return testing::run_mpi_check(
      &argc, &argv, [&](MpiScope& mpi) { return check(mpi, argv[1], argv[2], host_local); });
}
