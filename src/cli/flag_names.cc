#include "flag_names.h"

#include "partita/core/parameter_error.h"
#include "partita/core/parameter_words.h"

namespace partita::cli {
namespace {

// Sorted by parameter, each once (checked at compile time). Names follow the options structs:
// data::GenerateOptions, data::LoadOptions, partition::PartitionOptions,
// runtime::SessionOptions, train::TrainOptions, loader::BatchPipelineOptions, ...; where a
// field's name differs from its flag (out_dir, shape, reverse_relations, timeout_s,
// cache_presample_batches, hits_k), the entry is the only place that says so.
constexpr ParameterWord kTable[] = {
    {"attention_dropout", "--attention-dropout"},      // train
    {"avg_degree", "--avg-degree"},                    // generate
    {"balance_edges", "--balance-edges"},              // partition
    {"balance_train", "--balance-train"},              // partition
    {"batch_size", "--batch-size"},                    // train, infer, sample-bench
    {"batches", "--batches"},                          // sample-bench
    {"bind", "--bind"},                                // launch
    {"cache_presample_batches", "--cache-presample"},  // train, sample-bench
    {"cache_ratio", "--cache-ratio"},                  // train, sample-bench
    {"checkpoint_dir", "--checkpoint-dir"},            // train, infer
    {"checksum", "--checksum"},                        // train
    {"chunk_rows", "--chunk-rows"},                    // generate
    {"classes", "--classes"},                          // generate
    {"cores_per_host", "--cores-per-host"},            // launch
    {"dataset", "--dataset"},                          // partition
    {"decoder", "--decoder"},                          // train (link)
    {"device", "--device"},                            // train, infer
    {"dropout", "--dropout"},                          // train
    {"dry_run", "--dry-run"},                          // launch
    {"edge_feat_dim", "--edge-feat-dim"},              // generate
    {"edge_features", "--edge-features"},              // train
    {"edge_split", "--edge-split"},                    // partition
    {"edge_split_by", "--edge-split-by"},              // partition
    {"embed_init", "--embed-init"},                    // train (R-GCN)
    {"embed_lr", "--embed-lr"},                        // train (R-GCN)
    {"env", "--env"},                                  // launch
    {"epochs", "--epochs"},                            // train
    {"eval", "--eval"},                                // train
    {"eval_every", "--eval-every"},                    // train
    {"exclude", "--exclude"},                          // train (link)
    {"fanouts", "--fanouts"},                          // train, sample-bench
    {"feat_dim", "--feat-dim"},                        // generate
    {"feature_dtype", "--feature-dtype"},              // partition, generate
    {"feature_noise", "--feature-noise"},              // generate
    {"force", "--force"},                              // train, infer
    {"gpu_cache_ratio", "--gpu-cache-ratio"},          // train
    {"heads", "--heads"},                              // train
    {"hidden", "--hidden"},                            // train
    {"hits_k", "--metric hits@K"},                     // train (link); infer: --hits-k
    {"homophily", "--homophily"},                      // generate
    {"host_local", "--host-local"},                    // train, infer, sample-bench
    {"hostfile", "--hostfile"},                        // launch
    {"hosts", "--hosts"},                              // launch
    {"in_memory", "--in-memory"},                      // sample-bench
    {"kernels", "--kernels"},                          // train
    {"layers", "--layers"},                            // train
    {"log_every", "--log-every"},                      // train
    {"lr", "--lr"},                                    // train
    {"max_steps", "--max-steps"},                      // train
    {"metapaths", "--metapaths"},                      // train (HAN)
    {"method", "--method"},                            // partition
    {"metric", "--metric"},                            // train (link)
    {"metrics_out", "--metrics-out"},                  // train
    {"model", "--model"},                              // train
    {"mpirun", "--mpirun"},                            // launch
    {"negatives", "--negatives"},                      // train (link)
    {"negatives_by", "--negatives-by"},                // train (link)
    {"node_chunk_rows", "--node-chunk-rows"},          // generate
    {"nodes", "--nodes"},                              // generate
    {"normalize_features", "--normalize-features"},    // train, infer
    {"num_bases", "--num-bases"},                      // train (R-GCN)
    {"num_classes", "--num-classes"},                  // partition
    {"num_parts", "--num-parts"},                      // partition
    {"optimizer", "--optimizer"},                      // train
    {"out_dir", "--out"},                              // generate, partition, infer
    {"oversubscribe", "--oversubscribe"},              // launch
    {"parts_dir", "--parts"},                          // train, infer, info, sample-bench
    {"power_law", "--power-law"},                      // generate
    {"precision", "--precision"},                      // train
    {"prefetch", "--prefetch"},                        // train
    {"procs_per_host", "--procs-per-host"},            // launch
    {"profile", "--profile"},                          // train
    {"progress", "--progress"},                        // train
    {"progress_every_s", "--progress-every"},          // train
    {"resume", "--resume"},                            // train
    {"reverse_relations", "--no-reverse"},             // partition (the flag turns it off)
    {"sample_on", "--sample-on"},                      // train
    {"sample_weight", "--sample-weight"},              // train
    {"scale", "--scale"},                              // generate (--shape papers100m)
    {"seed", "--seed"},                                // every command that draws
    {"servers", "--servers"},                          // train, sample-bench
    {"shape", "--hetero"},                             // generate
    {"split", "--split"},                              // partition (OGB split folder)
    {"task", "--task"},                                // train
    {"teardown_timeout", "--teardown-timeout"},        // launch
    {"temporal", "--temporal"},                        // train
    {"temporal_strategy", "--temporal-strategy"},      // train
    {"test_fraction", "--test-fraction"},              // generate
    {"threads", "--threads"},                          // generate, partition, train, ...
    {"timeout_s", "--timeout"},                        // train, infer, sample-bench
    {"topology", "--topology"},                        // train, sample-bench
    {"torch_threads", "--torch-threads"},              // train, infer
    {"train_fraction", "--train-fraction"},            // generate
    {"undirected", "--undirected"},                    // partition
    {"valid_fraction", "--valid-fraction"},            // generate
    {"verify", "--verify"},                            // info
    {"weight_decay", "--weight-decay"},                // train
};

static_assert(sorted_by_parameter(kTable), "kTable: keep it sorted by parameter, each name once");

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& flag_table() {
  static const std::vector<std::pair<std::string_view, std::string_view>> table =
      word_pairs(kTable);
  return table;
}

std::optional<std::string> flag_name(std::string_view parameter) {
  return find_word(kTable, parameter);
}

std::string in_flag_words(std::string_view text) { return rename_parameters(text, flag_name); }

}  // namespace partita::cli
