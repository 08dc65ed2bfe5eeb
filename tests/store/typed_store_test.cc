// Typed partitions in the store: DistGraph's typed accessors in worker, replicated, server
// and client modes equal the dataset (types, ranges, relations, per-type features), open()
// refuses corrupt relation ids and labels, and fetch_type_features across 2-3 in-process
// ranks (threads over the in-process transport) returns the dataset's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include "../partition/test_datasets.h"
#include "helpers/test_paths.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/random.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"
#include "store_test_util.h"

namespace partita {
namespace {

using testing::TempDir;

class TypedStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_level(LogLevel::kQuiet);
    dir_ = new TempDir();
    dataset_ = new data::Dataset(testing::typed_dataset({}));
    for (int parts : {1, 2, 3}) {
      partition::PartitionOptions p;
      p.num_parts = parts;
      p.seed = 4;
      p.threads = 2;
      p.out_dir = parts_dir(parts);
      partition::partition_dataset(*dataset_, p);
    }
    partition::PartitionOptions p;
    p.num_parts = 3;
    p.method = partition::Method::kRandom;
    p.feature_dtype = DType::kBFloat16;
    p.out_dir = *dir_ / "bf16";
    partition::partition_dataset(*dataset_, p);
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }
  static std::string parts_dir(int n) { return *dir_ / ("p" + std::to_string(n)); }

  // The dataset's features of homogenised id `original` (of featured type t), rounded to
  // `dtype` as the writer stores them.
  static std::vector<uint8_t> stored_row(int t, int64_t original, DType dtype) {
    const data::NodeType& type = dataset_->hetero->node_types[t];
    std::vector<uint8_t> row(static_cast<size_t>(type.feat_dim()) * dtype_size(dtype));
    narrow_floats(type.features.row(original - type.offset), type.feat_dim(), dtype, row.data());
    return row;
  }

  // Every accessor of `g` against the dataset.
  static void expect_typed_view(const store::DistGraph& g, const std::string& dir) {
    const data::HeteroSchema& h = *dataset_->hetero;
    const std::vector<int64_t> node_map = testing::read_node_map(dir);
    ASSERT_TRUE(g.typed());
    ASSERT_EQ(g.num_node_types(), 3);
    EXPECT_EQ(g.typed_meta().num_relations(), h.num_relations());
    EXPECT_EQ(g.feat_dim(), 0);
    for (int64_t gid = 0; gid < g.num_nodes(); ++gid)
      ASSERT_EQ(g.node_type(gid), h.type_of(node_map[gid])) << gid;
    EXPECT_THROW(g.node_type(g.num_nodes()), Error);
    EXPECT_THROW(g.owned_type_range(3), Error);
    ASSERT_EQ(g.edge_relations().size(), g.indices().size());
    int64_t owned = 0;
    for (int t = 0; t < 3; ++t) {
      const auto [first, end] = g.owned_type_range(t);
      owned += end - first;
      EXPECT_EQ(g.type_feat_dim(t), h.node_types[t].feat_dim());
      for (int64_t gid = first; gid < end; ++gid) {
        ASSERT_TRUE(g.owns(gid));
        ASSERT_EQ(g.node_type(gid), t);
        if (g.type_feat_dim(t) == 0) continue;
        const int64_t bytes = g.type_feature_row_bytes(t);
        const std::vector<uint8_t> want = stored_row(t, node_map[gid], g.feature_dtype());
        ASSERT_EQ(std::vector<uint8_t>(g.type_features(t) + (gid - first) * bytes,
                                       g.type_features(t) + (gid - first + 1) * bytes),
                  want)
            << "type " << t << " node " << gid;
      }
    }
    EXPECT_EQ(owned, g.num_local_nodes());
    // Rows and relations of the owned nodes are the dataset's, mapped.
    for (int64_t i = 0; i < g.num_local_nodes(); ++i) {
      const int64_t old = node_map[g.first_node() + i];
      std::vector<std::pair<int32_t, int64_t>> got, want;
      for (int64_t k = g.indptr()[i]; k < g.indptr()[i + 1]; ++k)
        got.emplace_back(g.edge_relations()[k], node_map[g.indices()[k]]);
      for (int64_t k = dataset_->in_edges.indptr[old]; k < dataset_->in_edges.indptr[old + 1]; ++k)
        want.emplace_back(dataset_->edge_relation[k], dataset_->in_edges.indices[k]);
      ASSERT_EQ(got, want) << old;
      ASSERT_EQ(g.labels()[i], dataset_->labels[old]);
    }
  }

  static TempDir* dir_;
  static data::Dataset* dataset_;
};
TempDir* TypedStore::dir_ = nullptr;
data::Dataset* TypedStore::dataset_ = nullptr;

TEST_F(TypedStore, WorkerViewsMatchTheDataset) {
  for (int parts : {1, 2, 3})
    for (int r = 0; r < parts; ++r) {
      SCOPED_TRACE(::testing::Message() << parts << " parts, rank " << r);
      expect_typed_view(store::DistGraph::open(parts_dir(parts), r, parts), parts_dir(parts));
      store::DistGraphOptions in_memory;
      in_memory.in_memory = true;
      expect_typed_view(store::DistGraph::open(parts_dir(parts), r, parts, in_memory),
                        parts_dir(parts));
    }
  expect_typed_view(store::DistGraph::open(*dir_ / "bf16", 1, 3), *dir_ / "bf16");
}

TEST_F(TypedStore, ReplicatedServerAndClientViews) {
  const store::DistGraph replicated = store::DistGraph::open(parts_dir(1), 1, 2);
  EXPECT_TRUE(replicated.replicated());
  expect_typed_view(replicated, parts_dir(1));
  expect_typed_view(store::DistGraph::open_server(parts_dir(2), 1, 3, 2), parts_dir(2));
  const store::DistGraph client = store::DistGraph::open_client(parts_dir(2), 2, 3, 2);
  const std::vector<int64_t> node_map = testing::read_node_map(parts_dir(2));
  ASSERT_TRUE(client.typed());
  EXPECT_TRUE(client.edge_relations().empty());
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(client.owned_type_range(t).first, client.owned_type_range(t).second);
    EXPECT_EQ(client.type_features(t), nullptr);
  }
  for (int64_t gid = 0; gid < client.num_nodes(); ++gid)
    ASSERT_EQ(client.node_type(gid), dataset_->hetero->type_of(node_map[gid]));
}

TEST_F(TypedStore, HomogeneousGraphsHaveOneType) {
  TempDir dir;
  partition::PartitionOptions p;
  p.num_parts = 2;
  p.out_dir = dir / "h";
  partition::partition_dataset(testing::planted_dataset({}), p);
  const store::DistGraph g = store::DistGraph::open(dir / "h", 1, 2);
  EXPECT_FALSE(g.typed());
  EXPECT_EQ(g.num_node_types(), 1);
  EXPECT_TRUE(g.edge_relations().empty());
  EXPECT_EQ(g.node_type(0), 0);
  EXPECT_EQ(g.owned_type_range(0), std::make_pair(g.first_node(), g.end_node()));
  EXPECT_EQ(g.type_features(0), g.features());
  EXPECT_EQ(g.type_feat_dim(0), g.feat_dim());
}

// Copies the 2-part directory, applies `damage` to one array and opens part 1.
template <class T>
std::string open_error(const std::string& source, const std::string& rel,
                       const std::function<void(std::vector<T>&)>& damage) {
  TempDir work;
  const std::string dir = work / "p";
  std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
  std::vector<T> v = read_npy_vector<T>(dir + "/" + rel);
  damage(v);
  write_npy(dir + "/" + rel, v);
  try {
    store::DistGraph::open(dir, 1, 2);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST_F(TypedStore, OpenRefusesCorruptRelationsAndLabels) {
  const std::string etype = open_error<int32_t>(parts_dir(2), "part1/etype.npy",
                                                [](std::vector<int32_t>& v) { v.back() = -2; });
  EXPECT_NE(etype.find("part1/etype.npy: entry"), std::string::npos) << etype;
  EXPECT_NE(etype.find("= -2 is not a relation id in [0, 6)"), std::string::npos) << etype;
  const partition::PartitionMeta meta = partition::read_meta(parts_dir(2));
  const int64_t author_row = meta.typed->type_range(1, 1).first - meta.ranges[1];
  const std::string label = open_error<int64_t>(
      parts_dir(2), "part1/label.npy", [&](std::vector<int64_t>& v) { v[author_row] = 2; });
  EXPECT_NE(label.find("part1/label.npy: label 2 of row"), std::string::npos) << label;
  EXPECT_NE(label.find("must be -1 (not of the target type)"), std::string::npos) << label;
}

// Ranks as threads: every rank fetches every paper and every field (shuffled, so local and
// remote rows interleave) and all labels, and compares with the dataset.
void fetch_on_all_ranks(const std::string& dir, int ranks, const data::Dataset& ds,
                        int clients = 0) {
  const int world_size = ranks + clients;
  InProcessWorld world(world_size);
  std::vector<store::DistGraph> graphs;
  for (int r = 0; r < world_size; ++r)
    graphs.push_back(clients == 0 ? store::DistGraph::open(dir, r, ranks)
                     : r < ranks  ? store::DistGraph::open_server(dir, r, world_size, ranks)
                                  : store::DistGraph::open_client(dir, r, world_size, ranks));
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
  for (int r = 0; r < world_size; ++r) {
    RpcRouter router;
    store::add_feature_routes(router, graphs[r]);
    RpcOptions options;
    options.timeout_s = 20;
    endpoints.push_back(
        std::make_unique<RpcEndpoint>(world.transport(r), router.handler(), options));
  }
  const std::vector<int64_t> node_map = testing::read_node_map(dir);
  std::vector<std::string> failures(static_cast<size_t>(world_size));
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      try {
        const store::DistGraph& g = graphs[r];
        store::FeatureFetcher fetcher(g, endpoints[r].get());
        for (int t : {0, 2}) {
          std::vector<int64_t> ids;
          for (int64_t gid = 0; gid < g.num_nodes(); ++gid)
            if (g.node_type(gid) == t) ids.push_back(gid);
          Rng rng(stream_key(r, t));
          for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[rng.below(i)]);
          const int64_t bytes = g.type_feature_row_bytes(t);
          std::vector<uint8_t> out(ids.size() * static_cast<size_t>(bytes));
          fetcher.fetch_type_features(t, ids, out.data());
          const data::NodeType& type = ds.hetero->node_types[t];
          for (size_t i = 0; i < ids.size(); ++i) {
            std::vector<uint8_t> want(static_cast<size_t>(bytes));
            narrow_floats(type.features.row(node_map[ids[i]] - type.offset), type.feat_dim(),
                          g.feature_dtype(), want.data());
            if (!std::equal(want.begin(), want.end(), out.begin() + i * bytes))
              throw Error("type " + std::to_string(t) + " row of node " +
                          std::to_string(node_map[ids[i]]) + " differs");
          }
        }
        std::vector<int64_t> all(static_cast<size_t>(g.num_nodes()));
        for (int64_t gid = 0; gid < g.num_nodes(); ++gid) all[gid] = gid;
        std::vector<int64_t> labels(all.size());
        fetcher.fetch_labels(all, labels.data());
        for (int64_t gid = 0; gid < g.num_nodes(); ++gid)
          if (labels[gid] != ds.labels[node_map[gid]])
            throw Error("label of node " + std::to_string(node_map[gid]) + " differs");
        const store::FetchStats s = fetcher.stats();
        if (g.num_local_nodes() > 0 && s.local_rows == 0) throw Error("nothing fetched locally");
        if (ranks > 1 && (s.remote_rows == 0 || s.remote_requests == 0))
          throw Error("nothing fetched remotely");
        if (g.client() && s.local_rows != 0) throw Error("a client fetched locally");
      } catch (const std::exception& e) {
        failures[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world_size; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
  std::vector<std::thread> closing;
  for (int r = 0; r < world_size; ++r) closing.emplace_back([&, r] { endpoints[r]->shutdown(); });
  for (auto& t : closing) t.join();
}

TEST_F(TypedStore, TypeFeaturesAcrossRanksEqualTheDataset) {
  fetch_on_all_ranks(parts_dir(1), 1, *dataset_);
  fetch_on_all_ranks(parts_dir(2), 2, *dataset_);
  fetch_on_all_ranks(parts_dir(3), 3, *dataset_);
  fetch_on_all_ranks(*dir_ / "bf16", 3, *dataset_);
}

TEST_F(TypedStore, ClientFetchesTypeFeaturesFromServers) {
  fetch_on_all_ranks(parts_dir(2), 2, *dataset_, /*clients=*/1);
}

TEST_F(TypedStore, FetchRefusesWrongTypes) {
  const store::DistGraph g = store::DistGraph::open(parts_dir(1), 0, 1);
  store::FeatureFetcher fetcher(g, nullptr);
  const std::vector<int64_t> node_map = testing::read_node_map(parts_dir(1));
  const int64_t author = g.owned_type_range(1).first;
  std::vector<uint8_t> out(64);
  auto error_of = [&](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::vector<int64_t> ids{g.owned_type_range(0).first, author};
  EXPECT_NE(error_of([&] {
              fetcher.fetch_type_features(0, ids, out.data());
            }).find("is of type 1, not of the requested type 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              fetcher.fetch_type_features(1, {&author, 1}, out.data());
            }).find("('author') has no features"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              fetcher.fetch_type_features(5, {&author, 1}, out.data());
            }).find("node type 5 requested"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              fetcher.fetch_features({&author, 1}, out.data());
            }).find("fetch_type_features"),
            std::string::npos);
  const int64_t past = g.num_nodes();
  EXPECT_NE(error_of([&] {
              fetcher.fetch_type_features(0, {&past, 1}, out.data());
            }).find("is outside"),
            std::string::npos);
}

}  // namespace
}  // namespace partita
