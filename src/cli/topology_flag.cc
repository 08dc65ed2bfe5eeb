#include "topology_flag.h"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace partita::cli {

CLI::Option* add_topology_flag(CLI::App& app, runtime::Topology* field) {
  const NameTable<runtime::Topology>& names = runtime::topology_names();
  CLI::Option* option = app.add_option(
      "--topology", *field,
      "Which in-edges a rank maps for sampling: owned (its own part's; other ranks' nodes "
      "are sampled by their owners, by request) or full (every part's, from the directory "
      "every rank reads: every node is sampled here, no sampling requests; feature rows stay "
      "with their owners). Samples are identical either way; `partita launch` passes full "
      "with --device cuda (docs/training.md, Topology)");
  // The name becomes the enum's number, which CLI11 then stores into the field.
  CLI::Validator member(
      [&names](std::string& name) {
        const std::optional<runtime::Topology> value = find_named(names, name);
        if (!value) return fmt::format("'{}' is not one of {}", name, joined_names(names));
        name = std::to_string(static_cast<int>(*value));
        return std::string();
      },
      "");
  // A flag given twice keeps its last value (make_command_line): only that one is checked.
  member.application_index(0);
  option->transform(member);
  option->type_name("TEXT");
  option->default_str(name_of(names, *field));
  return option;
}

}  // namespace partita::cli
