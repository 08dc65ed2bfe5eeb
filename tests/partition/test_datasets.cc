#include "test_datasets.h"

#include <algorithm>
#include <tuple>

#include "partita/core/random.h"
#include "partita/graph/csr.h"

namespace partita::testing {

data::Dataset dataset_from_pairs(int64_t num_nodes, const std::vector<int64_t>& pairs,
                                 int64_t feat_dim, int64_t num_classes) {
  data::Dataset ds;
  ds.path = "memory";
  ds.layout = "numpy";
  ds.num_nodes = num_nodes;
  graph::InEdgeResult g = graph::build_in_edges(num_nodes, graph::edge_stream_of(pairs),
                                                {/*undirected=*/false, /*threads=*/1, "pairs"});
  ds.in_edges = std::move(g.in_edges);
  ds.input_edges = g.input_edges;
  std::vector<float> feat(static_cast<size_t>(num_nodes * feat_dim));
  for (int64_t v = 0; v < num_nodes; ++v)
    for (int64_t c = 0; c < feat_dim; ++c) feat[v * feat_dim + c] = feature(v, c);
  ds.features = data::FeatureMatrix::owned(std::move(feat), num_nodes, feat_dim);
  ds.num_classes = num_classes;
  for (int64_t v = 0; v < num_nodes; ++v) {
    ds.labels.push_back(v % num_classes);
    if (v % 10 == 0) ds.train_idx.push_back(v);
    if (v % 10 == 1) ds.valid_idx.push_back(v);
    if (v % 10 == 2 || v % 10 == 3) ds.test_idx.push_back(v);
  }
  return ds;
}

data::Dataset planted_dataset(const PlantedOptions& o) {
  Rng rng(stream_key(o.seed));
  const int64_t n = o.num_nodes;
  std::vector<int64_t> pairs;
  for (int64_t v = 0; v < n; ++v) {
    for (int k = 0; k < o.intra_degree; ++k) {
      int64_t u = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      if (rng.uniform() >= o.inter_fraction)
        u = u - u % o.clusters + v % o.clusters;  // same cluster
      if (u >= n) u -= o.clusters;
      pairs.push_back(v);
      pairs.push_back(u);
      if (o.undirected) {
        pairs.push_back(u);
        pairs.push_back(v);
      }
    }
  }
  return dataset_from_pairs(n, pairs, o.feat_dim, o.num_classes);
}

data::Dataset typed_dataset(const TypedOptions& o) {
  Rng rng(stream_key(o.seed, 77));
  data::HeteroSchema h;
  const int64_t counts[3] = {o.papers, o.authors, o.fields};
  const char* names[3] = {"paper", "author", "field"};
  const int64_t dims[3] = {4, 0, 2};
  int64_t offset = 0;
  for (int t = 0; t < 3; ++t) {
    data::NodeType nt;
    nt.name = names[t];
    nt.count = counts[t];
    nt.offset = offset;
    if (dims[t] > 0) {
      std::vector<float> f(static_cast<size_t>(counts[t] * dims[t]));
      for (int64_t i = 0; i < counts[t]; ++i)
        for (int64_t c = 0; c < dims[t]; ++c) f[i * dims[t] + c] = typed_feature(offset + i, c);
      nt.features = data::FeatureMatrix::owned(std::move(f), counts[t], dims[t]);
    }
    offset += counts[t];
    h.node_types.push_back(std::move(nt));
  }
  const int64_t paper0 = 0, author0 = o.papers, field0 = o.papers + o.authors;
  // (src type, name, dst type) and the edges (src, dst) in homogenised ids.
  std::vector<std::tuple<int, std::string, int>> relations;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> edges;
  auto pick = [&](int64_t first, int64_t count) {
    return first + static_cast<int64_t>(rng.below(static_cast<uint64_t>(count)));
  };
  relations.emplace_back(1, "writes", 0);
  edges.emplace_back();
  for (int64_t a = 0; a < o.authors; ++a)
    for (int k = 0; k < o.writes; ++k)
      edges.back().emplace_back(author0 + a, pick(paper0, o.papers));
  if (!o.single_relation) {
    relations.emplace_back(0, "cites", 0);
    edges.emplace_back();
    for (int64_t p = 0; p < o.papers; ++p)
      for (int k = 0; k < o.cites; ++k)
        edges.back().emplace_back(paper0 + p, pick(paper0, o.papers));
    relations.emplace_back(0, "has_topic", 2);
    edges.emplace_back();
    for (int64_t p = 0; p < o.papers; ++p)
      for (int k = 0; k < o.topics; ++k)
        edges.back().emplace_back(paper0 + p, pick(field0, o.fields));
  }
  const size_t inputs = relations.size();
  if (o.reverse) {
    for (size_t r = 0; r < inputs; ++r) {
      relations.emplace_back(std::get<2>(relations[r]), "rev_" + std::get<1>(relations[r]),
                             std::get<0>(relations[r]));
      edges.emplace_back();
      for (const auto& [s, d] : edges[r]) edges.back().emplace_back(d, s);
    }
  }
  // (dst, relation, src), sorted and unique, self loops dropped.
  std::vector<std::tuple<int64_t, int32_t, int64_t>> entries;
  for (size_t r = 0; r < relations.size(); ++r)
    for (const auto& [s, d] : edges[r])
      if (s != d) entries.emplace_back(d, static_cast<int32_t>(r), s);
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());

  data::Dataset ds;
  ds.path = "memory-typed";
  ds.layout = "numpy";
  ds.num_nodes = offset;
  ds.in_edges.indptr.assign(static_cast<size_t>(offset) + 1, 0);
  for (const auto& [d, r, s] : entries) {
    ++ds.in_edges.indptr[d + 1];
    ds.in_edges.indices.push_back(s);
    ds.edge_relation.push_back(r);
  }
  for (int64_t v = 0; v < offset; ++v) ds.in_edges.indptr[v + 1] += ds.in_edges.indptr[v];
  ds.input_edges = static_cast<int64_t>(entries.size());
  for (size_t r = 0; r < relations.size(); ++r) {
    data::Relation rel;
    rel.src_type = std::get<0>(relations[r]);
    rel.name = std::get<1>(relations[r]);
    rel.dst_type = std::get<2>(relations[r]);
    rel.reverse = r >= inputs;
    rel.num_edges = std::count_if(entries.begin(), entries.end(), [&](const auto& e) {
      return std::get<1>(e) == static_cast<int32_t>(r);
    });
    h.relations.push_back(rel);
  }
  h.target_type = 0;
  ds.num_classes = o.num_classes;
  ds.labels.assign(static_cast<size_t>(offset), -1);
  for (int64_t p = 0; p < o.papers; ++p) {
    ds.labels[paper0 + p] = p % o.num_classes;
    if (p % 5 <= 1) ds.train_idx.push_back(paper0 + p);
    if (p % 5 == 2) ds.valid_idx.push_back(paper0 + p);
    if (p % 5 == 3) ds.test_idx.push_back(paper0 + p);
  }
  ds.hetero = std::move(h);
  return ds;
}

}  // namespace partita::testing
