// The distributed partition pipeline on one rank: read this rank's share, build its block's
// in-edges, assign parts, write (dist_partition.h).
#include <exception>

#include "dist_edge_split.h"
#include "dist_writer.h"
#include "kill_hook.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/data/shard.h"
#include "partita/partition/dist_partition.h"
#include "shard_classes.h"

namespace partita::partition {

PartitionSummary run_partition_distributed(const std::string& dataset_dir,
                                           const data::LoadOptions& load,
                                           const PartitionOptions& options, DistComm& comm) {
  // The same on every rank, so every rank throws alike without a collective.
  PARTITA_CHECK_PARAM(options.num_parts >= 1, "num_parts", "must be at least 1, got {}",
                      options.num_parts);
  PARTITA_CHECK_PARAM(!options.out_dir.empty(), "out_dir", "an output directory is required");
  const bool lead = comm.rank() == 0;
  const int threads = resolve_threads(options.threads);
  PartitionOptions o = options;
  o.undirected = load.undirected;
  DistWriteContext context;
  Stopwatch watch;

  if (lead) log_info("partition: reading {} in {} shares", dataset_dir, comm.size());
  data::DatasetShard shard;
  std::string failure;
  try {
    shard = data::read_dataset_shard(dataset_dir, comm.rank(), comm.size());
  } catch (const std::exception& e) {
    failure = e.what();
  }
  kill_if_asked("read", comm.rank());
  comm.agree(failure);
  shard.num_classes = shard_num_classes(shard, load.num_classes, comm);
  context.phases.emplace_back("read", watch.seconds());
  if (lead)
    log_info("partition: read {} nodes, {} listed edges in {:.2f} s", shard.num_nodes,
             shard.input_edges_total, context.phases.back().second);

  watch.restart();
  const bool typed = shard.hetero.has_value();
  ShardGraph graph =
      build_shard_graph(shard, load.undirected, load.reverse_relations, comm, threads);
  kill_if_asked("build_graph", comm.rank());
  context.phases.emplace_back("build_graph", watch.seconds());
  if (lead)
    log_info("partition: built the in-edges ({} entries over all ranks) in {:.2f} s",
             graph.num_edges_total, context.phases.back().second);

  // With an edge split, the graph assigned and written is the one without held-out edges.
  watch.restart();
  const std::optional<ShardHeldOut> held = shard_edge_split(shard, graph, o, comm);
  if (held) {
    remove_held_out_shard(graph, *held, comm);
    context.edge_split = &*held;
    context.phases.emplace_back("edge_split", watch.seconds());
    if (lead)
      log_info("partition: held out {} edges for link prediction in {:.2f} s",
               held->source == "dataset" ? "the dataset's" : "sampled",
               context.phases.back().second);
  }

  watch.restart();
  if (lead)
    log_info("partition: {} assignment of {} nodes to {} part(s) on {} ranks",
             method_name(o.method), shard.num_nodes, o.num_parts, comm.size());
  const std::vector<int32_t> part = assign_parts_distributed(graph, shard, o, comm);
  kill_if_asked("assign", comm.rank());
  context.phases.emplace_back("assign", watch.seconds());

  if (typed) context.reverse_relations = load.reverse_relations;
  return write_partition_distributed(shard, graph, part, o, comm, std::move(context));
}

}  // namespace partita::partition
