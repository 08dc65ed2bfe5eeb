#pragma once
// Creating output directories, with the one error every command reports.
#include <string>

namespace partita {

// Creates `dir` and its missing parents. IoError "DIR: cannot create directory: REASON" when
// that fails or `dir` is not a directory after it.
void create_directory(const std::string& dir);

}  // namespace partita
