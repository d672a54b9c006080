// The records of `samebits bench A B` and their summary: the two sides, one
// sample per timed run, and the medians, paired ratio and token identity
// over them. Plain records (the store persists them, the reports show them,
// runner/ab_bench.h makes them) and one pure function of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/protocol/records.h"
#include "harness/analysis/bench_statistics.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

struct BenchSide {
  std::string label;     // as the user named it ("cpu-t2", "HEAD~3", "./engine")
  std::string engine;    // the program
  Cell cell;             // checkpoint, scenario, configuration
  std::string revision;  // the commit it was built from, when it was
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
  std::vector<StepRecord> outputs;
};

// One phase of the runs (prefill or decode), per token.
struct PhaseSummary {
  // Whether every counted run of both sides reported the split and fed the
  // phase at least one token; when not, the other fields are zero.
  bool known = false;
  int64_t tokens = 0;  // per run (A's; the same scenario on both sides)
  double median_a_ms_per_token = 0, median_b_ms_per_token = 0;
  PairedRatio ratio;  // B/A of the per-token times, paired as the whole
};

struct BenchSummary {
  double median_a_ms = 0, median_b_ms = 0;
  double median_a_wall_ms = 0, median_b_wall_ms = 0;
  PairedRatio ratio;  // B/A of the `done` times, paired per round
  PhaseSummary prefill, decode;
  bool all_ran = true;
  // Token identity over the same runs: A's runs agree with each other, B's
  // with each other, and B with A.
  bool a_repeatable = true, b_repeatable = true, identical = true;
  std::string identity_detail;  // where they first differ, for a person
};

// What a bench was and what it measured: the record the store keeps
// (store/bench_records.h) and the bench reports show (report/bench_html.h).
struct BenchRecord {
  std::string started_at, command, machine, preflight;
  bool forced = false;
  BenchSide a, b;
  BenchSummary summary;
  std::vector<BenchSample> samples;
};

// Returns the medians, the paired ratio and the identity of the counted
// (non-warm-up) samples; warm-up runs count for identity too (pure).
BenchSummary SummarizeBench(const std::vector<BenchSample>& samples);

}  // namespace samebits::harness
