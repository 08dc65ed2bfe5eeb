#pragma once
// How many classes a node-classification dataset has (docs/dataset-format.md, "Classes").
//
// A layout that states the count (the chunked layout's manifest.json) is taken at its word.
// The others imply it from the labels: max label + 1. That count is refused as implausible
// when most of the classes it makes would have no node (more of them empty than present, and
// at least kMinEmptyClassesRefused empty): one node labelled 100000 in a 5-class dataset
// would otherwise give every model a 100001-wide output layer (300x slower per epoch, and far
// less accurate), with no word but a count in a progress line. A caller that knows the count
// states it (LoadOptions::num_classes, the CLI's --num-classes): then every label must lie
// below it, and classes may be empty.
//
// Refusing (rather than warning) is deliberate: the count is written into the partition and
// every later `train` inherits it, a warning scrolls past with the progress lines, and a
// dataset whose labels really are that sparse costs its user one flag.
//
// Pure, no I/O; errors are FormatError naming the dataset, or ParameterError(num_classes).
#include <cstdint>
#include <string>
#include <vector>

namespace partita::data {

// A refused implied count leaves at least this many classes without a node.
constexpr int64_t kMinEmptyClassesRefused = 16;

// The classes a set of labels uses. Labels are in [0, 2^24) (the readers check that first)
// or -1 (unlabelled, not counted). Not thread-safe.
class ClassCensus {
 public:
  void add(int64_t label);
  void add(const std::vector<int64_t>& labels);
  // The classes `other` saw too (e.g. another rank's share).
  void merge(const ClassCensus& other);

  int64_t max_label() const { return static_cast<int64_t>(seen_.size()) - 1; }  // -1: none
  int64_t present() const { return present_; }  // distinct classes seen
  // The distinct classes seen, ascending (what a rank sends the others), and back.
  std::vector<int64_t> classes() const;
  static ClassCensus of(const std::vector<int64_t>& classes);

 private:
  std::vector<bool> seen_;
  int64_t present_ = 0;
};

struct ClassCountInput {
  std::string dataset;  // the dataset directory, for messages
  ClassCensus census;   // of every node's label
  int64_t stated = 0;   // the layout's own count (chunked manifest); 0: the layout states none
  int64_t given = 0;    // the caller's count (LoadOptions::num_classes); 0: none
};

// The dataset's class count (see above). Throws ParameterError(num_classes) when `given`
// contradicts `stated`, FormatError when a label is not below `given`, or when the implied
// count is implausible and nothing states it.
int64_t resolve_num_classes(const ClassCountInput& input);

}  // namespace partita::data
