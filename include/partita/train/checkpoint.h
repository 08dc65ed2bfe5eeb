#pragma once
// Training checkpoints: model parameters and buffers, optimizer state, the number of
// completed epochs and the seed, one file per epoch (`checkpoint-<E>.pt`, E = completed
// epochs, zero-padded to 6 digits: checkpoint-000003.pt) in a checkpoint directory.
//
// Format 2 is what Python's torch.save writes (torch::pickle_save), so `torch.load(path)` in
// Debian's python3-torch returns a plain dict (docs/training.md, "Checkpoints"):
//   "model":   {name: tensor} for every parameter and buffer, names as the model's
//              named_parameters() (e.g. conv0.lin_neigh.weight): a state_dict;
//   "partita": {"format": 2, "epochs_done": E, "seed": S, "signature": [ints] (the model's
//              shape and optimizer kind), "optimizer": uint8 tensor (the optimizer state as
//              a torch::serialize archive, for --resume), "settings": {name: value} (the
//              run's settings as text, as the caller recorded them: CheckpointMeta::
//              settings; absent in files written before)}.
// Format-1 files (a torch::serialize archive, written before) are still read.
//
// RNG state. Every random choice of training is a pure function of (seed, epoch, rank):
// shuffles and samples are keyed by them (loader/, sample/), and torch's generator (dropout)
// is reseeded from them at the start of every epoch (Trainer). So (seed, epochs done) IS
// the RNG state: resuming with the same seed reproduces the uninterrupted run exactly.
//
// Atomicity: a file is written as `.checkpoint-<E>.pt.tmp`, flushed to disk (fsync), then
// renamed into place and the directory synced; a crash leaves the previous checkpoints
// intact and at worst a stray temporary file, which latest_checkpoint ignores.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partita {
class Collectives;
}
namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace partita::train {

// What a checkpoint must agree with to be loaded into a model and optimizer.
struct CheckpointMeta {
  int64_t epochs_done = 0;
  uint64_t seed = 0;
  // Shape of the model and kind of optimizer (Trainer::config_signature()); loading into a
  // model of another signature is refused.
  std::vector<int64_t> signature;
  // The run's settings as (name, value) text pairs, in the caller's names and order (the
  // command line records every `train` flag; docs/training.md, "What a checkpoint
  // records"). Empty for checkpoints written before settings were recorded.
  std::vector<std::pair<std::string, std::string>> settings;
};

// A link-prediction model's signature is a node model's (kind, in_dim, hidden, out_dim,
// layers, heads, norm, optimizer) followed by this tag and the decoder (nn::LinkDecoder).
constexpr int64_t kLinkSignatureTag = 0x4c494e4b;  // "LINK"
// A model that reads edge features (edge_dim > 0) has this tag and its edge_dim after the
// node model's 8 entries (before a link model's); one without has neither, so checkpoints
// of the two never match (resume refuses) and older checkpoints keep their signature.
constexpr int64_t kEdgeFeaturesSignatureTag = 0x45444745;  // "EDGE"

// `dir`/checkpoint-<epochs_done>.pt.
std::string checkpoint_path(const std::string& dir, int64_t epochs_done);

// `dir`/embeddings-<epochs_done>-rank<rank>.bin (epochs zero-padded as above): the learned
// embeddings (rows and optimizer state) that world rank `rank` owns, saved with checkpoint
// epochs_done (trainer.h).
std::string embeddings_path(const std::string& dir, int64_t epochs_done, int rank);

// The checkpoint of the most epochs in `dir`; nullopt when `dir` does not exist or holds
// none. Throws IoError when `dir` exists but is not a readable directory.
std::optional<std::string> latest_checkpoint(const std::string& dir);

// The serialized archive (bytes to write or to broadcast to other ranks). The model's
// parameters and buffers are written as CPU tensors whatever its device; the optimizer's
// state is written where it lives (load_checkpoint maps it).
std::string serialize_checkpoint(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                 const CheckpointMeta& meta);

// Reads the meta of an archive without touching a model. Throws FormatError naming
// `source` when `bytes` is not a Partita checkpoint.
CheckpointMeta read_checkpoint_meta(const std::string& bytes, const std::string& source);

// Loads model and optimizer state from an archive onto the model's device (that of its
// first parameter: weights are copied into the model's tensors, the optimizer's state is
// mapped there), so a checkpoint written on a GPU resumes on the CPU and the other way
// round. Throws FormatError naming `source` when the archive does not match them.
void load_checkpoint(const std::string& bytes, const std::string& source, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer);

// Writes `bytes` to `path` atomically (see above), creating the directory if needed.
// Throws IoError naming the path.
void write_file_atomic(const std::string& path, const std::string& bytes);

// Whole file into memory. Throws IoError naming the path.
std::string read_whole_file(const std::string& path);

// The latest checkpoint of `dir` on every rank: rank 0 reads it and broadcasts it over
// `coll` (collective). found is false when `dir` does not exist or holds none; source is
// the file's path. Throws, on every rank, what rank 0's read threw there and Error
// elsewhere.
struct SharedCheckpoint {
  bool found = false;
  std::string bytes;
  std::string source;
};
SharedCheckpoint broadcast_latest_checkpoint(Collectives& coll, const std::string& dir);

// Runs `work` on every rank (it may do nothing on some), then tells every rank whether it
// worked everywhere (one allreduce over `coll`, collective): a rank whose work threw
// rethrows its exception; the others throw Error(failed_elsewhere). So no rank goes on
// while another failed to write or read its share of a checkpoint.
void run_agreed(Collectives& coll, const std::string& failed_elsewhere,
                const std::function<void()>& work);

// Deletes all but the `keep` most recent checkpoints of `dir`, the embedding files of the
// deleted ones, and stray temporaries.
// Best effort: failures are logged, not thrown.
void prune_checkpoints(const std::string& dir, int keep);

}  // namespace partita::train
