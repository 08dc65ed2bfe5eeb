// The partition pipeline: check, assign, renumber, write arrays, write partita.json last.
#include "partita/partition/partition.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/partition/assign.h"
#include "partita/partition/format.h"
#include "partita/partition/partition_assigned.h"
#include "partita/partition/renumber.h"
#include "partition_meta.h"
#include "typed_dataset.h"
#include "writer.h"

namespace partita::partition {
namespace {

constexpr int kMaxParts = 1 << 20;  // far beyond any cluster; keeps the writer's keys small

void check_options(const PartitionOptions& o) {
  PARTITA_CHECK_PARAM(o.num_parts >= 1, "num_parts", "must be at least 1, got {}", o.num_parts);
  PARTITA_CHECK_PARAM(o.num_parts <= kMaxParts, "num_parts", "at most {}, got {}", kMaxParts,
                      o.num_parts);
  PARTITA_CHECK_PARAM(!o.out_dir.empty(), "out_dir", "an output directory is required");
}

// The dataset contract (data/dataset.h), checked once because everything below indexes
// with these values unchecked.
void check_dataset(const data::Dataset& ds, const PartitionOptions& o) {
  const int64_t n = ds.num_nodes;
  const std::string& name = ds.path.empty() ? std::string("dataset") : ds.path;
  PARTITA_CHECK_PARAM(o.num_parts <= n, "num_parts", "{} parts requested but {} has only {} nodes",
                      o.num_parts, name, n);
  PARTITA_CHECK(ds.in_edges.num_rows() == n, Error, "{}: graph has {} rows, expected {} nodes",
                name, ds.in_edges.num_rows(), n);
  if (ds.hetero) {
    check_typed_dataset(ds, name);
  } else {
    PARTITA_CHECK(ds.features.rows() == n, Error, "{}: features have {} rows, expected {}", name,
                  ds.features.rows(), n);
    PARTITA_CHECK(static_cast<int64_t>(ds.labels.size()) == n, Error, "{}: {} labels, expected {}",
                  name, ds.labels.size(), n);
    // -1 marks an unlabelled node, allowed outside the splits (checked with them below).
    for (int64_t v = 0; v < n; ++v)
      PARTITA_CHECK(ds.labels[v] >= -1 && ds.labels[v] < ds.num_classes, Error,
                    "{}: label {} of node {} is outside [0, {}) (or -1: unlabelled)", name,
                    ds.labels[v], v, ds.num_classes);
  }
  const std::pair<const char*, const std::vector<int64_t>*> splits[] = {
      {"train", &ds.train_idx}, {"valid", &ds.valid_idx}, {"test", &ds.test_idx}};
  for (const auto& [split, ids] : splits) {
    for (size_t i = 0; i < ids->size(); ++i) {
      const int64_t id = (*ids)[i];
      PARTITA_CHECK(id >= 0 && id < n && (i == 0 || (*ids)[i - 1] < id), Error,
                    "{}: {} split: id {} at position {} is out of range or not ascending", name,
                    split, id, i);
      PARTITA_CHECK(ds.labels[id] >= 0, Error,
                    "{}: node {} is in the {} split but has label {} (unlabelled)", name, id, split,
                    ds.labels[id]);
    }
  }
}

// The link-prediction split the options and dataset ask for, or nullopt.
std::optional<HeldOutEdges> edge_split_of(const data::Dataset& ds, const PartitionOptions& o) {
  if (!o.edge_split.enabled() && !ds.edge_split) return std::nullopt;
  const std::string& name = ds.path.empty() ? std::string("dataset") : ds.path;
  PARTITA_CHECK_PARAM(!ds.hetero, "edge_split",
                      "link-prediction splits need a homogeneous dataset; {} is heterogeneous",
                      name);
  PARTITA_CHECK_PARAM(!(o.edge_split.enabled() && ds.edge_split), "edge_split",
                      "{} has its own edge split (train_edges.npy ...); drop `edge_split` or the "
                      "files",
                      name);
  return ds.edge_split ? dataset_edge_split(ds)
                       : sample_edge_split(ds.in_edges, o.edge_split, o.seed);
}

void prepare_out_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  PARTITA_CHECK(!ec, IoError, "{}: cannot create directory: {}", dir, ec.message());
  // Until the new partita.json lands, the directory must not look like a valid partition.
  std::filesystem::remove(dir + "/" + kMetaFileName, ec);
  PARTITA_CHECK(!ec, IoError, "{}/{}: cannot remove the old metadata: {}", dir, kMetaFileName,
                ec.message());
}

// Runs everything after loading. `owned` is the same object as `ds` when the caller owns
// the dataset and lets the pipeline drop its in-edge indices once METIS's adjacency holds the
// same rows (symmetric graphs): that saves their memory while METIS runs. `given` (optional)
// is the assignment to use instead of computing one.
PartitionSummary run_pipeline(const data::Dataset& ds, data::Dataset* owned,
                              const PartitionOptions& o, Phases phases,
                              const std::vector<int32_t>* given = nullptr) {
  check_options(o);
  check_dataset(ds, o);
  const int threads = resolve_threads(o.threads);
  Stopwatch watch;
  // With an edge split, the graph partitioned and written is the one without held-out edges.
  const std::optional<HeldOutEdges> held = edge_split_of(ds, o);
  graph::Csr split_graph;
  if (held) {
    split_graph = remove_held_out(ds.in_edges, *held);
    phases.emplace_back("edge_split", watch.seconds());
  }
  const graph::Csr& graph = held ? split_graph : ds.in_edges;
  // The graph whose indices may be dropped while METIS's adjacency holds the same rows.
  graph::Csr* droppable = held ? &split_graph : owned != nullptr ? &owned->in_edges : nullptr;
  // Feature pages the loader touched are not needed until the write phase.
  ds.features.release_rows(0, ds.features.rows());
  prepare_out_dir(o.out_dir);

  watch.restart();
  std::vector<int32_t> part;
  MetisGraph metis;  // kept past METIS only when it replaces the dropped in-edges
  bool write_from_adj = false;
  if (given != nullptr) {
    PARTITA_CHECK_PARAM(static_cast<int64_t>(given->size()) == ds.num_nodes, "part",
                        "{} entries for {} nodes", given->size(), ds.num_nodes);
    for (size_t v = 0; v < given->size(); ++v)
      PARTITA_CHECK_PARAM((*given)[v] >= 0 && (*given)[v] < o.num_parts, "part",
                          "node {} is assigned to part {}, outside [0, {})", v, (*given)[v],
                          o.num_parts);
    part = *given;
    phases.emplace_back("assign", watch.seconds());
  } else if (o.method == Method::kMetis && o.num_parts > 1) {
    metis = ds.hetero ? metis_graph(homogeneous_rows(ds.in_edges, threads), threads)
                      : metis_graph(graph, threads);
    // The writer needs the typed rows as they are, so they are never dropped.
    if (metis.equals_input && droppable != nullptr && !ds.hetero) {
      std::vector<int64_t>().swap(droppable->indices);  // indptr stays: degrees
      write_from_adj = true;
    }
    phases.emplace_back("symmetrize", watch.seconds());
    MetisAssignOptions mo;
    mo.num_parts = o.num_parts;
    mo.seed = o.seed;
    mo.balance_train = o.balance_train;
    mo.balance_edges = o.balance_edges;
    MetisAssignStats ms;
    part = assign_metis(metis.adj, graph.indptr, ds.train_idx, mo, &ms);
    phases.emplace_back("metis", ms.metis_s);
    if (!write_from_adj) metis = MetisGraph();  // free the adjacency before writing
  } else {
    if (o.method == Method::kRandom && (o.balance_train || o.balance_edges))
      log_warning("`balance_train`/`balance_edges` apply to METIS only; ignored by random");
    log_info("partition: {} assignment of {} nodes to {} part(s)", method_name(o.method),
             ds.num_nodes, o.num_parts);
    part = o.method == Method::kRandom ? assign_random(ds.num_nodes, o.num_parts, o.seed)
                                       : std::vector<int32_t>(ds.num_nodes, 0);
    phases.emplace_back("assign", watch.seconds());
  }

  watch.restart();
  Renumbering numbering = renumber(part, o.num_parts);
  std::vector<int32_t>().swap(part);
  phases.emplace_back("renumber", watch.seconds());

  log_info("partition: writing {} parts to {}", o.num_parts, o.out_dir);
  WriteResult written =
      write_from_adj
          ? write_partition_arrays(ds, metis.adj, numbering, o.out_dir, threads, o.feature_dtype)
          : write_partition_arrays(ds, graph, numbering, o.out_dir, threads, o.feature_dtype);
  phases.emplace_back("write_structure", written.structure_s);
  phases.emplace_back("write_features", written.features_s);
  std::optional<EdgeSplitStats> split_stats;
  if (held) {
    watch.restart();
    split_stats = write_edge_split(*held, numbering, o.out_dir, &written.files);
    phases.emplace_back("write_edge_split", watch.seconds());
  }

  DatasetFacts facts;
  facts.dataset = ds.path;
  facts.num_nodes = ds.num_nodes;
  facts.feat_dim = ds.features.cols();
  facts.num_classes = ds.num_classes;
  std::optional<TypedMeta> typed;
  if (ds.hetero) typed = typed_meta(*ds.hetero, written);
  PartitionMeta meta = assemble_meta(o, facts, std::move(numbering.ranges), std::move(typed),
                                     std::move(written), std::move(phases), std::move(split_stats));
  warn_about_parts(meta.summary, o);
  write_meta(o.out_dir, meta);
  return meta.summary;
}

}  // namespace

const char* method_name(Method method) {
  switch (method) {
    case Method::kMetis:
      return "metis";
    case Method::kRandom:
      return "random";
  }
  return "unknown";
}

PartitionSummary partition_dataset(const data::Dataset& dataset, const PartitionOptions& options) {
  return run_pipeline(dataset, /*owned=*/nullptr, options, {});
}

PartitionSummary partition_dataset_assigned(const data::Dataset& dataset,
                                            const PartitionOptions& options,
                                            const std::vector<int32_t>& part) {
  return run_pipeline(dataset, /*owned=*/nullptr, options, {}, &part);
}

PartitionSummary run_partition(const std::string& dataset_dir, const data::LoadOptions& load,
                               const PartitionOptions& options) {
  check_options(options);
  Stopwatch watch;
  log_info("partition: loading {}", dataset_dir);
  data::Dataset dataset = data::load_dataset(dataset_dir, load);
  Phases phases{{"load", watch.seconds()}};
  log_info("partition: loaded {} nodes, {} edges in {:.2f} s{}", dataset.num_nodes,
           dataset.in_edges.num_entries(), phases[0].second,
           dataset.hetero
               ? fmt::format(" ({} node types, {} relations)", dataset.hetero->num_types(),
                             dataset.hetero->num_relations())
               : std::string());
  PartitionOptions o = options;
  o.undirected = load.undirected;
  return run_pipeline(dataset, &dataset, o, std::move(phases));
}

}  // namespace partita::partition
