#pragma once
// The command line's side of `train --resume` before any work starts (train_settings.h says
// what is done with the settings): the latest checkpoint's recorded settings brought to every
// rank, and flag values set as if they had been given, so that a resumed run builds its
// options, its session (the learned embeddings' width) and its model from the values it
// continues with.
#include <string>

#include "partita/comm/collectives.h"
#include "train_settings.h"

namespace CLI {
class App;
}

namespace partita::cli {

struct RecordedSettings {
  bool found = false;  // false: `dir` is missing or holds no checkpoint
  Settings settings;   // empty for a checkpoint written before settings were recorded
  std::string source;  // the checkpoint's path
};

// Collective over `job`: rank `root` (the first rank that trains, whose host holds the
// checkpoints) reads the latest checkpoint of `dir` and every rank gets its settings. A read
// that fails there (an unreadable directory, a corrupt checkpoint) is agreed
// (runtime::agree_on_setup): every rank throws, one reports.
RecordedSettings share_recorded_settings(Collectives& job, const std::string& dir, int root);

// Sets each flag of `values` on `app` (a command, parsed) as if `--name value` had been given:
// CLI11 validates the value and binds it onto its field as parsing does. A name `app` does
// not know is skipped (a flag of another version). A value it refuses is a UsageError naming
// the flag and `source` (where the value came from).
void set_flag_values(CLI::App& app, const Settings& values, const std::string& source);

}  // namespace partita::cli
