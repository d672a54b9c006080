// The gate's rerun policy: when configurations disagree, rerun the
// diverging pairs with raw logit dumps (and activation traces when asked),
// so the report gives ULP distances, whether the argmax moved, and the
// first diverging layer and op. Every distinct pair of configurations gets
// one rerun first, then the remaining pairs, all within a time budget; the
// diagnosis says what the budget left out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/results.h"
#include "harness/runner/matrix_run.h"

namespace samebits::runner {

// The default time the gate spends rerunning diverging pairs: enough to
// rerun one pair per diverging configuration of the default matrix with
// traces, small enough that a broken build does not double the gate's time.
inline constexpr double kDefaultRerunBudgetSeconds = 120;

// What RerunDivergences did.
struct RerunOutcome {
  // What the traces showed, by TraceKey.
  std::map<std::string, harness::TraceDifference> trace_differences;
  int rerun = 0;  // pairs rerun
  // "checkpoint scenario: config_a and config_b" of the pairs the budget
  // left out, in the diagnosis's order.
  std::vector<std::string> skipped;
};

// Reruns the diverging pairs of configurations of `run.diagnosis`: first
// one pair per distinct (config_a, config_b), then the others, in the
// diagnosis's order, until `budget_seconds` have passed (the first pair
// always runs; a pair started within the budget runs to its end). With --trace when `trace` (to
// name the first diverging layer and op), and with --dump-logits when either cell of the pair has
// no dump yet. A rerun's dump becomes the cell's `dump_path` only when the rerun printed the same
// outputs as the cell. `selected` holds the cells the flags select now (CellForResult).
RerunOutcome RerunDivergences(harness::RunResult& run, const MatrixRunOptions& options,
                              const std::vector<Cell>& selected, bool trace, double budget_seconds,
                              bool quiet);

// Judges `run` as the gate does: Judge; then, when the identity is broken,
// RerunDivergences within `budget_seconds`; with `trace`, judges again with
// what the traces showed. When the budget left pairs out, a detail line of
// the diagnosis says how many and which.
void JudgeWithReruns(harness::RunResult& run, harness::JudgeOptions judge,
                     const MatrixRunOptions& options, const std::vector<Cell>& selected, bool trace,
                     bool quiet, double budget_seconds = kDefaultRerunBudgetSeconds);

}  // namespace samebits::runner
