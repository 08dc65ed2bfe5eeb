#include "partita/core/directory.h"

#include <filesystem>

#include "partita/core/error.h"

namespace partita {

void create_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  PARTITA_CHECK(!ec && std::filesystem::is_directory(dir), IoError,
                "{}: cannot create directory: {}", dir, ec ? ec.message() : "not a directory");
}

}  // namespace partita
