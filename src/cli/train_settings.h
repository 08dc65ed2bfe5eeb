#pragma once
// What a checkpoint records of a `partita train` run, and what a resumed run and `partita
// infer` do with it (docs/training.md, "What a checkpoint records"). Every checkpoint holds
// the value of every train flag (train::CheckpointMeta::settings, names without dashes), as
// the run resolved it (`layers` from the fanouts, han's `metapaths` from the schema, a
// model's defaults applied). Each flag is of one kind:
//  - signature: the model's parameters, their shapes or the optimizer's state depend on it.
//  - input: it changes what the model is fed.
//  - schedule: how training goes on from here (learning rate, epochs, sampling, ...).
//  - run: how this run executes or reports (threads, progress, files, device, ...).
// A resumed run continues the recorded one: every signature, input and schedule flag it does
// not give takes the checkpoint's value (one notice line lists those that differ from this
// run's own); a given signature or input flag whose value differs is refused, every such flag
// in one message; a given schedule flag that differs is one warning line, unless the flag is
// quiet (a change is what resuming is for: --epochs). Run flags are this run's own.
// `partita infer` builds the model the checkpoint describes and reapplies the input flags.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/sample/fanouts.h"
#include "partita/train/train_options.h"

namespace partita::cli {

enum class SettingKind { kSignature, kInput, kSchedule, kRun };

struct TrainFlagRule {
  std::string name;  // the long flag without dashes, e.g. "hidden"
  SettingKind kind;
  bool quiet = false;  // schedule only: a change given on resume is not warned about
};

// Every flag of `partita train`, in --help order (a test checks it against the command
// and against docs/training.md).
const std::vector<TrainFlagRule>& train_flag_rules();

// The rule of `name`; nullptr for a name no train flag has.
const TrainFlagRule* find_train_flag_rule(const std::string& name);

// (flag name without dashes, value as text) pairs.
using Settings = std::vector<std::pair<std::string, std::string>>;

// Whether the recorded value `stored` of flag `name` means the value `given` of this run:
// nullopt when the caller cannot tell (then same_setting_value decides). model han's
// metapaths compare as resolved against the partition's schema.
using SameSetting = std::function<std::optional<bool>(
    const std::string& name, const std::string& stored, const std::string& given)>;

// What --resume makes of a checkpoint's settings.
struct ResumePlan {
  Settings reapplied;                 // the checkpoint's values of flags not given that differ
  std::vector<std::string> notices;   // one line: the reapplied values
  std::vector<std::string> warnings;  // one line each: changed schedule flags
};

// A resumed `train` run: `current` holds the value of every flag of this run (given, or its
// default), `given` the names of those given on the command line, `stored` the checkpoint's
// settings (`source` names it in messages). Throws one UsageError naming every given
// signature or input flag whose value differs from the stored one, each with both values.
// Names either side does not know are skipped (flags added or removed between versions).
// Empty `stored` (a checkpoint written before settings were recorded): nothing reapplied, a
// warning that only the model's shape is checked.
ResumePlan plan_resume(const Settings& stored, const Settings& current,
                       const std::vector<std::string>& given, const std::string& source,
                       const SameSetting& same = {});

// What `partita infer` makes of a checkpoint's settings.
struct CheckpointSettingsCheck {
  Settings reapplied;                 // input flags not given: the checkpoint's values
  std::vector<std::string> notices;   // one line each: the reapplied values
  std::vector<std::string> warnings;  // one line each
};

// `partita infer`: only the input flags, `current` and `given` as above but of infer's own
// flags (the ones it shares with train); a given value that differs is refused (UsageError).
CheckpointSettingsCheck check_infer_settings(const Settings& stored, const Settings& current,
                                             const std::vector<std::string>& given,
                                             const std::string& source);

// The value of --normalize-features to use after `check`: the checkpoint's when it
// reapplies it, else `current`. Throws Error (internal) when `check` reapplies a flag this
// function does not know: every input flag needs its own way back into the options.
bool normalize_features_after(const CheckpointSettingsCheck& check, bool current);

// Writes notices and warnings to the log (call on the one rank that reports).
void log_settings_lines(const std::vector<std::string>& notices,
                        const std::vector<std::string>& warnings);

// True when two recorded values mean the same: equal text, or both numbers of equal value
// ("0.010" and "1e-2").
bool same_setting_value(const std::string& a, const std::string& b);

// "10,10": fanouts as --fanouts text.
std::string fanouts_text(const sample::Fanouts& fanouts);

// A model's own defaults (train::model_defaults) as flag values, in --help order: what a run
// of `kind` takes for the flags it neither gives nor resumes; empty for most models.
Settings model_default_settings(train::ModelKind kind);

// "--layers 1 --hidden 8 ...": settings as command-line text.
std::string settings_text(const Settings& settings);

}  // namespace partita::cli
