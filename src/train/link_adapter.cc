// The link-prediction adapter: a GNN encoder (gnn_adapter.h) and a decoder that scores
// pairs (nn/link_model.h). forward gives the node embeddings; LinkTask scores them.
#include "gnn_adapter.h"
#include "partita/train/checkpoint.h"

namespace partita::train {
namespace {

class LinkAdapter final : public GnnAdapter {
 public:
  LinkAdapter(const ModelContext& context, std::shared_ptr<nn::LinkModel> link)
      : GnnAdapter(context, link->encoder_ptr(), link), link_(std::move(link)) {}

  std::vector<int64_t> config_signature() const override {
    std::vector<int64_t> signature = GnnAdapter::config_signature();
    signature.push_back(kLinkSignatureTag);
    signature.push_back(static_cast<int64_t>(link_->decoder()));
    return signature;
  }
  nn::LinkModel* link() override { return link_.get(); }

 private:
  std::shared_ptr<nn::LinkModel> link_;
};

}  // namespace

std::unique_ptr<ModelAdapter> make_link_adapter(const ModelContext& context) {
  return std::make_unique<LinkAdapter>(
      context, std::make_shared<nn::LinkModel>(gnn_options(context), context.options.link.decoder));
}

}  // namespace partita::train
