// The gate's analysis: compares a run's cells with each other and with the
// committed references, marks the cells that differ as FAIL, and diagnoses
// why in words a person can act on (DESIGN.md section 4):
//
//   - configurations disagree with each other: the identity is broken in
//     this build (the configurations, the first diverging step, and with
//     traces the first diverging layer and op);
//   - all agree, but not with the reference: a code change (with the exact
//     `samebits bisect` command) when the portable profile differs or the
//     libm profile differs with the same library; else a different math
//     library (both named). A code change leads when both show;
//   - no reference for this platform and profile: how to make one;
//   - a cell whose engine's repeats in one process gave more than one
//     output (its done's `repeats`), or whose sampling at a temperature
//     above 0 found a seed that does not reproduce its sample or seeds that
//     all draw one (its done's `sampling`): FAIL, whatever its steps match.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/analysis/compare.h"
#include "harness/analysis/equivalence.h"
#include "harness/analysis/numeric_profile.h"
#include "harness/analysis/references.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

// The cells of one checkpoint x scenario x numeric profile (a math profile
// and a dot-product profile, numeric_profile.h; x architecture, for a math
// profile other than portable: the platform's libm may round otherwise
// elsewhere), which must all produce the same outputs, split into classes
// of equal outputs. Cells of two profiles are never compared: an int8 cell
// differs from an exact one by design, not by a bug.
struct AgreementGroup {
  std::string checkpoint, scenario, math;
  std::string quant_dot = kExactQuantDot;  // Configuration::quant_dot
  std::string engine;                      // Configuration::engine: empty for samebits-engine
  // The cells' architecture (CellArch): part of the group's key unless the
  // math profile is portable, whose outputs are the same everywhere.
  std::string arch;
  std::vector<size_t> cells;                 // indices into RunResult::cells that ran
  std::vector<std::vector<size_t>> classes;  // equal outputs; the baseline class first
  // Returns the cell whose outputs stand for the baseline class.
  size_t baseline() const { return classes.front().front(); }
  // Returns the numeric profile the group's cells share.
  NumericProfile Profile() const { return {math, quant_dot}; }
};

// Returns the run's agreement groups, in the cells' order. Only cells that
// ran to completion (PASS, or FAIL from an earlier judgement) take part.
// The baseline class is the one holding the `reference` kernels, else the
// largest (the first on a tie).
std::vector<AgreementGroup> GroupCells(const RunResult& run);

struct JudgeOptions {
  // The references, by group key (ReferenceGroupKey); a missing key means
  // no file for that group.
  std::map<std::string, ReferenceGroup> references;
  std::string references_dir = "references";
  // How to invoke samebits in printed commands ("build/bin/samebits").
  std::string samebits = "build/bin/samebits";
  // The `samebits bisect` command printed when a commit may have caused a
  // difference, with the flags the user passed (empty: `<samebits> bisect`).
  std::string bisect_command;
  // Whether the gate reran diverging pairs with --trace; then
  // `trace_differences` holds what their traces showed, by TraceKey.
  bool traced = false;
  std::map<std::string, TraceDifference> trace_differences;
  // Scenarios declared to give the same bits where they share positions
  // (equivalence.h); checked after the groups and the references.
  std::vector<ScenarioEquivalence> equivalences;
};

// Returns the key of a pair of configurations' trace comparison.
std::string TraceKey(const std::string& checkpoint, const std::string& scenario,
                     const std::string& config_a, const std::string& config_b);

// Returns the reference group keys the run's cells need.
std::vector<std::string> NeededReferenceKeys(const RunResult& run);

// Returns the options to judge `run` with: the references it needs, loaded
// from the folder `dir` (a group whose file does not exist is left out).
// Throws ReferenceError when a reference file is malformed.
JudgeOptions LoadJudgeOptions(const RunResult& run, const std::string& dir);

// Judges `run` in place: cells that differ become FAIL with a message, and
// `run.diagnosis` is set. Idempotent: FAIL cells are judged afresh. The
// findings come from four independent comparisons (within each agreement
// group, against the references, missing references, children that did not
// finish), merged with the most severe first (kDiagnosisKinds).
// RunVerdict (verdict.h) says what the judged run means.
void Judge(RunResult& run, const JudgeOptions& options);

// Returns the divergence line for a person: "synthetic:tiny classic: cpu-t3
// differs from reference at step 4 (decode, position 15): ...".
std::string DescribeDivergence(const Divergence& d);

}  // namespace samebits::harness
