// partita info: summary of a partition directory, optionally verified byte by byte.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "partita/core/log.h"
#include "partita/core/timer.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"

namespace partita::cli {

Action add_info_command(CLI::App& app) {
  struct Flags {
    std::string dir;
    bool verify = false;
  };
  auto flags = std::make_shared<Flags>();
  app.description(
      "Print the summary stored in a partition directory's partita.json. With --verify, also "
      "check every file's checksum, dtype and shape against the metadata and that every id "
      "and label is in range (and edge weights finite and > 0, rows in time order); for a "
      "link-prediction split, also that no held-out edge is in the "
      "graph and no negative is an edge.");
  // Positional as in `partita info DIR`, or --parts DIR as every other command takes it.
  app.add_option("dir,--parts", flags->dir, "Partition directory (positional or --parts)")
      ->required();
  app.add_flag("--verify", flags->verify, "Check checksums, shapes, dtypes and id ranges");
  return [flags] {
    partition::PartitionMeta meta = partition::read_meta(flags->dir);
    // Typed partitions: features per node type, in the "type" lines below.
    const std::string features =
        meta.typed ? "features per type" : fmt::format("{} features", meta.feat_dim);
    std::printf(
        "partition %s: %d parts, %lld nodes, %lld edges, %s, %lld classes, "
        "method %s, seed %llu\n%s",
        flags->dir.c_str(), meta.num_parts, static_cast<long long>(meta.num_nodes),
        static_cast<long long>(meta.num_edges), features.c_str(),
        static_cast<long long>(meta.num_classes), meta.method.c_str(),
        static_cast<unsigned long long>(meta.seed),
        partition::format_summary(meta.summary).c_str());
    if (meta.typed) {
      const partition::TypedMeta& t = *meta.typed;
      std::printf("typed: %d node types, %d relations%s, target type %s, feature dtype %s\n",
                  t.num_types(), t.num_relations(),
                  t.reverse_relations ? " (reverse relations added)" : "",
                  t.node_types[t.target_type].name.c_str(), dtype_name(meta.feature_dtype));
      for (const partition::TypedNodeType& type : t.node_types)
        std::printf("  type %s: %lld nodes, %lld features\n", type.name.c_str(),
                    static_cast<long long>(type.count), static_cast<long long>(type.feat_dim));
      for (int r = 0; r < t.num_relations(); ++r)
        std::printf("  relation %s: %lld edges\n", t.triplet(r).c_str(),
                    static_cast<long long>(t.relations[r].num_edges));
    }
    // The optional arrays (docs/partition-format.md), one line when there are any.
    std::string arrays;
    for (const char* name : partition::kEdgeArrayNames)
      if (meta.has_array(name)) {
        const partition::FileEntry& f = meta.file(partition::part_file(0, name));
        arrays +=
            fmt::format("{}{} {}{} per edge", arrays.empty() ? "" : ", ", name, dtype_name(f.dtype),
                        f.shape.size() == 2 ? fmt::format(" [{}]", f.shape[1]) : "");
      }
    for (const char* name : partition::kNodeArrayNames)
      if (meta.has_array(name))
        arrays += fmt::format("{}{} {} per node", arrays.empty() ? "" : ", ", name,
                              dtype_name(meta.file(partition::part_file(0, name)).dtype));
    if (!arrays.empty()) std::printf("arrays: %s\n", arrays.c_str());
    if (flags->verify) {
      Stopwatch watch;
      partition::VerifyReport report = partition::verify_partition(flags->dir);
      std::printf(
          "verified: %lld files, %s, checksums, shapes, dtypes and id ranges%s OK "
          "(%.2f s)\n",
          static_cast<long long>(report.files),
          format_bytes(static_cast<double>(report.bytes)).c_str(),
          meta.summary.edge_split ? ", edge split" : "", watch.seconds());
    }
    return 0;
  };
}

}  // namespace partita::cli
