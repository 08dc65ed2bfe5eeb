#include "host_local_flag.h"

#include <optional>
#include <string>

namespace partita::cli {

CLI::Option* add_host_local_flag(CLI::App& app, runtime::HostLocal* field) {
  const NameTable<runtime::HostLocal>& names = runtime::host_local_names();
  CLI::Option* option = app.add_option(
      "--host-local", *field,
      "Ranks on one host that opened the same partition directory (same path and the same "
      "partita.json) read each other's features, labels and neighbor samples from the "
      "mapped files instead of sending requests: auto (on where that holds) or off (every "
      "remote row through MPI). Results are identical either way; learned embeddings always "
      "go through MPI");
  // The name becomes the enum's number, which CLI11 then stores into the field.
  CLI::Validator member(
      [&names](std::string& name) {
        const std::optional<runtime::HostLocal> value = find_named(names, name);
        if (!value) return not_one_of(names, name);
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
