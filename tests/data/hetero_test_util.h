#pragma once
// A heterogeneous dataset described once and written in both heterogeneous layouts (OGB
// raw and Partita numpy), for the data/ tests.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "data_test_util.h"

namespace partita::data::testing {

struct HeteroSpec {
  struct Type {
    std::string name;
    int64_t count = 0;
    int64_t feat_dim = 0;      // 0: no features
    std::vector<float> feats;  // [count * feat_dim]
  };
  struct Rel {
    std::string head, name, tail;
    std::vector<int64_t> pairs;  // interleaved type-local (src, dst)
  };
  std::vector<Type> types;
  std::vector<Rel> relations;
  std::string target;
  std::vector<int64_t> labels;              // [target count]
  std::vector<int64_t> train, valid, test;  // target-local
};

// paper 3 (2 features), author 4 (none), field 2 (1 feature); target paper. writes has a
// duplicate, cites a self loop.
inline HeteroSpec tiny_hetero() {
  HeteroSpec s;
  s.types = {{"paper", 3, 2, {0.5f, 1, -2, 3.25f, 1e-3f, 7}},
             {"author", 4, 0, {}},
             {"field", 2, 1, {4, 5}}};
  s.relations = {{"author", "writes", "paper", {0, 0, 1, 0, 1, 1, 3, 2, 1, 0}},
                 {"paper", "cites", "paper", {0, 1, 2, 1, 1, 1, 2, 0}},
                 {"paper", "has_topic", "field", {0, 0, 1, 0, 2, 1}}};
  s.target = "paper";
  s.labels = {1, 0, 2};
  s.train = {0};
  s.valid = {1};
  s.test = {2};
  return s;
}

inline std::string csv_lines(const std::vector<int64_t>& values, int per_line) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += fmt::format("{}{}", values[i], (i + 1) % per_line == 0 ? "\n" : ",");
  }
  return text;
}

inline void write_ogb_hetero(const std::string& dir, const HeteroSpec& s,
                             const std::string& split = "main") {
  std::string names, counts, has_label;
  for (const auto& t : s.types) {
    names += (names.empty() ? "" : ",") + t.name;
    counts += (counts.empty() ? "" : ",") + std::to_string(t.count);
    has_label +=
        std::string(has_label.empty() ? "" : ",") + (t.name == s.target ? "True" : "False");
  }
  const std::string raw = dir + "/raw/";
  write_gz(raw + "num-node-dict.csv.gz", names + "\n" + counts + "\n");
  write_gz(raw + "nodetype-has-label.csv.gz", names + "\n" + has_label + "\n");
  std::string triplets;
  for (size_t r = 0; r < s.relations.size(); ++r) {
    const auto& rel = s.relations[r];
    triplets += rel.head + "," + rel.name + "," + rel.tail + "\n";
    const std::string folder = raw + "relations/" + rel.head + "___" + rel.name + "___" + rel.tail;
    write_gz(folder + "/edge.csv.gz", csv_lines(rel.pairs, 2));
    write_gz(folder + "/num-edge-list.csv.gz", std::to_string(rel.pairs.size() / 2) + "\n");
    write_gz(folder + "/edge_reltype.csv.gz",
             csv_lines(std::vector<int64_t>(rel.pairs.size() / 2, static_cast<int64_t>(r)), 1));
  }
  write_gz(raw + "triplet-type-list.csv.gz", triplets);
  for (const auto& t : s.types) {
    if (t.feat_dim == 0) continue;
    std::string text;
    for (size_t i = 0; i < t.feats.size(); ++i) {
      text += fmt::format("{}{}", t.feats[i], (i + 1) % t.feat_dim == 0 ? "\n" : ",");
    }
    write_gz(raw + "node-feat/" + t.name + "/node-feat.csv.gz", text);
  }
  write_gz(raw + "node-label/" + s.target + "/node-label.csv.gz", csv_lines(s.labels, 1));
  const std::string sp = dir + "/split/" + split + "/";
  write_gz(sp + "nodetype-has-split.csv.gz", names + "\n" + has_label + "\n");
  write_gz(sp + s.target + "/train.csv.gz", csv_lines(s.train, 1));
  write_gz(sp + s.target + "/valid.csv.gz", csv_lines(s.valid, 1));
  write_gz(sp + s.target + "/test.csv.gz", csv_lines(s.test, 1));
}

inline std::string hetero_json(const HeteroSpec& s) {
  std::string types, relations;
  for (const auto& t : s.types) {
    types += fmt::format("{}{{\"name\": \"{}\", \"count\": {}}}", types.empty() ? "" : ", ", t.name,
                         t.count);
  }
  for (const auto& r : s.relations) {
    relations += fmt::format("{}[\"{}\", \"{}\", \"{}\"]", relations.empty() ? "" : ", ", r.head,
                             r.name, r.tail);
  }
  return fmt::format("{{\"node_types\": [{}], \"relations\": [{}], \"target\": \"{}\"}}\n", types,
                     relations, s.target);
}

inline void write_numpy_hetero(const std::string& dir, const HeteroSpec& s) {
  write_file(dir + "/hetero.json", hetero_json(s));
  std::filesystem::create_directories(dir + "/edges");
  std::filesystem::create_directories(dir + "/feat");
  for (const auto& r : s.relations) {
    write_npy<int64_t>(dir + "/edges/" + r.head + "___" + r.name + "___" + r.tail + ".npy",
                       ArrayView<const int64_t>(r.pairs),
                       {static_cast<int64_t>(r.pairs.size() / 2), 2});
  }
  for (const auto& t : s.types) {
    if (t.feat_dim == 0) continue;
    write_npy<float>(dir + "/feat/" + t.name + ".npy", ArrayView<const float>(t.feats),
                     {t.count, t.feat_dim});
  }
  write_npy<int64_t>(dir + "/label.npy", s.labels);
  write_npy<int64_t>(dir + "/train_idx.npy", s.train);
  write_npy<int64_t>(dir + "/valid_idx.npy", s.valid);
  write_npy<int64_t>(dir + "/test_idx.npy", s.test);
}

}  // namespace partita::data::testing
