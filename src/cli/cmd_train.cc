// partita train: data-parallel GNN training on a partition directory (DESIGN 7). Rank 0
// prints one line per epoch (and a progress bar on a terminal) and, last,
// `test_acc=<value>`; with --checksum every rank then prints `rank=<r> param_checksum=<value>`
// to stderr so that tests can compare ranks' weights.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "flags.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/runtime/mpi_rank.h"
#include "rank_main.h"
#include "partita/train/progress.h"
#include "partita/train/trainer.h"

namespace partita::cli {
namespace {

struct Flags {
  std::string parts;
  std::string model = "sage";
  int64_t layers = 2;
  int64_t hidden = 64;
  int64_t heads = 4;
  std::string fanouts = "10,10";
  int64_t batch_size = 1024;
  int64_t epochs = 5;
  double lr = 0.003;
  double weight_decay = 0;
  double dropout = 0.5;
  double attention_dropout = -1;  // -1: same as dropout
  std::string precision = "fp32";
  std::string optimizer = "adam";
  uint64_t seed = 0;
  int threads = 1;
  int torch_threads = 0;  // 0: the cores per rank on this host
  int prefetch = 2;
  double timeout_s = 60;
  bool checksum = false;
  bool normalize_features = false;
  int64_t eval_every = 1;
  std::string checkpoint_dir;
  bool resume = false;
  std::string metrics_out;
};

train::TrainOptions make_options(const Flags& f, int cores_per_rank) {
  train::TrainOptions o;
  if (f.model == "sage") {
    o.model.kind = nn::ConvKind::kSage;
  } else if (f.model == "gcn") {
    o.model.kind = nn::ConvKind::kGcn;
  } else if (f.model == "gat") {
    o.model.kind = nn::ConvKind::kGat;
  } else {
    throw UsageError("--model: '" + f.model + "' is not one of sage, gcn, gat");
  }
  PARTITA_CHECK(f.layers >= 1, UsageError, "--layers: must be >= 1, got {}", f.layers);
  PARTITA_CHECK(f.hidden >= 1, UsageError, "--hidden: must be >= 1, got {}", f.hidden);
  PARTITA_CHECK(f.heads >= 1, UsageError, "--heads: must be >= 1, got {}", f.heads);
  PARTITA_CHECK(f.dropout >= 0 && f.dropout < 1, UsageError, "--dropout: must be in [0, 1), got {}",
                f.dropout);
  PARTITA_CHECK(f.attention_dropout == -1 || (f.attention_dropout >= 0 && f.attention_dropout < 1),
                UsageError, "--attention-dropout: must be in [0, 1) (or -1: same as --dropout), "
                "got {}", f.attention_dropout);
  if (f.precision == "fp32") {
    o.model.precision = nn::Precision::kFp32;
  } else if (f.precision == "bf16") {
    o.model.precision = nn::Precision::kBf16;
  } else {
    throw UsageError("--precision: '" + f.precision + "' is not one of fp32, bf16");
  }
  check_timeout(f.timeout_s);
  PARTITA_CHECK(f.threads >= 1 && f.threads <= 256, UsageError,
                "--threads: must be in [1, 256], got {}", f.threads);
  PARTITA_CHECK(f.prefetch >= 1 && f.prefetch <= 1024, UsageError,
                "--prefetch: must be in [1, 1024], got {}", f.prefetch);
  o.model.layers = f.layers;
  o.model.hidden = f.hidden;
  o.model.heads = f.model == "gat" ? f.heads : 1;
  o.model.dropout = f.dropout;
  o.model.attention_dropout = f.attention_dropout;
  o.fanouts = parse_fanouts(f.fanouts);
  PARTITA_CHECK(static_cast<int64_t>(o.fanouts.size()) == f.layers, UsageError,
                "--layers ({}) must equal the number of --fanouts ({})", f.layers,
                o.fanouts.size());
  if (f.optimizer == "adam") {
    o.optimizer = train::OptimizerKind::kAdam;
  } else if (f.optimizer == "sgd") {
    o.optimizer = train::OptimizerKind::kSgd;
  } else {
    throw UsageError("--optimizer: '" + f.optimizer + "' is not one of adam, sgd");
  }
  o.lr = f.lr;
  o.weight_decay = f.weight_decay;
  o.normalize_features = f.normalize_features;
  o.epochs = f.epochs;
  o.batch_size = f.batch_size;
  o.seed = f.seed;
  o.threads = f.threads;
  o.prefetch = f.prefetch;
  PARTITA_CHECK(f.torch_threads >= 0 && f.torch_threads <= 1024, UsageError,
                "--torch-threads: must be in [0, 1024] (0: the cores per rank), got {}",
                f.torch_threads);
  o.torch_threads = f.torch_threads > 0 ? f.torch_threads : std::max(1, cores_per_rank);
  o.eval_every = f.eval_every;
  o.checkpoint_dir = f.checkpoint_dir;
  o.resume = f.resume;
  PARTITA_CHECK(!f.resume || !f.checkpoint_dir.empty(), UsageError,
                "--resume needs --checkpoint-dir");
  return o;
}

// Training allocates the same large tensors every step. glibc would serve each one over
// 32 MiB with a fresh mmap and return it on free, so every step paid page faults and page
// zeroing again (measured: 27% of a products-like step). Serve them from the heap and keep
// freed memory for reuse instead; peak RSS is unchanged. One arena: the sampler threads'
// own arenas (64 MiB heaps) cannot hold a batch's feature rows and kept returning and
// faulting in pages (synth200k, 2 ranks, bf16: 1.78 M -> 0.73 M page faults per rank,
// epoch 20.1 s -> 16.3 s, fetch 6.7 s -> 2.4 s).
void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_ARENA_MAX, 1);
}

// oneDNN (bf16 matrix products) caches a compiled primitive per matrix shape, and every
// mini-batch has new shapes: the cache never hits and only holds memory. Measured
// (synth200k, 1 rank, bf16, 3 runs each): peak RSS 3.7-4.5 GB -> 2.3-2.5 GB, epoch
// 14.9-17.0 s -> 12.8-13.9 s. A capacity the user sets in the environment wins.
void disable_onednn_primitive_cache() { setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0", 0); }

int run_train(MpiScope& mpi, const Flags& flags) {
  keep_freed_memory();
  disable_onednn_primitive_cache();
  const train::TrainOptions options = make_options(flags, mpi.cores_per_rank());
  runtime::SessionOptions so;
  so.parts_dir = flags.parts;
  so.timeout_s = flags.timeout_s;
  runtime::MpiRank rank(mpi, so);
  runtime::Session& session = rank.session();
  train::Trainer trainer(session, options);
  const bool print = mpi.rank() == 0;
  std::unique_ptr<train::MetricsFile> metrics;
  if (print && !flags.metrics_out.empty())
    metrics = std::make_unique<train::MetricsFile>(flags.metrics_out, flags.resume);
  train::ProgressBar bar(print && ::isatty(STDERR_FILENO) && log_level() >= LogLevel::kInfo,
                         options.epochs);
  const auto on_epoch = [&](const train::EpochRecord& r) {
    if (!print) return;
    bar.clear();
    std::printf(
        "epoch=%lld steps=%lld loss=%.4f train_acc=%.4f val_acc=%s epoch_s=%.3f "
        "sample_s=%.3f fetch_s=%.3f compute_s=%.3f allreduce_s=%.3f wait_s=%.3f eval_s=%.3f\n",
        static_cast<long long>(r.epoch), static_cast<long long>(r.steps), r.loss, r.train_acc,
        r.validated ? fmt::format("{:.4f}", r.val_acc).c_str() : "-", r.epoch_s, r.sample_s,
        r.fetch_s, r.compute_s, r.allreduce_s, r.wait_s, r.eval_s);
    std::fflush(stdout);
    if (metrics) metrics->write_epoch(r);
  };
  const auto on_step = [&](const train::StepRecord& s) {
    if (print) bar.update(s);
  };
  const train::TrainResult result = trainer.train(on_epoch, on_step);
  bar.clear();
  if (metrics) metrics->write_final(result, mpi.size());
  if (flags.checksum) {
    std::fprintf(stderr, "rank=%d param_checksum=%.9e\n", mpi.rank(), trainer.parameter_checksum());
  }
  session.finish();
  if (print) {
    std::printf("test_acc=%.4f\n", result.test_acc);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

Action add_train_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  app.description(
      "Train a GNN for node classification on a partition directory, data-parallel: run "
      "under mpirun (or `partita launch`) with one rank per part, or any number of ranks on "
      "a 1-part directory. Rank 0 prints one line per epoch (with a progress bar on a "
      "terminal) and, last, test_acc=<accuracy>.");
  app.add_option("--parts", flags->parts, "Partition directory")->required();
  app.add_option("--model", flags->model, "sage, gcn or gat")->capture_default_str();
  app.add_option("--layers", flags->layers, "Layers (= number of fanouts)")->capture_default_str();
  app.add_option("--hidden", flags->hidden,
                 "Hidden width (gat: per head; a hidden layer outputs hidden x heads)")
      ->capture_default_str();
  app.add_option("--heads", flags->heads,
                 "Attention heads of gat's hidden layers (its output layer has one)")
      ->capture_default_str();
  app.add_option("--fanouts", flags->fanouts, "Neighbors per hop, comma-separated (-1: all)")
      ->capture_default_str();
  app.add_option("--batch-size", flags->batch_size,
                 "Global mini-batch: seeds per step summed over all ranks (each rank takes "
                 "its share, so any number of ranks runs the same number of steps)")
      ->capture_default_str();
  app.add_option("--epochs", flags->epochs, "Epochs")->capture_default_str();
  app.add_option("--lr", flags->lr, "Learning rate")->capture_default_str();
  app.add_option("--weight-decay", flags->weight_decay, "Weight decay")->capture_default_str();
  app.add_flag("--normalize-features", flags->normalize_features,
               "Row-normalize input features (each row divided by its sum)");
  app.add_option("--dropout", flags->dropout, "Dropout on the input of every layer")
      ->capture_default_str();
  app.add_option("--attention-dropout", flags->attention_dropout,
                 "gat: dropout on the attention coefficients (-1: same as --dropout)")
      ->capture_default_str();
  app.add_option("--precision", flags->precision,
                 "fp32, or bf16: bfloat16 activations and matrix products (AVX512-BF16/AMX) "
                 "with fp32 weights, optimizer state and loss")
      ->capture_default_str();
  app.add_option("--optimizer", flags->optimizer, "adam or sgd")->capture_default_str();
  app.add_option("--seed", flags->seed, "Seed of weights, shuffling and sampling")
      ->capture_default_str();
  app.add_option("--threads", flags->threads, "Sampler threads per rank")->capture_default_str();
  app.add_option("--torch-threads", flags->torch_threads,
                 "Threads of the model's kernels and matrix products per rank (0: the host's "
                 "cores divided by the ranks on it)")
      ->capture_default_str();
  app.add_option("--prefetch", flags->prefetch, "Batches prepared ahead")->capture_default_str();
  app.add_option("--timeout", flags->timeout_s, "Seconds to wait for a remote rank")
      ->capture_default_str();
  app.add_option("--eval-every", flags->eval_every,
                 "Validate after every K-th epoch and after the last (0: never)")
      ->capture_default_str();
  app.add_option("--checkpoint-dir", flags->checkpoint_dir,
                 "Write model, optimizer and epoch after every epoch into this directory "
                 "(rank 0's host only; the two latest are kept; written atomically)");
  app.add_flag("--resume", flags->resume,
               "Continue from the latest checkpoint in --checkpoint-dir (from scratch if "
               "there is none); same --seed repeats the uninterrupted run exactly");
  app.add_option("--metrics-out", flags->metrics_out,
                 "Write JSON lines to this file (rank 0): one per epoch, then a final record "
                 "with test_acc and totals (appended to with --resume)");
  app.add_flag("--checksum", flags->checksum,
               "Print each rank's parameter fingerprint to stderr after training");
  return [flags] {
    MpiScope mpi(nullptr, nullptr);
    return run_rank(mpi, [&] { return run_train(mpi, *flags); });
  };
}

}  // namespace partita::cli
