#pragma once
// What `partita train` reports while it runs: a progress bar on a terminal and JSON-lines
// metrics, both fed by the trainer's records (train/trainer.h: Trainer::train's on_step and
// on_epoch callbacks, TrainResult). The command line's: train/ reports records and never
// writes to a terminal or a file of the user's. Used by rank 0 only; not thread-safe.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "partita/train/trainer.h"

namespace partita::cli {

using train::EpochRecord;
using train::StepRecord;
using train::TrainResult;

// Progress of the steps on stderr: epoch, step, loss, seeds/s and ETA of the epoch.
//  kBar: one line redrawn in place (for a terminal), at most ~10 times a second and on the
//        last step of an epoch.
//  kLines: a plain line `progress: epoch E/N step S/T loss L R seeds/s ETA m:ss` every
//        line_every_s seconds of wall time (every step if 0), for logs and pipes (under
//        mpirun a rank's stderr is a pipe).
//  kOff: nothing.
// The command decides the mode (cmd_train.cc: --progress).
enum class ProgressMode { kOff, kBar, kLines };

class ProgressBar {
 public:
  ProgressBar(ProgressMode mode, int64_t epochs, double line_every_s = 10);
  void update(const StepRecord& step);
  // Erases the bar so the next line prints cleanly (kBar only).
  void clear();

 private:
  ProgressMode mode_;
  int64_t epochs_;
  double line_every_s_;
  double last_draw_s_ = -1;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_line_ = std::chrono::steady_clock::now();
};

// `--metrics-out FILE`: one JSON object per line, flushed as it is written. A run (and each
// resumed run appending to the file) starts with its run record:
//   {"type":"run","partita":<version>,"torch":<version>,"started":<UTC, ISO 8601>,
//    "resume":<bool>,"ranks":..,"servers":..,"given":[<the flags given, not defaulted>],
//    "settings":{<every train flag without its dashes: its value as text, given or default>}}
// then one record per epoch and a final one:
//   {"type":"epoch","epoch":E,"steps":..,"seeds":..,"loss":..,"train_acc":..,
//    "val_acc":<number or null when not validated; link task: "val_<metric>">,
//    "epoch_s":..,"sample_s":..,"fetch_s":..,"compute_s":..,"matmul_gflop":..,
//    "allreduce_s":..,"wait_s":..,"eval_s":..,"checkpoint_s":..,"request_bytes":..,
//    "collective_bytes":..,"remote_rows":..,"cache_hits":..,"cache_hit_rate":..,
//    "edge_cache_hits":<remote edge feature rows the edge cache answered>,
//    "remote_bytes":<reply bytes rank 0's fetches received>,"gpu_cache_hits":..,
//    "gpu_cache_remote_hits":..,"gpu_cache_hit_rate":<hits / rows looked up>,
//    "seeds_per_s":..,"rss_bytes":..,"os_threads":<threads of the process>,"open_fds":..}
//   {"type":"final","task":"node","test_acc":..,
//    (link task: "task":"link","test_auc":..,"test_ap":..,"test_mrr":..,"test_hits@K":..,
//    "test_pairs":<held-out pairs scored>)
//    "epochs":<total done>,"resumed_epochs":..,"ranks":..,
//    "servers":<pure servers beside the training ranks, 0 in worker mode>,
//    "train_s":..,"steps":..,"seeds":.., and the sums over this run's epochs of epoch_s,
//    sample_s, fetch_s, compute_s, allreduce_s, wait_s, eval_s, checkpoint_s, and the
//    cache's "cache_rows","cache_bytes","cache_presample_s","cache_expected_hit_rate",
//    its edge cache's "edge_cache_rows","edge_cache_bytes","edge_cache_expected_hit_rate"
//    (0 without --edge-features),
//    and the device cache's "gpu_cache_rows","gpu_cache_remote_rows","gpu_cache_bytes",
//    "gpu_cache_presample_s","gpu_cache_expected_hit_rate"}
// Times are rank 0's (seconds); loss and accuracies are global. Numbers are written with
// full precision (a resumed run's losses compare exactly with the uninterrupted run's).
// --metrics-out PATH may be written: throws UsageError when PATH exists and neither `resume`
// (which appends) nor `force` (which replaces it) is given, so that a finished run's
// metrics are not lost to a new run.
void check_metrics_out(const std::string& path, bool resume, bool force);

class MetricsFile {
 public:
  // Truncates the file, or appends to it (a resumed run continues its history). Throws
  // IoError naming the path. validation_key: the epochs' key of EpochRecord::val_acc
  // ("val_auc" etc. for the link task). Whether an existing file may be replaced is the
  // command's decision (check_metrics_out).
  MetricsFile(const std::string& path, bool append, std::string validation_key = "val_acc");
  ~MetricsFile();
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;

  // The run record (see above); write it first.
  struct RunInfo {
    bool resume = false;
    int ranks = 1;
    int servers = 0;
    std::vector<std::string> given;                             // flag names
    std::vector<std::pair<std::string, std::string>> settings;  // flag name, value
  };
  void write_run(const RunInfo& run);
  void write_epoch(const EpochRecord& rec);
  // ranks: the ranks that trained; servers: the pure servers beside them (server-client
  // mode; 0 in worker mode).
  void write_final(const TrainResult& result, int ranks, int servers = 0);

 private:
  void write_line(const std::string& line);

  std::string path_;
  std::string validation_key_;
  std::FILE* file_ = nullptr;
};

}  // namespace partita::cli
