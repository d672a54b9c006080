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

#include "engine/protocol/records.h"
#include "harness/analysis/bench_statistics.h"
#include "harness/analysis/results.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

struct BenchSide {
  std::string label;     // as the user named it ("cpu-t2", "HEAD~3", "./engine")
  std::string engine;    // the program
  Cell cell;             // checkpoint, scenario, configuration
  std::string revision;  // the commit it was built from, when it was
};

struct BenchOptions {
  int warmup = 1;  // runs of each side first, not counted
  int rounds = 5;  // each round runs A B B A
  double timeout_seconds = 600;
};

// One run of one side.
struct BenchSample {
  char side = 'A';
  int round = 0;  // -1 for a warm-up run
  bool ok = false;
  std::string failure;    // why not, for a person
  double elapsed_ms = 0;  // the `done` record's: the forward passes only
  double wall_ms = 0;     // the child's wall time, loading included
  int steps = 0;          // output rows
  // The `done` record's split of elapsed_ms into prefill and decode; absent
  // when the engine does not report it (not kept in the store).
  std::optional<protocol::PhaseTimes> phases;
  std::vector<harness::StepRecord> outputs;
};

// One phase of the runs (prefill or decode), per token.
struct PhaseSummary {
  // Whether every counted run of both sides reported the split and fed the
  // phase at least one token; when not, the other fields are zero.
  bool known = false;
  int64_t tokens = 0;  // per run (A's; the same scenario on both sides)
  double median_a_ms_per_token = 0, median_b_ms_per_token = 0;
  harness::PairedRatio ratio;  // B/A of the per-token times, paired as the whole
};

struct BenchSummary {
  double median_a_ms = 0, median_b_ms = 0;
  double median_a_wall_ms = 0, median_b_wall_ms = 0;
  harness::PairedRatio ratio;  // B/A of the `done` times, paired per round
  PhaseSummary prefill, decode;
  bool all_ran = true;
  // Token identity over the same runs: A's runs agree with each other, B's
  // with each other, and B with A.
  bool a_repeatable = true, b_repeatable = true, identical = true;
  std::string identity_detail;  // where they first differ, for a person
};

// Runs the bench; `progress` (may be empty) hears of each run as it ends.
std::vector<BenchSample> RunBench(const BenchSide& a, const BenchSide& b,
                                  const BenchOptions& options,
                                  const std::function<void(const BenchSample&)>& progress);

// Returns the medians, the paired ratio and the identity of the counted
// (non-warm-up) samples; warm-up runs count for identity too (pure).
BenchSummary SummarizeBench(const std::vector<BenchSample>& samples);

}  // namespace samebits::runner
