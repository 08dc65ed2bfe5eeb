// DistEmbedding's side of the wire: the table's routes (serving other ranks) and the calls
// that ask other ranks' tables to apply, send or load their state (dist_embedding.h).
#include <string>
#include <utility>

#include "partita/comm/errors.h"
#include "partita/core/error.h"
#include "partita/store/dist_embedding.h"

namespace partita::store {

void DistEmbedding::add_routes(RpcRouter& router) {
  const int table = options_.table_id;
  auto route_name = [table](const char* op) {
    return fmt::format("embedding table {} {}", table, op);
  };
  auto check_owned = [this](ArrayView<const int64_t> ids) {
    for (const int64_t id : ids)
      PARTITA_CHECK(owns(id), CommError, "embedding table {}: rank {} does not own id {}",
                    options_.table_id, rank_, id);
  };
  router.add(embedding_request_kind(table, EmbeddingOp::kLookup), route_name("lookup"),
             [this, check_owned](int, WireReader& request) {
               ArrayView<const int64_t> ids = request.get_array<int64_t>();
               request.expect_end();
               check_owned(ids);
               const int64_t dim = options_.dim;
               WireWriter reply(8 + static_cast<size_t>(ids.size() * dim) * sizeof(float));
               float* out = reply.put_uninitialized<float>(ids.size() * dim);
               std::shared_lock<std::shared_mutex> lock(table_mutex_);
               for (int64_t i = 0; i < ids.size(); ++i) copy_row(ids[i], out + i * dim);
               return reply.take();
             });
  router.add(embedding_request_kind(table, EmbeddingOp::kPush), route_name("push"),
             [this, check_owned](int source, WireReader& request) {
               ArrayView<const int64_t> ids = request.get_array<int64_t>();
               ArrayView<const float> grads = request.get_array<float>();
               request.expect_end();
               PARTITA_CHECK(grads.size() == ids.size() * options_.dim, CommError,
                             "embedding table {}: push of rank {} has {} values for {} rows",
                             options_.table_id, source, grads.size(), ids.size());
               check_owned(ids);
               add_pending(source, ids.data(), grads.data(), ids.size());
               return std::vector<uint8_t>{};
             });
  router.add(embedding_request_kind(table, EmbeddingOp::kApply), route_name("apply"),
             [this](int, WireReader& request) {
               request.expect_end();
               apply_pending();
               return std::vector<uint8_t>{};
             });
  router.add(embedding_request_kind(table, EmbeddingOp::kState), route_name("state"),
             [this](int, WireReader& request) {
               request.expect_end();
               return serialize_state();
             });
  router.add(embedding_request_kind(table, EmbeddingOp::kLoad), route_name("load"),
             [this](int source, WireReader& request) {
               ArrayView<const char> name = request.get_array<char>();
               ArrayView<const uint8_t> bytes = request.get_array<uint8_t>();
               request.expect_end();
               load_state(bytes.data(), static_cast<size_t>(bytes.size()),
                          std::string(name.data(), static_cast<size_t>(name.size())) +
                              " (sent by rank " + std::to_string(source) + ")");
               return std::vector<uint8_t>{};
             });
}

void DistEmbedding::apply_remote(const std::vector<int>& owners) {
  if (owners.empty()) return;
  std::vector<RpcRequest> requests;
  for (const int owner : owners) {
    WireWriter request;
    request.put<uint64_t>(embedding_request_kind(options_.table_id, EmbeddingOp::kApply));
    requests.push_back({owner, request.take()});
  }
  endpoint("apply_remote").call_all(std::move(requests));
}

std::vector<uint8_t> DistEmbedding::fetch_remote_state(int owner) {
  WireWriter request;
  request.put<uint64_t>(embedding_request_kind(options_.table_id, EmbeddingOp::kState));
  return endpoint("fetch_remote_state").call(owner, request.take());
}

void DistEmbedding::load_remote_state(int owner, std::vector<uint8_t> bytes,
                                      const std::string& source) {
  WireWriter request(32 + source.size() + bytes.size());
  request.put<uint64_t>(embedding_request_kind(options_.table_id, EmbeddingOp::kLoad));
  request.put_array(ArrayView<const char>(source.data(), static_cast<int64_t>(source.size())));
  request.put_array(ArrayView<const uint8_t>(bytes.data(), static_cast<int64_t>(bytes.size())));
  endpoint("load_remote_state").call(owner, request.take());
}

}  // namespace partita::store
