#include "command_line.h"

#include "flags.h"
#include "help_formatter.h"
#include "parse_errors.h"
#include "partita/core/version.h"

namespace partita::cli {

std::unique_ptr<CommandLine> make_command_line() {
  auto cli = std::make_unique<CommandLine>();
  CLI::App& app = cli->app;
  // Set before the commands are added: each command copies its parent's formatter.
  auto formatter = std::make_shared<WrappingFormatter>();
  app.formatter(formatter);
  app.description(
      "Partita: partition large graphs and train graph neural networks on them across "
      "machines.\nRun `partita <command> --help` for the options of each command.");
  app.set_version_flag("--version", std::string("partita ") + kVersion);
  app.require_subcommand(1);
  // A flag given twice keeps its last value, as in most command-line tools: scripts pass
  // `$FLAGS --dropout 0` to override one setting. Every command copies this default from
  // here (add_subcommand), so it must come before them. Options that take a list (launch's
  // --env) keep every value: their expected count is unbounded, so nothing is trimmed.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // -q and -v: before the command, or after it (every command takes them too).
  auto add_global_flags = [&](CLI::App& on) {
    on.add_flag("-q,--quiet", cli->quiet,
                "No progress: print only results, errors, warnings and notes that change the run");
    on.add_flag("-v,--verbose", cli->verbose, "Print debugging detail");
  };
  add_global_flags(app);

  // A null registrar (torch_registrar in the torch-free executable) names the command for
  // --help and the unknown-command check only: main() hands it over before parsing.
  auto add = [&](const char* name, const char* help, Registrar registrar) {
    CLI::App* sub = app.add_subcommand(name, help);
    formatter->set_summary(sub, help);  // the registrar sets the long description
    if (registrar == nullptr) return;
    cli->actions[sub] = registrar(*sub);
    add_global_flags(*sub);
  };
  add("generate", "Write a synthetic graph dataset (numpy layout)", add_generate_command);
  add("partition", "Partition a dataset into a partition directory", add_partition_command);
  add("info", "Print the summary of a partition directory, optionally verifying it",
      add_info_command);
  add("sample-bench", "Measure distributed sampling and feature fetching (JSON)",
      torch_registrar(TorchCommand::kSampleBench));
  add("train", "Train a GNN data-parallel on a partition directory",
      torch_registrar(TorchCommand::kTrain));
  add("infer", "Full-neighbourhood inference with a trained model: embeddings and predictions",
      torch_registrar(TorchCommand::kInfer));
  add("launch",
      "Run train, infer, sample-bench, partition, generate or a script on several ranks or "
      "hosts (mpirun)",
      torch_registrar(TorchCommand::kLaunch));
  // Every integer flag of every command: decimal only ("010" is not 8, "-1" is not 2^64-1).
  require_decimal_integers(app);
  return cli;
}

std::string check_arguments(const std::vector<std::string>& args) {
  std::unique_ptr<CommandLine> cli = make_command_line();
  // CLI11 parses a vector given in reverse order.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    cli->app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
  } catch (const CLI::CallForAllHelp&) {
  } catch (const CLI::CallForVersion&) {
  } catch (const CLI::ParseError& e) {
    return describe_parse_error(e, cli->app, args);
  }
  return "";
}

}  // namespace partita::cli
