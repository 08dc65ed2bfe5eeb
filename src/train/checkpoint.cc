// Checkpoint archives and their files: see partita/train/checkpoint.h.
#include "partita/train/checkpoint.h"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "partita/comm/collectives.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/log.h"

namespace partita::train {
namespace {

namespace fs = std::filesystem;

// 2: a torch.save-compatible pickle of a dict (see checkpoint.h); 1: a torch::serialize
// archive (read, for checkpoints written before).
constexpr int64_t kFormatVersion = 2;
constexpr int64_t kArchiveFormatVersion = 1;
constexpr const char* kPrefix = "checkpoint-";
constexpr const char* kSuffix = ".pt";
constexpr const char* kEmbeddingsPrefix = "embeddings-";
constexpr const char* kEmbeddingsSuffix = ".bin";

// Epochs of a file name `checkpoint-<digits>.pt`; -1 for any other name.
int64_t epochs_of(const std::string& name) {
  const size_t prefix = std::strlen(kPrefix), suffix = std::strlen(kSuffix);
  if (name.size() <= prefix + suffix || name.compare(0, prefix, kPrefix) != 0 ||
      name.compare(name.size() - suffix, suffix, kSuffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix, name.size() - prefix - suffix);
  if (digits.size() > 12 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stoll(digits);
}

// Checkpoint files of `dir` as (epochs, path), ascending. Empty when dir does not exist.
std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return found;
  PARTITA_CHECK(fs::is_directory(dir, ec), IoError, "{}: not a directory", dir);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t epochs = epochs_of(it->path().filename().string());
    if (epochs >= 0 && it->is_regular_file()) found.emplace_back(epochs, it->path().string());
  }
  PARTITA_CHECK(!ec, IoError, "{}: cannot list: {}", dir, ec.message());
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<int64_t> int64_values(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open to sync: {}", path, std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw IoError(fmt::format("{}: fsync: {}", path, std::strerror(saved)));
}

// Epochs of a file name `embeddings-<digits>-rank<r>.bin`; -1 for any other name.
int64_t embeddings_epochs_of(const std::string& name) {
  const size_t prefix = std::strlen(kEmbeddingsPrefix);
  if (name.compare(0, prefix, kEmbeddingsPrefix) != 0) return -1;
  const size_t dash = name.find("-rank", prefix);
  if (dash == std::string::npos || dash == prefix || name.size() < std::strlen(kEmbeddingsSuffix) ||
      name.compare(name.size() - std::strlen(kEmbeddingsSuffix), std::string::npos,
                   kEmbeddingsSuffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix, dash - prefix);
  if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

}  // namespace

std::string checkpoint_path(const std::string& dir, int64_t epochs_done) {
  return (fs::path(dir) / fmt::format("{}{:06d}{}", kPrefix, epochs_done, kSuffix)).string();
}

std::optional<std::string> latest_checkpoint(const std::string& dir) {
  auto found = list_checkpoints(dir);
  if (found.empty()) return std::nullopt;
  return found.back().second;
}

namespace {

std::string first_line(const std::exception& e) {
  // c10::Error messages run to many lines with a C++ backtrace: keep the first.
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

// A format-2 checkpoint's dict, or nullopt for bytes that are no such pickle (a format-1
// archive, or not a checkpoint at all).
std::optional<c10::impl::GenericDict> checkpoint_dict(const std::string& bytes) {
  try {
    const torch::IValue value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
    if (!value.isGenericDict()) return std::nullopt;
    c10::impl::GenericDict dict = value.toGenericDict();
    if (!dict.contains("partita") || !dict.at("partita").isGenericDict() ||
        !dict.contains("model") || !dict.at("model").isGenericDict())
      return std::nullopt;
    return dict;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

torch::IValue entry(const c10::impl::GenericDict& dict, const std::string& key,
                    const std::string& source) {
  PARTITA_CHECK(dict.contains(key), FormatError, "{}: checkpoint has no '{}'", source, key);
  return dict.at(key);
}

// The "settings" entry: a dict of strings, in the order it was written.
std::vector<std::pair<std::string, std::string>> settings_of(const torch::IValue& value,
                                                             const std::string& source) {
  PARTITA_CHECK(value.isGenericDict(), FormatError, "{}: checkpoint 'settings' is not a dict",
                source);
  std::vector<std::pair<std::string, std::string>> settings;
  for (const auto& item : value.toGenericDict()) {
    PARTITA_CHECK(item.key().isString() && item.value().isString(), FormatError,
                  "{}: checkpoint 'settings' holds a value that is not text", source);
    settings.emplace_back(item.key().toStringRef(), item.value().toStringRef());
  }
  return settings;
}

CheckpointMeta archive_meta(const std::string& bytes, const std::string& source) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  torch::Tensor version, epochs, seed, signature;
  PARTITA_CHECK(archive.try_read("partita_checkpoint", version), FormatError,
                "{}: not a Partita checkpoint", source);
  PARTITA_CHECK(int64_values(version) == std::vector<int64_t>{kArchiveFormatVersion}, FormatError,
                "{}: checkpoint format {} is not supported (this build reads formats {} and {})",
                source, int64_values(version).empty() ? -1 : int64_values(version)[0],
                kArchiveFormatVersion, kFormatVersion);
  archive.read("epochs_done", epochs);
  archive.read("seed", seed);
  archive.read("signature", signature);
  CheckpointMeta meta;
  meta.epochs_done = int64_values(epochs).at(0);
  meta.seed = static_cast<uint64_t>(int64_values(seed).at(0));
  meta.signature = int64_values(signature);
  return meta;
}

// Every parameter and buffer of `model` from `state` (names as named_parameters() and
// named_buffers() give them), each of the same shape; no name missing, none left over.
void load_state(torch::nn::Module& model, const c10::impl::GenericDict& state,
                const std::string& source) {
  torch::NoGradGuard no_grad;
  int64_t used = 0;
  const auto load = [&](const std::string& name, torch::Tensor& target) {
    PARTITA_CHECK(state.contains(name), FormatError,
                  "{}: written for another model (it has no '{}')", source, name);
    const torch::Tensor value = state.at(name).toTensor();
    PARTITA_CHECK(value.sizes() == target.sizes(), FormatError,
                  "{}: '{}' is {} in the checkpoint but {} in this model", source, name,
                  fmt::join(value.sizes(), "x"), fmt::join(target.sizes(), "x"));
    target.copy_(value);
    ++used;
  };
  for (auto& item : model.named_parameters(true)) load(item.key(), item.value());
  for (auto& item : model.named_buffers(true)) load(item.key(), item.value());
  PARTITA_CHECK(used == static_cast<int64_t>(state.size()), FormatError,
                "{}: written for another model ({} tensors, this model has {})", source,
                state.size(), used);
}

}  // namespace

std::string serialize_checkpoint(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                 const CheckpointMeta& meta) {
  c10::impl::GenericDict state(c10::StringType::get(), c10::TensorType::get());
  // CPU tensors whatever the model's device: a checkpoint resumes on any device.
  for (const auto& item : model.named_parameters(true))
    state.insert(item.key(), item.value().detach().to(torch::kCPU));
  for (const auto& item : model.named_buffers(true))
    state.insert(item.key(), item.value().detach().to(torch::kCPU));
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  std::ostringstream optimizer_bytes;
  optimizer_archive.save_to(optimizer_bytes);
  const std::string opt = optimizer_bytes.str();
  c10::impl::GenericDict partita(c10::StringType::get(), c10::AnyType::get());
  partita.insert("format", kFormatVersion);
  partita.insert("epochs_done", meta.epochs_done);
  partita.insert("seed", static_cast<int64_t>(meta.seed));
  partita.insert("signature", c10::List<int64_t>(meta.signature));
  c10::Dict<std::string, std::string> settings;
  for (const auto& [name, value] : meta.settings) settings.insert(name, value);
  partita.insert("settings", settings);
  partita.insert("optimizer", torch::from_blob(const_cast<char*>(opt.data()),
                                               {static_cast<int64_t>(opt.size())}, torch::kUInt8)
                                  .clone());
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("model", state);
  dict.insert("partita", partita);
  const std::vector<char> bytes = torch::pickle_save(dict);
  return std::string(bytes.begin(), bytes.end());
}

CheckpointMeta read_checkpoint_meta(const std::string& bytes, const std::string& source) {
  try {
    CheckpointMeta meta;
    if (const std::optional<c10::impl::GenericDict> dict = checkpoint_dict(bytes)) {
      const c10::impl::GenericDict partita = dict->at("partita").toGenericDict();
      const int64_t format = entry(partita, "format", source).toInt();
      PARTITA_CHECK(
          format == kFormatVersion, FormatError,
          "{}: checkpoint format {} is not supported (this build reads formats {} and {})", source,
          format, kArchiveFormatVersion, kFormatVersion);
      meta.epochs_done = entry(partita, "epochs_done", source).toInt();
      meta.seed = static_cast<uint64_t>(entry(partita, "seed", source).toInt());
      meta.signature = entry(partita, "signature", source).toIntVector();
      if (partita.contains("settings")) meta.settings = settings_of(partita.at("settings"), source);
    } else {
      meta = archive_meta(bytes, source);
    }
    PARTITA_CHECK(meta.epochs_done >= 0, FormatError, "{}: negative epoch count {}", source,
                  meta.epochs_done);
    return meta;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FormatError(fmt::format("{}: unreadable checkpoint ({})", source, first_line(e)));
  }
}

void load_checkpoint(const std::string& bytes, const std::string& source, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer) {
  // The model's device: the optimizer's state is mapped there (the weights are copied into
  // the model's own tensors).
  const std::vector<torch::Tensor> parameters = model.parameters();
  const torch::Device device =
      parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device();
  try {
    if (const std::optional<c10::impl::GenericDict> dict = checkpoint_dict(bytes)) {
      load_state(model, dict->at("model").toGenericDict(), source);
      const torch::Tensor opt =
          entry(dict->at("partita").toGenericDict(), "optimizer", source).toTensor().contiguous();
      torch::serialize::InputArchive optimizer_archive;
      optimizer_archive.load_from(static_cast<const char*>(opt.data_ptr()),
                                  static_cast<size_t>(opt.numel()), device);
      optimizer.load(optimizer_archive);
      return;
    }
    torch::serialize::InputArchive archive, model_archive, optimizer_archive;
    archive.load_from(bytes.data(), bytes.size(), device);
    archive.read("model", model_archive);
    archive.read("optimizer", optimizer_archive);
    model.load(model_archive);
    optimizer.load(optimizer_archive);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FormatError(
        fmt::format("{}: cannot load into this model and optimizer ({})", source, first_line(e)));
  }
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  create_directory(dir.string());
  const std::string tmp = (dir / ("." + target.filename().string() + ".tmp")).string();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    PARTITA_CHECK(out.good(), IoError, "{}: cannot create: {}", tmp, std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    PARTITA_CHECK(out.good(), IoError, "{}: write failed (disk full?)", tmp);
  }
  fsync_path(tmp, O_RDONLY);
  std::error_code ec;
  fs::rename(tmp, target, ec);
  PARTITA_CHECK(!ec, IoError, "{}: cannot rename into place: {}", path, ec.message());
  fsync_path(dir.string(), O_RDONLY | O_DIRECTORY);
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PARTITA_CHECK(in.good(), IoError, "{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  PARTITA_CHECK(!in.bad(), IoError, "{}: read failed", path);
  return out.str();
}

SharedCheckpoint broadcast_latest_checkpoint(Collectives& coll, const std::string& dir) {
  // header[0]: 1 = a checkpoint follows, 0 = none, -1 = rank 0 failed; header[1]: bytes.
  std::vector<int64_t> header{0, 0};
  SharedCheckpoint shared;
  shared.source = "checkpoint of rank 0";
  std::exception_ptr error;
  if (coll.rank() == 0) {
    try {
      if (std::optional<std::string> path = latest_checkpoint(dir)) {
        shared.bytes = read_whole_file(*path);
        shared.source = *path;
        header = {1, static_cast<int64_t>(shared.bytes.size())};
      }
    } catch (...) {
      error = std::current_exception();
      header = {-1, 0};
    }
  }
  coll.broadcast(header.data(), header.size(), 0);
  if (error) std::rethrow_exception(error);
  PARTITA_CHECK(header[0] >= 0, Error, "rank 0 could not read the latest checkpoint in {}", dir);
  shared.found = header[0] == 1;
  if (!shared.found) return shared;
  shared.bytes.resize(static_cast<size_t>(header[1]));
  coll.broadcast(shared.bytes.data(), shared.bytes.size(), 0);
  return shared;
}

void run_agreed(Collectives& coll, const std::string& failed_elsewhere,
                const std::function<void()>& work) {
  std::exception_ptr error;
  try {
    work();
  } catch (...) {
    error = std::current_exception();
  }
  const int64_t ok = coll.allreduce_one<int64_t>(error ? 0 : 1, ReduceOp::kMin);
  if (error) std::rethrow_exception(error);
  PARTITA_CHECK(ok == 1, Error, "{}", failed_elsewhere);
}

std::string embeddings_path(const std::string& dir, int64_t epochs_done, int rank) {
  return (fs::path(dir) /
          fmt::format("{}{:06d}-rank{}{}", kEmbeddingsPrefix, epochs_done, rank, kEmbeddingsSuffix))
      .string();
}

void prune_checkpoints(const std::string& dir, int keep) {
  try {
    auto found = list_checkpoints(dir);
    for (size_t i = 0; i + static_cast<size_t>(keep) < found.size(); ++i) {
      std::error_code ec;
      fs::remove(found[i].second, ec);
      if (ec) log_warning("cannot remove old checkpoint {}: {}", found[i].second, ec.message());
    }
    // Embedding files of epochs before the oldest checkpoint kept.
    if (found.size() > static_cast<size_t>(keep)) {
      const int64_t oldest_kept = found[found.size() - static_cast<size_t>(keep)].first;
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const int64_t epochs = embeddings_epochs_of(it->path().filename().string());
        if (epochs >= 0 && epochs < oldest_kept) {
          std::error_code remove_ec;
          fs::remove(it->path(), remove_ec);
        }
      }
    }
    // Temporaries of writes that were interrupted (this process writes one at a time and
    // has finished its own by now).
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() > 5 && name[0] == '.' && epochs_of(name.substr(1, name.size() - 5)) >= 0 &&
          name.compare(name.size() - 4, 4, ".tmp") == 0) {
        std::error_code remove_ec;
        fs::remove(it->path(), remove_ec);
      }
    }
  } catch (const std::exception& e) {
    log_warning("cannot prune checkpoints in {}: {}", dir, e.what());
  }
}

}  // namespace partita::train
