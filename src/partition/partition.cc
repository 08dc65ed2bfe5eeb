// The partition pipeline (partition.h): read, split, assign, write (pipeline.h), over a
// communicator. One process runs it on OneRankComm: the same stages, no second path.
#include "partita/partition/partition.h"

#include <optional>
#include <vector>

#include "collective.h"
#include "edge_split_steps.h"
#include "input.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/timer.h"
#include "partita/data/class_count.h"
#include "partita/partition/partition_assigned.h"
#include "partita/partition/pipeline.h"
#include "writer.h"

namespace partita::partition {
namespace {

// Stage 1 on one rank: the whole dataset, any layout (load_dataset). Phase "load".
PartitionInput load_whole(const std::string& dir, const data::LoadOptions& load, Phases& phases) {
  Stopwatch watch;
  log_info("partition: loading {}", dir);
  data::Dataset dataset = data::load_dataset(dir, load);
  phases.emplace_back("load", watch.seconds());
  log_info("partition: loaded {} nodes, {} edges in {:.2f} s{}", dataset.num_nodes,
           dataset.in_edges.num_entries(), phases.back().second,
           dataset.hetero
               ? fmt::format(" ({} node types, {} relations)", dataset.hetero->num_types(),
                             dataset.hetero->num_relations())
               : std::string());
  PartitionInput in = dataset_input(std::move(dataset));
  if (!in.shard.hetero) in.graph.symmetric = load.undirected;
  return in;
}

// Stage 1 on several ranks: this rank's share of the dataset (data/shard.h), each edge sent
// to the owner of its destination's block (build_shard_graph). Phases "read", "build_graph".
PartitionInput read_shares(const std::string& dir, const data::LoadOptions& load, int threads,
                           DistComm& comm, Phases& phases) {
  const bool lead = comm.rank() == 0;
  Stopwatch watch;
  if (lead) log_info("partition: reading {} in {} shares", dir, comm.size());
  PartitionInput in;
  agreed(comm, [&] { in.shard = data::read_dataset_shard(dir, comm.rank(), comm.size()); });
  comm.reached("read");
  // The class count from every rank's census of its block's labels (one allgather): the same
  // count, or the same error, on every rank (as load_dataset counts in one process).
  data::ClassCensus mine;
  mine.add(in.shard.labels);
  data::ClassCountInput classes{
      in.shard.path, {}, in.shard.layout == "chunked" ? in.shard.num_classes : 0, load.num_classes};
  for (const std::vector<int64_t>& labels : gather_ints(mine.classes(), comm))
    classes.census.merge(data::ClassCensus::of(labels));
  in.shard.num_classes = data::resolve_num_classes(classes);
  phases.emplace_back("read", watch.seconds());
  if (lead)
    log_info("partition: read {} nodes, {} listed edges in {:.2f} s", in.shard.num_nodes,
             in.shard.input_edges_total, phases.back().second);
  watch.restart();
  in.graph = build_shard_graph(in.shard, load.undirected, load.reverse_relations, comm, threads);
  in.node_columns = array_columns(std::move(in.shard.node_arrays));
  comm.reached("build_graph");
  phases.emplace_back("build_graph", watch.seconds());
  if (lead)
    log_info("partition: built the in-edges ({} entries over all ranks) in {:.2f} s",
             in.graph.num_edges_total, phases.back().second);
  return in;
}

// Stages 2 and 3, with the split before them. `given`: the assignment of every node (one
// rank) instead of assign_parts's.
PartitionSummary run_stages(PartitionInput in, const PartitionOptions& o, DistComm& comm,
                            Phases phases, const std::vector<int32_t>* given = nullptr) {
  check_input(in, o, comm);
  const bool lead = comm.rank() == 0;
  WriteContext context;
  Stopwatch watch;
  // With an edge split, the graph assigned and written is the one without held-out edges.
  const std::optional<HeldOutEdges> held = make_edge_split(in, o, comm);
  if (held) {
    remove_held_out(in.graph, *held, comm);
    context.edge_split = &*held;
    phases.emplace_back("edge_split", watch.seconds());
    if (lead)
      log_info("partition: held out {} edges for link prediction in {:.2f} s",
               held->source == "dataset" ? "the dataset's" : "sampled", phases.back().second);
  }
  watch.restart();
  Assignment assignment;
  if (given != nullptr) {
    assignment.part = *given;
    assignment.phases.emplace_back("assign", watch.seconds());
  } else {
    if (lead)
      log_info("partition: {} assignment of {} nodes to {} part(s){}", method_name(o.method),
               in.shard.num_nodes, o.num_parts,
               comm.size() > 1 ? fmt::format(" on {} ranks", comm.size()) : std::string());
    assignment = assign_parts({in.graph, in.shard.train_idx, o, comm, std::nullopt, &in.graph});
    comm.reached("assign");
  }
  phases.insert(phases.end(), assignment.phases.begin(), assignment.phases.end());
  context.phases = std::move(phases);
  return write_partition(in, assignment.part, o, comm, std::move(context));
}

}  // namespace

const char* method_name(Method method) {
  return method == Method::kMetis ? "metis" : method == Method::kRandom ? "random" : "unknown";
}

PartitionSummary run_partition(const std::string& dataset_dir, const data::LoadOptions& load,
                               const PartitionOptions& options, DistComm& comm) {
  check_options(options);  // the same on every rank: every rank throws alike
  PartitionOptions o = options;
  o.undirected = load.undirected;
  Phases phases;
  PartitionInput in =
      comm.size() == 1 ? load_whole(dataset_dir, load, phases)
                       : read_shares(dataset_dir, load, resolve_threads(o.threads), comm, phases);
  return run_stages(std::move(in), o, comm, std::move(phases));
}

PartitionSummary run_partition(const std::string& dataset_dir, const data::LoadOptions& load,
                               const PartitionOptions& options) {
  OneRankComm alone;
  return run_partition(dataset_dir, load, options, alone);
}

PartitionSummary partition_dataset(const data::Dataset& dataset, const PartitionOptions& options) {
  OneRankComm alone;
  return run_stages(dataset_input(dataset), options, alone, {});
}

PartitionSummary partition_dataset_assigned(const data::Dataset& dataset,
                                            const PartitionOptions& options,
                                            const std::vector<int32_t>& part) {
  OneRankComm alone;
  return run_stages(dataset_input(dataset), options, alone, {}, &part);
}

}  // namespace partita::partition
