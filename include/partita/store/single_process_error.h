#pragma once
// A directory of several parts opened by a job of one process (DistGraph::open): the job was
// started without one rank per part. what() says so and ends with "start one rank per part";
// how to start them is the caller's to add (the command line names `partita launch` and
// `mpirun ... partita`, the Python package `mpirun ... python3 <script>`). A header of its
// own so that the callers that catch it do not depend on dist_graph.h.
#include <string>

#include "partita/core/error.h"

namespace partita::store {

class SingleProcessError : public UsageError {
 public:
  SingleProcessError(const std::string& message, int num_parts)
      : UsageError(message), num_parts_(num_parts) {}
  int num_parts() const { return num_parts_; }

 private:
  int num_parts_;
};

}  // namespace partita::store
