// Checkpoint files (train/checkpoint.h): format 2 (a torch.save pickle of a dict) round-trips
// model and optimizer; format-1 archives written before still load; a checkpoint of another
// model or corrupt bytes are FormatErrors naming the file.
#include "partita/train/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>
#include <string>

#include "partita/core/error.h"
#include "partita/nn/gnn_model.h"

namespace partita::train {
namespace {

std::shared_ptr<nn::GnnModel> model(int64_t hidden, uint64_t seed) {
  torch::manual_seed(seed);
  nn::GnnOptions o;
  o.in_dim = 5;
  o.hidden = hidden;
  o.out_dim = 3;
  o.layers = 2;
  return std::make_shared<nn::GnnModel>(o);
}

// One Adam step on a made-up loss, so that the optimizer has state worth saving.
void step(nn::GnnModel& m, torch::optim::Adam& adam) {
  torch::Tensor loss = torch::zeros({});
  for (auto& p : m.parameters()) loss = loss + p.square().sum();
  adam.zero_grad();
  loss.backward();
  adam.step();
}

void expect_same_parameters(nn::GnnModel& a, nn::GnnModel& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
}

TEST(Checkpoint, RoundTripsModelOptimizerAndMeta) {
  auto saved = model(4, 1);
  torch::optim::Adam adam(saved->parameters(), torch::optim::AdamOptions(0.1));
  step(*saved, adam);
  const std::string bytes =
      serialize_checkpoint(*saved, adam, {3, 42, {0, 5, 4, 3, 2, 1, 0, 0}, {}});
  const CheckpointMeta meta = read_checkpoint_meta(bytes, "ck");
  EXPECT_EQ(meta.epochs_done, 3);
  EXPECT_EQ(meta.seed, 42u);
  EXPECT_EQ(meta.signature, (std::vector<int64_t>{0, 5, 4, 3, 2, 1, 0, 0}));

  auto loaded = model(4, 2);  // other initial values
  torch::optim::Adam adam2(loaded->parameters(), torch::optim::AdamOptions(0.1));
  load_checkpoint(bytes, "ck", *loaded, adam2);
  expect_same_parameters(*saved, *loaded);
  // The optimizer state came along: one more step lands both on the same values.
  step(*saved, adam);
  step(*loaded, adam2);
  expect_same_parameters(*saved, *loaded);
}

TEST(Checkpoint, RoundTripsTheRecordedSettingsInOrder) {
  auto saved = model(4, 1);
  torch::optim::Adam adam(saved->parameters(), torch::optim::AdamOptions(0.1));
  CheckpointMeta written{2, 7, {0, 5, 4, 3, 2, 1, 0, 0}, {}};
  written.settings = {{"task", "node"}, {"hidden", "4"},     {"normalize-features", "true"},
                      {"lr", "0.01"},   {"fanouts", "10,5"}, {"checkpoint-dir", ""}};
  const std::string bytes = serialize_checkpoint(*saved, adam, written);
  EXPECT_EQ(read_checkpoint_meta(bytes, "ck").settings, written.settings);
  // Without settings (as before they were recorded) the entry reads back empty.
  EXPECT_TRUE(read_checkpoint_meta(serialize_checkpoint(*saved, adam, {1, 0, {}, {}}), "ck")
                  .settings.empty());
}

TEST(Checkpoint, ReadsFormatOneArchives) {
  // A checkpoint as written before format 2: a torch::serialize archive.
  auto saved = model(4, 3);
  torch::optim::Adam adam(saved->parameters(), torch::optim::AdamOptions(0.1));
  step(*saved, adam);
  torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
  saved->save(model_archive);
  adam.save(optimizer_archive);
  archive.write("partita_checkpoint", torch::tensor(std::vector<int64_t>{1}));
  archive.write("epochs_done", torch::tensor(std::vector<int64_t>{7}));
  archive.write("seed", torch::tensor(std::vector<int64_t>{5}));
  archive.write("signature", torch::tensor(std::vector<int64_t>{0, 5, 4, 3, 2, 1, 0, 0}));
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  std::ostringstream out;
  archive.save_to(out);
  const std::string bytes = out.str();

  const CheckpointMeta meta = read_checkpoint_meta(bytes, "old");
  EXPECT_EQ(meta.epochs_done, 7);
  EXPECT_EQ(meta.seed, 5u);
  EXPECT_TRUE(meta.settings.empty());
  auto loaded = model(4, 4);
  torch::optim::Adam adam2(loaded->parameters(), torch::optim::AdamOptions(0.1));
  load_checkpoint(bytes, "old", *loaded, adam2);
  expect_same_parameters(*saved, *loaded);
}

TEST(Checkpoint, AnotherModelOrCorruptBytesAreFormatErrors) {
  auto saved = model(4, 1);
  torch::optim::Adam adam(saved->parameters(), torch::optim::AdamOptions(0.1));
  const std::string bytes = serialize_checkpoint(*saved, adam, {1, 0, {}, {}});
  auto wider = model(6, 1);
  torch::optim::Adam adam2(wider->parameters(), torch::optim::AdamOptions(0.1));
  try {
    load_checkpoint(bytes, "ck", *wider, adam2);
    FAIL() << "loaded into another shape";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("ck: 'conv0.lin_neigh.weight' is 4x5 in the checkpoint "
                                         "but 6x5 in this model"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_checkpoint_meta("not a checkpoint", "junk"), FormatError);
  EXPECT_THROW(read_checkpoint_meta(bytes.substr(0, bytes.size() / 2), "cut"), FormatError);
}

// A GAT that reads edge features has parameters one without lacks (lin_edge, att_edge):
// neither loads the other's checkpoint, each with one FormatError.
TEST(Checkpoint, EdgeFeaturesOrNotAreAnotherModel) {
  const auto gat = [](int64_t edge_dim) {
    torch::manual_seed(1);
    nn::GnnOptions o;
    o.kind = nn::ConvKind::kGat;
    o.in_dim = 5;
    o.hidden = 4;
    o.out_dim = 3;
    o.layers = 2;
    o.heads = 2;
    o.edge_dim = edge_dim;
    return std::make_shared<nn::GnnModel>(o);
  };
  auto with_edges = gat(3), without = gat(0);
  torch::optim::Adam adam(with_edges->parameters(), torch::optim::AdamOptions(0.1));
  torch::optim::Adam adam2(without->parameters(), torch::optim::AdamOptions(0.1));
  const std::string edge_bytes = serialize_checkpoint(*with_edges, adam, {1, 0, {}, {}});
  const std::string plain_bytes = serialize_checkpoint(*without, adam2, {1, 0, {}, {}});
  try {
    load_checkpoint(edge_bytes, "ck", *without, adam2);
    FAIL() << "an edge_dim checkpoint loaded into a model without edge features";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("ck: written for another model"), std::string::npos)
        << e.what();
  }
  try {
    load_checkpoint(plain_bytes, "ck", *with_edges, adam);
    FAIL() << "a checkpoint without edge features loaded into an edge_dim model";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("it has no 'conv0.att_edge'"), std::string::npos)
        << e.what();
  }
}

// GATv2's parameters (lin_src, lin_dst, att) are not GAT's (lin, att_src, att_dst): a
// gatv2 checkpoint does not load into gat, nor the reverse, each with one FormatError
// (and their signatures differ: Seams.Gatv2SignatureIsNoGatsAndCarriesHeads).
TEST(Checkpoint, Gatv2IsAnotherModelThanGat) {
  const auto build = [](nn::ConvKind kind) {
    torch::manual_seed(1);
    nn::GnnOptions o;
    o.kind = kind;
    o.in_dim = 5;
    o.hidden = 4;
    o.out_dim = 3;
    o.layers = 2;
    o.heads = 2;
    return std::make_shared<nn::GnnModel>(o);
  };
  auto v2 = build(nn::ConvKind::kGatv2), v1 = build(nn::ConvKind::kGat);
  torch::optim::Adam adam2(v2->parameters(), torch::optim::AdamOptions(0.1));
  torch::optim::Adam adam1(v1->parameters(), torch::optim::AdamOptions(0.1));
  const std::string v2_bytes = serialize_checkpoint(*v2, adam2, {1, 0, {}, {}});
  const std::string v1_bytes = serialize_checkpoint(*v1, adam1, {1, 0, {}, {}});
  EXPECT_THROW(load_checkpoint(v2_bytes, "ck", *v1, adam1), FormatError);
  EXPECT_THROW(load_checkpoint(v1_bytes, "ck", *v2, adam2), FormatError);
  // Its own checkpoint loads.
  auto again = build(nn::ConvKind::kGatv2);
  torch::optim::Adam adam3(again->parameters(), torch::optim::AdamOptions(0.1));
  load_checkpoint(v2_bytes, "ck", *again, adam3);
  expect_same_parameters(*v2, *again);
}

TEST(Checkpoint, AnotherFormatIsOneLineNamingTheFormatsRead) {
  auto saved = model(4, 1);
  torch::optim::Adam adam(saved->parameters(), torch::optim::AdamOptions(0.1));
  const std::string bytes = serialize_checkpoint(*saved, adam, {1, 0, {}, {}});
  // The same dict with "partita" -> "format" = 3, as a later build might write.
  c10::impl::GenericDict dict =
      torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
  dict.at("partita").toGenericDict().insert_or_assign("format", int64_t{3});
  const std::vector<char> future = torch::pickle_save(dict);
  try {
    read_checkpoint_meta(std::string(future.begin(), future.end()), "ck/checkpoint-000001.pt");
    FAIL() << "read a format-3 checkpoint";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ck/checkpoint-000001.pt: checkpoint format 3 is not supported"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("formats 1 and 2"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace partita::train
