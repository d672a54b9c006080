// Every claim a finished child makes that the harness can check, checked in
// one place that every cell passes through (samebits-engine's cells, shared
// children's, adapters' and any profile's: cell_runner.h's JudgeChild and
// JudgeChildWith call it). A live engine is trusted no more than a bundle
// (exchange/bundle_dumps.h): an engine whose dump rows differ from the
// logits it hashed, whose dump has the wrong size, whose hello gives another
// vocabulary than its rows, or which reports fewer steps than its scenario
// holds (none at all included) would otherwise pass, or have its evidence
// dropped without a word. A failed check makes the cell UNRESOLVED with
// what was expected and what came.
#pragma once

#include <string>

#include "harness/analysis/results.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

// Checks the claims of `result`, the judged child of `cell`, when it passed
// so far:
//   - it reported at least one step, and as many as the scenario file's
//     output rows when they can be counted (scenario_rows.h);
//   - when `dump_file` is not empty (the child was asked for a raw logit
//     dump there): the file exists, holds exactly one row of the hello's
//     `vocab_size` float32 values per step, and each row hashes to its
//     step's hashes (analysis/dump_rows.h).
// A failed check makes `result` UNRESOLVED, its message saying what was
// expected and what came. A cell that passes every check gets `dump_file`
// as its `dump_path`; any other cell's dump is removed (a partial dump, from
// a crash or a full disk, would be read as rows it never wrote).
void CheckEngineClaims(const Cell& cell, const std::string& dump_file, harness::CellResult& result);

}  // namespace samebits::runner
