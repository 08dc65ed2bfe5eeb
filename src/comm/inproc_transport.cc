#include "partita/comm/inproc_transport.h"

#include <deque>
#include <mutex>

#include "partita/comm/errors.h"

namespace partita {

struct InProcessWorld::Mailbox {
  std::mutex mutex;
  std::deque<Message> messages;
};

class InProcessWorld::InProcessTransport : public Transport {
 public:
  InProcessTransport(InProcessWorld* world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }

  void send(int dest, int tag, std::vector<uint8_t> data) override {
    PARTITA_CHECK(dest >= 0 && dest < size(), CommError,
                  "in-process send from rank {}: destination rank {} is not in [0, {})", rank_,
                  dest, size());
    PARTITA_CHECK(tag >= 0 && tag <= kMaxTag, CommError,
                  "in-process send from rank {} to rank {}: tag {} is not in [0, {}]", rank_, dest,
                  tag, kMaxTag);
    count_sent(dest, data.size());
    Mailbox& box = *world_->mailboxes_[static_cast<size_t>(dest)];
    std::lock_guard<std::mutex> lock(box.mutex);
    box.messages.push_back(Message{rank_, tag, std::move(data)});
  }

  std::optional<Message> poll() override {
    Mailbox& box = *world_->mailboxes_[static_cast<size_t>(rank_)];
    std::lock_guard<std::mutex> lock(box.mutex);
    if (box.messages.empty()) return std::nullopt;
    Message message = std::move(box.messages.front());
    box.messages.pop_front();
    return message;
  }

  size_t progress() override { return 0; }

 private:
  InProcessWorld* world_;
  int rank_;
};

InProcessWorld::InProcessWorld(int size) {
  PARTITA_CHECK(size >= 1, CommError, "InProcessWorld: size {} must be at least 1", size);
  for (int r = 0; r < size; ++r) {
    mailboxes_.push_back(std::make_unique<Mailbox>());
    transports_.push_back(std::make_unique<InProcessTransport>(this, r));
  }
}

InProcessWorld::~InProcessWorld() = default;

Transport& InProcessWorld::transport(int rank) {
  PARTITA_CHECK(rank >= 0 && rank < size(), CommError,
                "InProcessWorld::transport: rank {} is not in [0, {})", rank, size());
  return *transports_[static_cast<size_t>(rank)];
}

}  // namespace partita
