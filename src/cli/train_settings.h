#pragma once
// What a checkpoint records of a `partita train` run, and what a resumed run and `partita
// infer` do with it (docs/training.md, "What a checkpoint records"). Every checkpoint holds
// the value of every train flag (train::CheckpointMeta::settings, names without dashes).
// Each flag is of one kind:
//  - signature: the model's parameters, their shapes or the optimizer's state depend on it.
//    A resumed run must give the same value: a difference is refused, naming the flag, its
//    stored and its given value. infer builds the model the checkpoint describes.
//  - input: it changes what the model is fed. Stored, and reapplied by a resumed run and by
//    infer when the flag is not given; given with another value, refused as above.
//  - schedule: how training goes on from here (learning rate, epochs, sampling, ...). It may
//    change on resume; a change is one warning line, unless the flag only decides how the
//    run executes or reports (quiet: threads, progress, files, ...).
#include <string>
#include <utility>
#include <vector>

namespace partita::cli {

enum class SettingKind { kSignature, kInput, kSchedule };

struct TrainFlagRule {
  std::string name;  // the long flag without dashes, e.g. "hidden"
  SettingKind kind;
  bool quiet = false;  // schedule only: a change on resume is not worth a warning
};

// Every flag of `partita train`, in --help order (a test checks it against the command
// and against docs/training.md).
const std::vector<TrainFlagRule>& train_flag_rules();

// The rule of `name`; nullptr for a name no train flag has.
const TrainFlagRule* find_train_flag_rule(const std::string& name);

// (flag name without dashes, value as text) pairs.
using Settings = std::vector<std::pair<std::string, std::string>>;

// What a checkpoint's settings mean for a run that reads it.
struct CheckpointSettingsCheck {
  Settings reapplied;                 // input flags not given: the checkpoint's values
  std::vector<std::string> notices;   // one line each: the reapplied values
  std::vector<std::string> warnings;  // one line each: changed schedule flags
};

// A resumed `train` run: `current` holds the value of every flag of this run, `given`
// the names of those given on the command line, `stored` the checkpoint's settings
// (`source` names it in messages). Throws UsageError naming the first signature or input
// flag whose given value differs from the stored one. Names either side does not know are
// skipped (flags added or removed between versions). Empty `stored` (a checkpoint written
// before settings were recorded): a warning that only the model's shape is checked.
CheckpointSettingsCheck check_resume_settings(const Settings& stored, const Settings& current,
                                              const std::vector<std::string>& given,
                                              const std::string& source);

// `partita infer`: only the input flags, `current` and `given` as above but of infer's own
// flags (the ones it shares with train).
CheckpointSettingsCheck check_infer_settings(const Settings& stored, const Settings& current,
                                             const std::vector<std::string>& given,
                                             const std::string& source);

// The value of --normalize-features to use after `check`: the checkpoint's when it
// reapplies it, else `current`. Throws Error (internal) when `check` reapplies a flag this
// function does not know: every input flag needs its own way back into the options.
bool normalize_features_after(const CheckpointSettingsCheck& check, bool current);

// Writes `check`'s notices and warnings to the log (call on the one rank that reports).
void log_settings_check(const CheckpointSettingsCheck& check);

// True when two recorded values mean the same: equal text, or both numbers of equal value
// ("0.010" and "1e-2").
bool same_setting_value(const std::string& a, const std::string& b);

}  // namespace partita::cli
