#pragma once
// Device sampling in the training loop (TrainOptions::loader.sample_on, issue 38): where a
// task's batches are sampled, and the loader::BlockSource that samples them on the model's
// device (device_sampler.h) inside the batch pipeline's workers.
//
// A DeviceBlockSource's batches carry their blocks as device tensors
// (loader::Batch::device_blocks; device_sample() finds them) next to the host ids the
// fetch needs (seeds, input nodes; with edge ids, every block edge's global id, which the
// edge-feature fetch needs: DeviceBlocks::host_edge_ids); BatchStaging::blocks hands them to
// the model as they are. Per batch the workers read device memory on the host once per hop
// (the sampler's sizes) plus once for the input ids and, with edge ids, the edge ids in the
// same copy (the feature fetches are on the host; the source counts it in the sample's
// host_reads); each read is the profiler scope kHostReadScope. The edge-feature rows then
// travel to the device as the host pipeline's do (BatchStaging::edge_features).
//
// Streams (a CUDA device): each build() runs on a stream of the device's pool, not on the
// training thread's, and ends with a host read on it, so every tensor of the batch is
// complete when the batch reaches the pipeline's consumer; BatchStaging marks them used by
// the compute stream (record_stream), so the caching allocator does not reuse their memory
// early. On the CPU, no stream is touched.
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "partita/loader/batch_pipeline.h"
#include "partita/runtime/session.h"
#include "partita/train/device_sampler.h"
#include "partita/train/train_options.h"

namespace partita::train {

// Whether a node task of `options` samples on the device (options.loader.sample_on
// resolved: see SampleOn). Throws ParameterError(sample_on) when kDevice is asked for where
// it cannot run, saying why: another task (link), model han (metapaths are sampled on the
// host), a rank that does not hold the whole topology (use `topology` full), a server.
// Edge features, weighted and temporal sampling (the session's sampler options), and both
// at once, are sampled there (the source returns edge ids; weights and times:
// device_sampler.h says what they equal).
bool samples_on_device(const runtime::Session& session, const TrainOptions& options);
// Why device sampling cannot run for `options` on `session`, or "" when it can.
std::string device_sampling_refusal(const runtime::Session& session, const TrainOptions& options);

// The blocks of a batch that a DeviceBlockSource built.
struct DeviceBatchBlocks final : loader::DeviceBlocks {
  DeviceSample sample;
  std::vector<int64_t> edge_ids;  // sample.edge_ids on the host (a source with edge ids)
  int64_t num_edges() const override { return sample.num_edges; }
  ArrayView<const int64_t> host_edge_ids() const override { return edge_ids; }
};

// The device sample of `batch`, or null when its blocks are on the host.
const DeviceSample* device_sample(const loader::Batch& batch);

struct DeviceSourceOptions {
  // Every batch also carries its edges' global ids (DeviceSample::edge_ids, and on the host
  // DeviceBatchBlocks::edge_ids).
  bool edge_ids = false;
  // Sample by edge weight (DeviceSampleOptions::weighted): the views' weights go to the
  // device too.
  bool weighted = false;
  // Temporal sampling (DeviceSampleOptions::temporal and strict; with weighted too): the
  // views' times go to the device too, and each batch's seed times (sample::BlockOptions::
  // seed_times, one per seed) with its seeds.
  sample::Temporal temporal = sample::Temporal::kNone;
  bool strict = false;
};

class DeviceBlockSource final : public loader::BlockSource {
 public:
  // The whole topology (`views`, runtime::Session::topology_views) on `device`; typed
  // graphs: `num_relations` relations. Throws as DeviceTopology.
  DeviceBlockSource(const std::vector<sample::CscView>& views, int num_relations,
                    torch::Device device, const DeviceSourceOptions& options = {});

  // Samples on the device (see the header), then reads the input ids (and edge ids) to the
  // host. Throws Error on a repeated seed (checked on the host), or as
  // DeviceSampler::sample.
  void build(ArrayView<const int64_t> seeds, const sample::BlockOptions& options, bool degrees,
             loader::Batch& batch) override;

  const DeviceTopology& topology() const { return topology_; }

 private:
  DeviceTopology topology_;
  DeviceSampler sampler_;
  DeviceSourceOptions options_;
};

// The node task's source (session.topology_views() on the model's device; with edge ids
// when options.loader.edge_features, weighted as the session's sampler), or null when
// samples_on_device is false.
std::unique_ptr<DeviceBlockSource> make_device_block_source(const runtime::Session& session,
                                                            const TrainOptions& options);

}  // namespace partita::train
