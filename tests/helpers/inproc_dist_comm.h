#pragma once
// partition::DistComm with threads as ranks, for in-process tests of the distributed
// partition pipeline: InProcessDistComms(n) holds n members over one
// InProcessCollectiveGroup; run rank r's code with member(r) on its own thread
// (testing::on_threads).
//
// Every operation goes through allgather, so each member sees every rank's contribution
// (fine for test sizes). part_graph is a stand-in for the parallel partitioner, not a
// partitioner: vertex v goes to part v * num_parts / n (contiguous blocks of global ids),
// which lets tests predict the assignment exactly. Tests of the real partitioner run
// under mpirun.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "partita/comm/inproc_collectives.h"
#include "partita/core/error.h"
#include "partita/partition/dist_comm.h"

namespace partita::testing {

class InProcessDistComm : public partition::DistComm {
 public:
  explicit InProcessDistComm(Collectives& collectives) : c_(collectives) {}

  int rank() const override { return c_.rank(); }
  int size() const override { return c_.size(); }

  std::vector<std::vector<uint8_t>> alltoall(std::vector<std::vector<uint8_t>> send) override {
    PARTITA_CHECK(static_cast<int>(send.size()) == size(), Error,
                  "alltoall: {} buffers for {} ranks", send.size(), size());
    // Each rank contributes [size() byte counts][concatenated buffers].
    std::vector<uint8_t> mine(static_cast<size_t>(size()) * sizeof(uint64_t));
    for (int r = 0; r < size(); ++r) {
      const uint64_t n = send[r].size();
      std::memcpy(mine.data() + r * sizeof(uint64_t), &n, sizeof n);
    }
    for (const auto& buffer : send) mine.insert(mine.end(), buffer.begin(), buffer.end());
    std::vector<std::vector<uint8_t>> all = allgather(mine);
    std::vector<std::vector<uint8_t>> recv(static_cast<size_t>(size()));
    for (int from = 0; from < size(); ++from) {
      const uint8_t* bytes = all[from].data();
      size_t offset = static_cast<size_t>(size()) * sizeof(uint64_t);
      for (int to = 0; to < size(); ++to) {
        uint64_t n = 0;
        std::memcpy(&n, bytes + to * sizeof(uint64_t), sizeof n);
        if (to == rank()) recv[from].assign(bytes + offset, bytes + offset + n);
        offset += n;
      }
    }
    return recv;
  }

  void allreduce_sum(int64_t* data, size_t count) override {
    c_.allreduce(data, count, ReduceOp::kSum);
  }
  void allreduce_max(int64_t* data, size_t count) override {
    c_.allreduce(data, count, ReduceOp::kMax);
  }

  std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) override {
    const std::vector<int64_t> sizes =
        c_.allgather(std::vector<int64_t>{static_cast<int64_t>(mine.size())});
    const std::vector<uint8_t> bytes = c_.allgather(mine);
    std::vector<std::vector<uint8_t>> out(static_cast<size_t>(size()));
    size_t offset = 0;
    for (int r = 0; r < size(); ++r) {
      out[r].assign(bytes.begin() + offset, bytes.begin() + offset + sizes[r]);
      offset += static_cast<size_t>(sizes[r]);
    }
    return out;
  }

  void agree(const std::string& my_error) override {
    const std::vector<std::vector<uint8_t>> all =
        allgather(std::vector<uint8_t>(my_error.begin(), my_error.end()));
    for (int r = 0; r < size(); ++r) {
      if (all[r].empty()) continue;
      const std::string text(all[r].begin(), all[r].end());
      throw Error(r == rank() ? text : "rank " + std::to_string(r) + ": " + text);
    }
  }

  std::vector<int32_t> part_graph(const partition::DistAdjacency& graph, int num_parts,
                                  double /*imbalance*/, uint64_t /*seed*/) override {
    const int64_t n = graph.vtxdist.back();
    const int64_t begin = graph.vtxdist[rank()], end = graph.vtxdist[rank() + 1];
    std::vector<int32_t> part(static_cast<size_t>(end - begin));
    for (int64_t v = begin; v < end; ++v) part[v - begin] = static_cast<int32_t>(v * num_parts / n);
    return part;
  }

 private:
  Collectives& c_;
};

// n members over one in-process collective group; outlives the threads that use them.
class InProcessDistComms {
 public:
  explicit InProcessDistComms(int ranks, double timeout_s = 60) : group_(ranks, timeout_s) {
    for (int r = 0; r < ranks; ++r)
      members_.push_back(std::make_unique<InProcessDistComm>(group_.member(r)));
  }
  partition::DistComm& member(int rank) { return *members_[rank]; }

 private:
  InProcessCollectiveGroup group_;
  std::vector<std::unique_ptr<InProcessDistComm>> members_;
};

}  // namespace partita::testing
