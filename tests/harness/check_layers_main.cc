// samebits-check-layers ROOT [LAYERS]: checks every `#include "engine/..."`
// and `#include "harness/..."` under ROOT/engine and ROOT/harness against
// the layer order (default ROOT/tests/harness/layers.txt). Prints each
// include that breaks it, with file, line and rule, and exits 1; exits 0
// when none does, 2 when the order cannot be read.
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "tests/harness/include_layers.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: samebits-check-layers ROOT [LAYERS]\n";
    return 2;
  }
  const std::string root = argv[1];
  const std::string layers = argc == 3 ? argv[2] : root + "/tests/harness/layers.txt";
  std::ifstream in(layers);
  if (!in) {
    std::cerr << layers << ": cannot be read\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const samebits::layers::LayerOrder order = samebits::layers::ParseLayerOrder(text.str());
    const samebits::layers::CheckResult result = samebits::layers::CheckIncludes(root, order);
    for (const samebits::layers::Violation& v : result.violations) {
      std::cout << samebits::layers::Describe(v) << "\n";
    }
    std::cout << result.files << " files, " << result.includes << " includes checked against "
              << layers << ": " << result.violations.size() << " break the layer order\n";
    return result.violations.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << layers << ": " << e.what() << "\n";
    return 2;
  }
}
