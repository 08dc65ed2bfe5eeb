#include "keyword_names.h"

#include "partita/core/parameter_error.h"
#include "partita/core/parameter_words.h"

namespace partita::python {
namespace {

// Sorted by parameter, each once (checked at compile time). The comment names where the
// package takes the keyword.
constexpr ParameterWord kTable[] = {
    {"batch_size", "batch_size"},           // NeighborLoader
    {"bucket_bytes", "bucket_bytes"},       // allreduce_gradients
    {"device", "device"},                   // NeighborLoader: cpu, cuda, cuda:N
    {"exclude", "exclude_seed_edges"},      // LinkNeighborLoader
    {"fanouts", "fanouts"},                 // NeighborLoader, sample_blocks
    {"heads", "heads"},                     // initial_parameters
    {"hidden", "hidden"},                   // initial_parameters
    {"hits_k", "hits_k"},                   // link_metrics, LinkEvalLoader.evaluate
    {"in_memory", "in_memory"},             // DistGraph
    {"layers", "layers"},                   // initial_parameters
    {"max_steps", "max_steps"},             // LinkNeighborLoader
    {"model", "kind"},                      // initial_parameters: sage, gcn, gat
    {"negatives", "neg"},                   // LinkNeighborLoader
    {"negatives_by", "negative_sampling"},  // LinkNeighborLoader: uniform, degree
    {"parts_dir", "parts_dir"},             // DistGraph
    {"prefetch", "prefetch"},               // NeighborLoader
    {"seed", "seed"},                       // NeighborLoader, sample_blocks, initial_parameters
    {"threads", "threads"},                 // NeighborLoader (sampler threads)
    {"timeout_s", "timeout"},               // DistGraph
};

static_assert(sorted_by_parameter(kTable), "kTable: keep it sorted by parameter, each name once");

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& keyword_table() {
  static const std::vector<std::pair<std::string_view, std::string_view>> table =
      word_pairs(kTable);
  return table;
}

std::optional<std::string> keyword_name(std::string_view parameter) {
  return find_word(kTable, parameter);
}

std::string in_keyword_words(std::string_view text) {
  return rename_parameters(text, keyword_name);
}

}  // namespace partita::python
