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
// different tokens one step earlier) the comparison stops and says so. The
// later steps could only be measured by rerunning B with A's tokens forced.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/conformance.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

struct ConformOptions {
  ConformanceThreshold threshold;
  std::string config_a, config_b;  // empty: chosen as described above
  // Relative dump paths are resolved against this folder (the project root).
  std::string dump_base_dir;
};

// Where the two sides' contexts stop being the same.
struct ContextDivergence {
  int step_index = 0;  // the first step not compared
  std::string detail;  // "input token 17 (A) vs 18 (B) at position 16"
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

// Returns which steps were measured, for a person: "steps 0-8 of 9", or
// "steps 0-4 of 9 (the contexts diverge at step 5: ...)".
std::string DescribeCoverage(const PairConformance& pair);

// Returns the comparison as text for a terminal: the headline and one
// paragraph per pair.
std::string FormatConformance(const RunConformance& c);

}  // namespace samebits::harness
