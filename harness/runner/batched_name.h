// The names of batched configurations. A batched configuration is an
// unbatched one of the matrix run with companions (harness/analysis/batch.h),
// named by inserting its batch before the numeric profile's suffix
// (harness/analysis/numeric_profile.h):
//
//   <base>-b<N>[-staggered][-seed<S>][-<math>][-<quant-dot>]
//
// where <base> is a configuration of the matrix without its profile suffix
// (cpu-t2, cpu-t3-chunk8k, cpu-avx2, ...), N is 2 to kMaxBatch, the schedule
// is together unless `-staggered` is written, and the seed is 1 unless
// `-seed<S>` is written: cpu-t2-b4, cpu-t3-b8-staggered,
// cpu-t2-b4-seed7-libm, cpu-t2-b4-libm-int8. Each configuration has one name: `-together`,
// `-seed1` and `-b1` are refused with the name to write instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::runner {

// The largest batch a name may ask for.
inline constexpr int kMaxBatch = 64;

// Returns `base` (an unbatched configuration) batched: its name with the
// batch inserted before the profile suffix, and the batch fields set.
harness::Configuration Batched(harness::Configuration base, int batch, uint64_t seed,
                               const std::string& schedule);

// Returns the configuration `name` means when it names a batch (a `-b<N>`
// part) on one of `unbatched`, or nothing when it has no batch part. Throws
// std::invalid_argument naming what is wrong with a batch part that is
// malformed, out of range, not in its one spelling, or on a base that is not
// in `unbatched` or cannot be batched (the reference kernels).
std::optional<harness::Configuration> ParseBatchedName(
    const std::string& name, const std::vector<harness::Configuration>& unbatched);

}  // namespace samebits::runner
