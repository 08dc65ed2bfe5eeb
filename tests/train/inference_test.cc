// Layer-wise full-neighbourhood inference (train/inference.h) equals a brute-force forward
// pass over the whole graph: GraphSAGE and GCN against plain dense torch (adjacency matrix,
// the layers' formulas written out from nn/conv.h), GAT against GnnModel::forward on
// whole-graph blocks; on 1 rank (1 part) and 2 ranks (2 parts, threads over the in-process
// transport), in small batches so that batches and remote sources are exercised.
// Tolerance: |got - want| <= 1e-5 (|want| + 1) per value (float32; only the summation
// order differs; values are O(1)). And checkpoints of another partition or model kind are refused.
#include "partita/train/inference.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "helpers/test_paths.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/nn/block_tensors.h"
#include "partita/runtime/session.h"
#include "partita/train/checkpoint.h"
#include "partita/train/trainer.h"
#include "train_test_util.h"

namespace partita::train {
namespace {

using testing::TempDir;

constexpr int64_t kFeatDim = 12, kClasses = 4;  // of make_small_partitions
constexpr int64_t kEdgeDim = 3;                 // edge_feat of the "edge" partitions

class Inference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::make_small_partitions(dir_->path(), {1, 2});
    testing::make_small_partitions(*dir_ / "edge", {1, 2}, kEdgeDim);
  }
  static void TearDownTestSuite() { delete dir_; }

  static nn::GnnOptions model_options(nn::ConvKind kind, int64_t layers) {
    nn::GnnOptions o;
    o.kind = kind;
    o.in_dim = kFeatDim;
    o.hidden = 8;
    o.out_dim = kClasses;
    o.layers = layers;
    o.heads = kind == nn::ConvKind::kGat ? 2 : 1;
    return o;
  }

  // A checkpoint (as the Trainer writes it) of a model with random weights; the model.
  static std::shared_ptr<nn::GnnModel> write_checkpoint(const std::string& dir,
                                                        const nn::GnnOptions& o) {
    torch::manual_seed(7);
    auto model = std::make_shared<nn::GnnModel>(o);
    {
      torch::NoGradGuard no_grad;  // GCN's bias starts at zero: make it count
      for (auto& p : model->parameters()) p.uniform_(-0.5, 0.5);
    }
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
    const int64_t heads =
        o.kind == nn::ConvKind::kGat || o.kind == nn::ConvKind::kGatv2 ? o.heads : 1;
    CheckpointMeta meta{
        1,
        0,
        {static_cast<int64_t>(o.kind), o.in_dim, o.hidden, o.out_dim, o.layers, heads,
         static_cast<int64_t>(o.norm), static_cast<int64_t>(OptimizerKind::kSgd)},
        {}};
    if (o.edge_dim > 0)
      meta.signature.insert(meta.signature.end(), {kEdgeFeaturesSignatureTag, o.edge_dim});
    write_file_atomic(checkpoint_path(dir, 1), serialize_checkpoint(*model, sgd, meta));
    model->eval();
    return model;
  }

  // Inference on `ranks` threads over the `ranks`-part directory; rank 0's output (every
  // rank's must be the same).
  static InferenceOutput run(int ranks, const std::string& checkpoint_dir, int64_t batch_size,
                             const std::string& data = "") {
    InProcessWorld world(ranks);
    InProcessCollectiveGroup group(ranks, 60);
    std::vector<std::string> failures(static_cast<size_t>(ranks));
    std::vector<InferenceOutput> outputs(static_cast<size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        try {
          runtime::SessionOptions so;
          so.parts_dir = (data.empty() ? dir_->path() : data) + "/p" + std::to_string(ranks);
          runtime::Session session(world.transport(r), group.member(r), so);
          auto model = load_model_for_inference(session, checkpoint_dir).model;
          InferenceOptions io;
          io.batch_size = batch_size;
          io.torch_threads = 1;
          outputs[static_cast<size_t>(r)] = infer_full_graph(session, *model, io);
          session.finish();
        } catch (const std::exception& e) {
          failures[static_cast<size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(failures[r], "") << "rank " << r;
      if (r > 0) {
        EXPECT_TRUE(outputs[r].embeddings.empty()) << "rank " << r << ": rank 0's only";
      }
      EXPECT_EQ(outputs[r].predictions, outputs[0].predictions) << "rank " << r;
    }
    return outputs[0];
  }

  // The whole graph of the 1-part directory: its dense in-adjacency A[i][j] = edges j -> i
  // (global ids = rows), features, original ids, in-degrees and test labels.
  struct WholeGraph {
    torch::Tensor adjacency, features, original, degree;
    std::vector<int64_t> test_ids, labels;
  };
  static WholeGraph whole_graph() {
    const store::DistGraph g = store::DistGraph::open(*dir_ / "p1", 0, 1);
    const int64_t n = g.num_nodes();
    WholeGraph w;
    w.adjacency = torch::zeros({n, n});
    auto a = w.adjacency.accessor<float, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = g.indptr()[i]; e < g.indptr()[i + 1]; ++e) a[i][g.indices()[e]] += 1;
    w.features =
        torch::from_blob(const_cast<uint8_t*>(g.features()), {n, g.feat_dim()}, torch::kFloat32)
            .clone();
    w.original =
        torch::tensor(at::ArrayRef<int64_t>(g.original_ids().begin(), static_cast<size_t>(n)));
    w.degree = w.adjacency.sum(1);
    w.test_ids.assign(g.test_ids().begin(), g.test_ids().end());
    w.labels.assign(g.labels().begin(), g.labels().end());
    return w;
  }

  // Rows in global-id order -> rows in original-id order.
  static torch::Tensor to_original(const WholeGraph& w, const torch::Tensor& rows) {
    torch::Tensor out = torch::empty_like(rows);
    out.index_copy_(0, w.original, rows);
    return out;
  }

  static void expect_close(const std::vector<float>& got, const torch::Tensor& want) {
    const torch::Tensor g =
        torch::from_blob(const_cast<float*>(got.data()), want.sizes(), torch::kFloat32);
    const torch::Tensor err = (g - want).abs() - (want.abs() * 1e-5 + 1e-5);
    EXPECT_LE(err.max().item<float>(), 0.0f)
        << "max |diff| " << (g - want).abs().max().item<float>();
  }

  // Accuracy on the test ids of predictions in original-id order.
  static double test_accuracy(const WholeGraph& w, const std::vector<int64_t>& predictions) {
    int64_t correct = 0;
    for (int64_t gid : w.test_ids) {
      const int64_t o = w.original[gid].item<int64_t>();
      correct += predictions[static_cast<size_t>(o)] == w.labels[static_cast<size_t>(gid)];
    }
    return static_cast<double>(correct) / static_cast<double>(w.test_ids.size());
  }

  static TempDir* dir_;
};

TempDir* Inference::dir_ = nullptr;

// One dense layer of nn/conv.h's formulas, weights taken from `model`'s conv l.
torch::Tensor dense_layer(nn::GnnModel& model, int64_t l, const torch::Tensor& adjacency,
                          const torch::Tensor& degree, const torch::Tensor& x) {
  auto params = model.named_parameters();
  const std::string c = "conv" + std::to_string(l) + ".";
  if (model.options().kind == nn::ConvKind::kSage) {
    // out = W_neigh mean_{j in N(i)} x_j + b + W_root x_i (mean 0 without in-edges).
    const torch::Tensor mean = adjacency.matmul(x) / degree.clamp_min(1).unsqueeze(1);
    return torch::nn::functional::linear(mean, params[c + "lin_neigh.weight"],
                                         params[c + "lin_neigh.bias"]) +
           torch::nn::functional::linear(x, params[c + "lin_root.weight"]);
  }
  // GCN with graph degrees: D^-1/2 (A + I) D^-1/2 X W^T + b, D = diag(in-degree + 1).
  const torch::Tensor s = (degree + 1).rsqrt();
  const torch::Tensor a_hat =
      s.unsqueeze(1) * (adjacency + torch::eye(adjacency.size(0))) * s.unsqueeze(0);
  return a_hat.matmul(torch::nn::functional::linear(x, params[c + "lin.weight"])) +
         params[c + "bias"];
}

TEST_F(Inference, SageAndGcnEqualDenseFullGraphForwardOnOneAndTwoRanks) {
  const WholeGraph w = whole_graph();
  for (nn::ConvKind kind : {nn::ConvKind::kSage, nn::ConvKind::kGcn}) {
    for (int64_t layers : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message()
                   << "kind " << static_cast<int>(kind) << ", layers " << layers);
      TempDir checkpoints;
      auto model = write_checkpoint(checkpoints.path(), model_options(kind, layers));
      torch::NoGradGuard no_grad;
      torch::Tensor x = w.features, embeddings = w.features;
      for (int64_t l = 0; l < layers; ++l) {
        embeddings = x;
        x = dense_layer(*model, l, w.adjacency, w.degree, x);
        if (l + 1 < layers) x = torch::relu(x);
      }
      const torch::Tensor want_embeddings = to_original(w, embeddings);
      const torch::Tensor want_logits = to_original(w, x);
      for (int ranks : {1, 2}) {
        const InferenceOutput got = run(ranks, checkpoints.path(), /*batch_size=*/97);
        ASSERT_EQ(got.num_nodes, w.features.size(0));
        ASSERT_EQ(got.embedding_dim, want_embeddings.size(1));
        expect_close(got.embeddings, want_embeddings);
        // Predictions: the dense logits' argmax wherever it is clear (no near-tie).
        const torch::Tensor top = std::get<0>(want_logits.topk(2, 1));
        const torch::Tensor clear = (top.select(1, 0) - top.select(1, 1)).gt(1e-4);
        const torch::Tensor want = want_logits.argmax(1);
        const torch::Tensor pred = torch::tensor(got.predictions);
        EXPECT_TRUE(pred.eq(want).logical_or(clear.logical_not()).all().item<bool>());
        EXPECT_DOUBLE_EQ(got.test_acc, test_accuracy(w, got.predictions));
        EXPECT_EQ(got.test_total, static_cast<int64_t>(w.test_ids.size()));
      }
    }
  }
}

TEST_F(Inference, GatEqualsForwardOnWholeGraphBlocks) {
  const WholeGraph w = whole_graph();
  TempDir checkpoints;
  auto model = write_checkpoint(checkpoints.path(), model_options(nn::ConvKind::kGat, 2));
  // The whole graph as one block (every node is a dst and a src), used by both layers.
  const store::DistGraph g = store::DistGraph::open(*dir_ / "p1", 0, 1);
  sample::Block block;
  block.num_dst = block.num_src = g.num_nodes();
  block.indptr.assign(g.indptr().begin(), g.indptr().end());
  block.indices.assign(g.indices().begin(), g.indices().end());
  block.src_nodes.resize(static_cast<size_t>(g.num_nodes()));
  std::iota(block.src_nodes.begin(), block.src_nodes.end(), 0);
  const std::vector<nn::BlockTensors> blocks = nn::to_block_tensors({block, block});
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = to_original(w, model->forward(blocks, w.features));
  const torch::Tensor hidden =
      to_original(w, model->forward_layer(0, blocks[1], w.features));  // layer 0 alone
  for (int ranks : {1, 2}) {
    const InferenceOutput got = run(ranks, checkpoints.path(), 64);
    expect_close(got.embeddings, hidden);
    EXPECT_TRUE(torch::tensor(got.predictions).eq(logits.argmax(1)).all().item<bool>());
  }
}

// GAT and GATv2 reading edge features (edge_dim): every in-edge's features reach its
// layer, on 1 and 2 ranks, as GnnModel::forward on whole-graph blocks with the partition's
// edge_feat rows.
class InferenceWithEdgeFeatures : public Inference,
                                  public ::testing::WithParamInterface<nn::ConvKind> {};

TEST_P(InferenceWithEdgeFeatures, EqualsForwardOnWholeGraphBlocks) {
  const std::string data = *dir_ / "edge";
  TempDir checkpoints;
  nn::GnnOptions o = model_options(GetParam(), 2);
  o.heads = 2;
  o.edge_dim = kEdgeDim;
  auto model = write_checkpoint(checkpoints.path(), o);
  const store::DistGraph g = store::DistGraph::open(data + "/p1", 0, 1);
  ASSERT_EQ(g.edge_feat_dim(), kEdgeDim);
  const int64_t n = g.num_nodes(), e = g.num_nodes() > 0 ? g.indptr()[n] : 0;
  sample::Block block;
  block.num_dst = block.num_src = n;
  block.indptr.assign(g.indptr().begin(), g.indptr().end());
  block.indices.assign(g.indices().begin(), g.indices().end());
  block.src_nodes.resize(static_cast<size_t>(n));
  std::iota(block.src_nodes.begin(), block.src_nodes.end(), 0);
  std::vector<nn::BlockTensors> blocks = nn::to_block_tensors({block, block});
  const torch::Tensor edge_feat =
      torch::from_blob(const_cast<uint8_t*>(g.edge_features()), {e, kEdgeDim}, torch::kFloat32)
          .clone();
  for (nn::BlockTensors& b : blocks) b.edge_feat = edge_feat;
  const torch::Tensor features =
      torch::from_blob(const_cast<uint8_t*>(g.features()), {n, g.feat_dim()}, torch::kFloat32)
          .clone();
  const torch::Tensor original =
      torch::tensor(at::ArrayRef<int64_t>(g.original_ids().begin(), static_cast<size_t>(n)));
  torch::NoGradGuard no_grad;
  const auto in_original_order = [&](const torch::Tensor& rows) {
    return torch::empty_like(rows).index_copy_(0, original, rows);
  };
  const torch::Tensor hidden = in_original_order(model->forward_layer(0, blocks[1], features));
  const torch::Tensor logits = in_original_order(model->forward(blocks, features));
  // The edge features matter: without them layer 0 gives other rows.
  nn::BlockTensors bare = blocks[1];
  bare.edge_feat = torch::zeros_like(edge_feat);
  EXPECT_GT((model->forward_layer(0, bare, features) - model->forward_layer(0, blocks[1], features))
                .abs()
                .max()
                .item<float>(),
            1e-3f);
  for (int ranks : {1, 2}) {
    const InferenceOutput got = run(ranks, checkpoints.path(), 64, data);
    expect_close(got.embeddings, hidden);
    EXPECT_TRUE(torch::tensor(got.predictions).eq(logits.argmax(1)).all().item<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(Attention, InferenceWithEdgeFeatures,
                         ::testing::Values(nn::ConvKind::kGat, nn::ConvKind::kGatv2));

TEST_F(Inference, RefusesCheckpointsThatDoNotFitAndMissingOnes) {
  TempDir checkpoints;
  nn::GnnOptions other = model_options(nn::ConvKind::kSage, 2);
  other.in_dim = kFeatDim + 1;  // another dataset's features
  write_checkpoint(checkpoints.path(), other);
  InProcessWorld world(1);
  InProcessCollectiveGroup group(1, 60);
  runtime::SessionOptions so;
  so.parts_dir = *dir_ / "p1";
  runtime::Session session(world.transport(0), group.member(0), so);
  try {
    load_model_for_inference(session, checkpoints.path());
    ADD_FAILURE() << "a checkpoint of 13 features was loaded on a 12-feature partition";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("written for another partition (13 features"),
              std::string::npos)
        << e.what();
  }
  // A model reading edge features does not load on a partition without them.
  TempDir edge_checkpoints;
  nn::GnnOptions with_edges = model_options(nn::ConvKind::kGat, 2);
  with_edges.edge_dim = kEdgeDim;
  write_checkpoint(edge_checkpoints.path(), with_edges);
  try {
    load_model_for_inference(session, edge_checkpoints.path());
    ADD_FAILURE() << "a model reading edge features loaded on a partition without them";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a model that reads 3 edge features, but"),
              std::string::npos)
        << e.what();
  }
  TempDir empty;
  EXPECT_THROW(load_model_for_inference(session, empty.path()), UsageError);
  EXPECT_THROW(load_model_for_inference(session, empty / "absent"), UsageError);
  session.finish();
}

}  // namespace
}  // namespace partita::train
