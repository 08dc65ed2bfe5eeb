// partita-torch's half of commands.h's torch_registrar: every command is its own.
#include "commands.h"

namespace partita::cli {

Registrar torch_registrar(TorchCommand command) {
  switch (command) {
    case TorchCommand::kSampleBench:
      return add_sample_bench_command;
    case TorchCommand::kTrain:
      return add_train_command;
    case TorchCommand::kInfer:
      return add_infer_command;
    case TorchCommand::kLaunch:
      return add_launch_command;
  }
  return nullptr;
}

}  // namespace partita::cli
