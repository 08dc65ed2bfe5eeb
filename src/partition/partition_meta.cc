// Part file names, and the warnings a written partition may deserve.
#include "partition_meta.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "partita/core/log.h"

namespace partita::partition {

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
