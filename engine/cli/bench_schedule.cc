// `bench`'s scheduling (bench_schedule.h).
#include "engine/cli/bench_schedule.h"

namespace samebits::cli {

std::vector<size_t> InterleavedOrder(const std::vector<bool>& is_reference, int repeats,
                                     int reference_repeats) {
  std::vector<size_t> order;
  const size_t n = is_reference.size();
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const size_t c = r % 2 == 0 ? i : n - 1 - i;
      if (is_reference[c] && r >= reference_repeats) continue;
      order.push_back(c);
    }
  }
  return order;
}

}  // namespace samebits::cli
