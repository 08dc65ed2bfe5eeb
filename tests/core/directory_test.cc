#include "partita/core/directory.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "helpers/test_paths.h"
#include "partita/core/error.h"

namespace partita {
namespace {

// Missing parents are made too; an existing directory is accepted as it is.
TEST(CreateDirectory, MakesTheDirectoryAndItsParents) {
  testing::TempDir dir;
  create_directory(dir / "a/b/c");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "a/b/c"));
  create_directory(dir / "a/b");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "a/b"));
}

// A path that names a file, or runs through one, fails with the one message every command
// reports: "PATH: cannot create directory: REASON".
TEST(CreateDirectory, NamesThePathItCannotCreate) {
  testing::TempDir dir;
  testing::write_file(dir / "occupied", "x\n");
  for (const std::string& path : {dir / "occupied", dir / "occupied/sub"}) {
    try {
      create_directory(path);
      ADD_FAILURE() << "no IoError for " << path;
    } catch (const IoError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": cannot create directory: Not a directory");
    }
  }
}

}  // namespace
}  // namespace partita
