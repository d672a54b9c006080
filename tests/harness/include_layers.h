// The layer checker: reads every `#include "engine/..."` and `#include
// "harness/..."` in the sources under engine/ and harness/ and names each one
// that reaches a layer above its own file's (the order is a text file,
// tests/harness/layers.txt). `samebits-check-layers` runs it on the tree;
// include_layers_test.cc runs it on crafted trees, so it is known to fail.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace samebits::layers {

// The order, parsed: each folder's rank (0 the bottom; peers share one) and
// the `only` rules.
struct LayerOrder {
  std::map<std::string, int> rank;  // "harness/runner" -> 5
  struct Only {
    std::string prefix;                // "harness/"
    std::vector<std::string> allowed;  // folders outside `prefix` it may include
  };
  std::vector<Only> only;
  std::vector<std::vector<std::string>> lines;  // the layers, top first, as written
};

// Returns the order written in `text` (the format of layers.txt). Throws
// std::runtime_error naming the line of a malformed entry or of a folder
// named twice.
LayerOrder ParseLayerOrder(const std::string& text);

// One include that breaks the order.
struct Violation {
  std::string file;  // relative to the root: "harness/analysis/x.h"
  int line = 0;
  std::string included;  // "harness/report/ulp.h"
  std::string rule;      // which rule, for a person
};

struct CheckResult {
  int files = 0;     // sources read
  int includes = 0;  // project includes checked
  std::vector<Violation> violations;
};

// Returns every include of the `.h` and `.cc` files under `root`/engine and
// `root`/harness that breaks `order`: a folder above the file's own, a peer,
// a folder the order does not name (and a file in such a folder), or one an
// `only` rule leaves out. Sorted by file and line.
CheckResult CheckIncludes(const std::string& root, const LayerOrder& order);

// Returns "FILE:LINE: includes \"X\": RULE".
std::string Describe(const Violation& v);

}  // namespace samebits::layers
