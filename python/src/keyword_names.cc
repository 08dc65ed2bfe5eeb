#include "keyword_names.h"

#include "partita/core/parameter_error.h"
#include "partita/core/parameter_words.h"

namespace partita::python {
namespace {

// Sorted by parameter, each once (checked at compile time). The comment names where the
// package takes the keyword.
constexpr ParameterWord kTable[] = {
    {"avg_degree", "avg_degree"},                  // generate
    {"balance_edges", "balance_edges"},            // partition
    {"balance_train", "balance_train"},            // partition
    {"batch_size", "batch_size"},                  // NeighborLoader
    {"bucket_bytes", "bucket_bytes"},              // allreduce_gradients
    {"checkpoint_dir", "checkpoint"},              // infer
    {"classes", "classes"},                        // generate
    {"dataset", "dataset"},                        // partition
    {"device", "device"},                          // NeighborLoader: cpu, cuda, cuda:N
    {"edge_features", "edge_features"},            // DistGraph, NeighborLoader
    {"edge_split", "edge_split"},                  // partition
    {"exclude", "exclude_seed_edges"},             // LinkNeighborLoader
    {"fanouts", "fanouts"},                        // NeighborLoader, sample_blocks
    {"feat_dim", "feat_dim"},                      // generate
    {"feature_dtype", "feature_dtype"},            // partition
    {"feature_noise", "feature_noise"},            // generate
    {"heads", "heads"},                            // initial_parameters
    {"hidden", "hidden"},                          // initial_parameters
    {"hits_k", "hits_k"},                          // link_metrics, LinkEvalLoader.evaluate, infer
    {"homophily", "homophily"},                    // generate
    {"in_memory", "in_memory"},                    // DistGraph
    {"layers", "layers"},                          // initial_parameters
    {"lr", "lr"},                                  // SparseAdam, SparseAdagrad, SparseSGD
    {"max_steps", "max_steps"},                    // LinkNeighborLoader
    {"method", "method"},                          // partition: metis, random
    {"model", "kind"},                             // initial_parameters: a --model name
    {"negatives", "neg"},                          // LinkNeighborLoader
    {"negatives_by", "negative_sampling"},         // LinkNeighborLoader: uniform, degree
    {"nodes", "nodes"},                            // generate
    {"normalize_features", "normalize_features"},  // infer
    {"num_parts", "num_parts"},                    // partition
    {"optimizer", "optimizer"},                    // the sparse optimizer rules (_C.RowOptimizer)
    {"out_dir", "out"},                            // generate, partition
    {"parts_dir", "parts_dir"},                    // DistGraph
    {"power_law", "power_law"},                    // generate
    {"prefetch", "prefetch"},                      // NeighborLoader
    {"reverse_relations", "reverse"},              // partition
    {"seed", "seed"},                              // every function that draws
    {"shape", "hetero"},                           // generate
    {"test_fraction", "test_fraction"},            // generate
    {"threads", "threads"},                        // NeighborLoader (sampler threads)
    {"timeout_s", "timeout"},                      // DistGraph
    {"torch_threads", "torch_threads"},            // infer
    {"train_fraction", "train_fraction"},          // generate
    {"undirected", "undirected"},                  // partition
    {"valid_fraction", "valid_fraction"},          // generate
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
