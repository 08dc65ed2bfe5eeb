// Layer-wise full-neighbourhood inference: see inference.h.
#include "partita/train/inference.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>

#include "feature_tensors.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/loader/link_batches.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/han.h"
#include "partita/sample/block_builder.h"
#include "partita/train/batch_staging.h"
#include "partita/train/checkpoint.h"
#include "partita/train/trainer.h"

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

// An allgather of every rank's rows in rounds of at most kGatherBytes: `mine` holds this
// rank's counts[rank] rows of row_bytes each; round k carries rows [k c, (k+1) c) of every
// rank, and on_rows(rank, first, n, data) is called for each rank's part of the round (n
// rows from row `first` of that rank, at `data`). Collective: every rank calls it with the
// same counts and row_bytes.
template <class OnRows>
void allgather_rows(Collectives& coll, const uint8_t* mine, int64_t row_bytes,
                    const std::vector<int64_t>& counts, OnRows on_rows) {
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  const int64_t chunk =
      std::max<int64_t>(1, kGatherBytes / std::max<int64_t>(1, row_bytes * coll.size()));
  const int64_t my_rows = counts[static_cast<size_t>(coll.rank())];
  for (int64_t first = 0; first < most; first += chunk) {
    const int64_t rows = std::clamp<int64_t>(my_rows - first, 0, chunk);
    std::vector<uint8_t> piece(static_cast<size_t>(rows * row_bytes));
    if (rows > 0) std::memcpy(piece.data(), mine + first * row_bytes, piece.size());
    const std::vector<uint8_t> got = coll.allgather(piece);
    size_t at = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      const int64_t n = std::clamp<int64_t>(counts[r] - first, 0, chunk);
      if (n > 0) on_rows(static_cast<int>(r), first, n, got.data() + at);
      at += static_cast<size_t>(n * row_bytes);
    }
  }
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
    return fmt::format(
        "`normalize_features`: the features of node {} (partition id) sum to "
        "{:g}; leave it off for features that are not non-negative",
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

// The halo of a rank's rows: the rows outside its range that its rows' in-edges read, and
// which rows each rank sends after a layer so that every rank gets its halo.
struct Halo {
  std::vector<int64_t> needed;               // sorted distinct global ids outside the range
  std::vector<std::vector<int64_t>> served;  // per rank: sorted ids of its range some rank needs
};

// Collective (one allgather of every rank's needed ids). ranges: every rank's range.
Halo plan_halo(Collectives& coll, const store::DistGraph& g, Range range,
               const std::vector<Range>& ranges) {
  Halo halo;
  const ArrayView<const int64_t> indptr = g.indptr(), indices = g.indices();
  for (int64_t local = range.begin - g.first_node(); local < range.end - g.first_node(); ++local) {
    for (int64_t e = indptr[local]; e < indptr[local + 1]; ++e) {
      const int64_t src = indices[e];
      if (src < range.begin || src >= range.end) halo.needed.push_back(src);
    }
  }
  std::sort(halo.needed.begin(), halo.needed.end());
  halo.needed.erase(std::unique(halo.needed.begin(), halo.needed.end()), halo.needed.end());
  std::vector<int64_t> everyones = coll.allgather(halo.needed);
  std::sort(everyones.begin(), everyones.end());
  everyones.erase(std::unique(everyones.begin(), everyones.end()), everyones.end());
  for (const Range& r : ranges) {
    halo.served.emplace_back(std::lower_bound(everyones.begin(), everyones.end(), r.begin),
                             std::lower_bound(everyones.begin(), everyones.end(), r.end));
  }
  return halo;
}

// The halo rows of a layer ([halo.needed.size(), width] float32) from every rank's own rows
// (`mine`: [range.size(), width] float32 of this rank). Collective: each rank contributes
// its served rows, in rounds; each keeps the ones it needs.
torch::Tensor exchange_halo(Collectives& coll, const Halo& halo, Range range,
                            const torch::Tensor& mine) {
  const int64_t width = mine.size(1);
  const std::vector<int64_t>& serve = halo.served[static_cast<size_t>(coll.rank())];
  std::vector<int64_t> local(serve.size());
  for (size_t i = 0; i < serve.size(); ++i) local[i] = serve[i] - range.begin;
  const torch::Tensor sent =
      mine.index_select(0, torch::tensor(at::ArrayRef<int64_t>(local), torch::kInt64)).contiguous();
  torch::Tensor out = torch::empty({static_cast<int64_t>(halo.needed.size()), width});
  std::vector<int64_t> counts;
  for (const std::vector<int64_t>& ids : halo.served)
    counts.push_back(static_cast<int64_t>(ids.size()));
  const int64_t row_bytes = width * static_cast<int64_t>(sizeof(float));
  auto* rows = static_cast<uint8_t*>(out.data_ptr());
  allgather_rows(coll, static_cast<const uint8_t*>(sent.data_ptr()), row_bytes, counts,
                 [&](int rank, int64_t first, int64_t n, const uint8_t* data) {
                   const std::vector<int64_t>& ids = halo.served[static_cast<size_t>(rank)];
                   for (int64_t i = 0; i < n; ++i) {
                     const int64_t id = ids[static_cast<size_t>(first + i)];
                     const auto at = std::lower_bound(halo.needed.begin(), halo.needed.end(), id);
                     if (at == halo.needed.end() || *at != id) continue;
                     std::memcpy(rows + (at - halo.needed.begin()) * row_bytes,
                                 data + i * row_bytes, static_cast<size_t>(row_bytes));
                   }
                 });
  return out;
}

// The input features of the halo as float32, fetched from their owners.
torch::Tensor halo_features(store::FeatureFetcher& fetcher, const store::DistGraph& g,
                            const Halo& halo, bool normalize) {
  const auto rows = static_cast<int64_t>(halo.needed.size());
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * g.feature_row_bytes()));
  fetcher.fetch_features(halo.needed, bytes.data());
  torch::Tensor x =
      torch::from_blob(bytes.data(), {rows, g.feat_dim()}, torch_type_of(g.feature_dtype()))
          .to(torch::kFloat32)
          .clone();
  if (!normalize) return x;
  return row_normalized(x, [&](int64_t row, double sum) {
    return fmt::format(
        "`normalize_features`: the features of node {} (partition id) sum to "
        "{:g}; leave it off for features that are not non-negative",
        halo.needed[static_cast<size_t>(row)], sum);
  });
}

torch::Tensor as_tensor(const std::vector<int64_t>& values) {
  return torch::tensor(at::ArrayRef<int64_t>(values), torch::kInt64);
}

// The features of `block`'s edges, float32 [edges, edge_feat_dim] on the host. The block
// holds every in-edge of its dst rows (fanout -1), which the sampler lists in the row's CSC
// order: a row's k-th block edge is its k-th entry, whose global id is first_edge() plus
// its slot (checked edge by edge: an internal Error otherwise). Rows of other ranks' edges
// (replicated mode) are requested from their owners.
torch::Tensor full_row_edge_features(runtime::Session& session, const sample::Block& block) {
  const store::DistGraph& g = session.graph();
  const ArrayView<const int64_t> indptr = g.indptr(), indices = g.indices();
  std::vector<int64_t> ids;
  ids.reserve(block.indices.size());
  for (int64_t d = 0; d < block.num_dst; ++d) {
    const int64_t row = block.src_nodes[static_cast<size_t>(d)] - g.first_node();
    const int64_t begin = indptr[row], end = indptr[row + 1];
    int64_t j = block.indptr[static_cast<size_t>(d)];
    PARTITA_CHECK(end - begin == block.indptr[static_cast<size_t>(d) + 1] - j, Error,
                  "internal: inference block row {} holds {} of {} in-edges", d,
                  block.indptr[static_cast<size_t>(d) + 1] - j, end - begin);
    for (int64_t e = begin; e < end; ++e, ++j) {
      PARTITA_CHECK(indices[e] == block.src_nodes[static_cast<size_t>(block.indices[j])], Error,
                    "internal: inference block row {} lists its in-edges out of CSC order", d);
      ids.push_back(g.first_edge() + e);
    }
  }
  std::vector<uint8_t> rows(ids.size() * static_cast<size_t>(g.edge_feat_row_bytes()));
  session.fetcher().fetch_edge_features(ids, rows.data());
  return torch::from_blob(rows.data(), {static_cast<int64_t>(ids.size()), g.edge_feat_dim()},
                          torch_type_of(g.edge_feat_dtype()))
      .to(torch::kFloat32, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace

nn::GnnOptions model_options_from_signature(const std::vector<int64_t>& s,
                                            const store::DistGraph& graph,
                                            const std::string& source) {
  PARTITA_CHECK(s.empty() || s[0] != nn::RgcnModel::kSignatureTag, UsageError,
                "{}: an R-GCN checkpoint; infer supports GraphSAGE, GCN and GAT models only",
                source);
  PARTITA_CHECK(s.empty() || s[0] != nn::HanModel::kSignatureTag, UsageError,
                "{}: a HAN checkpoint; infer supports GraphSAGE, GCN and GAT models only", source);
  const bool link = is_link_signature(s);
  const bool edges = s.size() >= 10 && s[8] == kEdgeFeaturesSignatureTag;
  const size_t expected = 8 + (edges ? 2 : 0) + (link ? 2 : 0);
  const int64_t last_kind = static_cast<int64_t>(nn::ConvKind::kGatv2);
  PARTITA_CHECK(s.size() == expected && s[0] >= 0 && s[0] <= last_kind && s[1] > 0 && s[3] > 0 &&
                    s[4] >= 1 && s[5] >= 1 && s[6] >= 0 && s[6] <= 2 && (!edges || s[9] > 0),
                UsageError, "{}: not the checkpoint of a GraphSAGE, GCN, GAT, GATv2 or GINE model",
                source);
  nn::GnnOptions o;
  o.kind = static_cast<nn::ConvKind>(s[0]);
  o.edge_dim = edges ? s[9] : 0;
  PARTITA_CHECK(
      o.edge_dim == 0 || (graph.has_edge_features() && graph.edge_feat_dim() == o.edge_dim),
      UsageError, "{}: a model that reads {} edge features, but {} has {}", source, o.edge_dim,
      graph.dir(),
      graph.has_edge_features() ? fmt::format("{}", graph.edge_feat_dim()) : std::string("none"));
  o.in_dim = s[1];
  o.hidden = s[2];
  o.out_dim = s[3];
  o.layers = s[4];
  o.heads = s[5];
  o.norm = static_cast<nn::NormKind>(s[6]);
  o.dropout = 0;
  o.attention_dropout = 0;
  PARTITA_CHECK(
      !graph.typed() && o.in_dim == graph.feat_dim() && (link || o.out_dim == graph.num_classes()),
      UsageError,
      "{}: written for another partition ({} features, {} classes; {} has {}{} "
      "features, {} classes)",
      source, o.in_dim, o.out_dim, graph.dir(), graph.typed() ? "typed, " : "", graph.feat_dim(),
      graph.num_classes());
  return o;
}

bool is_link_signature(const std::vector<int64_t>& s) {
  // The link tag and decoder close the signature (after the edge features' pair, if any).
  const size_t n = s.size();
  return (n == 10 || n == 12) && s[n - 2] == kLinkSignatureTag && s[n - 1] >= 0 && s[n - 1] <= 1;
}

LoadedModel load_model_for_inference(runtime::Session& session, const std::string& dir,
                                     torch::Device device) {
  const SharedCheckpoint checkpoint = broadcast_latest_checkpoint(session.collectives(), dir);
  PARTITA_CHECK_PARAM(checkpoint.found, "checkpoint_dir",
                      "no checkpoint in {} (missing, or holds no checkpoint-<E>.pt)", dir);
  const std::string& bytes = checkpoint.bytes;
  const std::string& source = checkpoint.source;

  const CheckpointMeta meta = read_checkpoint_meta(bytes, source);
  const nn::GnnOptions options =
      model_options_from_signature(meta.signature, session.graph(), source);
  LoadedModel loaded;
  std::shared_ptr<torch::nn::Module> model;
  if (is_link_signature(meta.signature)) {
    loaded.link = std::make_shared<nn::LinkModel>(
        options, static_cast<nn::LinkDecoder>(meta.signature.back()));
    loaded.model = loaded.link->encoder_ptr();
    model = loaded.link;
  } else {
    loaded.model = std::make_shared<nn::GnnModel>(options);
    model = loaded.model;
  }
  if (!device.is_cpu()) model->to(device);
  // The archive holds the optimizer's state too: load it into one of the same kind.
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (meta.signature[7] == static_cast<int64_t>(OptimizerKind::kSgd)) {
    optimizer =
        std::make_unique<torch::optim::SGD>(model->parameters(), torch::optim::SGDOptions(0.1));
  } else {
    optimizer =
        std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(1e-3));
  }
  load_checkpoint(bytes, source, *model, *optimizer);
  model->eval();
  loaded.source = source;
  loaded.settings = meta.settings;
  return loaded;
}

std::vector<int64_t> all_in_degrees(runtime::Session& session) {
  return session.collectives().allgather(range_degrees(session.graph(), my_range(session)));
}

InferenceOutput infer_full_graph(runtime::Session& session, nn::GnnModel& model,
                                 const InferenceOptions& options) {
  PARTITA_CHECK_PARAM(options.batch_size >= 1, "batch_size", "must be >= 1, got {}",
                      options.batch_size);
  PARTITA_CHECK(session.role() == runtime::Role::kWorker, UsageError,
                "full-graph inference runs in worker mode only (no servers)");
  const store::DistGraph& g = session.graph();
  PARTITA_CHECK(!g.typed(), UsageError, "infer: {} is a typed partition (not supported yet)",
                g.dir());
  if (options.torch_threads > 0) torch::set_num_threads(options.torch_threads);
  torch::NoGradGuard no_grad;
  model.eval();
  // The model's device: each layer's table, blocks and row indices go there (batch_staging.h;
  // nothing moves on the CPU), each batch's output rows come back to the host.
  const std::vector<torch::Tensor> parameters = model.parameters();
  BatchStaging staging(parameters.empty() ? torch::Device(torch::kCPU)
                                          : parameters.front().device());
  Collectives& coll = session.collectives();
  const Range range = my_range(session);
  const std::vector<int64_t> counts = coll.allgather(std::vector<int64_t>{range.size()});
  const int64_t n = g.num_nodes();
  std::vector<Range> ranges;
  for (int64_t c : counts)
    ranges.push_back(
        {ranges.empty() ? 0 : ranges.back().end, (ranges.empty() ? 0 : ranges.back().end) + c});
  PARTITA_CHECK(ranges.back().end == n, Error,
                "infer: the ranks' nodes do not add up to the graph's {}", n);
  const Halo halo = plan_halo(coll, g, range, ranges);
  const int64_t L = model.options().layers;
  const bool gcn = model.options().kind == nn::ConvKind::kGcn;
  const int64_t edge_dim = model.options().edge_dim;
  PARTITA_CHECK(edge_dim == 0 || (g.has_edge_features() && g.edge_feat_dim() == edge_dim), Error,
                "internal: a model reading {} edge features on {} (edge features: {})", edge_dim,
                g.dir(), g.has_edge_features() ? g.edge_feat_dim() : 0);

  // The rows a layer reads: this rank's (range.size()) then its halo's, in one table.
  torch::Tensor mine = range_features(g, range, options.normalize_features);
  torch::Tensor halo_rows = halo_features(session.fetcher(), g, halo, options.normalize_features);
  std::vector<int64_t> table_degrees;  // GCN: the graph in-degree of each table row
  if (gcn) {
    table_degrees = range_degrees(g, range);
    std::vector<int64_t> remote(halo.needed.size());
    session.fetcher().fetch_degrees(halo.needed, remote.data());
    table_degrees.insert(table_degrees.end(), remote.begin(), remote.end());
  }
  const auto table_row = [&](int64_t gid) {
    if (gid >= range.begin && gid < range.end) return gid - range.begin;
    const auto at = std::lower_bound(halo.needed.begin(), halo.needed.end(), gid);
    PARTITA_CHECK(at != halo.needed.end() && *at == gid, Error,
                  "internal: node {} is neither this rank's nor in its halo", gid);
    return range.size() + (at - halo.needed.begin());
  };

  sample::BlockBuilder builder;
  sample::BlockOptions block_options;
  block_options.fanouts = {-1};
  block_options.key = {0, kInferenceTag, 0};
  torch::Tensor embeddings_mine;  // this rank's rows of the embeddings
  for (int64_t l = 0; l < L; ++l) {
    if (l + 1 == L) embeddings_mine = mine;
    const torch::Tensor table = staging.to_device(torch::cat({mine, halo_rows}));
    std::vector<torch::Tensor> pieces;
    for (int64_t first = range.begin; first < range.end; first += options.batch_size) {
      const int64_t last = std::min(range.end, first + options.batch_size);
      std::vector<int64_t> seeds(static_cast<size_t>(last - first));
      std::iota(seeds.begin(), seeds.end(), first);
      block_options.key.batch = static_cast<uint64_t>(first);
      const sample::SampledBatch sampled =
          builder.build(ArrayView<const int64_t>(seeds), block_options, session.sampler());
      const sample::Block& block = sampled.blocks[0];
      std::vector<int64_t> rows(block.src_nodes.size());
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = table_row(block.src_nodes[i]);
      nn::BlockTensors tensors;
      if (gcn) {
        std::vector<int64_t> src_degrees(rows.size());
        for (size_t i = 0; i < rows.size(); ++i)
          src_degrees[i] = table_degrees[static_cast<size_t>(rows[i])];
        tensors = nn::to_block_tensors(sampled.blocks, src_degrees)[0];
      } else {
        tensors = nn::to_block_tensors(block);
      }
      if (edge_dim > 0) tensors.edge_feat = full_row_edge_features(session, block);
      tensors = staging.to_device(std::move(tensors));
      const torch::Tensor row_index = staging.to_device(as_tensor(rows));
      staging.ready();
      const torch::Tensor x = table.index_select(0, row_index);
      pieces.push_back(model.forward_layer(l, tensors, x).to(torch::kFloat32).to(torch::kCPU));
    }
    const int64_t width = l + 1 == L ? model.options().out_dim : model.layer_in_dim(l + 1);
    mine = pieces.empty() ? torch::zeros({0, width}) : torch::cat(pieces).contiguous();
    if (l + 1 < L) halo_rows = exchange_halo(coll, halo, range, mine);
  }
  if (options.output_embeddings) embeddings_mine = mine;
  embeddings_mine = embeddings_mine.contiguous();

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

  // Into original-id order (node_map): the predictions on every rank, the embeddings on
  // rank 0 only (the other ranks let each round pass).
  const ArrayView<const int64_t> node_map = g.node_map();
  const auto original_of = [&](int64_t gid) {
    const int64_t o = node_map[gid];
    PARTITA_CHECK(o >= 0 && o < n, Error,
                  "{}: node_map is not a permutation of 0..{} (original "
                  "id {})",
                  g.dir(), n - 1, o);
    return o;
  };
  InferenceOutput out;
  out.num_nodes = n;
  out.embedding_dim = embeddings_mine.size(1);
  if (!options.output_embeddings) {
    out.predictions.assign(static_cast<size_t>(n), -1);
    allgather_rows(coll, static_cast<const uint8_t*>(predicted.data_ptr()), sizeof(int64_t), counts,
                   [&](int rank, int64_t first, int64_t rows, const uint8_t* data) {
                     for (int64_t i = 0; i < rows; ++i) {
                       int64_t value;
                       std::memcpy(&value, data + i * sizeof(int64_t), sizeof(int64_t));
                       const int64_t gid = ranges[static_cast<size_t>(rank)].begin + first + i;
                       out.predictions[static_cast<size_t>(original_of(gid))] = value;
                     }
                   });
  }
  const bool root = coll.rank() == 0;
  if (root) out.embeddings.resize(static_cast<size_t>(n * out.embedding_dim));
  const int64_t row_bytes = out.embedding_dim * static_cast<int64_t>(sizeof(float));
  allgather_rows(coll, static_cast<const uint8_t*>(embeddings_mine.data_ptr()), row_bytes, counts,
                 [&](int rank, int64_t first, int64_t rows, const uint8_t* data) {
                   if (!root) return;
                   for (int64_t i = 0; i < rows; ++i) {
                     const int64_t gid = ranges[static_cast<size_t>(rank)].begin + first + i;
                     std::memcpy(out.embeddings.data() + original_of(gid) * out.embedding_dim,
                                 data + i * row_bytes, static_cast<size_t>(row_bytes));
                   }
                 });
  if (!options.output_embeddings) {
    out.test_correct = test[0];
    out.test_total = test[1];
    out.test_acc = test[1] > 0 ? static_cast<double>(test[0]) / static_cast<double>(test[1]) : 0;
  }
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
  // Scored on the link model's device.
  const std::vector<torch::Tensor> parameters = link.parameters();
  const torch::Device device =
      parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device();
  const torch::Tensor h = torch::from_blob(const_cast<float*>(out.embeddings.data()),
                                           {out.num_nodes, out.embedding_dim}, torch::kFloat32)
                              .to(device);
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
    const torch::Tensor s = link.score(h, as_tensor(src).to(device), as_tensor(dst).to(device))
                                .to(torch::kCPU)
                                .contiguous();
    scores[negative].assign(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
  }
  return link_metrics(scores[0], scores[1], hits_k);
}

}  // namespace partita::train
