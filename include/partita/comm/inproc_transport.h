#pragma once
// In-process backend: InProcessWorld(n) holds n transports that deliver to each other
// through mutex-protected mailboxes, so n threads can play n ranks in one test process.
// Same semantics as transport.h (non-blocking, FIFO per pair, thread-safe); send() delivers
// at once, so progress() is always 0.
//
// The world owns its transports; it must outlive every user of them. Not copyable/movable.
#include <memory>
#include <vector>

#include "partita/comm/transport.h"

namespace partita {

class InProcessWorld {
 public:
  explicit InProcessWorld(int size);  // size >= 1
  ~InProcessWorld();
  InProcessWorld(const InProcessWorld&) = delete;
  InProcessWorld& operator=(const InProcessWorld&) = delete;

  int size() const { return static_cast<int>(transports_.size()); }
  // The transport of `rank` (0 <= rank < size()); throws CommError otherwise.
  Transport& transport(int rank);

 private:
  struct Mailbox;
  class InProcessTransport;
  std::vector<std::unique_ptr<Mailbox>> mailboxes_;
  std::vector<std::unique_ptr<Transport>> transports_;
};

}  // namespace partita
