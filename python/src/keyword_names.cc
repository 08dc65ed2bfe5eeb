#include "keyword_names.h"

#include <algorithm>
#include <iterator>

#include "partita/core/parameter_error.h"

namespace partita::python {
namespace {

struct Entry {
  std::string_view parameter;  // the library's name
  std::string_view keyword;    // the partita package's
};

// Sorted by parameter, each once (checked at compile time). The comment names where the
// package takes the keyword.
constexpr Entry kTable[] = {
    {"batch_size", "batch_size"},      // NeighborLoader
    {"bucket_bytes", "bucket_bytes"},  // allreduce_gradients
    {"fanouts", "fanouts"},            // NeighborLoader, sample_blocks
    {"heads", "heads"},                // initial_parameters
    {"hidden", "hidden"},              // initial_parameters
    {"in_memory", "in_memory"},        // DistGraph
    {"layers", "layers"},              // initial_parameters
    {"model", "kind"},                 // initial_parameters: sage, gcn, gat
    {"parts_dir", "parts_dir"},        // DistGraph
    {"prefetch", "prefetch"},          // NeighborLoader
    {"seed", "seed"},                  // NeighborLoader, sample_blocks, initial_parameters
    {"threads", "threads"},            // NeighborLoader (sampler threads)
    {"timeout_s", "timeout"},          // DistGraph
};

constexpr bool sorted_and_unique() {
  for (size_t i = 1; i < std::size(kTable); ++i)
    if (!(kTable[i - 1].parameter < kTable[i].parameter)) return false;
  return true;
}
static_assert(sorted_and_unique(), "kTable: keep it sorted by parameter, each name once");

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& keyword_table() {
  static const std::vector<std::pair<std::string_view, std::string_view>> table = [] {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    for (const Entry& e : kTable) out.emplace_back(e.parameter, e.keyword);
    return out;
  }();
  return table;
}

std::optional<std::string> keyword_name(std::string_view parameter) {
  const auto* end = std::end(kTable);
  const auto* it =
      std::lower_bound(std::begin(kTable), end, parameter,
                       [](const Entry& e, std::string_view name) { return e.parameter < name; });
  if (it == end || it->parameter != parameter) return std::nullopt;
  return std::string(it->keyword);
}

std::string in_keyword_words(std::string_view text) {
  return rename_parameters(text, keyword_name);
}

}  // namespace partita::python
