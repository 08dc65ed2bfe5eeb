// A partition run's summary in human-readable form, figures derived from it, and the
// warnings it may deserve.
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "partita/core/log.h"
#include "partition_meta.h"

namespace partita::partition {

int64_t EdgeSplitStats::train() const {
  return std::accumulate(train_per_part.begin(), train_per_part.end(), int64_t{0});
}

int64_t PartitionSummary::empty_parts() const {
  return std::count_if(parts.begin(), parts.end(), [](const PartStats& p) { return p.nodes == 0; });
}

std::string format_summary(const PartitionSummary& s) {
  std::string out;
  double total = 0;
  std::string phases;
  for (const auto& [name, seconds] : s.phase_seconds) {
    phases += fmt::format("{}{} {:.2f} s", phases.empty() ? "" : ", ", name, seconds);
    total += seconds;
  }
  out += fmt::format("time: {:.2f} s ({})\n", total, phases.empty() ? "no phases" : phases);
  out += fmt::format("edge cut: {} of {} edges ({:.2f}%)\n", s.edge_cut, s.num_edges,
                     100.0 * s.edge_cut_fraction);
  out += fmt::format("{:>6} {:>12} {:>14} {:>10} {:>10} {:>10}\n", "part", "nodes", "edges",
                     "train", "valid", "test");
  for (size_t p = 0; p < s.parts.size(); ++p) {
    const PartStats& ps = s.parts[p];
    out += fmt::format("{:>6} {:>12} {:>14} {:>10} {:>10} {:>10}{}\n", p, ps.nodes, ps.edges,
                       ps.train_nodes, ps.valid_nodes, ps.test_nodes,
                       ps.nodes == 0 ? "  (empty)" : "");
  }
  if (!s.type_names.empty()) {  // typed: nodes per type and edges per relation by part
    size_t width = 8;
    for (const std::string& name : s.type_names) width = std::max(width, name.size());
    for (const std::string& name : s.relation_names) width = std::max(width, name.size());
    auto table = [&](const char* title, const std::vector<std::string>& names,
                     std::vector<int64_t> PartStats::*figures) {
      out += fmt::format("{:<{}}", title, width);
      for (size_t p = 0; p < s.parts.size(); ++p)
        out += fmt::format(" {:>12}", "part " + std::to_string(p));
      out += '\n';
      for (size_t i = 0; i < names.size(); ++i) {
        out += fmt::format("{:<{}}", names[i], width);
        for (const PartStats& ps : s.parts) out += fmt::format(" {:>12}", (ps.*figures).at(i));
        out += '\n';
      }
    };
    table("type", s.type_names, &PartStats::type_nodes);
    table("relation", s.relation_names, &PartStats::relation_edges);
  }
  if (const auto& e = s.edge_split) {
    out += fmt::format("edge split ({}", e->source);
    if (e->source == "sampled")
      out += fmt::format(", valid {} test {}", e->valid_fraction, e->test_fraction);
    out += fmt::format("): train {} edges (per part:", e->train());
    for (int64_t rows : e->train_per_part) out += fmt::format(" {}", rows);
    out += fmt::format("), valid {} + {} negatives, test {} + {} negatives\n", e->valid,
                       e->valid_neg, e->test, e->test_neg);
  }
  out += fmt::format("imbalance (max/mean): nodes {:.3f}, edges {:.3f}, train {:.3f}\n",
                     s.node_imbalance, s.edge_imbalance, s.train_imbalance);
  if (const int64_t empty = s.empty_parts(); empty > 0)
    out += fmt::format("warning: {} empty part(s)\n", empty);
  out += fmt::format("peak memory: {}", format_bytes(static_cast<double>(s.peak_rss_bytes)));
  if (!s.rank_peak_rss_bytes.empty()) {
    std::string ranks;
    for (size_t r = 0; r < s.rank_peak_rss_bytes.size(); ++r)
      ranks += fmt::format("{}rank {} {}", r == 0 ? "" : ", ", r,
                           format_bytes(static_cast<double>(s.rank_peak_rss_bytes[r])));
    const int64_t total =
        std::accumulate(s.rank_peak_rss_bytes.begin(), s.rank_peak_rss_bytes.end(), int64_t{0});
    out += fmt::format(" (max over ranks; {}; total {})", ranks,
                       format_bytes(static_cast<double>(total)));
  }
  out += "\n";
  return out;
}

// A part (owning nodes) without training nodes trains on no seeds: legal (its rank still
// samples and serves), but usually not what the user wants. One warning naming the parts.
void warn_about_parts(const PartitionSummary& summary, const PartitionOptions& o) {
  if (const int64_t empty = summary.empty_parts(); empty > 0)
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
