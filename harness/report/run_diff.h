// Differences between two runs (`samebits diff A B`): cells matched by
// (checkpoint, scenario, configuration name), steps matched by index, and
// for each cell whether its hashes changed and where they first differ.
// Typical uses: the same matrix before and after a change, or on two
// machines.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness::report {

struct CellDiff {
  enum class Status : uint8_t {
    kSame,     // the same result code, and every step in both, equal in every field
    kDiffers,  // the weights differ, the result codes differ, some step
               // differs, one side has steps the other lacks, or the
               // scenario files differ
    // Neither side has a step and nothing else differs: a cell without
    // output is no evidence that two runs agree, so it is not "same".
    kNoOutput,
    kOnlyInA,
    kOnlyInB,
  };
  std::string checkpoint, scenario, config;
  Status status = Status::kSame;
  std::optional<ResultCode> code_a, code_b;
  int steps_a = 0, steps_b = 0;
  // The result codes differ (a PASS against a child that never sent `done`
  // is a difference even when every step it sent agrees).
  bool code_differs = false;
  int differing_steps = 0;  // step indices that differ or that one side lacks
  // The first such step: its record on each side (absent on the side that
  // lacks it).
  int first_index = -1;
  std::optional<StepRecord> first_a, first_b;
  // For a batched configuration: its batch and the scenario's sequence's
  // place at that step (harness/analysis/batch.h PlaceInRuns); else empty.
  std::string batch_place;
  std::string math_a, math_b;  // math-library fingerprints, when known
  // Non-empty when the two sides ran other weights under one checkpoint
  // name (harness::WeightsDifference): a difference whatever the steps say,
  // and the first one named.
  std::string weights_mismatch;
  // Non-empty when the two sides ran different scenario files under one
  // name (ScenarioContentMismatch): a difference whatever the steps say.
  std::string scenario_mismatch;
};

struct RunDiff {
  int64_t run_a = 0, run_b = 0;
  std::vector<CellDiff> cells;  // A's order, then cells only in B
  int same = 0, differs = 0, no_output = 0, only_a = 0, only_b = 0;

  // Returns true when every cell is in both runs with the same weights,
  // result code and steps, and at least one cell has steps to compare
  // (cells without output on either side are left out, never counted as
  // evidence).
  bool Identical() const { return differs == 0 && only_a == 0 && only_b == 0 && same > 0; }
  // Returns diff(1)'s exit status: 0 identical, 1 different, 2 nothing to
  // compare (no cell has steps on both sides and nothing differs).
  int ExitCode() const;
};

// Returns the differences between runs `a` and `b`. Throws
// std::invalid_argument when a run holds two differing copies of one cell
// (harness::RefuseDifferingCopies): which one is the run's is unknown.
RunDiff DiffRuns(const RunResult& a, const RunResult& b);

// Writes `diff` as Markdown (which also reads as plain text): a verdict,
// counts, a table of the cells that differ with their first diverging step,
// and the machines and math libraries of both runs when they differ.
void WriteRunDiffMarkdown(const RunDiff& diff, const RunResult& a, const RunResult& b,
                          std::ostream& out);

}  // namespace samebits::harness::report
