// The kinds of train's flags and the checks of a checkpoint's settings: see train_settings.h.
#include "train_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "partita/core/error.h"
#include "partita/core/log.h"

namespace partita::cli {
namespace {

constexpr SettingKind kSignature = SettingKind::kSignature;
constexpr SettingKind kInput = SettingKind::kInput;
constexpr SettingKind kSchedule = SettingKind::kSchedule;
constexpr bool kQuiet = true;

const std::string* value_of(const Settings& settings, const std::string& name) {
  for (const auto& [n, v] : settings)
    if (n == name) return &v;
  return nullptr;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool parse_number(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// The input flags: reapplied when not given, refused when given with another value.
void check_inputs(const Settings& stored, const Settings& current,
                  const std::vector<std::string>& given, const std::string& source,
                  const std::string& why, CheckpointSettingsCheck* check) {
  for (const auto& [name, value] : current) {
    const TrainFlagRule* rule = find_train_flag_rule(name);
    const std::string* recorded = value_of(stored, name);
    if (rule == nullptr || rule->kind != kInput || recorded == nullptr) continue;
    if (same_setting_value(*recorded, value)) continue;
    PARTITA_CHECK(!contains(given, name), UsageError,
                  "--{}: {} in the checkpoint {}, {} given; {} (leave the flag out: the "
                  "checkpoint's value is applied)",
                  name, *recorded, source, value, why);
    check->reapplied.emplace_back(name, *recorded);
    check->notices.push_back(
        fmt::format("--{} {}: as the training run (recorded in {})", name, *recorded, source));
  }
}

// A checkpoint written before settings were recorded: one warning, nothing checked.
CheckpointSettingsCheck unrecorded(const std::string& source, const std::string& advice) {
  CheckpointSettingsCheck check;
  check.warnings.push_back(
      fmt::format("{} records no settings (written by an earlier partita): {}", source, advice));
  return check;
}

}  // namespace

const std::vector<TrainFlagRule>& train_flag_rules() {
  static const std::vector<TrainFlagRule> rules{
      {"parts", kSchedule, kQuiet},
      {"task", kSignature},
      {"negatives", kSchedule},
      {"negatives-by", kSchedule},
      {"exclude", kSchedule},
      {"decoder", kSignature},
      {"metric", kSchedule},
      {"model", kSignature},
      {"num-bases", kSignature},
      {"metapaths", kSignature},
      {"embed-lr", kSchedule},
      {"layers", kSignature},
      {"hidden", kSignature},
      {"heads", kSignature},
      {"embed-init", kSchedule, kQuiet},  // the first epoch's embeddings only
      {"fanouts", kSchedule},
      {"batch-size", kSchedule},
      {"epochs", kSchedule},
      {"max-steps", kSchedule},
      {"lr", kSchedule},
      {"weight-decay", kSchedule},
      {"normalize-features", kInput},
      {"dropout", kSchedule},
      {"attention-dropout", kSchedule},
      {"precision", kSchedule},
      {"device", kSchedule, kQuiet},   // where it runs; checkpoints hold CPU tensors
      {"kernels", kSchedule, kQuiet},  // which implementation of the same ops
      {"optimizer", kSignature},
      {"seed", kSchedule},
      {"threads", kSchedule, kQuiet},
      {"torch-threads", kSchedule, kQuiet},
      {"prefetch", kSchedule, kQuiet},
      {"timeout", kSchedule, kQuiet},
      {"servers", kSchedule, kQuiet},
      {"eval", kSchedule, kQuiet},
      {"eval-every", kSchedule, kQuiet},
      {"checkpoint-dir", kSchedule, kQuiet},
      {"resume", kSchedule, kQuiet},
      {"metrics-out", kSchedule, kQuiet},
      {"force", kSchedule, kQuiet},
      {"cache-ratio", kSchedule, kQuiet},
      {"cache-presample", kSchedule, kQuiet},
      {"gpu-cache-ratio", kSchedule, kQuiet},
      {"progress", kSchedule, kQuiet},
      {"progress-every", kSchedule, kQuiet},
      {"log-every", kSchedule, kQuiet},
      {"checksum", kSchedule, kQuiet},
      {"profile", kSchedule, kQuiet},
      {"host-local", kSchedule, kQuiet},
  };
  return rules;
}

const TrainFlagRule* find_train_flag_rule(const std::string& name) {
  for (const TrainFlagRule& rule : train_flag_rules())
    if (rule.name == name) return &rule;
  return nullptr;
}

bool same_setting_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  double x = 0, y = 0;
  return parse_number(a, &x) && parse_number(b, &y) && x == y;
}

CheckpointSettingsCheck check_resume_settings(const Settings& stored, const Settings& current,
                                              const std::vector<std::string>& given,
                                              const std::string& source) {
  CheckpointSettingsCheck check;
  if (stored.empty())
    return unrecorded(source,
                      "only the model's shape is checked; give the training run's "
                      "--normalize-features and --seed yourself");
  for (const auto& [name, value] : current) {
    const TrainFlagRule* rule = find_train_flag_rule(name);
    const std::string* recorded = value_of(stored, name);
    if (rule == nullptr || recorded == nullptr || same_setting_value(*recorded, value)) continue;
    if (rule->kind == kSignature) {
      throw UsageError(fmt::format(
          "--{}: {} in the checkpoint {}, {} given; a resumed run must build the same model "
          "(resume with --{} {}, or train from scratch into another --checkpoint-dir)",
          name, *recorded, source, value, name, *recorded));
    }
    if (rule->kind == kSchedule && !rule->quiet) {
      check.warnings.push_back(fmt::format(
          "--{}: {} in the checkpoint, {} given: resuming with {}{}", name, *recorded, value, value,
          name == "seed" ? " (the run will not repeat the uninterrupted one)" : ""));
    }
  }
  check_inputs(stored, current, given, source, "a resumed run feeds the model as before", &check);
  return check;
}

CheckpointSettingsCheck check_infer_settings(const Settings& stored, const Settings& current,
                                             const std::vector<std::string>& given,
                                             const std::string& source) {
  CheckpointSettingsCheck check;
  if (stored.empty())
    return unrecorded(source, "give --normalize-features if the training run did");
  check_inputs(stored, current, given, source,
               "the model must be fed as in training, or its outputs are wrong", &check);
  return check;
}

bool normalize_features_after(const CheckpointSettingsCheck& check, bool current) {
  for (const auto& [name, value] : check.reapplied) {
    PARTITA_CHECK(name == "normalize-features", Error, "internal: no way to reapply --{}", name);
    current = value == "true";
  }
  return current;
}

void log_settings_check(const CheckpointSettingsCheck& check) {
  for (const std::string& line : check.notices) log_info("{}", line);
  for (const std::string& line : check.warnings) log_warning("{}", line);
}

}  // namespace partita::cli
