// partita infer: layer-wise full-neighbourhood inference of a trained node classifier
// (train/inference.h). Rank 0 writes OUT/embeddings.npy (float32 [N, H], the output layer's
// input) and OUT/predictions.npy (int64 [N]), rows in original node-id order, and prints,
// last, `test_acc=<value>`.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "device_flag.h"
#include "flags.h"
#include "host_local_flag.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/core/timer.h"
#include "partita/runtime/rank_job.h"
#include "partita/train/device.h"
#include "partita/train/inference.h"
#include "partita/train/train_options.h"
#include "rank_main.h"
#include "train_settings.h"

namespace partita::cli {
namespace {

namespace fs = std::filesystem;

struct Flags {
  runtime::SessionOptions session;
  train::InferenceOptions infer;
  std::string checkpoint_dir;
  std::string out;
  bool force = false;
  bool normalize_given = false;  // --normalize-features given (else the checkpoint's value)
  int torch_threads = 0;         // 0: the cores per rank
  int64_t hits_k = train::LinkTaskOptions{}.hits_k;              // link models: K of Hits@K
  std::string device = train::device_text(train::DeviceSpec{});  // --device
};

// Rank 0 decides whether --out may be written (it alone writes it); every rank learns the
// verdict, so a refusal is a UsageError on every rank (one line for the job).
void check_out_dir(runtime::Session& session, const Flags& flags) {
  int64_t verdict = 0;  // 1: exists and not empty, 2: exists and not a directory
  if (session.rank() == 0) {
    std::error_code ec;
    if (fs::exists(flags.out, ec)) {
      if (!fs::is_directory(flags.out, ec)) {
        verdict = 2;
      } else if (!fs::is_empty(flags.out, ec) && !flags.force) {
        verdict = 1;
      }
    }
  }
  session.collectives().broadcast(&verdict, 1, 0);
  PARTITA_CHECK(verdict != 2, UsageError, "--out: {} exists and is not a directory", flags.out);
  PARTITA_CHECK(verdict != 1, UsageError,
                "--out: {} exists and is not empty (--force overwrites its files)", flags.out);
}

void write_outputs(const std::string& dir, const train::InferenceOutput& out) {
  create_directory(dir);
  write_npy<float>((fs::path(dir) / "embeddings.npy").string(),
                   ArrayView<const float>(out.embeddings), {out.num_nodes, out.embedding_dim});
  if (!out.predictions.empty())
    write_npy<int64_t>((fs::path(dir) / "predictions.npy").string(), out.predictions);
}

int infer_on(runtime::Session& session, const Flags& flags, train::InferenceOptions options,
             const train::DeviceSpec& device);

int run_infer(runtime::RankContext& rank, const Flags& flags) {
  PARTITA_CHECK(flags.infer.batch_size >= 1, UsageError, "--batch-size: must be >= 1, got {}",
                flags.infer.batch_size);
  PARTITA_CHECK(flags.hits_k >= 1, UsageError, "--hits-k: must be >= 1, got {}", flags.hits_k);
  PARTITA_CHECK(flags.torch_threads >= 0, UsageError,
                "--torch-threads: must be >= 0 (0: the cores per rank), got {}",
                flags.torch_threads);
  check_timeout(flags.session.timeout_s);
  train::InferenceOptions options = flags.infer;
  options.torch_threads =
      flags.torch_threads > 0 ? flags.torch_threads : std::max(1, rank.cores_per_rank());
  const train::DeviceSpec device = rank_device(flags.device, rank);
  return rank.run_session(flags.session, [&](runtime::Session& session) {
    return infer_on(session, flags, options, device);
  });
}

// The work of every rank, over its session.
int infer_on(runtime::Session& session, const Flags& flags, train::InferenceOptions options,
             const train::DeviceSpec& device) {
  check_out_dir(session, flags);
  Stopwatch watch;
  const train::LoadedModel loaded =
      train::load_model_for_inference(session, flags.checkpoint_dir, train::torch_device(device));
  const nn::GnnModel& model = *loaded.model;
  options.output_embeddings = loaded.link != nullptr;
  // The training run's input settings, reapplied (train_settings.h).
  const CheckpointSettingsCheck check = check_infer_settings(
      loaded.settings, {{"normalize-features", options.normalize_features ? "true" : "false"}},
      flags.normalize_given ? std::vector<std::string>{"normalize-features"}
                            : std::vector<std::string>{},
      loaded.source);
  options.normalize_features = normalize_features_after(check, options.normalize_features);
  if (session.rank() == 0) log_settings_lines(check.notices, check.warnings);
  const train::InferenceOutput out = train::infer_full_graph(session, *loaded.model, options);
  const double infer_s = watch.seconds();
  if (session.rank() == 0) write_outputs(flags.out, out);
  // A link model: its held-out pairs scored on the full-graph embeddings (rank 0).
  std::optional<train::LinkMetrics> link;
  if (loaded.link != nullptr && session.rank() == 0)
    link = train::held_out_link_metrics(*loaded.link, out, session.graph(), true, flags.hits_k);
  session.finish();
  if (session.rank() == 0 && link) {
    log_info("infer: {} nodes, {} layers, link embeddings [{}, {}] in {} ({:.2f} s)", out.num_nodes,
             model.options().layers, out.num_nodes, out.embedding_dim, flags.out, infer_s);
    std::printf("test_pairs=%lld infer_s=%.3f\ntest_ap=%.4f test_mrr=%.4f test_hits@%lld=%.4f\n",
                static_cast<long long>(link->positives + link->negatives), infer_s, link->ap,
                link->mrr, static_cast<long long>(link->hits_k), link->hits);
    std::printf("test_auc=%.4f\n", link->auc);
    std::fflush(stdout);
  } else if (session.rank() == 0) {
    log_info("infer: {} nodes, {} layers, embeddings [{}, {}] and predictions in {} ({:.2f} s)",
             out.num_nodes, model.options().layers, out.num_nodes, out.embedding_dim, flags.out,
             infer_s);
    std::printf("test_ids=%lld test_correct=%lld infer_s=%.3f\n",
                static_cast<long long>(out.test_total), static_cast<long long>(out.test_correct),
                infer_s);
    std::printf("test_acc=%.4f\n", out.test_acc);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

Action add_infer_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  app.description(
      "Full-neighbourhood inference with the latest checkpoint of a `partita train` run "
      "(GraphSAGE, GCN or GAT; the model's shape comes from the checkpoint), layer by layer "
      "over the whole graph: run under mpirun with one rank per part, or any number of ranks "
      "on a 1-part directory. Rank 0 writes OUT/embeddings.npy (float32 [N, H], the last "
      "hidden layer) and OUT/predictions.npy (int64 [N]) in original node-id order and "
      "prints, last, test_acc=<accuracy>. For a link-prediction model (train --task link) "
      "it writes OUT/embeddings.npy (the encoder's output, which the decoder scores) only and "
      "prints the metrics of the partition's held-out test edges, last test_auc=<AUC>.");
  app.add_option("--parts", flags->session.parts_dir, "Partition directory")->required();
  app.add_option("--checkpoint-dir", flags->checkpoint_dir,
                 "Checkpoint directory of the training run (its latest checkpoint is used; "
                 "read by rank 0)")
      ->required();
  app.add_option("--out", flags->out, "Output directory (written by rank 0)")->required();
  app.add_flag("--force", flags->force, "Write into --out even if it is not empty");
  app.add_flag("--normalize-features", flags->infer.normalize_features,
               "Row-normalize input features. Not needed: the checkpoint records whether the "
               "training run did, and infer does the same (given against the checkpoint's "
               "record, it is refused)");
  app.add_option("--batch-size", flags->infer.batch_size,
                 "Destination nodes per layer step on each rank (bounds the memory of a step)")
      ->capture_default_str();
  app.add_option("--torch-threads", flags->torch_threads,
                 "Threads of the model's kernels per rank (0: the cores this rank may use)")
      ->capture_default_str();
  add_device_flag(app, &flags->device,
                  "Where the layers are computed: cpu, cuda:N (GPU N), or cuda (one GPU per "
                  "rank, by local rank, as train's --device); the outputs are written from "
                  "the host either way. Needs a torch built with CUDA");
  app.add_option("--hits-k", flags->hits_k, "Link models: K of the Hits@K printed")
      ->capture_default_str();
  app.add_option("--timeout", flags->session.timeout_s, "Seconds to wait for a remote rank")
      ->capture_default_str();
  add_host_local_flag(app, &flags->session.host_local);
  return [flags, &app] {
    flags->normalize_given = app.count("--normalize-features") > 0;
    return run_rank([&](runtime::RankContext& rank) { return run_infer(rank, *flags); });
  };
}

}  // namespace partita::cli
