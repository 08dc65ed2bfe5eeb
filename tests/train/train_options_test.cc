// TrainOptions: the defaults pass their own checks, each check names its parameter in the
// library's words, and the enums' name tables are one-to-one.
#include "partita/train/train_options.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "partita/core/parameter_error.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/link_model.h"
#include "partita/train/device.h"

namespace partita::train {
namespace {

// The parameter check_options names for `change` applied to the defaults ("" if none).
std::string refused_parameter(const std::function<void(TrainOptions&)>& change) {
  TrainOptions o;
  change(o);
  try {
    check_options(o);
  } catch (const ParameterError& e) {
    EXPECT_EQ(std::string(e.what()), e.parameter() + ": " + e.detail());
    EXPECT_EQ(e.detail().find("--"), std::string::npos) << e.what();
    return e.parameter();
  }
  return "";
}

template <class E>
void expect_one_to_one(const NameTable<E>& table) {
  std::set<std::string> names;
  std::set<E> values;
  for (const auto& [name, value] : table) {
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_TRUE(values.insert(value).second) << name;
    EXPECT_EQ(name_of(table, value), name);
    EXPECT_EQ(find_named(table, name), value);
  }
  EXPECT_FALSE(find_named(table, std::string("no-such-name")).has_value());
}

TEST(TrainOptions, DefaultsAreThoseOfPartitaTrain) {
  const TrainOptions o;
  EXPECT_EQ(refused_parameter([](TrainOptions&) {}), "");
  EXPECT_EQ(o.model.kind, ModelKind::kSage);
  EXPECT_EQ(o.model.layers, 2);
  EXPECT_EQ(o.model.hidden, 64);
  EXPECT_EQ(o.model.heads, 4);
  EXPECT_EQ(o.model.dropout, 0.5);
  EXPECT_EQ(o.loader.fanouts, sample::Fanouts({10, 10}));
  EXPECT_EQ(o.loader.batch_size, 1024);
  EXPECT_EQ(o.optimizer.kind, OptimizerKind::kAdam);
  EXPECT_EQ(o.optimizer.lr, 0.003);
  EXPECT_EQ(o.eval.mode, EvalMode::kSampled);
  EXPECT_EQ(o.loader.sample_on, SampleOn::kAuto);
  EXPECT_EQ(o.epochs, 5);
  EXPECT_EQ(o.link.decoder, nn::LinkDecoder::kDot);
  EXPECT_EQ(link_metric_name(o.link), "auc");
  EXPECT_TRUE(o.device.is_cpu());
}

// "cpu", "cuda", "cuda:N" and nothing else, read back as written; whether a GPU can be used
// is check_device's, one ParameterError(device) saying what is missing.
TEST(TrainOptions, DeviceIsParsedInOnePlace) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  const DeviceSpec cuda = parse_device("cuda");
  EXPECT_EQ(cuda.kind, DeviceSpec::Kind::kCuda);
  EXPECT_EQ(cuda.index, -1);
  EXPECT_EQ(parse_device("cuda:7").index, 7);
  EXPECT_EQ(parse_device("cuda:0").index, 0);
  for (const char* text : {"cpu", "cuda", "cuda:0", "cuda:12"})
    EXPECT_EQ(device_text(parse_device(text)), text);
  for (const char* bad : {"", "tpu", "CPU", "cuda:", "cuda:-1", "cuda:x", "cuda0", "cuda:1:2",
                          "cuda:123456", "gpu", " cpu"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ParameterError& e) {
      EXPECT_EQ(e.parameter(), "device");
      EXPECT_NE(e.detail().find("is not a device"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(check_device(parse_device("cpu")));
  EXPECT_EQ(torch_device(parse_device("cpu")), torch::Device(torch::kCPU));
  EXPECT_EQ(torch_device(parse_device("cuda:3")), torch::Device(torch::kCUDA, 3));
  const int gpus = cuda_device_count();
  // Past the GPUs seen (none on a CPU-only torch): refused, naming what is missing.
  EXPECT_EQ(refused_parameter([gpus](TrainOptions& o) {
              o.device = {DeviceSpec::Kind::kCuda, gpus};
            }),
            "device");
  try {
    check_device({DeviceSpec::Kind::kCuda, gpus});
  } catch (const ParameterError& e) {
    const std::string what = e.what();
    const bool named = what.find("built without CUDA") != std::string::npos ||
                       what.find("sees no GPU") != std::string::npos ||
                       what.find("out of range") != std::string::npos;
    EXPECT_TRUE(named) << what;
  }
  if (gpus > 0) {
    EXPECT_NO_THROW(check_device(parse_device("cuda")));
  }
}

TEST(TrainOptions, ChecksNameTheirParameter) {
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.loader.batch_size = 0; }), "batch_size");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.model.layers = 3; }), "layers");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.loader.fanouts = {10, 0}; }), "fanouts");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.model.attention_dropout = 1; }),
            "attention_dropout");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.optimizer.lr = 0; }), "lr");
  // For every model, not only rgcn (which alone reads it).
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.model.num_bases = -1; }), "num_bases");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.eval.every = -1; }), "eval_every");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.checkpoint.resume = true; }), "resume");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.link.negatives = 0; }), "negatives");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) {
              o.task = Task::kLink;
              o.model.kind = ModelKind::kRgcn;
            }),
            "task");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) {
              o.task = Task::kLink;
              o.model.kind = ModelKind::kHan;
            }),
            "task");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.model.kind = ModelKind::kHan; }), "");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) {
              o.model.kind = ModelKind::kHan;
              o.cache.gpu_ratio = 0.5;
            }),
            "gpu_cache_ratio");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.cache.gpu_ratio = kGpuCacheAuto; }), "");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.cache.gpu_ratio = -0.5; }),
            "gpu_cache_ratio");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.log_every = 0; }), "");
  EXPECT_EQ(refused_parameter([](TrainOptions& o) { o.log_every = -1; }), "log_every");
  // A hop given per relation may have a 0 default beside its named relations.
  EXPECT_EQ(refused_parameter([](TrainOptions& o) {
              o.loader.fanouts = sample::Fanouts({10, 0}, {{}, {0, 3}});
            }),
            "");
}

// --gpu-cache-ratio auto's budget: as many rows as fit in the share of the free memory, at
// most the candidates, never negative.
TEST(TrainOptions, AutoCacheRowsFitInTheShareOfFreeMemory) {
  EXPECT_EQ(auto_cache_rows(1000, 10, 1000, 0.5), 50);
  EXPECT_EQ(auto_cache_rows(1009, 10, 1000, 0.5), 50) << "whole rows only";
  EXPECT_EQ(auto_cache_rows(1000, 10, 30, 0.5), 30) << "no more than the candidates";
  EXPECT_EQ(auto_cache_rows(1000, 10, 1000, 1.0), 100);
  EXPECT_EQ(auto_cache_rows(0, 10, 1000), 0);
  EXPECT_EQ(auto_cache_rows(-5, 10, 1000), 0);
  EXPECT_EQ(auto_cache_rows(1000, 0, 1000), 0);
  EXPECT_EQ(auto_cache_rows(1000, 10, 0), 0);
  EXPECT_EQ(auto_cache_rows(1000, 10, 1000, 0), 0);
  // The default share is half. synth200k (200 K rows of 100 float32) and the products-scale
  // graph (2.4 M rows) fit whole in an H200's ~139 GiB free; 1 GiB free holds 1.34 M rows.
  EXPECT_EQ(kGpuCacheAutoShare, 0.5);
  const int64_t h200 = int64_t{139} << 30;
  EXPECT_EQ(auto_cache_rows(h200, 400, 200000), 200000);
  EXPECT_EQ(auto_cache_rows(h200, 400, 2400000), 2400000);
  EXPECT_EQ(auto_cache_rows(int64_t{1} << 30, 400, 2400000), (int64_t{1} << 29) / 400);
}

TEST(TrainOptions, NameTablesAreOneToOne) {
  expect_one_to_one(model_kind_names());
  expect_one_to_one(optimizer_kind_names());
  expect_one_to_one(eval_mode_names());
  expect_one_to_one(task_names());
  expect_one_to_one(link_metric_kind_names());
  expect_one_to_one(nn::precision_names());
  expect_one_to_one(nn::kernel_path_names());
  expect_one_to_one(nn::link_decoder_names());
  expect_one_to_one(sample::exclude_names());
  expect_one_to_one(loader::negative_kind_names());
  expect_one_to_one(sample_on_names());
  EXPECT_EQ(joined_names(model_kind_names()), "sage, gcn, gat, gatv2, gine, rgcn, han");
  EXPECT_STREQ(nn::precision_name(nn::Precision::kBf16), "bf16");
}

TEST(TrainOptions, TakesEdgeFeaturesNamesTheModelsThatReadThem) {
  EXPECT_TRUE(takes_edge_features(ModelKind::kGat));
  EXPECT_TRUE(takes_edge_features(ModelKind::kGatv2));
  EXPECT_TRUE(takes_edge_features(ModelKind::kGine));
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kRgcn, ModelKind::kHan})
    EXPECT_FALSE(takes_edge_features(kind)) << name_of(model_kind_names(), kind);
  EXPECT_TRUE(needs_edge_features(ModelKind::kGine));
  EXPECT_FALSE(needs_edge_features(ModelKind::kGat));
  EXPECT_FALSE(needs_edge_features(ModelKind::kGatv2));
  EXPECT_FALSE(needs_edge_features(ModelKind::kRgcn));
  ModelOptions m;
  m.kind = ModelKind::kGine;
  m.edge_dim = 6;
  const nn::GnnOptions g = gnn_options(m);
  EXPECT_EQ(g.kind, nn::ConvKind::kGine);
  EXPECT_EQ(g.edge_dim, 6);
  EXPECT_EQ(model_kind(nn::ConvKind::kGine), ModelKind::kGine);
}

TEST(TrainOptions, ModelKindIsTheOneSourceOfTheModel) {
  ModelOptions m;
  m.kind = ModelKind::kGat;
  m.hidden = 8;
  m.heads = 3;
  const nn::GnnOptions g = gnn_options(m);
  EXPECT_EQ(g.kind, nn::ConvKind::kGat);
  EXPECT_EQ(g.hidden, 8);
  EXPECT_EQ(g.heads, 3);
  EXPECT_EQ(g.dropout, m.dropout);
  EXPECT_FALSE(conv_kind(ModelKind::kRgcn).has_value());
  for (nn::ConvKind c : {nn::ConvKind::kSage, nn::ConvKind::kGcn, nn::ConvKind::kGat,
                         nn::ConvKind::kGatv2, nn::ConvKind::kGine})
    EXPECT_EQ(conv_kind(model_kind(c)), c);
  m.kind = ModelKind::kRgcn;
  EXPECT_THROW(gnn_options(m), Error);
  LinkTaskOptions link;
  link.metric = LinkMetricKind::kHits;
  link.hits_k = 20;
  EXPECT_EQ(link_metric_name(link), "hits@20");
}

}  // namespace
}  // namespace partita::train
