// The factory table of model adapters: see partita/train/model_adapter.h.
#include <mutex>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/train/device.h"
#include "partita/train/model_adapter.h"

namespace partita::train {

const std::vector<ModelEntry>& model_table() {
  static const std::vector<ModelEntry> table{
      {"rgcn", [](const TrainOptions& o) { return o.model.kind == ModelKind::kRgcn; },
       make_rgcn_adapter},
      {"han", [](const TrainOptions& o) { return o.model.kind == ModelKind::kHan; },
       make_han_adapter},
      {"link", [](const TrainOptions& o) { return o.task == Task::kLink; }, make_link_adapter},
      {"gnn", [](const TrainOptions&) { return true; }, make_gnn_adapter},
  };
  return table;
}

ModelContext model_context(runtime::Session& session, const TrainOptions& options) {
  return ModelContext{session, options, torch_device(options.device), options.model.precision};
}

std::unique_ptr<ModelAdapter> build_model(const ModelContext& context) {
  if (!context.device.is_cpu()) {
    PARTITA_CHECK_PARAM(context.device.is_cuda(), "device", "{}: models run on cpu or cuda devices",
                        context.device.str());
    check_device(
        {DeviceSpec::Kind::kCuda, context.device.has_index() ? context.device.index() : 0});
  }
  for (const ModelEntry& entry : model_table()) {
    if (!entry.accepts(context.options)) continue;
    // Torch's generator is process-wide: ranks that are threads of one process (in-process
    // runs) build their models one at a time so each draws exactly the seeded values.
    static std::mutex generator_mutex;
    std::lock_guard<std::mutex> lock(generator_mutex);
    torch::manual_seed(context.options.seed);
    std::unique_ptr<ModelAdapter> adapter = entry.make(context);
    if (!context.device.is_cpu()) adapter->module().to(context.device);
    return adapter;
  }
  throw Error("internal: no model adapter accepts these options");
}

}  // namespace partita::train
