// The timed runs of `samebits bench A B`: two sides (an engine program and
// the cell it runs), run interleaved A B B A so that drift in the machine's
// speed touches both alike, warm-up runs first and discarded, and the
// outputs of every run checked for bit identity (a faster B that changes a
// bit is no speed-up).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/bench_summary.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

struct BenchOptions {
  int warmup = 1;  // runs of each side first, not counted
  int rounds = 5;  // each round runs A B B A
  double timeout_seconds = 600;
};

// Runs the bench; `progress` (may be empty) hears of each run as it ends.
std::vector<harness::BenchSample> RunBench(
    const harness::BenchSide& a, const harness::BenchSide& b, const BenchOptions& options,
    const std::function<void(const harness::BenchSample&)>& progress);

}  // namespace samebits::runner
