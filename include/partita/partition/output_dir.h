#pragma once
// The policy of a partition's output directory (`partita partition --out`), in one place for
// the single-process and the distributed pipeline: what may be written where, the stale
// entries of a replaced partition removed before writing, and what a failed run wrote removed
// after it (docs/partition-format.md, "Writing").
//
//   out                                   verdict
//   the input dataset's directory, a      refused, whatever `force` says: a partition never
//   directory inside it, or one that      writes into its input (nor removes anything next
//   holds it                              to it)
//   exists and is not a directory         refused
//   missing, or an empty directory        written
//   a partition (holds partita.json)      replaced: its partition entries (partita.json,
//                                         node_map.npy, part<N>/, edges/) are removed first,
//                                         so no part of an earlier run with more parts stays;
//                                         other files are left alone
//   any other non-empty directory         refused, unless `force`: then written into, its
//                                         files left alone
//
// A run that fails removes what it wrote (OutputDir::discard): `out` itself when it did not
// exist, else every entry that was not there when writing started; so a failed run leaves
// neither a half partition nor empty part folders behind.
//
// Under mpirun one rank (rank 0) inspects and prepares, and tells the others the state it
// found, so that every rank gives the same verdict (check_output_dir is pure).
#include <cstdint>
#include <string>
#include <vector>

namespace partita::partition {

// What is at the output path, relative to the input (inspect_output_dir).
enum class OutputDirState : int64_t {
  kAbsent = 0,
  kEmpty,          // an empty directory
  kPartition,      // a directory holding partita.json
  kOther,          // a non-empty directory without partita.json
  kNotADirectory,  // a file (or anything else)
  kIsInput,        // the input directory itself
  kInsideInput,    // inside the input directory
  kHoldsInput,     // the input directory lies inside it
};

// Looks at `out` and at `input` (the dataset directory), comparing their absolute paths with
// symbolic links resolved (either may not exist). Never throws: what cannot be read counts as
// kOther.
OutputDirState inspect_output_dir(const std::string& out, const std::string& input);

// Throws ParameterError(out_dir) when a directory in `state` may not be written (table above).
void check_output_dir(OutputDirState state, const std::string& out, const std::string& input,
                      bool force);

// The output directory of one run, prepared for writing: a partition's entries removed
// (state kPartition), the directory created, and the names it then holds noted. Throws
// IoError naming what could not be removed or created. Use it on the one process (rank) that
// inspected `out`.
class OutputDir {
 public:
  OutputDir(const std::string& out, OutputDirState state);

  // After a failed run: removes `out` when this run created it, else the entries that
  // appeared since the constructor. Best effort; never throws.
  void discard() noexcept;

 private:
  std::string out_;
  bool created_ = false;
  std::vector<std::string> before_;  // names in `out` when writing started, sorted
};

}  // namespace partita::partition
