#pragma once
// Enum <-> name tables: each enum a user chooses by name (a flag, a Python keyword, a
// recorded setting) has one table, declared next to the enum, and every front end reads it
// from there. Pure functions, no I/O.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/error.h"

namespace partita {

// (name, value) pairs, in the order a message lists them; each name and value once.
template <class E>
using NameTable = std::vector<std::pair<std::string, E>>;

// The value named `name`, or nullopt.
template <class E>
std::optional<E> find_named(const NameTable<E>& table, const std::string& name) {
  for (const auto& [n, value] : table)
    if (n == name) return value;
  return std::nullopt;
}

// The name of `value`; throws Error (internal) when the table lacks it.
template <class E>
const std::string& name_of(const NameTable<E>& table, E value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  throw Error("internal: an enum value without a name");
}

// "a, b, c": the names, for messages.
template <class E>
std::string joined_names(const NameTable<E>& table) {
  std::string out;
  for (const auto& entry : table) out += (out.empty() ? "" : ", ") + entry.first;
  return out;
}

// "'gnn' is not one of sage, gcn, gat": what every front end says of a name that is not in
// `table`, after its own word for the parameter ("--model: ", "model: ").
template <class E>
std::string not_one_of(const NameTable<E>& table, const std::string& name) {
  return "'" + name + "' is not one of " + joined_names(table);
}

// The value named `name`; else throws UsageError "<word>: " + not_one_of(table, name), where
// `word` is the caller's word for the parameter (a flag, a keyword).
template <class E>
E value_named(const NameTable<E>& table, const std::string& word, const std::string& name) {
  const std::optional<E> value = find_named(table, name);
  if (!value) throw UsageError(word + ": " + not_one_of(table, name));
  return *value;
}

}  // namespace partita
