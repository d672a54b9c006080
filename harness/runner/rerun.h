// The gate's rerun policy: when configurations disagree, rerun up to four
// diverging pairs with raw logit dumps (and activation traces when asked),
// so the report gives ULP distances, whether the argmax moved, and the
// first diverging layer and op.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/results.h"
#include "harness/runner/matrix_run.h"

namespace samebits::runner {

// The most diverging pairs the gate reruns: enough to name the pattern,
// few enough that a broken build does not double the gate's time.
inline constexpr int kMaxReruns = 4;

// Reruns up to kMaxReruns diverging pairs of configurations of
// `run.diagnosis`: with --trace when `trace` (to name the first diverging
// layer and op), and with --dump-logits when either cell of the pair has no
// dump yet. A rerun's dump becomes the cell's `dump_path` only when the
// rerun printed the same outputs as the cell. `selected` holds the cells
// the flags select now (CellForResult). Returns the trace differences by
// TraceKey.
std::map<std::string, harness::TraceDifference> RerunDivergences(
    harness::RunResult& run, const MatrixRunOptions& options, const std::vector<Cell>& selected,
    bool trace, bool quiet);

// Judges `run` as the gate does: Judge; then, when the identity is broken,
// RerunDivergences; and with `trace`, judges again with what the traces
// showed.
void JudgeWithReruns(harness::RunResult& run, harness::JudgeOptions judge,
                     const MatrixRunOptions& options, const std::vector<Cell>& selected,
                     bool trace, bool quiet);

}  // namespace samebits::runner
