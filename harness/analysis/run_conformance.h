// Conformance of two runs (`samebits conform A B`): for each checkpoint and
// scenario both ran, the logit dumps of one cell of each side are measured
// step by step (conformance.h) and judged against a threshold.
//
// Side A is the reference. Which cell of each side is compared: the one
// named by `ConformOptions::config_a` / `config_b` when given; otherwise
// A's first cell of that checkpoint and scenario that passed with a dump,
// and B's cell of the same configuration name, else B's first that passed
// with a dump (two engines rarely share configuration names).
//
// Logits of two different contexts are never compared: the steps are
// walked in order, and at the first step whose kind, position or input
// token differs (greedy continuations that diverged: the two engines chose
// different tokens one step earlier) the comparison stops there. When the
// caller can rerun B (`ConformOptions::rerun_b_forced`: B is an engine it
// can start, not only stored rows), B is rerun with A's tokens forced
// (runner/forced_scenario.h) and the whole pair is measured on that rerun,
// so every step compares logits of the same context.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/conformance.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

// Where the two sides' contexts stop being the same.
struct ContextDivergence {
  int step_index = 0;  // the first step not compared
  std::string detail;  // "input token 17 (A) vs 18 (B) at position 16"
};

struct ConformOptions {
  ConformanceThreshold threshold;
  std::string config_a, config_b;  // empty: chosen as described above
  // Relative dump paths are resolved against this folder (the project root).
  std::string dump_base_dir;
  // Given A's cell and B's (whose contexts diverge), returns B's cell rerun
  // on the same checkpoint with A's tokens forced: the scenario's decode
  // steps fed A's tokens as single-token extends, the rows then of kind
  // `extend` where A's are `decode`. A cell that did not pass (its message
  // saying why) leaves the divergence as it was. Unset: no rerun.
  std::function<CellResult(const CellResult& a, const CellResult& b)> rerun_b_forced;
};

// One checkpoint x scenario, measured.
struct PairConformance {
  std::string checkpoint, scenario;
  std::string config_a, config_b;  // the cells compared ("" when a side has none)
  std::string engine_a, engine_b;  // "samebits-engine 0.1.0", from each cell's hello
  bool compared = false;
  std::string reason;  // why not compared
  int steps_a = 0, steps_b = 0;
  std::vector<StepConformance> steps;  // the steps measured, in order
  ConformanceSummary summary;
  std::optional<ContextDivergence> divergence;
  // Where B's own continuation diverged from A's, when B was rerun with A's
  // tokens forced and `steps` were measured on that rerun.
  std::optional<ContextDivergence> forced;
  std::vector<std::string> notes;  // what a reader should know ("5 steps vs 7")
};

struct RunConformance {
  std::string label_a, label_b;
  ConformanceThreshold threshold;
  std::vector<PairConformance> pairs;
  int conform = 0, deviate = 0, not_compared = 0;
  std::string headline;

  // 0 every compared pair conforms; 1 a pair deviates; 2 nothing compared.
  int ExitCode() const;
};

// Measures run `b` against run `a`. Throws std::runtime_error when a dump
// cannot be read whole.
RunConformance ConformRuns(const RunResult& a, const RunResult& b, const std::string& label_a,
                           const std::string& label_b, const ConformOptions& options);

// Returns the pair's verdict name: CONFORMS, DEVIATES or NOT COMPARED.
const char* PairVerdictName(const PairConformance& pair);

// Returns the pair's verdict with its stability and, for DEVIATES, where
// and why (ConformanceVerdictLine): "CONFORMS (stable)", "DEVIATES at step
// 3, token 1234 (A 1.5, B 2.25): NMSE 2.10e-03 > 1.00e-04 (stable)".
std::string PairVerdictLine(const PairConformance& pair);

// Returns which steps were measured, for a person: "steps 0-8 of 9", or
// "steps 0-4 of 9 (the contexts diverge at step 5: ...)".
std::string DescribeCoverage(const PairConformance& pair);

// Returns the comparison as text for a terminal: the headline and one
// paragraph per pair.
std::string FormatConformance(const RunConformance& c);

}  // namespace samebits::harness
