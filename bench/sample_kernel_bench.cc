// Benchmark of the sample/ layer, single machine: sampled edges per second for multi-hop
// block building on a synthetic products-sized graph (default 2.4M nodes, average
// in-degree ~26, power-law-ish degrees), fanouts 15,10,5, batches of 1024 seeds.
// Prints one JSON object. Never fails because a machine is slow.
//
//   build-sample/bench/sample_kernel_bench [--nodes N] [--degree D] [--batch B]
//       [--batches K] [--runs R] [--threads T] [--replace] [--hugepages] [--seed S]
//       [--relations R] [--modes]
//
// --relations R (R > 0) makes the graph typed: every source node has one of R relation
// types (a hash of its id), rows are sorted by (relation, source), and each hop's fanout
// applies to every relation (the typed kernel path; more edges per node than untyped).
//
// --hugepages asks for transparent huge pages on the graph's arrays (THP "madvise" mode):
// random row reads then miss the TLB far less. Default off, as for memory-mapped files.
//
// --modes adds "modes": the same batches sampled in each sampling mode on the same graph
// with a weight (uniform in (0, 1]) and a time (uniform in [0, 1000)) per edge and a time
// per seed (uniform in [0, 1000)): uniform, weighted, both with edge ids
// (KernelOptions::edge_ids), and temporal uniform, recent and weighted (neighbor_kernel.h). The
// modes take turns run by run. Per mode: CPU ns per sampled edge of the kernel
// (LocalSampler::sample_hop) and of BlockBuilder::build, medians over --runs, and the kernel figure
// over uniform's: of the medians
// ("kernel_vs_uniform") and the median of the per-run ratios ("kernel_vs_uniform_paired",
// steadier on a loaded machine). "weighted_vs_uniform" is the weighted one of the latter,
// and "weighted_within_2x_uniform" issue 41's goal (<= 2).
//
// Figures: per run, sampled edges (sum over blocks) / wall time of BlockBuilder::build;
// the share spent in the kernel (LocalSampler::sample_hop) vs relabelling and copies; and
// a relabelling comparison (NodeRelabeler with and without prefetch, absl::flat_hash_map)
// on the recorded neighbor lists of one run.
#include <absl/container/flat_hash_map.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "partita/core/parallel.h"
#include "partita/core/random.h"
#include "partita/graph/csr.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/node_relabeler.h"

using namespace partita;
using namespace partita::sample;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of the whole process (all threads): on a shared machine, time this process
// was not running does not count, so per-core figures are steadier than wall-clock ones.
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Args {
  int64_t nodes = 2'400'000;
  double degree = 26.0;
  int64_t batch = 1024;
  int batches = 20;
  int runs = 5;
  int threads = 1;
  bool replace = false;
  bool hugepages = false;  // madvise(MADV_HUGEPAGE) on the graph arrays
  uint64_t seed = 1;
  int relations = 0;   // > 0: a typed graph with this many relations
  bool modes = false;  // also compare the sampling modes (weighted, temporal)
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", f.c_str());
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (f == "--nodes")
      a.nodes = std::stoll(value());
    else if (f == "--degree")
      a.degree = std::stod(value());
    else if (f == "--batch")
      a.batch = std::stoll(value());
    else if (f == "--batches")
      a.batches = std::stoi(value());
    else if (f == "--runs")
      a.runs = std::stoi(value());
    else if (f == "--threads")
      a.threads = std::stoi(value());
    else if (f == "--seed")
      a.seed = std::stoull(value());
    else if (f == "--relations")
      a.relations = std::stoi(value());
    else if (f == "--replace")
      a.replace = true;
    else if (f == "--hugepages")
      a.hugepages = true;
    else if (f == "--modes")
      a.modes = true;
    else {
      std::fprintf(stderr, "error: unknown flag %s\n", f.c_str());
      std::exit(2);
    }
  }
  if (a.nodes < 2 || a.batch < 1 || a.batch > a.nodes || a.batches < 1 || a.runs < 1 ||
      a.relations < 0) {
    std::fprintf(stderr,
                 "error: need --nodes >= 2, 1 <= --batch <= --nodes, --batches and "
                 "--runs >= 1, --relations >= 0\n");
    std::exit(2);
  }
  return a;
}

// Reserves room for `count` values and, if asked, advises huge pages before first touch.
template <class T>
void reserve_advised(std::vector<T>& v, int64_t count, bool hugepages) {
  v.reserve(static_cast<size_t>(count));
  if (!hugepages) return;
  const uintptr_t page = 2 << 20;
  uintptr_t b = (reinterpret_cast<uintptr_t>(v.data()) + page - 1) & ~(page - 1);
  uintptr_t e = (reinterpret_cast<uintptr_t>(v.data() + count)) & ~(page - 1);
  if (e > b && madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE) != 0) {
    std::fprintf(stderr, "warning: madvise(MADV_HUGEPAGE) failed\n");
  }
}

// In-degrees Pareto(alpha = 2) with mean ~`degree`, capped at 20000. Half of the sources
// uniform, half proportional to in-degree (hubs are hubs both ways, as in an undirected
// graph). Rows sorted and unique. Built on 2 threads, deterministic.
graph::Csr synthetic_graph(const Args& a) {
  const int64_t n = a.nodes;
  const int threads = 2;
  const int64_t chunk = 1 << 16;
  graph::Csr g;
  reserve_advised(g.indptr, n + 1, a.hugepages);
  g.indptr.assign(static_cast<size_t>(n) + 1, 0);
  const double xm = a.degree / 2.0 + 0.25;
  parallel_chunks(0, n, chunk, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      Rng rng(stream_key(a.seed, 1, v));
      const double d = xm / std::sqrt(1.0 - rng.uniform());
      g.indptr[v + 1] = std::min<int64_t>(static_cast<int64_t>(d), std::min<int64_t>(20000, n - 1));
    }
  });
  for (int64_t v = 0; v < n; ++v) g.indptr[v + 1] += g.indptr[v];
  // Table of 2^22 nodes, node v appearing ~ in-degree(v) / E * 2^22 times.
  const int64_t table_bits = 22, table_size = int64_t{1} << table_bits;
  std::vector<int32_t> table(static_cast<size_t>(table_size));
  const double per_slot = static_cast<double>(g.indptr[n]) / static_cast<double>(table_size);
  for (int64_t t = 0, v = 0; t < table_size; ++t) {
    const int64_t slot = static_cast<int64_t>(t * per_slot);
    while (g.indptr[v + 1] <= slot) ++v;
    table[t] = static_cast<int32_t>(v);
  }
  reserve_advised(g.indices, g.indptr[n], a.hugepages);
  g.indices.resize(static_cast<size_t>(g.indptr[n]));
  std::vector<int64_t> unique(static_cast<size_t>(n));
  parallel_chunks(0, n, chunk, threads, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      Rng rng(stream_key(a.seed, 2, v));
      int64_t* row = g.indices.data() + g.indptr[v];
      const int64_t d = g.indptr[v + 1] - g.indptr[v];
      for (int64_t i = 0; i < d; ++i) {
        const uint64_t r = rng.next();
        int64_t u = (r & 1) ? table[(r >> 1) & (table_size - 1)]
                            : static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
        row[i] = u == v ? (u + 1) % n : u;
      }
      std::sort(row, row + d);
      unique[v] = std::unique(row, row + d) - row;
    }
  });
  int64_t out = 0;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t b = g.indptr[v];
    if (out != b) std::memmove(g.indices.data() + out, g.indices.data() + b, unique[v] * 8);
    g.indptr[v] = out;
    out += unique[v];
  }
  g.indptr[n] = out;
  g.indices.resize(static_cast<size_t>(out));  // keeps the (advised) allocation
  return g;
}

// Typed graphs: relation mix64(u) % R for source u; each row re-sorted by (relation, u).
std::vector<int32_t> relations_of(graph::Csr& g, const Args& a) {
  std::vector<int32_t> rel(static_cast<size_t>(g.num_entries()));
  parallel_chunks(0, g.num_rows(), 1 << 16, 2, [&](int64_t b, int64_t e) {
    std::vector<std::pair<int32_t, int64_t>> row;
    for (int64_t v = b; v < e; ++v) {
      row.clear();
      for (int64_t i = g.indptr[v]; i < g.indptr[v + 1]; ++i) {
        const uint64_t u = static_cast<uint64_t>(g.indices[i]);
        row.emplace_back(static_cast<int32_t>(mix64(u ^ a.seed) % a.relations), g.indices[i]);
      }
      std::sort(row.begin(), row.end());
      for (size_t j = 0; j < row.size(); ++j) {
        rel[g.indptr[v] + j] = row[j].first;
        g.indices[g.indptr[v] + j] = row[j].second;
      }
    }
  });
  return rel;
}

std::vector<int64_t> batch_seeds(const Args& a, int64_t b) {
  Rng rng(stream_key(a.seed, 3, b));
  std::unordered_set<int64_t> seen;
  std::vector<int64_t> seeds;
  while (static_cast<int64_t>(seeds.size()) < a.batch) {
    const int64_t v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(a.nodes)));
    if (seen.insert(v).second) seeds.push_back(v);
  }
  return seeds;
}

// dst = src without vector::operator= (GCC 12 warns -Wnonnull on it, wrongly).
void copy_into(const std::vector<int64_t>& src, std::vector<int64_t>& dst) {
  dst.resize(src.size());
  if (!src.empty()) std::memcpy(dst.data(), src.data(), src.size() * sizeof(int64_t));
}

// Times the wrapped sampler per hop (wall and process CPU) and can record its output.
class TimedSampler final : public NeighborSampler {
 public:
  static constexpr int kMaxHops = 8;
  explicit TimedSampler(NeighborSampler& inner) : inner_(inner) {}
  void sample_hop(const HopRequest& request, NeighborSample* out) override {
    const double t = now(), c = cpu_now();
    inner_.sample_hop(request, out);
    seconds += now() - t;
    cpu_seconds += cpu_now() - c;
    if (request.hop < kMaxHops) {
      hop_cpu_seconds[request.hop] += cpu_now() - c;
      hop_nodes[request.hop] += request.frontier.size();
      hop_edges[request.hop] += static_cast<int64_t>(out->neighbors.size());
    }
    if (record) recorded.push_back(out->neighbors);
  }
  void reset() { *this = TimedSampler(inner_); }

  double seconds = 0, cpu_seconds = 0;
  double hop_cpu_seconds[kMaxHops] = {};
  int64_t hop_nodes[kMaxHops] = {}, hop_edges[kMaxHops] = {};
  bool record = false;
  std::vector<std::vector<int64_t>> recorded;  // one per hop, in call order

 private:
  TimedSampler& operator=(const TimedSampler& o) {
    seconds = o.seconds, cpu_seconds = o.cpu_seconds;
    std::copy(o.hop_cpu_seconds, o.hop_cpu_seconds + kMaxHops, hop_cpu_seconds);
    std::copy(o.hop_nodes, o.hop_nodes + kMaxHops, hop_nodes);
    std::copy(o.hop_edges, o.hop_edges + kMaxHops, hop_edges);
    record = o.record;
    recorded = o.recorded;
    return *this;
  }
  NeighborSampler& inner_;
};

double round2(double x) { return std::round(x * 100.0) / 100.0; }

// Mode comparison (--modes): CPU ns per sampled edge, one entry per run.
struct ModeFigures {
  std::vector<double> kernel_ns, blocks_ns;
  int64_t edges_per_batch = 0;
  std::vector<double> hop_ns;  // kernel CPU ns per sampled edge of each hop, over all runs
};

constexpr int64_t kTimeRange = 1000;

// One mode's sampler and block builder, warmed up once; run() measures one run of every
// batch. Modes take turns run by run (compare_modes), so that a change of load on a shared
// machine hits every mode alike and per-run ratios between modes stay meaningful.
class ModeRunner {
 public:
  ModeRunner(const CscView& view, const LocalSamplerOptions& so, const Args& a,
             const std::vector<int64_t>& fanouts, const std::vector<std::vector<int64_t>>& seeds,
             const std::vector<std::vector<int64_t>>& seed_times)
      : temporal_(so.temporal != Temporal::kNone),
        a_(a),
        fanouts_(fanouts),
        seeds_(seeds),
        seed_times_(seed_times),
        local_(view, so),
        timed_(local_) {
    BlockOptions warm{fanouts_, {}};
    if (temporal_) warm.seed_times = seed_times_[0];
    builder_.build(seeds_[0], warm, timed_);  // warm-up
  }

  void run(int run) {
    timed_.cpu_seconds = 0;
    int64_t edges = 0;
    const double cpu_start = cpu_now();
    for (int b = 0; b < a_.batches; ++b) {
      BlockOptions o{fanouts_, {a_.seed, static_cast<uint64_t>(run), static_cast<uint64_t>(b)}};
      if (temporal_) o.seed_times = seed_times_[b];
      edges += builder_.build(seeds_[b], o, timed_).num_sampled_edges();
    }
    const double e = static_cast<double>(std::max<int64_t>(edges, 1));
    figures.kernel_ns.push_back(1e9 * timed_.cpu_seconds / e);
    figures.blocks_ns.push_back(1e9 * (cpu_now() - cpu_start) / e);
    figures.edges_per_batch = edges / a_.batches;
    figures.hop_ns.clear();
    for (size_t h = 0; h < fanouts_.size() && h < TimedSampler::kMaxHops; ++h) {
      const double hop_edges = static_cast<double>(std::max<int64_t>(timed_.hop_edges[h], 1));
      figures.hop_ns.push_back(round2(1e9 * timed_.hop_cpu_seconds[h] / hop_edges));
    }
  }

  ModeFigures figures;

 private:
  bool temporal_;
  const Args& a_;
  const std::vector<int64_t>& fanouts_;
  const std::vector<std::vector<int64_t>>& seeds_;
  const std::vector<std::vector<int64_t>>& seed_times_;
  LocalSampler local_;
  TimedSampler timed_;
  BlockBuilder builder_;
};

// The "modes" object of --modes.
nlohmann::ordered_json compare_modes(const graph::Csr& g, const std::vector<int32_t>& relations,
                                     const Args& a, const std::vector<int64_t>& fanouts,
                                     const std::vector<std::vector<int64_t>>& seeds) {
  std::vector<float> weights(static_cast<size_t>(g.num_entries()));
  std::vector<int64_t> times(weights.size());
  parallel_chunks(0, g.num_entries(), 1 << 20, 2, [&](int64_t b, int64_t e) {
    Rng rng(stream_key(a.seed, 4, b));
    for (int64_t i = b; i < e; ++i) {
      weights[i] = static_cast<float>(1.0 - rng.uniform());  // (0, 1]
      times[i] = static_cast<int64_t>(rng.below(kTimeRange));
    }
  });
  std::vector<std::vector<int64_t>> seed_times;
  for (size_t b = 0; b < seeds.size(); ++b) {
    Rng rng(stream_key(a.seed, 5, b));
    seed_times.emplace_back();
    for (size_t i = 0; i < seeds[b].size(); ++i) {
      seed_times.back().push_back(static_cast<int64_t>(rng.below(kTimeRange)));
    }
  }
  CscView view = csc_view_of(g, weights, relations);
  view.times = ArrayView<const int64_t>(times);
  struct Mode {
    const char* name;
    Weighting weighting;
    Temporal temporal;
    bool edge_ids = false;
  };
  std::vector<Mode> modes{{"uniform", Weighting::kUniform, Temporal::kNone},
                          {"weighted", Weighting::kEdgeWeight, Temporal::kNone},
                          {"uniform_edge_ids", Weighting::kUniform, Temporal::kNone, true},
                          {"weighted_edge_ids", Weighting::kEdgeWeight, Temporal::kNone, true},
                          {"temporal_uniform", Weighting::kUniform, Temporal::kUniform},
                          {"temporal_weighted", Weighting::kEdgeWeight, Temporal::kUniform}};
  if (!a.replace) modes.push_back({"temporal_recent", Weighting::kUniform, Temporal::kRecent});
  std::vector<std::unique_ptr<ModeRunner>> runners;
  for (const Mode& m : modes) {
    LocalSamplerOptions so;
    so.replacement = a.replace ? Replacement::kWith : Replacement::kWithout;
    so.threads = a.threads;
    so.weighting = m.weighting;
    so.temporal = m.temporal;
    so.edge_ids = m.edge_ids;
    runners.push_back(std::make_unique<ModeRunner>(view, so, a, fanouts, seeds, seed_times));
  }
  for (int run = 0; run < a.runs; ++run) {
    for (auto& r : runners) r->run(run);
  }
  nlohmann::ordered_json out;
  const ModeFigures& uniform = runners[0]->figures;
  const double uniform_ns = median(uniform.kernel_ns);
  for (size_t i = 0; i < modes.size(); ++i) {
    const ModeFigures& f = runners[i]->figures;
    const double kernel_ns = median(f.kernel_ns);
    std::vector<double> runs = f.kernel_ns, ratios;
    for (size_t r = 0; r < runs.size(); ++r) ratios.push_back(runs[r] / uniform.kernel_ns[r]);
    for (double& x : runs) x = round2(x);
    out[modes[i].name] = {{"kernel_ns_per_edge", round2(kernel_ns)},
                          {"kernel_ns_per_edge_runs", runs},
                          {"blocks_ns_per_edge", round2(median(f.blocks_ns))},
                          {"edges_per_batch", f.edges_per_batch},
                          {"kernel_vs_uniform", round2(kernel_ns / uniform_ns)},
                          {"kernel_vs_uniform_paired", round2(median(ratios))},
                          {"kernel_ns_per_edge_by_hop", f.hop_ns}};
  }
  // Issue 41's goal, per sampled edge of the kernel: the median over runs of the ratio of
  // each run's weighted figure to the same run's uniform one.
  const double weighted_ratio = out["weighted"]["kernel_vs_uniform_paired"].get<double>();
  out["weighted_vs_uniform"] = weighted_ratio;
  out["weighted_within_2x_uniform"] = weighted_ratio <= 2.0;
  // What edge ids (KernelOptions::edge_ids, for edge features) add to uniform sampling.
  out["edge_ids_vs_uniform"] = out["uniform_edge_ids"]["kernel_vs_uniform_paired"];
  out["time_range"] = kTimeRange;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const std::vector<int64_t> fanouts{15, 10, 5};
  const int hops = static_cast<int>(fanouts.size());
  const double t0 = now();
  graph::Csr g = synthetic_graph(a);
  const std::vector<int32_t> relations =
      a.relations > 0 ? relations_of(g, a) : std::vector<int32_t>{};
  const double build_s = now() - t0;
  int64_t max_degree = 0;
  for (int64_t v = 0; v < g.num_rows(); ++v) max_degree = std::max(max_degree, g.degree(v));

  LocalSamplerOptions so;
  so.replacement = a.replace ? Replacement::kWith : Replacement::kWithout;
  so.threads = a.threads;
  CscView view = csc_view_of(g);
  view.relations = ArrayView<const int32_t>(relations);
  LocalSampler local(view, so);
  TimedSampler timed(local);
  BlockBuilder builder;
  std::vector<std::vector<int64_t>> seeds;
  for (int b = 0; b < a.batches; ++b) seeds.push_back(batch_seeds(a, b));

  const BlockOptions warm{fanouts, {}};
  builder.build(seeds[0], warm, timed);  // warm-up: page in, grow the relabel table
  timed.reset();

  std::vector<double> rates, cpu_rates, kernel_cpu_rates, kernel_share, ms_per_batch;
  int64_t edges_per_batch = 0, input_nodes_per_batch = 0;
  for (int run = 0; run < a.runs; ++run) {
    timed.seconds = timed.cpu_seconds = 0;
    timed.record = run == 0;
    int64_t edges = 0, inputs = 0;
    const double start = now(), cpu_start = cpu_now();
    for (int b = 0; b < a.batches; ++b) {
      const BlockOptions o{fanouts, {a.seed, static_cast<uint64_t>(run), static_cast<uint64_t>(b)}};
      SampledBatch batch = builder.build(seeds[b], o, timed);
      edges += batch.num_sampled_edges();
      inputs += static_cast<int64_t>(batch.input_nodes.size());
    }
    const double seconds = now() - start, cpu_seconds = cpu_now() - cpu_start;
    rates.push_back(edges / seconds / 1e6);
    cpu_rates.push_back(edges / cpu_seconds / 1e6);
    kernel_cpu_rates.push_back(edges / timed.cpu_seconds / 1e6);
    kernel_share.push_back(timed.cpu_seconds / cpu_seconds);
    ms_per_batch.push_back(1e3 * seconds / a.batches);
    edges_per_batch = edges / a.batches;
    input_nodes_per_batch = inputs / a.batches;
  }

  // Relabelling alone on run 0's recorded neighbor lists (hops of batch b at 3b..3b+2).
  const auto& rec = timed.recorded;
  int64_t rec_edges = 0;
  for (const auto& r : rec) rec_edges += static_cast<int64_t>(r.size());
  auto time_relabel = [&](auto&& relabel_batch) {
    std::vector<double> rs;
    for (int rep = 0; rep < 3; ++rep) {
      const double s = cpu_now();
      for (int b = 0; b < a.batches; ++b) relabel_batch(b);
      rs.push_back(rec_edges / (cpu_now() - s) / 1e6);
    }
    return median(rs);
  };
  NodeRelabeler relabeler;
  std::vector<int64_t> scratch;
  const double prefetched = time_relabel([&](int b) {
    relabeler.clear();
    for (int64_t s : seeds[b]) relabeler.insert(s);
    for (int h = 0; h < hops; ++h) {
      copy_into(rec[hops * b + h], scratch);
      relabeler.relabel(scratch.data(), static_cast<int64_t>(scratch.size()));
    }
  });
  const double plain = time_relabel([&](int b) {
    relabeler.clear();
    for (int64_t s : seeds[b]) relabeler.insert(s);
    for (int h = 0; h < hops; ++h) {
      copy_into(rec[hops * b + h], scratch);
      for (int64_t& id : scratch) id = relabeler.insert(id);
    }
  });
  std::vector<int64_t> nodes;
  const double absl_rate = time_relabel([&](int b) {
    absl::flat_hash_map<int64_t, int64_t> map;  // reserved once for the whole batch
    nodes.clear();
    size_t bound = seeds[b].size();
    for (int h = 0; h < hops; ++h) bound += rec[hops * b + h].size();
    map.reserve(bound);
    for (int64_t s : seeds[b]) map.emplace(s, map.size()), nodes.push_back(s);
    for (int h = 0; h < hops; ++h) {
      copy_into(rec[hops * b + h], scratch);
      for (int64_t& id : scratch) {
        auto [it, inserted] = map.try_emplace(id, static_cast<int64_t>(map.size()));
        if (inserted) nodes.push_back(id);
        id = it->second;
      }
    }
  });

  auto rounded = [](std::vector<double> v) {
    for (double& x : v) x = round2(x);
    return v;
  };
  nlohmann::ordered_json out;
  out["graph"] = {{"nodes", g.num_rows()},
                  {"edges", g.num_entries()},
                  {"avg_degree", round2(static_cast<double>(g.num_entries()) / g.num_rows())},
                  {"max_degree", max_degree},
                  {"build_s", round2(build_s)}};
  out["fanouts"] = fanouts;
  out["batch"] = a.batch;
  out["batches"] = a.batches;
  out["runs"] = a.runs;
  out["threads"] = a.threads;
  out["replace"] = a.replace;
  out["hugepages"] = a.hugepages;
  out["relations"] = a.relations;
  out["edges_per_batch"] = edges_per_batch;
  out["input_nodes_per_batch"] = input_nodes_per_batch;
  // Headline: sampled edges per CPU-second of BlockBuilder::build (per core when threads=1).
  out["blocks_medges_per_cpu_s"] = round2(median(cpu_rates));
  out["blocks_medges_per_cpu_s_runs"] = rounded(cpu_rates);
  out["blocks_medges_per_s"] = round2(median(rates));
  out["blocks_medges_per_s_runs"] = rounded(rates);
  out["ms_per_batch"] = round2(median(ms_per_batch));
  out["kernel_share"] = round2(median(kernel_share));
  out["kernel_medges_per_cpu_s"] = round2(median(kernel_cpu_rates));
  nlohmann::ordered_json per_hop = nlohmann::ordered_json::array();
  for (int h = 0; h < hops; ++h) {
    per_hop.push_back(
        {{"nodes_per_batch", timed.hop_nodes[h] / (a.runs * a.batches)},
         {"edges_per_batch", timed.hop_edges[h] / (a.runs * a.batches)},
         {"ns_per_node",
          round2(1e9 * timed.hop_cpu_seconds[h] / std::max<int64_t>(timed.hop_nodes[h], 1))},
         {"medges_per_cpu_s",
          round2(timed.hop_edges[h] / std::max(timed.hop_cpu_seconds[h], 1e-12) / 1e6)}});
  }
  out["kernel_hops"] = per_hop;
  out["relabel_medges_per_cpu_s"] = {{"node_relabeler", round2(prefetched)},
                                     {"node_relabeler_no_prefetch", round2(plain)},
                                     {"absl_flat_hash_map", round2(absl_rate)}};
  if (a.modes) out["modes"] = compare_modes(g, relations, a, fanouts, seeds);
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
