// Prints the front ends' tables of parameter names, one "<front end> <parameter> <word>" line
// per entry (tab-separated), for check_parameter_names.py.
#include <cstdio>

#include "flag_names.h"
#include "keyword_names.h"

int main() {
  for (const auto& [parameter, flag] : partita::cli::flag_table())
    std::printf("cli\t%.*s\t%.*s\n", static_cast<int>(parameter.size()), parameter.data(),
                static_cast<int>(flag.size()), flag.data());
  for (const auto& [parameter, keyword] : partita::python::keyword_table())
    std::printf("python\t%.*s\t%.*s\n", static_cast<int>(parameter.size()), parameter.data(),
                static_cast<int>(keyword.size()), keyword.data());
  return 0;
}
