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
constexpr SettingKind kRun = SettingKind::kRun;
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

// A number as --help and the settings write it: 0.6, 8, 0.01.
std::string number_text(double value) { return fmt::format("{}", value); }

// The input flags (infer): reapplied when not given, refused when given with another value.
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

}  // namespace

const std::vector<TrainFlagRule>& train_flag_rules() {
  static const std::vector<TrainFlagRule> rules{
      {"parts", kRun},
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
      {"embed-init", kSchedule, kQuiet},  // the first epoch's embeddings only: a resumed
                                          // run restores them
      {"fanouts", kSchedule},
      {"batch-size", kSchedule},
      {"epochs", kSchedule, kQuiet},  // the total: raising it is what resuming is for
      {"max-steps", kSchedule},
      {"lr", kSchedule},
      {"weight-decay", kSchedule},
      {"normalize-features", kInput},
      {"dropout", kSchedule},
      {"attention-dropout", kSchedule},
      {"precision", kSchedule},
      {"device", kRun},   // where it runs; checkpoints hold CPU tensors
      {"kernels", kRun},  // which implementation of the same ops
      {"optimizer", kSignature},
      {"seed", kSchedule},
      {"threads", kRun},
      {"torch-threads", kRun},
      {"prefetch", kRun},
      {"timeout", kRun},
      {"servers", kRun},
      {"eval", kRun},
      {"eval-every", kRun},
      {"checkpoint-dir", kRun},
      {"resume", kRun},
      {"metrics-out", kRun},
      {"force", kRun},
      {"cache-ratio", kRun},
      {"cache-presample", kRun},
      {"gpu-cache-ratio", kRun},
      {"progress", kRun},
      {"progress-every", kRun},
      {"log-every", kRun},
      {"checksum", kRun},
      {"profile", kRun},
      {"host-local", kRun},
      {"sample-on", kRun},  // the same blocks either way
      {"topology", kRun},   // the same samples either way
      // The sampling rule changes the blocks the model learns from, as the fanouts do.
      {"temporal", kSchedule},
      {"temporal-strategy", kSchedule},
      {"temporal-strict", kSchedule},
      {"sample-weight", kSchedule},
      // The model's edge_dim, hence its parameters' shapes, follows it.
      {"edge-features", kSignature},
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

ResumePlan plan_resume(const Settings& stored, const Settings& current,
                       const std::vector<std::string>& given, const std::string& source,
                       const SameSetting& same) {
  ResumePlan plan;
  if (stored.empty()) {
    plan.warnings.push_back(fmt::format(
        "{} records no settings (written by an earlier partita): only the model's shape is "
        "checked; give the training run's flags yourself",
        source));
    return plan;
  }
  std::vector<std::string> refused;  // "--flag: stored ..., given given"
  bool signature = false, input = false;
  for (const auto& [name, value] : current) {
    const TrainFlagRule* rule = find_train_flag_rule(name);
    const std::string* recorded = value_of(stored, name);
    if (rule == nullptr || recorded == nullptr || rule->kind == kRun) continue;
    if (!contains(given, name)) {
      // Not given: continue as recorded.
      if (!same_setting_value(*recorded, value)) plan.reapplied.emplace_back(name, *recorded);
      continue;
    }
    const std::optional<bool> known = same ? same(name, *recorded, value) : std::nullopt;
    if (known ? *known : same_setting_value(*recorded, value)) continue;
    if (rule->kind == kSchedule) {
      if (!rule->quiet)
        plan.warnings.push_back(fmt::format(
            "--{}: {} in the checkpoint, {} given: resuming with {}{}", name, *recorded, value,
            value, name == "seed" ? " (the run will not repeat the uninterrupted one)" : ""));
      continue;
    }
    (rule->kind == kSignature ? signature : input) = true;
    refused.push_back(
        refused.empty()
            ? fmt::format("--{}: {} in the checkpoint {}, {} given", name, *recorded, source, value)
            : fmt::format("--{}: {} in it, {} given", name, *recorded, value));
  }
  if (!refused.empty()) {
    std::string text;
    for (const std::string& line : refused) text += (text.empty() ? "" : "; ") + line;
    const char* why = signature && input ? "must build the same model and feed it as before"
                      : signature        ? "must build the same model"
                                         : "must feed the model as before";
    throw UsageError(fmt::format(
        "{}; a resumed run {} (leave {} out to take the checkpoint's value{}, or train from "
        "scratch into another --checkpoint-dir)",
        text, why, refused.size() == 1 ? "the flag" : "these flags",
        refused.size() == 1 ? "" : "s"));
  }
  if (!plan.reapplied.empty())
    plan.notices.push_back(
        fmt::format("--resume: as recorded in {}: {}", source, settings_text(plan.reapplied)));
  return plan;
}

CheckpointSettingsCheck check_infer_settings(const Settings& stored, const Settings& current,
                                             const std::vector<std::string>& given,
                                             const std::string& source) {
  CheckpointSettingsCheck check;
  if (stored.empty()) {
    check.warnings.push_back(
        fmt::format("{} records no settings (written by an earlier partita): give "
                    "--normalize-features if the training run did",
                    source));
    return check;
  }
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

void log_settings_lines(const std::vector<std::string>& notices,
                        const std::vector<std::string>& warnings) {
  for (const std::string& line : notices) log_notice("{}", line);
  for (const std::string& line : warnings) log_warning("{}", line);
}

std::string fanouts_text(const sample::Fanouts& fanouts) {
  std::string text;
  for (int64_t k : fanouts.hops) text += (text.empty() ? "" : ",") + std::to_string(k);
  return text;
}

Settings model_default_settings(train::ModelKind kind) {
  const train::ModelDefaults& d = train::model_defaults(kind);
  Settings out;
  if (d.layers) out.emplace_back("layers", std::to_string(*d.layers));
  if (d.hidden) out.emplace_back("hidden", std::to_string(*d.hidden));
  if (d.heads) out.emplace_back("heads", std::to_string(*d.heads));
  if (d.embed_init) out.emplace_back("embed-init", number_text(*d.embed_init));
  if (d.fanouts) out.emplace_back("fanouts", fanouts_text(*d.fanouts));
  if (d.lr) out.emplace_back("lr", number_text(*d.lr));
  if (d.dropout) out.emplace_back("dropout", number_text(*d.dropout));
  if (d.attention_dropout) out.emplace_back("attention-dropout", number_text(*d.attention_dropout));
  return out;
}

std::string settings_text(const Settings& settings) {
  std::string text;
  for (const auto& [name, value] : settings)
    text += fmt::format("{}--{} {}", text.empty() ? "" : " ", name, value);
  return text;
}

}  // namespace partita::cli
