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
#include "harness/runner/bench_sides.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

struct BenchOptions {
  int warmup = 1;  // runs of each side first, not counted
  int rounds = 5;  // each round runs A B B A
  double timeout_seconds = 600;
};

// Runs the bench, each side's argv built from `profile` (samebits-engine's,
// cell_arguments.h); `progress` (may be empty) hears of each run as it ends.
std::vector<harness::BenchSample> RunBench(
    const EngineProfile& profile, const harness::BenchSide& a, const harness::BenchSide& b,
    const BenchOptions& options, const std::function<void(const harness::BenchSample&)>& progress);

// `samebits bench A B` from its options to its record: the sides resolved
// (revisions built), the machine's preflight, the timed runs and their
// summary.
struct AbBenchOptions {
  std::string a, b;  // the sides as the user named them (bench_sides.h)
  BenchSideOptions sides;
  BenchOptions timing;
  bool force = false;  // times even when the preflight finds the machine busy
  bool quiet = false;  // no line per run
  std::string command_line;
  std::function<void(const std::string& line)> say;       // the preflight, for stdout
  std::function<void(const std::string& line)> progress;  // builds and runs, for stderr
};

struct AbBenchOutcome {
  // The preflight found the machine busy and `force` was not given: nothing
  // was timed (exit 2).
  bool refused = false;
  harness::BenchRecord record;  // all of it unless refused; not yet stored
};

// Runs the bench. Throws RunError (exit 2) when a side cannot be resolved
// or there is no samebits-engine profile (options.sides.own_profile).
AbBenchOutcome RunAbBench(const AbBenchOptions& options);

}  // namespace samebits::runner
