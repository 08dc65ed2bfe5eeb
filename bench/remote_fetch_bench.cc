// Remote feature fetch between the ranks of one host, against what memory can do.
//   mpirun -np 2 remote_fetch_bench --parts DIR [--rows 16384] [--batches 20] [--repeats 3]
//                                   [--split 4] [--slice-kib 1024] [--one-way-only]
// --one-way-only measures fetch_one_way alone (for a profiler); FETCH_TRACE=1 in the
// environment (mpirun -x FETCH_TRACE) prints each batch's fetch time to stderr.
// Run with 2 ranks on a 2-part directory. Rank 0 prints one JSON object (DESIGN: Measuring):
//   memcpy_gbps          one core, one 256 MiB memcpy (read + write counted once, as bytes moved)
//   local_gather_gbps    one core, random feature rows of the own part into a batch buffer
//   fetch_one_way_gbps   rank 0 fetches rows owned by rank 1 through the real stack
//                        (FeatureFetcher -> RpcEndpoint -> MpiTransport); rank 1 only serves
//   fetch_both_gbps      both ranks fetch from each other at once; GB/s per rank
//   fetch_both_pair_gbps the same, both directions added: GB/s per rank pair
//   mpi_two_sided_gbps   raw MPI_Isend/MPI_Irecv of one batch's bytes (no gather, no scatter)
//   fetch_split_gbps     as fetch_one_way, each batch fetched as `split` slices from `split`
//                        threads at once (what a fetcher pipelining its requests could reach)
//   fetch_pipelined_gbps as fetch_one_way from one thread, the batch sent as slices of
//                        `slice_kib` KiB of rows with start_all(), all in flight at once,
//                        each scattered as soon as it is finished: the change proposed for
//                        FeatureFetcher::fetch (same wire format as store/feature_store.cc)
//   peer_mmap_gather_gbps  rank 0 maps rank 1's feat.npy and gathers the rows itself: the
//                        one-copy path open to ranks that share a host and a file system
//   mpi_rget_gbps        MPI_Rget of the same rows from a window over the peer's feature array
//                        (one indexed datatype per batch, passive-target lock)
// GB/s is feature bytes delivered (rows * feat_dim * 4) per second, median over `repeats`
// runs of `batches` batches. Ids are uniform over the peer's range (uncached: every row is
// fetched, none repeats on purpose). Never fails on a slow machine; errors print and exit 1.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "partita/comm/wire.h"
#include "partita/core/npy.h"
#include "partita/runtime/mpi_rank.h"

using namespace partita;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string parts;
  int64_t rows = 16384;
  int batches = 20;
  int repeats = 3;
  int split = 4;
  int slice_kib = 1024;
  bool one_way_only = false;  // --one-way-only: skip every figure but fetch_one_way (profiling)
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw CommError(std::string("remote_fetch_bench: ") + what + " failed");
}

// `batches` batches of `rows` uniform ids in [first, end).
std::vector<std::vector<int64_t>> make_batches(const Args& args, int64_t first, int64_t end,
                                               uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(first, end - 1);
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(args.batches));
  for (auto& b : out) {
    b.resize(static_cast<size_t>(args.rows));
    for (auto& id : b) id = pick(rng);
  }
  return out;
}

double memcpy_gbps() {
  const size_t n = size_t{256} << 20;
  std::vector<char> a(n, 1), b(n, 2);
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), n);
    t.push_back(seconds_since(t0));
  }
  return static_cast<double>(n) / median(t) / 1e9;
}

// The float32 feature rows of this rank's part (the benchmark measures float32 partitions).
const float* float_features(const store::DistGraph& graph) {
  if (graph.feature_dtype() != DType::kFloat32) {
    std::fprintf(stderr, "error: remote_fetch_bench measures float32 features; %s holds %s\n",
                 graph.dir().c_str(), dtype_name(graph.feature_dtype()));
    std::exit(2);
  }
  return reinterpret_cast<const float*>(graph.features());
}

double local_gather_gbps(const store::DistGraph& graph, const Args& args) {
  const int64_t width = graph.feat_dim();
  const float* features = float_features(graph);
  auto batches = make_batches(args, 0, graph.num_local_nodes(), 7);
  std::vector<float> out(static_cast<size_t>(args.rows * width));
  const auto t0 = Clock::now();
  for (const auto& b : batches)
    for (size_t k = 0; k < b.size(); ++k)
      std::memcpy(out.data() + k * width, features + b[k] * width, width * sizeof(float));
  return static_cast<double>(args.batches * args.rows * width * 4) / seconds_since(t0) / 1e9;
}

// Fetches every batch through the fetcher; returns GB/s of feature bytes.
double fetch_gbps(store::FeatureFetcher& fetcher, const std::vector<std::vector<int64_t>>& batches,
                  int64_t width) {
  std::vector<float> out(batches[0].size() * static_cast<size_t>(width));
  const auto t0 = Clock::now();
  std::vector<double> per_batch;
  for (const auto& b : batches) {
    const auto t1 = Clock::now();
    fetcher.fetch_features(b, out.data());
    per_batch.push_back(seconds_since(t1) * 1e3);
  }
  const double s = seconds_since(t0);
  if (getenv("FETCH_TRACE")) {
    std::string line;
    for (double ms : per_batch) line += fmt::format("{:.2f} ", ms);
    std::fprintf(stderr, "batch ms: %s\n", line.c_str());
  }
  return static_cast<double>(batches.size() * batches[0].size() * width * 4) / s / 1e9;
}

// As fetch_gbps, each batch fetched as `split` slices from `split` threads at once.
double split_fetch_gbps(store::FeatureFetcher& fetcher,
                        const std::vector<std::vector<int64_t>>& batches, int64_t width,
                        int split) {
  const size_t rows = batches[0].size();
  std::vector<float> out(rows * static_cast<size_t>(width));
  const auto t0 = Clock::now();
  for (const auto& b : batches) {
    std::vector<std::thread> threads;
    for (int t = 0; t < split; ++t) {
      const size_t begin = rows * t / split, end = rows * (t + 1) / split;
      threads.emplace_back([&, begin, end] {
        fetcher.fetch_features(
            ArrayView<const int64_t>(b.data() + begin, static_cast<int64_t>(end - begin)),
            out.data() + begin * width);
      });
    }
    for (auto& th : threads) th.join();
  }
  const double s = seconds_since(t0);
  return static_cast<double>(batches.size() * rows * width * 4) / s / 1e9;
}

// The batch (all owned by `owner`) as slices of about slice_kib KiB, all started at once and
// scattered in order as each finishes.
double pipelined_fetch_gbps(RpcEndpoint& endpoint, const std::vector<std::vector<int64_t>>& batches,
                            int64_t width, int owner, int slice_kib) {
  const size_t rows = batches[0].size();
  const size_t row_bytes = static_cast<size_t>(width) * 4;
  const size_t slice_rows = std::max<size_t>(1, (size_t(slice_kib) << 10) / row_bytes);
  std::vector<float> out(rows * static_cast<size_t>(width));
  const auto t0 = Clock::now();
  for (const auto& b : batches) {
    std::vector<RpcEndpoint::Pending> pending;
    std::vector<size_t> slice_sizes;  // rows asked in each slice
    for (size_t begin = 0; begin < rows; begin += slice_rows) {
      const size_t n = std::min(slice_rows, rows - begin);
      slice_sizes.push_back(n);
      WireWriter request(16 + n * 8);
      request.put<uint64_t>(kRequestFeatures);
      int64_t* ids = request.put_uninitialized<int64_t>(static_cast<int64_t>(n));
      std::memcpy(ids, b.data() + begin, n * 8);
      std::vector<RpcRequest> requests;
      requests.push_back({owner, request.take()});
      pending.push_back(endpoint.start_all(std::move(requests)));
    }
    size_t begin = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      std::vector<std::vector<uint8_t>> replies = endpoint.finish_all(std::move(pending[i]));
      // The reply is the rows as bytes (feature_store.cc serves any feature dtype as
      // feature_row_bytes() bytes per row), not as floats.
      WireReader reply(replies[0].data(), replies[0].size(), "pipelined reply");
      ArrayView<const uint8_t> got = reply.get_array<uint8_t>();
      reply.expect_end();
      if (static_cast<size_t>(got.size()) != slice_sizes[i] * row_bytes)
        throw CommError("pipelined reply: " + std::to_string(got.size()) + " bytes for " +
                        std::to_string(slice_sizes[i]) + " rows of " + std::to_string(row_bytes));
      // In the fetcher these rows go to scattered positions: one memcpy per row, as there.
      const size_t n = static_cast<size_t>(got.size()) / row_bytes;
      for (size_t k = 0; k < n; ++k)
        std::memcpy(out.data() + (begin + k) * width, got.data() + k * row_bytes, row_bytes);
      begin += n;
    }
  }
  const double s = seconds_since(t0);
  return static_cast<double>(batches.size() * rows * row_bytes) / s / 1e9;
}

// Rank 0 gathers the rows of each batch straight from the peer's mapped feature file.
double peer_mmap_gbps(const Args& args, const std::vector<std::vector<int64_t>>& batches,
                      int64_t width, int64_t peer_first) {
  const NpyArray peer = NpyArray::open(args.parts + "/part1/feat.npy");
  const float* base = peer.view<float>().data();
  std::vector<float> out(batches[0].size() * static_cast<size_t>(width));
  const auto t0 = Clock::now();
  for (const auto& b : batches)
    for (size_t k = 0; k < b.size(); ++k)
      std::memcpy(out.data() + k * width, base + (b[k] - peer_first) * width, width * 4);
  return static_cast<double>(batches.size() * out.size() * 4) / seconds_since(t0) / 1e9;
}

// Rank 0 receives `batches` messages of `bytes` from rank 1 (both sides post at once).
double two_sided_gbps(MPI_Comm comm, int rank, size_t bytes, int batches) {
  std::vector<char> buffer(bytes, 3);
  MPI_Barrier(comm);
  const auto t0 = Clock::now();
  for (int i = 0; i < batches; ++i) {
    MPI_Request request;
    if (rank == 0) {
      check(MPI_Irecv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 9, comm, &request),
            "MPI_Irecv");
    } else {
      check(MPI_Isend(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 9, comm, &request),
            "MPI_Isend");
    }
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  const double s = seconds_since(t0);
  MPI_Barrier(comm);
  return static_cast<double>(bytes) * batches / s / 1e9;
}

// Rank 0 gets the rows of each batch from a window over rank 1's feature array.
double rget_gbps(MPI_Comm comm, int rank, const store::DistGraph& graph,
                 const std::vector<std::vector<int64_t>>& batches, int64_t peer_first) {
  const int64_t width = graph.feat_dim();
  const int row_bytes = static_cast<int>(width * 4);
  MPI_Win win;
  // The mapped file is read-only; MPI only reads through the window (no puts).
  check(MPI_Win_create(const_cast<float*>(float_features(graph)),
                       graph.num_local_nodes() * row_bytes, 1, MPI_INFO_NULL, comm, &win),
        "MPI_Win_create");
  double gbps = 0;
  if (rank == 0) {
    std::vector<char> out(batches[0].size() * static_cast<size_t>(row_bytes));
    std::vector<int> displs(batches[0].size());
    check(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win), "MPI_Win_lock");
    const auto t0 = Clock::now();
    for (const auto& b : batches) {
      for (size_t k = 0; k < b.size(); ++k)
        displs[k] = static_cast<int>((b[k] - peer_first) * row_bytes);
      MPI_Datatype rows;
      check(MPI_Type_create_indexed_block(static_cast<int>(b.size()), row_bytes, displs.data(),
                                          MPI_BYTE, &rows),
            "MPI_Type_create_indexed_block");
      check(MPI_Type_commit(&rows), "MPI_Type_commit");
      MPI_Request request;
      check(MPI_Rget(out.data(), static_cast<int>(out.size()), MPI_BYTE, 1, 0, 1, rows, win,
                     &request),
            "MPI_Rget");
      check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait(Rget)");
      MPI_Type_free(&rows);
    }
    const double s = seconds_since(t0);
    check(MPI_Win_unlock(1, win), "MPI_Win_unlock");
    gbps = static_cast<double>(batches.size() * out.size()) / s / 1e9;
  }
  MPI_Barrier(comm);
  MPI_Win_free(&win);
  return gbps;
}

int run(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw Error("missing value after " + a);
      return std::string(argv[++i]);
    };
    if (a == "--parts")
      args.parts = value();
    else if (a == "--rows")
      args.rows = std::stoll(value());
    else if (a == "--batches")
      args.batches = std::stoi(value());
    else if (a == "--repeats")
      args.repeats = std::stoi(value());
    else if (a == "--split")
      args.split = std::stoi(value());
    else if (a == "--slice-kib")
      args.slice_kib = std::stoi(value());
    else if (a == "--one-way-only")
      args.one_way_only = true;
    else
      throw Error("unknown argument " + a);
  }
  if (args.parts.empty()) throw Error("usage: remote_fetch_bench --parts DIR [--rows N]");

  MpiScope mpi(&argc, &argv);
  if (mpi.size() != 2) throw Error("run with exactly 2 ranks");
  runtime::SessionOptions options;
  options.parts_dir = args.parts;
  options.host_local = runtime::HostLocal::kOff;  // measure the wire, not host-local reads
  runtime::MpiRank rank_state(mpi, options);
  runtime::Session& session = rank_state.session();
  const store::DistGraph& graph = session.graph();
  Collectives& coll = session.collectives();
  const int rank = session.rank();
  const int peer = 1 - rank;
  const int64_t width = graph.feat_dim();
  // The peer's id range: rank r owns part r.
  const int64_t peer_first = rank == 0 ? graph.end_node() : 0;
  const int64_t peer_end = rank == 0 ? graph.num_nodes() : graph.first_node();
  auto batches = make_batches(args, peer_first, peer_end, 100 + static_cast<uint64_t>(rank));
  store::FeatureFetcher& fetcher = session.fetcher();

  nlohmann::json out;
  std::vector<double> memcpy_runs, gather_runs, one_way, both, two_sided, rget, split, peer_mmap,
      pipelined;
  for (int r = 0; r < args.repeats; ++r) {
    coll.barrier();
    if (args.one_way_only) {
      if (rank == 0) one_way.push_back(fetch_gbps(fetcher, batches, width));
      continue;
    }
    if (rank == 0) {
      memcpy_runs.push_back(memcpy_gbps());
      gather_runs.push_back(local_gather_gbps(graph, args));
    }
    coll.barrier();
    if (rank == 0) one_way.push_back(fetch_gbps(fetcher, batches, width));
    coll.barrier();
    if (rank == 0) split.push_back(split_fetch_gbps(fetcher, batches, width, args.split));
    coll.barrier();
    if (rank == 0)
      pipelined.push_back(
          pipelined_fetch_gbps(*session.endpoint(), batches, width, peer, args.slice_kib));
    coll.barrier();
    if (rank == 0) peer_mmap.push_back(peer_mmap_gbps(args, batches, width, peer_first));
    coll.barrier();
    const double mine = fetch_gbps(fetcher, batches, width);
    both.push_back(coll.allreduce_one(mine, ReduceOp::kSum) / 2);
    two_sided.push_back(two_sided_gbps(mpi.world(), rank, args.rows * width * 4, args.batches));
    rget.push_back(rget_gbps(mpi.world(), rank, graph, batches, peer_first));
  }
  const store::FetchStats stats = fetcher.stats();
  session.finish();
  if (rank == 0) {
    out["bench"] = "remote_fetch";
    out["parts"] = args.parts;
    out["rows_per_batch"] = args.rows;
    out["batches"] = args.batches;
    out["repeats"] = args.repeats;
    out["row_bytes"] = width * 4;
    out["memcpy_gbps"] = median(memcpy_runs);
    out["local_gather_gbps"] = median(gather_runs);
    out["fetch_one_way_gbps"] = median(one_way);
    out["fetch_both_gbps"] = median(both);
    out["fetch_both_pair_gbps"] = 2 * median(both);
    out["split"] = args.split;
    out["fetch_split_gbps"] = median(split);
    out["slice_kib"] = args.slice_kib;
    out["fetch_pipelined_gbps"] = median(pipelined);
    out["peer_mmap_gather_gbps"] = median(peer_mmap);
    out["mpi_two_sided_gbps"] = median(two_sided);
    out["mpi_rget_gbps"] = median(rget);
    out["fetch_one_way_runs"] = one_way;
    out["fetch_both_runs"] = both;
    out["remote_rows_rank0"] = stats.remote_rows;
    std::printf("%s\n", out.dump().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
