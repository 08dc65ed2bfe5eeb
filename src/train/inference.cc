// Layer-wise full-neighbourhood inference: see inference.h.
#include "partita/train/inference.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "partita/core/error.h"
#include "partita/loader/link_batches.h"
#include "partita/nn/block_tensors.h"
#include "partita/sample/block_builder.h"
#include "partita/train/checkpoint.h"
#include "partita/train/trainer.h"
#include "feature_tensors.h"

namespace partita::train {
namespace {

// Bytes of one allgather round at most (the collectives' total must fit an int).
constexpr int64_t kGatherBytes = int64_t{1} << 28;
// Sampling-key epoch of inference: apart from training and evaluation (fanout -1 draws
// nothing random anyway).
constexpr uint64_t kInferenceTag = uint64_t{1} << 41;

// [begin, end) of the global ids whose rows this rank computes.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

Range my_range(const runtime::Session& session) {
  const store::DistGraph& g = session.graph();
  if (!g.replicated()) return {g.first_node(), g.end_node()};
  const int64_t n = g.num_nodes(), r = session.rank(), p = session.size();
  return {n * r / p, n * (r + 1) / p};
}

// Every rank's `mine` ([rows, width] contiguous, rows = its range's size) concatenated in
// rank order, on every rank: the whole table in global-id order (ranks' ranges are
// ascending and adjacent). In rounds of at most kGatherBytes.
torch::Tensor gather_rows(Collectives& coll, const torch::Tensor& mine,
                          const std::vector<int64_t>& counts) {
  const int64_t width = mine.size(1);
  const int64_t row_bytes = width * static_cast<int64_t>(mine.element_size());
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  torch::Tensor all = torch::empty({total, width}, mine.options());
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  const int64_t chunk =
      std::max<int64_t>(1, kGatherBytes / std::max<int64_t>(1, row_bytes * coll.size()));
  const auto* src = static_cast<const uint8_t*>(mine.data_ptr());
  auto* dst = static_cast<uint8_t*>(all.data_ptr());
  for (int64_t first = 0; first < most; first += chunk) {
    const int64_t rows = std::clamp<int64_t>(mine.size(0) - first, 0, chunk);
    std::vector<uint8_t> piece(static_cast<size_t>(rows * row_bytes));
    if (rows > 0) std::memcpy(piece.data(), src + first * row_bytes, piece.size());
    const std::vector<uint8_t> got = coll.allgather(piece);
    int64_t offset = 0, at = 0;  // offset: rank r's first row in `all`; at: in `got`
    for (int64_t count : counts) {
      const int64_t n = std::clamp<int64_t>(count - first, 0, chunk);
      if (n > 0) std::memcpy(dst + (offset + first) * row_bytes, got.data() + at, n * row_bytes);
      at += n * row_bytes;
      offset += count;
    }
  }
  return all;
}

// The input features of `range` as float32 [rows, feat_dim].
torch::Tensor range_features(const store::DistGraph& g, Range range, bool normalize) {
  const int64_t local = range.begin - g.first_node();
  auto* rows = const_cast<uint8_t*>(g.features()) + local * g.feature_row_bytes();
  torch::Tensor x = torch::from_blob(rows, {range.size(), g.feat_dim()},
                                     torch_type_of(g.feature_dtype()))
                        .to(torch::kFloat32);  // a copy, also for float32 rows
  if (!normalize) return x;
  return row_normalized(x, [&](int64_t row, double sum) {
    return fmt::format("--normalize-features: the features of node {} (partition id) sum to "
                       "{:g}; leave the flag off for features that are not non-negative",
                       range.begin + row, sum);
  });
}

// In-degree (in the whole graph) of every node of `range`.
std::vector<int64_t> range_degrees(const store::DistGraph& g, Range range) {
  const ArrayView<const int64_t> indptr = g.indptr();
  std::vector<int64_t> out(static_cast<size_t>(range.size()));
  for (int64_t i = 0; i < range.size(); ++i) {
    const int64_t local = range.begin - g.first_node() + i;
    out[static_cast<size_t>(i)] = indptr[local + 1] - indptr[local];
  }
  return out;
}

torch::Tensor as_tensor(const std::vector<int64_t>& values) {
  return torch::tensor(at::ArrayRef<int64_t>(values), torch::kInt64);
}

}  // namespace

nn::GnnOptions model_options_from_signature(const std::vector<int64_t>& s,
                                            const store::DistGraph& graph,
                                            const std::string& source) {
  PARTITA_CHECK(s.empty() || s[0] != nn::RgcnModel::kSignatureTag, UsageError,
                "{}: an R-GCN checkpoint; infer supports GraphSAGE, GCN and GAT models only",
                source);
  const bool link = is_link_signature(s);
  PARTITA_CHECK((s.size() == 8 || link) && s[0] >= 0 && s[0] <= 2 && s[1] > 0 && s[3] > 0 && s[4] >= 1 &&
                    s[5] >= 1 && s[6] >= 0 && s[6] <= 2,
                UsageError, "{}: not the checkpoint of a GraphSAGE, GCN or GAT model", source);
  nn::GnnOptions o;
  o.kind = static_cast<nn::ConvKind>(s[0]);
  o.in_dim = s[1];
  o.hidden = s[2];
  o.out_dim = s[3];
  o.layers = s[4];
  o.heads = s[5];
  o.norm = static_cast<nn::NormKind>(s[6]);
  o.dropout = 0;
  o.attention_dropout = 0;
  PARTITA_CHECK(!graph.typed() && o.in_dim == graph.feat_dim() &&
                    (link || o.out_dim == graph.num_classes()),
                UsageError,
                "{}: written for another partition ({} features, {} classes; {} has {}{} "
                "features, {} classes)",
                source, o.in_dim, o.out_dim, graph.dir(), graph.typed() ? "typed, " : "",
                graph.feat_dim(), graph.num_classes());
  return o;
}

bool is_link_signature(const std::vector<int64_t>& s) {
  return s.size() == 10 && s[8] == kLinkSignatureTag && s[9] >= 0 && s[9] <= 1;
}

LoadedModel load_model_for_inference(runtime::Session& session, const std::string& dir) {
  const SharedCheckpoint checkpoint = broadcast_latest_checkpoint(session.collectives(), dir);
  PARTITA_CHECK(checkpoint.found, UsageError,
                "--checkpoint-dir: no checkpoint in {} (missing, or holds no checkpoint-<E>.pt)",
                dir);
  const std::string& bytes = checkpoint.bytes;
  const std::string& source = checkpoint.source;

  const CheckpointMeta meta = read_checkpoint_meta(bytes, source);
  const nn::GnnOptions options = model_options_from_signature(meta.signature, session.graph(), source);
  LoadedModel loaded;
  std::shared_ptr<torch::nn::Module> model;
  if (is_link_signature(meta.signature)) {
    loaded.link = std::make_shared<nn::LinkModel>(
        options, static_cast<nn::LinkDecoder>(meta.signature[9]));
    loaded.model = loaded.link->encoder_ptr();
    model = loaded.link;
  } else {
    loaded.model = std::make_shared<nn::GnnModel>(options);
    model = loaded.model;
  }
  // The archive holds the optimizer's state too: load it into one of the same kind.
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (meta.signature[7] == static_cast<int64_t>(OptimizerKind::kSgd)) {
    optimizer = std::make_unique<torch::optim::SGD>(model->parameters(),
                                                    torch::optim::SGDOptions(0.1));
  } else {
    optimizer = std::make_unique<torch::optim::Adam>(model->parameters(),
                                                     torch::optim::AdamOptions(1e-3));
  }
  load_checkpoint(bytes, source, *model, *optimizer);
  model->eval();
  return loaded;
}

std::vector<int64_t> all_in_degrees(runtime::Session& session) {
  return session.collectives().allgather(range_degrees(session.graph(), my_range(session)));
}

InferenceOutput infer_full_graph(runtime::Session& session, nn::GnnModel& model,
                                 const InferenceOptions& options) {
  PARTITA_CHECK(options.batch_size >= 1, UsageError, "--batch-size: must be >= 1, got {}",
                options.batch_size);
  PARTITA_CHECK(session.role() == runtime::Role::kWorker, UsageError,
                "infer runs in worker mode only (no --servers)");
  const store::DistGraph& g = session.graph();
  PARTITA_CHECK(!g.typed(), UsageError, "infer: {} is a typed partition (not supported yet)",
                g.dir());
  if (options.torch_threads > 0) torch::set_num_threads(options.torch_threads);
  torch::NoGradGuard no_grad;
  model.eval();
  Collectives& coll = session.collectives();
  const Range range = my_range(session);
  const std::vector<int64_t> counts = coll.allgather(std::vector<int64_t>{range.size()});
  const int64_t n = g.num_nodes();
  PARTITA_CHECK(std::accumulate(counts.begin(), counts.end(), int64_t{0}) == n, Error,
                "infer: the ranks' nodes do not add up to the graph's {}", n);
  const int64_t L = model.options().layers;
  const bool gcn = model.options().kind == nn::ConvKind::kGcn;
  std::vector<int64_t> degrees;
  if (gcn) degrees = all_in_degrees(session);

  sample::BlockBuilder builder;
  sample::BlockOptions block_options;
  block_options.fanouts = {-1};
  block_options.key = {0, kInferenceTag, 0};
  torch::Tensor table =
      gather_rows(coll, range_features(g, range, options.normalize_features), counts);
  torch::Tensor embeddings_global = table;  // the output layer's input, once known
  torch::Tensor mine;                       // this rank's rows of the current layer
  for (int64_t l = 0; l < L; ++l) {
    if (l + 1 == L) embeddings_global = table;
    std::vector<torch::Tensor> pieces;
    for (int64_t first = range.begin; first < range.end; first += options.batch_size) {
      const int64_t last = std::min(range.end, first + options.batch_size);
      std::vector<int64_t> seeds(static_cast<size_t>(last - first));
      std::iota(seeds.begin(), seeds.end(), first);
      block_options.key.batch = static_cast<uint64_t>(first);
      const sample::SampledBatch sampled =
          builder.build(ArrayView<const int64_t>(seeds), block_options, session.sampler());
      const sample::Block& block = sampled.blocks[0];
      nn::BlockTensors tensors;
      if (gcn) {
        std::vector<int64_t> src_degrees(block.src_nodes.size());
        for (size_t i = 0; i < src_degrees.size(); ++i)
          src_degrees[i] = degrees[static_cast<size_t>(block.src_nodes[i])];
        tensors = nn::to_block_tensors(sampled.blocks, src_degrees)[0];
      } else {
        tensors = nn::to_block_tensors(block);
      }
      const torch::Tensor x = table.index_select(0, as_tensor(block.src_nodes));
      pieces.push_back(model.forward_layer(l, tensors, x).to(torch::kFloat32));
    }
    const int64_t width = l + 1 == L ? model.options().out_dim : model.layer_in_dim(l + 1);
    mine = pieces.empty() ? torch::zeros({0, width}) : torch::cat(pieces).contiguous();
    if (l + 1 < L) table = gather_rows(coll, mine, counts);
  }
  if (options.output_embeddings) embeddings_global = gather_rows(coll, mine, counts);

  // Predictions of this rank's rows; test accuracy over every rank's test ids in its range.
  const torch::Tensor predicted = mine.argmax(1).to(torch::kInt64).contiguous();
  const auto* pred = predicted.data_ptr<int64_t>();
  std::vector<int64_t> test{0, 0};  // correct, total
  for (int64_t gid : g.test_ids()) {
    if (gid < range.begin || gid >= range.end) continue;
    test[1] += 1;
    test[0] += pred[gid - range.begin] == g.labels()[gid - g.first_node()] ? 1 : 0;
  }
  coll.allreduce_sum(test);

  // Everything into original-id order, on every rank.
  const ArrayView<const int64_t> local_originals = g.original_ids();
  std::vector<int64_t> originals(local_originals.begin() + (range.begin - g.first_node()),
                                 local_originals.begin() + (range.end - g.first_node()));
  originals = coll.allgather(originals);
  const torch::Tensor all_predicted =
      gather_rows(coll, predicted.reshape({-1, 1}), counts).reshape(-1);
  std::vector<int64_t> seen(static_cast<size_t>(n), 0);
  InferenceOutput out;
  out.num_nodes = n;
  out.embedding_dim = embeddings_global.size(1);
  out.embeddings.resize(static_cast<size_t>(n * out.embedding_dim));
  out.predictions.assign(static_cast<size_t>(n), -1);
  const size_t row_bytes = static_cast<size_t>(out.embedding_dim) * sizeof(float);
  const auto* rows = embeddings_global.contiguous().data_ptr<float>();
  const auto* classes = all_predicted.data_ptr<int64_t>();
  for (int64_t gid = 0; gid < n; ++gid) {
    const int64_t o = originals[static_cast<size_t>(gid)];
    PARTITA_CHECK(o >= 0 && o < n && seen[static_cast<size_t>(o)]++ == 0, Error,
                  "{}: node_map is not a permutation of 0..{} (original id {})", g.dir(), n - 1,
                  o);
    out.predictions[static_cast<size_t>(o)] = classes[gid];
    std::memcpy(out.embeddings.data() + o * out.embedding_dim,
                rows + gid * out.embedding_dim, row_bytes);
  }
  if (options.output_embeddings) {
    out.predictions.clear();
    test = {0, 0};
  }
  out.test_correct = test[0];
  out.test_total = test[1];
  out.test_acc = test[1] > 0 ? static_cast<double>(test[0]) / static_cast<double>(test[1]) : 0;
  return out;
}

LinkMetrics held_out_link_metrics(nn::LinkModel& link, const InferenceOutput& out,
                                  const store::DistGraph& graph, bool test, int64_t hits_k) {
  PARTITA_CHECK(graph.meta().summary.edge_split.has_value(), UsageError,
                "{}: a link-prediction model, but the partition has no edge split to score "
                "(partition with --edge-split)",
                graph.dir());
  const ArrayView<const int64_t> node_map = graph.node_map();
  torch::NoGradGuard no_grad;
  const torch::Tensor h =
      torch::from_blob(const_cast<float*>(out.embeddings.data()),
                       {out.num_nodes, out.embedding_dim}, torch::kFloat32);
  std::vector<float> scores[2];  // positives, negatives
  for (int negative = 0; negative < 2; ++negative) {
    const std::string file =
        graph.dir() + "/" + partition::kEdgeSplitFiles[(test ? 2 : 0) + negative];
    const std::vector<int64_t> pairs = loader::read_pair_file(file, graph.num_nodes());
    std::vector<int64_t> src, dst;  // original ids: the rows of h
    for (size_t i = 0; i < pairs.size(); i += 2) {
      src.push_back(node_map[pairs[i]]);
      dst.push_back(node_map[pairs[i + 1]]);
    }
    const torch::Tensor s = link.score(h, as_tensor(src), as_tensor(dst)).contiguous();
    scores[negative].assign(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
  }
  return link_metrics(scores[0], scores[1], hits_k);
}

}  // namespace partita::train
