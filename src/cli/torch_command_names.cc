// The torch-free `partita`'s half of commands.h's torch_registrar: no command that needs
// torch is registered here; main() hands them to partita-torch (torch_handoff.h).
#include "commands.h"

namespace partita::cli {

Registrar torch_registrar(TorchCommand) { return nullptr; }

}  // namespace partita::cli
