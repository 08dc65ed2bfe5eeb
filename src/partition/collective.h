#pragma once
// Private to partition/: the collective steps every stage of the pipeline uses, over
// DistComm: packing values and arrays into the byte buffers DistComm moves, int64 messages
// and gathers, and running a step so that a rank that fails keeps its peers in step (its
// failure agreed at the next checkpoint, one error for the job).
//
// Values keep the host's byte order (every rank of one job runs the same binary on the same
// architecture). BytePacker pads every array to 8 bytes, so 8-byte values stay aligned in
// buffers that start aligned.
//
// On one rank (OneRankComm) nobody waits: a step's exception propagates as it was thrown,
// with its type (ParameterError, FormatError, ...), exactly as a one-process program fails.
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/partition/dist_comm.h"

namespace partita::partition {

class BytePacker {
 public:
  explicit BytePacker(std::vector<uint8_t>* out) : out_(out) {}
  // Appends `count` int64 values, or a list of them.
  void put(const int64_t* values, size_t count) {
    if (count > 0) std::memcpy(reserve(count * sizeof(int64_t)), values, count * sizeof(int64_t));
  }
  void put(std::initializer_list<int64_t> values) { put(values.begin(), values.size()); }
  // Room for `bytes` bytes (padded) at the end; returns where to write them.
  uint8_t* reserve(size_t bytes) {
    const size_t at = out_->size();
    out_->resize(at + padded(bytes), 0);
    return out_->data() + at;
  }
  static size_t padded(size_t bytes) { return (bytes + 7) / 8 * 8; }

 private:
  std::vector<uint8_t>* out_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& in) : in_(in) {}
  bool done() const { return at_ == in_.size(); }
  int64_t get() {
    int64_t v = 0;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  // The next `bytes` bytes, in place (valid while the buffer lives; copy values out with
  // memcpy when their alignment matters).
  const uint8_t* take(size_t bytes) {
    const size_t step = BytePacker::padded(bytes);
    PARTITA_CHECK(at_ + step <= in_.size(), Error,
                  "internal: a message of {} bytes read past its end", in_.size());
    const uint8_t* p = in_.data() + at_;
    at_ += step;
    return p;
  }

 private:
  const std::vector<uint8_t>& in_;
  size_t at_ = 0;
};

template <class T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <class T = int64_t>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  PARTITA_CHECK(b.size() % sizeof(T) == 0, Error, "internal: {} bytes are not {}-byte integers",
                b.size(), sizeof(T));
  std::vector<T> out(b.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}

// Integer messages (int64, or int32 and the like): send[r] to rank r; returns what each rank
// sent here. Each message is freed once copied (move `send` in to hold one copy, not two).
template <class T>
std::vector<std::vector<T>> send_ints(std::vector<std::vector<T>> send, DistComm& comm) {
  std::vector<std::vector<uint8_t>> bytes(send.size());
  for (size_t r = 0; r < send.size(); ++r) bytes[r] = to_bytes(std::exchange(send[r], {}));
  std::vector<std::vector<uint8_t>> recv = comm.alltoall(std::move(bytes));
  std::vector<std::vector<T>> out(recv.size());
  for (size_t r = 0; r < recv.size(); ++r) out[r] = from_bytes<T>(std::exchange(recv[r], {}));
  return out;
}

// One round of questions: ask[r] holds questions for rank r, `width` integers each, and the
// asked rank answers each with answer(pointer to its integers), one integer. Returns per rank
// the answers to ask[r], in its order. Questions are answered in place, without copies.
template <class Answer>
std::vector<std::vector<int64_t>> ask_ranks(std::vector<std::vector<int64_t>> ask, size_t width,
                                            DistComm& comm, Answer&& answer) {
  std::vector<size_t> asked(ask.size());
  for (size_t r = 0; r < ask.size(); ++r) asked[r] = ask[r].size() / width;
  std::vector<std::vector<int64_t>> questions = send_ints(std::move(ask), comm);
  for (std::vector<int64_t>& q : questions) {  // answer j over question j's first integer
    const size_t n = q.size() / width;
    for (size_t j = 0; j < n; ++j) q[j] = answer(q.data() + j * width);
    q.resize(n);
  }
  std::vector<std::vector<int64_t>> answers = send_ints(std::move(questions), comm);
  for (size_t r = 0; r < answers.size(); ++r)
    PARTITA_CHECK(answers[r].size() == asked[r], Error,
                  "internal: {} answers to {} questions asked of rank {}", answers[r].size(),
                  asked[r], r);
  return answers;
}

// Every rank's `mine` (integers, or plain structs of them), in rank order.
template <class T = int64_t>
std::vector<std::vector<T>> gather_ints(const std::vector<T>& mine, DistComm& comm) {
  std::vector<std::vector<T>> out;
  for (const auto& b : comm.allgather(to_bytes(mine))) out.push_back(from_bytes<T>(b));
  return out;
}

// The sum over ranks of every element.
inline std::vector<int64_t> sum_over_ranks(std::vector<int64_t> values, DistComm& comm) {
  if (!values.empty()) comm.allreduce_sum(values.data(), values.size());
  return values;
}

// Per element of `mine`: where this rank's share starts (the sum over the ranks below it) and
// the sum over all ranks.
struct RankOffsets {
  std::vector<int64_t> first, total;
};
inline RankOffsets offsets_over_ranks(const std::vector<int64_t>& mine, DistComm& comm) {
  RankOffsets out{{}, std::vector<int64_t>(mine.size(), 0)};
  const std::vector<std::vector<int64_t>> all = gather_ints(mine, comm);
  for (int r = 0; r < comm.size(); ++r) {
    if (r == comm.rank()) out.first = out.total;  // the sum over the ranks below
    for (size_t i = 0; i < mine.size(); ++i) out.total[i] += all[r][i];
  }
  return out;
}

// The first failure of this rank; later work is skipped, collectives still run. agree() is
// the checkpoint: it throws on every rank when any rank failed.
class RankFailure {
 public:
  explicit RankFailure(DistComm& comm) : comm_(comm) {}
  template <class F>
  void run(F&& f) {
    if (comm_.size() == 1) return f();  // alone: fail as thrown
    if (!text_.empty()) return;
    try {
      f();
    } catch (const std::exception& e) {
      text_ = e.what();
      if (text_.empty()) text_ = "unknown failure";
    }
  }
  bool failed() const { return !text_.empty(); }
  void agree() const { comm_.agree(text_); }

 private:
  DistComm& comm_;
  std::string text_;
};

// Runs `f`, then agrees on failures across ranks. Collectives inside only where every rank
// reaches them whatever fails.
template <class F>
void agreed(DistComm& comm, F&& f) {
  RankFailure failure(comm);
  failure.run(f);
  failure.agree();
}

}  // namespace partita::partition
