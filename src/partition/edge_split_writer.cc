// Writing a link-prediction split: edges/*.npy and part<p>/train_edges.npy in new ids.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "partita/core/error.h"
#include "writer.h"

namespace partita::partition {
namespace {

// Pairs mapped to new ids.
std::vector<int64_t> to_new_ids(const std::vector<int64_t>& pairs, const Renumbering& r) {
  std::vector<int64_t> out(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) out[i] = r.new_id[pairs[i]];
  return out;
}

// Pairs sorted by (first, second) when `by_src`, else by (second, first); repeats dropped
// when `unique`.
void sort_pairs(std::vector<int64_t>& pairs, bool by_src, bool unique = false) {
  std::vector<std::pair<int64_t, int64_t>> p(pairs.size() / 2);
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = by_src ? std::make_pair(pairs[2 * i], pairs[2 * i + 1])
                  : std::make_pair(pairs[2 * i + 1], pairs[2 * i]);
  std::sort(p.begin(), p.end());
  if (unique) p.erase(std::unique(p.begin(), p.end()), p.end());
  pairs.resize(2 * p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    pairs[2 * i] = by_src ? p[i].first : p[i].second;
    pairs[2 * i + 1] = by_src ? p[i].second : p[i].first;
  }
}

int64_t rows_of(const std::vector<int64_t>& pairs) {
  return static_cast<int64_t>(pairs.size() / 2);
}

}  // namespace

EdgeSplitStats write_edge_split(const HeldOutEdges& held, const Renumbering& r,
                                const std::string& out_dir, std::vector<FileEntry>* files) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir + "/edges", ec);
  PARTITA_CHECK(!ec, IoError, "{}/edges: cannot create directory: {}", out_dir, ec.message());
  auto write = [&](const std::string& rel, const std::vector<int64_t>& pairs) {
    const uint32_t crc = write_npy<int64_t>(out_dir + "/" + rel, ArrayView<const int64_t>(pairs),
                                            {rows_of(pairs), 2});
    files->push_back({rel, DType::kInt64, {rows_of(pairs), 2}, crc});
  };
  EdgeSplitStats stats;
  stats.source = held.source;
  stats.valid_fraction = held.fractions.valid_fraction;
  stats.test_fraction = held.fractions.test_fraction;
  const std::vector<int64_t>* sets[] = {&held.valid, &held.valid_neg, &held.test, &held.test_neg};
  for (size_t i = 0; i < 4; ++i) {
    std::vector<int64_t> pairs = to_new_ids(*sets[i], r);
    // Sampled sets have no order of their own; the dataset's keep the order of its files.
    if (held.source == "sampled") sort_pairs(pairs, /*by_src=*/true);
    write(kEdgeSplitFiles[i], pairs);
  }
  stats.valid = rows_of(held.valid);
  stats.valid_neg = rows_of(held.valid_neg);
  stats.test = rows_of(held.test);
  stats.test_neg = rows_of(held.test_neg);

  std::vector<int64_t> train = to_new_ids(held.train, r);
  sort_pairs(train, /*by_src=*/false, /*unique=*/true);  // a dataset's file may repeat pairs
  size_t begin = 0;
  for (int p = 0; p < r.num_parts(); ++p) {
    size_t end = begin;
    while (end < train.size() && train[end + 1] < r.ranges[p + 1]) end += 2;
    write(part_file(p, kTrainEdgesName),
          std::vector<int64_t>(train.begin() + static_cast<std::ptrdiff_t>(begin),
                               train.begin() + static_cast<std::ptrdiff_t>(end)));
    stats.train_per_part.push_back(static_cast<int64_t>((end - begin) / 2));
    begin = end;
  }
  return stats;
}

}  // namespace partita::partition
