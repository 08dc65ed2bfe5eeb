// See partita/train/session_embeddings.h.
#include "partita/train/session_embeddings.h"

namespace partita::train {

void set_session_embeddings(const TrainOptions& o, runtime::SessionOptions* session) {
  const ModelKind kind = o.model.kind;
  if (kind != ModelKind::kRgcn && kind != ModelKind::kHan) {
    session->embeddings = store::EmbeddingOptions{};  // dim 0: no table
    return;
  }
  store::EmbeddingOptions& e = session->embeddings;
  e.dim = o.model.hidden;
  e.seed = o.seed;
  e.optimizer.kind = o.optimizer.kind == OptimizerKind::kSgd ? store::SparseOptimizer::kSgd
                                                             : store::SparseOptimizer::kAdam;
  e.optimizer.lr = static_cast<float>(o.embeddings.lr > 0 ? o.embeddings.lr : 2 * o.optimizer.lr);
  e.init_scale = static_cast<float>(o.embeddings.init);
  session->embedded_types = kind == ModelKind::kHan
                                ? runtime::SessionOptions::EmbeddedTypes::kTarget
                                : runtime::SessionOptions::EmbeddedTypes::kFeatureless;
}

}  // namespace partita::train
