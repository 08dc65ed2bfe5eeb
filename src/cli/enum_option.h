#pragma once
// A flag whose value is one of an enum's names (core/name_table.h), for every command.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "partita/core/name_table.h"

namespace partita::cli {

// Binds `flag` onto the enum `*field` through its name table, a checked map: a value that
// is not one of the names is refused at parsing ("--model: 'gnn' is not one of sage, gcn,
// gat, rgcn"), --help shows the name of the field's current value (the default), and the
// run's record (--metrics-out, checkpoints) holds the name given. `names` must outlive the
// app (the tables are function-local statics).
template <class E>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flag, E* field,
                             const NameTable<E>& names, const std::string& help) {
  CLI::Option* option = app.add_option_function<std::string>(
      flag, [field, &names](const std::string& name) { *field = *find_named(names, name); }, help);
  CLI::Validator member(
      [&names](std::string& name) {
        return find_named(names, name)
                   ? std::string()
                   : fmt::format("'{}' is not one of {}", name, joined_names(names));
      },
      "");
  // A flag given twice keeps its last value (make_command_line): only that one is checked.
  member.application_index(0);
  option->check(member);
  option->type_name("TEXT");
  option->default_str(name_of(names, *field));
  return option;
}

}  // namespace partita::cli
