// The class count of a dataset: see partita/data/class_count.h.
#include "partita/data/class_count.h"

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"

namespace partita::data {

void ClassCensus::add(int64_t label) {
  if (label < 0) return;
  const size_t at = static_cast<size_t>(label);
  if (at >= seen_.size()) seen_.resize(at + 1, false);
  if (!seen_[at]) {
    seen_[at] = true;
    ++present_;
  }
}

void ClassCensus::add(const std::vector<int64_t>& labels) {
  for (int64_t label : labels) add(label);
}

void ClassCensus::merge(const ClassCensus& other) {
  for (size_t c = 0; c < other.seen_.size(); ++c)
    if (other.seen_[c]) add(static_cast<int64_t>(c));
}

std::vector<int64_t> ClassCensus::classes() const {
  std::vector<int64_t> out;
  for (size_t c = 0; c < seen_.size(); ++c)
    if (seen_[c]) out.push_back(static_cast<int64_t>(c));
  return out;
}

ClassCensus ClassCensus::of(const std::vector<int64_t>& classes) {
  ClassCensus census;
  census.add(classes);
  return census;
}

int64_t resolve_num_classes(const ClassCountInput& in) {
  PARTITA_CHECK_PARAM(in.given >= 0, "num_classes", "must be >= 1 (or 0: from the labels), got {}",
                      in.given);
  const int64_t max_label = in.census.max_label();
  if (in.stated > 0) {
    PARTITA_CHECK_PARAM(in.given <= 0 || in.given == in.stated, "num_classes",
                        "{} states {} classes (its manifest.json), {} given; leave it out for "
                        "this layout",
                        in.dataset, in.stated, in.given);
    return in.stated;
  }
  if (in.given > 0) {
    PARTITA_CHECK(max_label < in.given, FormatError,
                  "{}: label {} is outside [0, {}) (`num_classes` {})", in.dataset, max_label,
                  in.given, in.given);
    return in.given;
  }
  const int64_t implied = max_label + 1;
  const int64_t empty = implied - in.census.present();
  PARTITA_CHECK(empty <= in.census.present() || empty < kMinEmptyClassesRefused, FormatError,
                "{}: the largest label, {}, makes {} classes, but only {} of them have a node "
                "(a stray label? every model would get {} outputs); correct the labels, or "
                "give `num_classes` {} if the dataset really has that many classes",
                in.dataset, max_label, implied, in.census.present(), implied, implied);
  return implied;
}

}  // namespace partita::data
