#include "parse_errors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "global_flags.h"

namespace partita::cli {
namespace {

// Levenshtein distance, for suggestions among a few dozen short names.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The command the arguments name (the first word that is not a global flag), or nullptr.
CLI::App* chosen_command(CLI::App& root, const std::vector<std::string>& args, size_t* at) {
  const size_t i = command_index(args);
  if (i == args.size() || args[i].empty() || args[i][0] == '-') return nullptr;
  CLI::App* sub = root.get_subcommand(args[i]);  // throws when it is not a command
  *at = i;
  return sub;
}

// "--name" for every long name and "-n" for every short name of `app`'s options.
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& n : option->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : option->get_snames()) names.push_back("-" + n);
  }
  return names;
}

// Flag names other GNN tools use (DGL's and PyG's examples, argparse-style underscores
// aside), by the Partita flag that means the same. Only a flag the command has is
// suggested: --num-epochs leads to --epochs in train, to nothing in sample-bench.
const std::vector<std::pair<std::string, std::vector<std::string>>>& flag_aliases() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> aliases{
      {"--lr", {"--learning-rate"}},
      {"--epochs", {"--num-epochs", "--n-epochs", "--max-epochs"}},
      {"--fanouts", {"--fan-out", "--fan-outs", "--num-neighbors"}},
      {"--layers", {"--num-layers", "--n-layers"}},
      {"--hidden",
       {"--num-hidden", "--n-hidden", "--hidden-channels", "--hidden-dim", "--hidden-size"}},
      {"--heads", {"--num-heads", "--n-heads"}},
      {"--negatives", {"--num-negs", "--num-negatives", "--neg-samples"}},
      {"--num-bases", {"--n-bases"}},
      {"--threads", {"--num-threads"}},
      {"--parts", {"--part-config"}},
      {"--num-parts", {"--nparts", "--n-parts"}},
      {"--out", {"--output", "--output-dir", "--out-dir"}},
  };
  return aliases;
}

// What the user most likely meant by flag `name`, which `command` does not have: the same
// name with dashes for underscores (--batch_size), or the Partita flag of another tool's
// name (--learning-rate, --num_epochs); "" when neither is a flag of `command`.
std::string alias_of(const std::string& name, const CLI::App& command) {
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  auto has = [&](const std::string& flag) { return command.get_option_no_throw(flag) != nullptr; };
  if (dashed != name && has(dashed)) return dashed;
  for (const auto& [flag, others] : flag_aliases())
    if (std::find(others.begin(), others.end(), dashed) != others.end() && has(flag)) return flag;
  return "";
}

bool looks_like_number(const std::string& word) {
  return word.size() > 1 && word[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
}

// The first flag among the command's words that neither the command nor the global flags
// know, as "<flag>: unknown flag ...", or "".
std::string unknown_flag(CLI::App& root, CLI::App* command, const std::vector<std::string>& words) {
  const std::string where = command != nullptr ? " of " + command->get_name() : "";
  const std::string help =
      command != nullptr ? "partita " + command->get_name() + " --help" : "partita --help";
  for (const std::string& word : words) {
    if (word == "--") break;  // launch: the ranks' command follows, checked on its own
    if (word.size() < 2 || word[0] != '-' || looks_like_number(word)) continue;
    const std::string name = word.substr(0, word.find('='));
    if (root.get_option_no_throw(name) != nullptr) continue;
    if (command != nullptr && command->get_option_no_throw(name) != nullptr) continue;
    if (is_global_flag(name)) continue;
    if (command != nullptr && command->get_allow_extras()) continue;  // the command explains
    const CLI::App& app = command != nullptr ? *command : root;
    const std::string alias = alias_of(name, app);
    const std::vector<std::string> close =
        alias.empty() ? closest_names(name, flag_names(app)) : std::vector<std::string>{alias};
    if (close.empty()) return fmt::format("{}: unknown flag{} (see {})", name, where, help);
    return fmt::format("{}: unknown flag{}; did you mean {}? (see {})", name, where,
                       fmt::join(close, " or "), help);
  }
  return "";
}

// What a value of CLI11 type `type` ("FLOAT", "INT", "UINT", "N", ...) should have been.
std::string expected_value(const std::string& type) {
  if (type == "FLOAT") return "a number";
  if (type == "INT" || type == "UINT" || type == "N") return "an integer";
  if (type == "TEXT") return "text";
  return type;  // our own type names say it: "H1,H2,...", "FILE", "PATH"
}

const CLI::Option* option_named(CLI::App* command, CLI::App& root, const std::string& name) {
  const CLI::Option* option = command != nullptr ? command->get_option_no_throw(name) : nullptr;
  return option != nullptr ? option : root.get_option_no_throw(name);
}

std::string type_of(CLI::App* command, CLI::App& root, const std::string& name) {
  const CLI::Option* option = option_named(command, root, name);
  if (option == nullptr) return "";
  const std::string type = option->get_type_name();
  return type.substr(0, type.find(':'));
}

}  // namespace

std::vector<std::string> closest_names(const std::string& word,
                                       const std::vector<std::string>& names) {
  auto bare = [](const std::string& s) { return s.substr(s.find_first_not_of('-')); };
  const std::string w = bare(word);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& name : names) {
    const std::string n = bare(name);
    size_t d = edit_distance(w, n);
    if (w.size() >= 3 && n.rfind(w, 0) == 0) d = std::min<size_t>(d, 1);  // a prefix of it
    if (d <= 2 && d < std::max(n.size(), w.size())) scored.emplace_back(d, name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> best;
  for (const auto& [d, name] : scored)
    if (best.size() < 3 && d == scored.front().first) best.push_back(name);
  return best;
}

std::string describe_parse_error(const CLI::ParseError& error, CLI::App& root,
                                 const std::vector<std::string>& args) {
  size_t at = 0;
  CLI::App* command = nullptr;
  try {
    command = chosen_command(root, args, &at);
  } catch (const CLI::OptionNotFound&) {
  }
  const std::vector<std::string> words(command != nullptr ? args.begin() + at + 1 : args.begin(),
                                       args.end());
  const std::string unknown = unknown_flag(root, command, words);
  if (!unknown.empty()) return unknown;

  const std::string what = error.what();
  const std::string cmd = command != nullptr ? command->get_name() : "";
  const std::string help = command != nullptr ? "partita " + cmd + " --help" : "partita --help";
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    // "Could not convert: --lr = abc"
    const std::string prefix = "Could not convert: ";
    const size_t eq = what.find(" = ");
    if (what.rfind(prefix, 0) == 0 && eq != std::string::npos) {
      const std::string name = what.substr(prefix.size(), eq - prefix.size());
      // CLI11 names every value given; of a single-value flag given twice only the last,
      // the one kept, was converted.
      const CLI::Option* option = option_named(command, root, name);
      const std::string value =
          option != nullptr && option->get_items_expected_max() == 1 && !option->results().empty()
              ? option->results().back()
              : what.substr(eq + 3);
      return fmt::format("{}: '{}' is not {}", name, value,
                         expected_value(type_of(command, root, name)));
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    // "--lr: 1 required FLOAT missing", "--out: At least 1 required but received 0"
    const size_t colon = what.find(':');
    if (colon != std::string::npos && what.rfind("-", 0) == 0) {
      const std::string name = what.substr(0, colon);
      const std::string type = type_of(command, root, name);
      return fmt::format("{}: needs a value{}", name,
                         type.empty() ? "" : " (" + expected_value(type) + ")");
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    // "--parts is required"
    const size_t is = what.find(" is required");
    if (is != std::string::npos && what.rfind("-", 0) == 0)
      return fmt::format("{}: required by {} (see {})", what.substr(0, is), cmd, help);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // "The following argument(s) was/were not expected: a b" (CLI11 lists them reversed)
    const size_t colon = what.find(": ");
    std::vector<std::string> extras;
    std::istringstream listed(colon == std::string::npos ? what : what.substr(colon + 2));
    for (std::string word; listed >> word;) extras.insert(extras.begin(), word);
    return fmt::format("{}: unexpected argument{} '{}' (flags take the form --name value; see {})",
                       cmd.empty() ? "partita" : cmd, extras.size() == 1 ? "" : "s",
                       fmt::join(extras, " "), help);
  }
  return what;
}

}  // namespace partita::cli
