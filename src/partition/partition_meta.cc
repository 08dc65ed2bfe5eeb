// partita.json's content for a written partition, and the warnings it may deserve.
#include "partition_meta.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "partita/core/log.h"
#include "partita/core/timer.h"

namespace partita::partition {
namespace {

// The largest part's share over the mean (1 when the total is 0).
double imbalance(const std::vector<PartStats>& parts, int64_t PartStats::*count) {
  int64_t total = 0, max = 0;
  for (const PartStats& p : parts) {
    total += p.*count;
    max = std::max(max, p.*count);
  }
  if (total == 0 || parts.empty()) return 1.0;
  return static_cast<double>(max) * static_cast<double>(parts.size()) / static_cast<double>(total);
}

}  // namespace

PartitionMeta assemble_meta(const PartitionOptions& o, const data::DatasetShard& shard,
                            WriteResult written) {
  PartitionMeta meta;
  meta.num_parts = o.num_parts;
  meta.num_nodes = shard.num_nodes;
  meta.feat_dim = shard.hetero ? 0 : shard.features.dim;
  meta.feature_dtype = o.feature_dtype;
  meta.num_classes = shard.num_classes;
  meta.ranges = std::move(written.ranges);
  meta.method = method_name(o.method);
  meta.seed = o.seed;
  meta.balance_train = o.balance_train;
  meta.balance_edges = o.balance_edges;
  meta.undirected = o.undirected;
  meta.dataset = shard.path;
  if (const auto& h = shard.hetero) {
    // The schema, each type's feature width, the relations' totals over the parts written.
    TypedMeta& m = meta.typed.emplace();
    for (int t = 0; t < h->num_types(); ++t) {
      const data::NodeType& type = h->node_types[t];
      m.node_types.push_back({type.name, type.count, shard.type_features.at(t).dim, type.offset});
    }
    for (int r = 0; r < h->num_relations(); ++r) {
      const data::Relation& rel = h->relations[r];
      int64_t edges = 0;
      for (const PartStats& p : written.parts) edges += p.relation_edges[r];
      m.relations.push_back({rel.name, rel.src_type, rel.dst_type, edges, rel.reverse});
    }
    m.target_type = h->target_type;
    m.reverse_relations = std::any_of(h->relations.begin(), h->relations.end(),
                                      [](const data::Relation& r) { return r.reverse; });
    m.type_starts = std::move(written.type_starts);
  }
  meta.files = std::move(written.files);
  // The summary: totals, cut fraction, imbalances and the peak RSS so far.
  PartitionSummary& s = meta.summary;
  // Microseconds are plenty, and keep partita.json readable.
  for (auto& phase : written.phases) phase.second = std::round(phase.second * 1e6) / 1e6;
  s.phase_seconds = std::move(written.phases);
  for (const PartStats& p : written.parts) {
    s.num_nodes += p.nodes;
    s.num_edges += p.edges;
  }
  meta.num_edges = s.num_edges;
  s.edge_cut = written.edge_cut;
  s.edge_cut_fraction = s.num_edges > 0 ? static_cast<double>(s.edge_cut) / s.num_edges : 0.0;
  s.node_imbalance = imbalance(written.parts, &PartStats::nodes);
  s.edge_imbalance = imbalance(written.parts, &PartStats::edges);
  s.train_imbalance = imbalance(written.parts, &PartStats::train_nodes);
  s.parts = std::move(written.parts);
  s.peak_rss_bytes = peak_rss_bytes();
  s.edge_split = std::move(written.edge_split);
  if (meta.typed) {
    for (const TypedNodeType& t : meta.typed->node_types) meta.summary.type_names.push_back(t.name);
    for (int r = 0; r < meta.typed->num_relations(); ++r)
      meta.summary.relation_names.push_back(meta.typed->triplet(r));
  }
  return meta;
}

std::string part_file(int part, const std::string& name) {
  return fmt::format("part{}/{}.npy", part, name);
}

// A part (owning nodes) without training nodes trains on no seeds: legal (its rank still
// samples and serves), but usually not what the user wants. One warning naming the parts.
void warn_about_parts(const PartitionSummary& summary, const PartitionOptions& o) {
  const int64_t empty = summary.empty_parts();
  if (empty > 0)
    log_warning(
        "partition: {} of {} parts own no node; the partition is valid but those ranks "
        "will hold no data",
        empty, o.num_parts);
  std::vector<int> parts;
  int64_t train = 0;
  for (size_t p = 0; p < summary.parts.size(); ++p) {
    train += summary.parts[p].train_nodes;
    if (summary.parts[p].nodes > 0 && summary.parts[p].train_nodes == 0)
      parts.push_back(static_cast<int>(p));
  }
  if (parts.empty() || train == 0) return;
  const bool one = parts.size() == 1;
  log_warning(
      "partition: {} {} own{} no training node: {} train{} on no seeds (still sampling "
      "and serving){}",
      one ? "part" : "parts", fmt::join(parts, ", "), one ? "s" : "",
      one ? "its rank" : "their ranks", one ? "s" : "",
      o.method == Method::kMetis && !o.balance_train
          ? "; `balance_train` spreads the training nodes over the parts"
          : "");
}

}  // namespace partita::partition
