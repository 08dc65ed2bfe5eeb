#pragma once
// Pipelined batch loader (DESIGN 6): while the consumer trains on batch i, sampler threads
// build batches i+1 .. i+prefetch (sample the blocks, then fetch the features of the input
// nodes and the labels of the seeds; temporal: the seeds' node times first).
//
// Determinism (DESIGN 8): batch `step` holds the seeds of step `step` sampled under key
// {seed, epoch, step}; nothing depends on which thread built it, so the batches are
// identical for any thread count or prefetch depth.
//
// Threads: `threads` workers, started by the constructor, each owning a BlockBuilder. They
// claim steps in increasing order and park in a reorder buffer; next() hands them out in
// step order. A worker does not claim step s until s < (next step the consumer wants) +
// prefetch, so at most `prefetch` batches are finished or in flight ahead of the consumer.
// Nothing spins: workers and the consumer wait on condition variables.
//
// Ownership: the pipeline owns its seeds and the batches until next() moves them out. It
// borrows `sampler` and `fetcher`, which must outlive it and take concurrent calls (both
// LocalSampler/DistSampler and FeatureFetcher do).
//
// One consumer: next() and stop() are called from one thread (the one that owns the
// pipeline), not from the workers.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "partita/sample/block_builder.h"
#include "partita/sample/neighbor_sampler.h"
#include "partita/store/feature_store.h"
#include "partita/store/resident_rows.h"

namespace partita::loader {

struct Batch;

// Blocks that a BlockSource built outside host memory (train/device_sampling.h: torch
// tensors on the model's device). Opaque to the loader, which moves them with their batch
// and never looks inside; the consumer that configured the source knows the type.
class DeviceBlocks {
 public:
  virtual ~DeviceBlocks() = default;
  virtual int64_t num_edges() const = 0;  // edges of every block together
  // The global edge id of every block's edge on the host (block 0's first, each block's in
  // edge order), when the source returns them; empty otherwise. The pipeline fetches edge
  // features by them (BatchPipelineOptions::edge_feature_row_bytes).
  virtual ArrayView<const int64_t> host_edge_ids() const { return {}; }
};

// Where a pipeline's blocks come from. Without one (BatchPipelineOptions::block_source null)
// each worker samples with a sample::BlockBuilder over the pipeline's NeighborSampler into
// host memory (Batch::sampled.blocks). A source builds them elsewhere: build() sets
// batch.sampled.seeds and batch.sampled.input_nodes (host ids, which the fetch needs) and
// batch.device_blocks, and leaves batch.sampled.blocks empty. The batch then follows the
// same contract (the seeds' sample under options.key, input nodes = the last block's src).
// Thread-safety: build() is called concurrently by the workers.
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  // `seeds`: the step's, distinct. `degrees`: the pipeline's fetch_degrees; the source then
  // gives the input nodes' whole-graph in-degrees with its blocks, and the pipeline fetches
  // none (Batch::degrees stays empty). Throws partita::Error as BlockBuilder::build does.
  virtual void build(ArrayView<const int64_t> seeds, const sample::BlockOptions& options,
                     bool degrees, Batch& batch) = 0;
};

constexpr int kMaxPipelineThreads = 256;
constexpr int kMaxPrefetch = 1024;

struct BatchPipelineOptions {
  int threads = 1;          // sampler threads, in [1, kMaxPipelineThreads]
  int prefetch = 2;         // batches ahead of the consumer (done or in flight), in
                            //   [1, kMaxPrefetch]
  sample::Fanouts fanouts;  // per hop (and per relation), as sample::BlockOptions::fanouts
  uint64_t seed = 0;        // the run's seed (sampling keys)
  uint64_t epoch = 0;
  int64_t feature_row_bytes = 0;  // bytes of one feature row (graph.feature_row_bytes())
  bool fetch_degrees = false;     // also fetch the graph in-degree of every input node
  bool fetch_labels = true;       // fetch the seeds' labels (false: Batch::labels stays empty)
  // Typed graphs: fetch the input nodes' features per node type (Batch::typed_inputs)
  // instead of Batch::features (feature_row_bytes is then unused).
  bool typed = false;
  // Rows the consumer holds already (train/device_feature_cache.h), or null: the input nodes
  // in it are not fetched (Batch::resident). Borrowed: must outlive the pipeline; read-only,
  // shared by the workers. Not for typed graphs.
  const store::ResidentRows* resident = nullptr;
  // Where Batch::features gets its memory (null: the default resource, new/delete), e.g.
  // pinned host memory a copy to a GPU reads directly (train/batch_staging.h). Borrowed:
  // must outlive the pipeline's batches; called from the workers concurrently.
  std::pmr::memory_resource* feature_memory = nullptr;
  // Builds the blocks instead of the NeighborSampler (see BlockSource), or null. Borrowed:
  // must outlive the pipeline.
  BlockSource* block_source = nullptr;
  // Temporal sampling (the sampler samples temporally: sample::LocalSamplerOptions::temporal):
  // each seed's time is its node time (FeatureFetcher::fetch_node_times, fetched before the
  // blocks) and goes into the blocks (sample::BlockOptions::seed_times; Batch::sampled's
  // seed_times and src_times; a block_source gets them in its options and samples by them).
  bool temporal = false;
  // Temporal: the seeds' times when they are not node times (the link task's: a seed edge's
  // time), one list per step aligned with that step's seeds, used instead of fetching node
  // times; empty: node times. Needs `temporal` (Error otherwise, or on a size mismatch).
  std::vector<std::vector<int64_t>> seed_times;
  // Edge features (issue 41): > 0, the bytes of one edge_feat row (DistGraph::
  // edge_feat_row_bytes()): after sampling, the rows of every block's edges are fetched by
  // edge id (FeatureFetcher::fetch_edge_features, one round for the whole batch) into
  // Batch::edge_features. The sampler must return edge ids (sample::LocalSamplerOptions::
  // edge_ids; a block_source: DeviceBlocks::host_edge_ids, one per edge): a batch without
  // them is an Error.
  int64_t edge_feature_row_bytes = 0;
};

// Throws ParameterError naming `threads` or `prefetch` when one is outside its range. The
// constructor checks them; a front end may call it to refuse bad options before a loop starts.
void check_pipeline_options(const BatchPipelineOptions& options);

// The input nodes of one node type in a batch of a typed graph.
struct TypedInput {
  std::vector<int64_t> positions;  // indices into sampled.input_nodes, ascending
  // Their feature rows in the stored dtype (DistGraph::type_feature_row_bytes each); empty
  // for a type without features (the trainer looks up its learned embeddings instead).
  std::vector<uint8_t> features;
};

// The input nodes of a batch that were not fetched because options.resident holds them.
struct ResidentInputs {
  const store::ResidentRows* set = nullptr;  // options.resident (null: nothing skipped)
  // Positions in sampled.input_nodes (ascending) of the input nodes in `set`, and their
  // slots there (ResidentRows::slot), aligned.
  store::ResidentHits hits;
};

struct Batch {
  Batch() = default;
  // A batch whose `features` take their memory from `features_memory` (null: the default).
  explicit Batch(std::pmr::memory_resource* features_memory)
      : features(features_memory != nullptr ? features_memory : std::pmr::get_default_resource()) {}

  int64_t step = 0;
  sample::SampledBatch sampled;
  // The feature rows of the input nodes that were fetched, row-major, in the graph's feature
  // dtype (as stored: float32, float16 or bfloat16 bits), feature_row_bytes per row: the
  // rows of every input position not in resident.hits.positions, in ascending position
  // order, so [sampled.input_nodes.size() - resident.hits.positions.size(), feat_dim]
  // (fetched_feature_rows). Without options.resident that is every input node, row i
  // belonging to sampled.input_nodes[i]. Its memory is options.feature_memory's.
  std::pmr::vector<uint8_t> features;
  ResidentInputs resident;  // empty without options.resident
  // Typed graphs (options.typed), one per node type; features stays empty.
  std::vector<TypedInput> typed_inputs;
  std::vector<int64_t> labels;  // [sampled.seeds.size()], labels of the seeds
  // [sampled.input_nodes.size()] in-degree of each input node in the whole graph, when
  // options.fetch_degrees; empty otherwise. Every block's src nodes are a prefix of the
  // input nodes, so its first num_src entries belong to block i.
  std::vector<int64_t> degrees;
  // options.edge_feature_row_bytes > 0: the edge_feat rows of every block's edges, in the
  // stored dtype, block 0's edges first (each block's in the order of its indices and
  // edge_ids), edge_feature_row_bytes per row; empty otherwise.
  std::vector<uint8_t> edge_features;
  // The blocks when a BlockSource built them (sampled.blocks is then empty), else null.
  std::shared_ptr<DeviceBlocks> device_blocks;
  double sample_s = 0;  // wall time building the blocks
  double fetch_s = 0;   // wall time fetching features, labels (and degrees)
};

// The rows `features` holds: input nodes less the resident ones (the whole input without a
// resident set).
inline int64_t fetched_feature_rows(const Batch& batch) {
  return static_cast<int64_t>(batch.sampled.input_nodes.size() -
                              batch.resident.hits.positions.size());
}

// Sampled edges of every block of the batch, wherever its blocks are.
inline int64_t num_sampled_edges(const Batch& batch) {
  return batch.device_blocks ? batch.device_blocks->num_edges() : batch.sampled.num_sampled_edges();
}

class BatchPipeline {
 public:
  // `batches`: this rank's seeds of every step (loader::GlobalBatches::epoch_batches or
  // loader::chunk), distinct within a step. A step may have no seeds: its batch is then
  // empty (nothing sampled or fetched). Throws as check_pipeline_options, or Error on other
  // bad options. Starts the workers.
  BatchPipeline(const BatchPipelineOptions& options, std::vector<std::vector<int64_t>> batches,
                sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher);
  // stop().
  ~BatchPipeline();

  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // The next batch in step order, blocking until it is built; nullopt after the last step
  // or after stop(). If a worker threw, stops the pipeline and rethrows the first exception
  // (as soon as it is seen, even if earlier batches were ready), here and on later calls.
  std::optional<Batch> next();

  // Stops mid-epoch: no new step is claimed, waiting workers wake, and all are joined.
  // Returns once builds already in progress finish (a remote sampler or fetcher wait is
  // bounded by its own timeout). Idempotent; never throws.
  void stop();

  int64_t num_steps() const { return num_steps_; }

 private:
  void run_worker();
  Batch build(int64_t step, sample::BlockBuilder& builder);
  // Groups the input nodes by type and fetches each featured type's rows.
  void fetch_typed_inputs(Batch& batch);
  // Fetches the edge features of every block's edges (options.edge_feature_row_bytes > 0).
  void fetch_edge_features(Batch& batch);

  const BatchPipelineOptions options_;
  const std::vector<std::vector<int64_t>> batches_;
  sample::NeighborSampler& sampler_;
  store::FeatureFetcher& fetcher_;
  const int64_t num_steps_;

  std::mutex mu_;                     // guards everything below
  std::condition_variable ready_cv_;  // consumer waits: a batch arrived or an error
  std::condition_variable space_cv_;  // workers wait: the consumer moved on, or stopping
  int64_t next_claim_ = 0;            // next step a worker claims
  int64_t next_step_ = 0;             // next step next() returns
  bool stopping_ = false;
  std::exception_ptr error_;        // first worker exception
  std::map<int64_t, Batch> ready_;  // reorder buffer: built steps not yet handed out

  std::vector<std::thread> workers_;  // touched by the owning thread only
};

}  // namespace partita::loader
