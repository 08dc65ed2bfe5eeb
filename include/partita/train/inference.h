#pragma once
// Layer-wise full-neighbourhood inference of a trained node classifier (issue 12,
// `partita infer`), as DGL's and PyG's evaluation: layer l is computed for EVERY node of
// the graph before layer l+1, each node aggregating ALL its in-neighbours, so that no
// sampling enters the outputs and a node's result does not depend on the batch it was in.
//
// Work. Each rank computes the rows of its own nodes: in worker mode the nodes of its part
// (rank r owns part r's global-id range); on a 1-part directory (replicated mode) an even
// share of [0, N) per rank. It takes them in batches of options.batch_size destination
// nodes: one hop of fanout -1 through the session's sampler gives the batch's block (all
// in-edges), whose source rows are looked up in the previous layer's table, and the model's
// layer (nn::GnnModel::forward_layer, eval mode, no grad) gives the batch's rows.
//
// Halo exchange. A rank's rows read, besides its own rows, its halo: the rows outside its
// range that its rows' in-edges come from (planned once from its CSC; one allgather of
// every rank's halo ids tells each rank which of its rows others need). Layer 0's table is
// the input features (float32, row-normalized with options.normalize_features): its own
// rows locally, its halo's fetched from their owners (store/feature_store.h). After every
// layer each rank contributes the rows of its range that some rank needs, in allgather
// rounds of at most 256 MiB, and keeps the ones of its own halo. Memory per rank: its rows
// and its halo's, for a layer's input and output, plus one batch and one round:
// O((own + halo) x width), not O(N x width). (With an allgather every rank receives every
// rank's served rows, so the traffic, not the memory, grows with the ranks' total halo.)
//
// GCN normalizes with every source's graph in-degree: a rank's own from its CSC, its
// halo's fetched once.
//
// Results in ORIGINAL node-id order (node_map.npy: the dataset's ids, which must be
// 0..N-1): on rank 0 only, the embeddings: the input of the output layer (the last hidden
// layer's output; the features for a 1-layer model), or for a link-prediction model
// (options.output_embeddings) the output layer's rows, the embeddings its decoder scores;
// on every rank, the argmax of the logits (none for a link model) and the accuracy on the
// test ids, every rank's counted once.
//
// Device: the model's (that of its parameters). Each layer's table (own and halo rows) is
// copied there once, each batch's block and row indices through train/batch_staging.h, and
// the batch's output rows come back to the host, where the halo exchange and the outputs
// are made: a GPU run writes the same files. On the CPU nothing is copied.
//
// Collective contract: every rank of the session calls infer_full_graph with the same
// options and a model of the same weights. Worker mode only (server-client sessions:
// UsageError).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "partita/nn/gnn_model.h"
#include "partita/nn/link_model.h"
#include "partita/runtime/session.h"
#include "partita/train/link_metrics.h"

namespace partita::train {

struct InferenceOptions {
  int64_t batch_size = 4096;        // destination nodes per forward_layer call, >= 1
  bool normalize_features = false;  // as TrainOptions::normalize_features of the training run
  int torch_threads = 0;            // torch intra-op threads; 0: leave torch's setting
  // Link-prediction models: the embeddings are the output layer's rows (the encoder's
  // output, which the decoder scores) and there are no predictions nor test accuracy.
  bool output_embeddings = false;
};

struct InferenceOutput {
  int64_t num_nodes = 0;
  int64_t embedding_dim = 0;
  std::vector<float> embeddings;     // [num_nodes, embedding_dim], row = original id; rank 0
  std::vector<int64_t> predictions;  // [num_nodes], class of each original id; empty for
                                     // options.output_embeddings
  int64_t test_total = 0;            // test ids over all ranks
  int64_t test_correct = 0;
  double test_acc = 0;  // test_correct / test_total (0 without test ids)
};

// The model options a checkpoint signature (Trainer::config_signature: kind, in_dim,
// hidden, out_dim, layers, heads, norm, optimizer; a link model's adds its tag and decoder)
// describes, checked against the partition: UsageError naming `source` when the signature
// is not a GraphSAGE/GCN/GAT/GATv2/GINE one (R-GCN and HAN checkpoints are not supported yet), its
// feature dimension or (node models) class count differ from the partition's, or it reads
// edge features (kEdgeFeaturesSignatureTag) and the partition has none of that width. Precision is
// fp32 (bf16-trained weights are fp32).
nn::GnnOptions model_options_from_signature(const std::vector<int64_t>& signature,
                                            const store::DistGraph& graph,
                                            const std::string& source);

// True for the signature of a link-prediction model (checkpoint.h kLinkSignatureTag).
bool is_link_signature(const std::vector<int64_t>& signature);

// A trained model: a node classifier, or (link set) a link predictor whose encoder is
// `model`.
struct LoadedModel {
  std::shared_ptr<nn::GnnModel> model;
  std::shared_ptr<nn::LinkModel> link;
  std::string source;  // the checkpoint file read (rank 0's path)
  // The training run's settings as the checkpoint records them (CheckpointMeta::settings;
  // empty for checkpoints written before they were recorded).
  std::vector<std::pair<std::string, std::string>> settings;
};

// Reads the latest checkpoint of `checkpoint_dir` on rank 0 and broadcasts it; builds the
// model its signature describes on `device` (check it first: train/device.h) and loads its
// weights (eval mode). Collective. UsageError when the directory holds no checkpoint or the
// checkpoint does not fit the partition; FormatError/IoError on a damaged or unreadable one.
LoadedModel load_model_for_inference(runtime::Session& session, const std::string& checkpoint_dir,
                                     torch::Device device = torch::kCPU);

// The link metrics of the held-out pairs of the partition's edge split (edges/test_*.npy,
// or valid_* when test is false) scored by `link`'s decoder on full-graph embeddings
// (InferenceOutput::embeddings of a run with output_embeddings, rows in original id order:
// call it on rank 0). Local. UsageError when the partition has no edge split.
LinkMetrics held_out_link_metrics(nn::LinkModel& link, const InferenceOutput& out,
                                  const store::DistGraph& graph, bool test, int64_t hits_k);

// The in-degree in the whole graph of every global id, on every rank (an allgather of each
// rank's range; in replicated mode each rank's share). Collective; worker mode.
std::vector<int64_t> all_in_degrees(runtime::Session& session);

// See above. Throws UsageError on bad options, Error on an inconsistent partition.
InferenceOutput infer_full_graph(runtime::Session& session, nn::GnnModel& model,
                                 const InferenceOptions& options);

}  // namespace partita::train
