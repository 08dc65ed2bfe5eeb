#pragma once
// In-process backend of Collectives (collectives.h): InProcessCollectiveGroup(n) holds n
// members that meet through a mutex and a condition variable, so n threads can play n
// ranks in one test process (with InProcessWorld for their requests).
//
// Every operation is an exchange: each member deposits its contribution, the last to
// arrive publishes all of them, and each member computes its result from them in rank
// order, so reductions give the same bits on every member (rank 0's value first).
// A member that waits longer than timeout_s throws TimeoutError; the group is then broken
// and every later or waiting operation of any member throws CommError.
//
// The group owns its members; it must outlive every user of them. Not copyable/movable.
#include <memory>
#include <vector>

#include "partita/comm/collectives.h"

namespace partita {

class InProcessCollectiveGroup {
 public:
  explicit InProcessCollectiveGroup(int size, double timeout_s = 60);  // size >= 1
  ~InProcessCollectiveGroup();
  InProcessCollectiveGroup(const InProcessCollectiveGroup&) = delete;
  InProcessCollectiveGroup& operator=(const InProcessCollectiveGroup&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  // The member of `rank` (0 <= rank < size()); throws CommError otherwise.
  Collectives& member(int rank);

 private:
  struct Meeting;
  class Member;
  std::unique_ptr<Meeting> meeting_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace partita
