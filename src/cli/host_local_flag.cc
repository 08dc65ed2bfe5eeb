#include "host_local_flag.h"

#include <fmt/format.h>

namespace partita::cli {

CLI::Option* add_host_local_flag(CLI::App& app, runtime::HostLocal* field) {
  const NameTable<runtime::HostLocal>& names = runtime::host_local_names();
  CLI::Option* option = app.add_option_function<std::string>(
      "--host-local",
      [field, &names](const std::string& name) { *field = *find_named(names, name); },
      "Ranks on one host that opened the same partition directory (same path and the same "
      "partita.json) read each other's features, labels and neighbor samples from the "
      "mapped files instead of sending requests: auto (on where that holds) or off (every "
      "remote row through MPI). Results are identical either way; learned embeddings always "
      "go through MPI");
  CLI::Validator member(
      [&names](std::string& name) {
        return find_named(names, name)
                   ? std::string()
                   : fmt::format("'{}' is not one of {}", name, joined_names(names));
      },
      "");
  member.application_index(0);
  option->check(member);
  option->type_name("TEXT");
  option->default_str(name_of(names, *field));
  return option;
}

}  // namespace partita::cli
