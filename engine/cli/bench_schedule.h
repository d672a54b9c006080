// `bench`'s scheduling: which configuration runs when. Runs are interleaved
// (A B C, C B A, ...) so that a change in the machine's load touches every
// configuration alike.
#pragma once

#include <cstddef>
#include <vector>

namespace samebits::cli {

// Returns the indices of the configurations to run, in order, over
// `repeats` rounds: even rounds in order, odd rounds reversed. A
// configuration marked in `is_reference` runs only in the first
// `reference_repeats` rounds (the reference pass is slow).
std::vector<size_t> InterleavedOrder(const std::vector<bool>& is_reference, int repeats,
                                     int reference_repeats);

}  // namespace samebits::cli
