// The learned embeddings in checkpoints (embedding_files.h; trainer.h, Checkpoints). Each owner
// rank's rows and optimizer state go to `embeddings-<E>-rank<r>.bin` beside checkpoint E:
// in worker mode every rank writes (and on --resume reads) its own file in its checkpoint
// directory; in server-client mode, where the owners (servers) train nothing, trainer 0
// fetches each server's state and writes (and restores) the files for them.
#include <cstring>

#include "embedding_files.h"
#include "partita/core/error.h"
#include "partita/train/checkpoint.h"
#include "typed_inputs.h"

namespace partita::train {
namespace {

// A file of embedding states: for each table (node type order) a little-endian uint64
// byte count, then that many bytes of DistEmbedding state.
std::string pack_states(const std::vector<std::vector<uint8_t>>& states) {
  std::string out;
  for (const auto& state : states) {
    const uint64_t size = state.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof(size));
    out.append(reinterpret_cast<const char*>(state.data()), state.size());
  }
  return out;
}

std::vector<std::vector<uint8_t>> unpack_states(const std::string& bytes, size_t tables,
                                                const std::string& source) {
  std::vector<std::vector<uint8_t>> states;
  size_t at = 0;
  for (size_t i = 0; i < tables; ++i) {
    uint64_t size = 0;
    PARTITA_CHECK(bytes.size() - at >= sizeof(size), FormatError,
                  "{}: truncated (embedding table {} of {} missing)", source, i + 1, tables);
    std::memcpy(&size, bytes.data() + at, sizeof(size));
    at += sizeof(size);
    PARTITA_CHECK(bytes.size() - at >= size, FormatError,
                  "{}: truncated (embedding table {} of {} is cut short)", source, i + 1, tables);
    states.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                        bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
  }
  PARTITA_CHECK(at == bytes.size(), FormatError,
                "{}: {} bytes after the {} embedding tables this model has", source,
                bytes.size() - at, tables);
  return states;
}

std::vector<store::DistEmbedding*> tables_of(runtime::Session& session) {
  std::vector<store::DistEmbedding*> tables;
  for (int t = 0; t < session.graph().num_node_types(); ++t)
    if (store::DistEmbedding* table = session.embedding(t)) tables.push_back(table);
  return tables;
}

}  // namespace

void save_embeddings(runtime::Session& session, const std::string& dir, int64_t epochs_done) {
  const std::vector<store::DistEmbedding*> tables = tables_of(session);
  if (tables.empty()) return;
  run_agreed(session.collectives(), "another rank could not write its learned embeddings", [&] {
    if (session.role() == runtime::Role::kWorker) {
      std::vector<std::vector<uint8_t>> states;
      for (store::DistEmbedding* table : tables) states.push_back(table->serialize_state());
      write_file_atomic(embeddings_path(dir, epochs_done, session.world_rank()),
                        pack_states(states));
    } else if (session.rank() == 0) {
      for (int owner : session.embedding_owners()) {
        std::vector<std::vector<uint8_t>> states;
        for (store::DistEmbedding* table : tables)
          states.push_back(table->fetch_remote_state(owner));
        write_file_atomic(embeddings_path(dir, epochs_done, owner), pack_states(states));
      }
    }
  });
}

void restore_embeddings(runtime::Session& session, const std::string& dir, int64_t epochs_done) {
  const std::vector<store::DistEmbedding*> tables = tables_of(session);
  if (tables.empty()) return;
  run_agreed(session.collectives(), "another rank could not read its learned embeddings", [&] {
    auto read = [&](int owner) {
      const std::string path = embeddings_path(dir, epochs_done, owner);
      return std::make_pair(path, unpack_states(read_whole_file(path), tables.size(), path));
    };
    if (session.role() == runtime::Role::kWorker) {
      auto [path, states] = read(session.world_rank());
      for (size_t i = 0; i < tables.size(); ++i)
        tables[i]->load_state(states[i].data(), states[i].size(), path);
    } else if (session.rank() == 0) {
      for (int owner : session.embedding_owners()) {
        auto [path, states] = read(owner);
        for (size_t i = 0; i < tables.size(); ++i)
          tables[i]->load_remote_state(owner, std::move(states[i]), path);
      }
    }
  });
}

}  // namespace partita::train
