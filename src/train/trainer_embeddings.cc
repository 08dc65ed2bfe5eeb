// The learned embeddings in checkpoints (embedding_files.h; trainer.h, Checkpoints). Each owner
// rank's rows and optimizer state go to `embeddings-<E>-rank<r>.bin` beside checkpoint E:
// in worker mode every rank writes (and on --resume reads) its own file in its checkpoint
// directory; in server-client mode, where the owners (servers) train nothing, trainer 0
// fetches each server's state and writes (and restores) the files for them. The file's
// format (versioned) and its one reader are store/embedding_format.h's.
#include "embedding_files.h"
#include "partita/core/error.h"
#include "partita/store/embedding_format.h"
#include "partita/train/checkpoint.h"
#include "typed_inputs.h"

namespace partita::train {
namespace {

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
                        store::encode_embedding_file(states));
    } else if (session.rank() == 0) {
      for (int owner : session.embedding_owners()) {
        std::vector<std::vector<uint8_t>> states;
        for (store::DistEmbedding* table : tables)
          states.push_back(table->fetch_remote_state(owner));
        write_file_atomic(embeddings_path(dir, epochs_done, owner),
                          store::encode_embedding_file(states));
      }
    }
  });
}

void restore_embeddings(runtime::Session& session, const std::string& dir, int64_t epochs_done) {
  const std::vector<store::DistEmbedding*> tables = tables_of(session);
  if (tables.empty()) return;
  run_agreed(session.collectives(), "another rank could not read its learned embeddings", [&] {
    // By table id: a file written for more tables (earlier HAN runs) restores ours.
    std::vector<int64_t> ids;
    for (store::DistEmbedding* table : tables) ids.push_back(table->table_id());
    auto read = [&](int owner) {
      const std::string path = embeddings_path(dir, epochs_done, owner);
      return std::make_pair(path,
                            store::decode_embedding_file_tables(read_whole_file(path), ids, path));
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
