// Roll-ups: one line per diverging configuration (or per configuration of
// failed cells) instead of one near-identical line per checkpoint x
// scenario, so a broken kernel in a matrix of dozens of cells reads as
// "cpu-avx2 differs from reference in 23 checkpoint x scenario pairs, all
// first at step 0 ..., layer 0 op q" rather than 23 lines.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness {

// Returns one line per pair of configurations (config_a, config_b) among
// `divergences`, in first-seen order. A pair that diverges in one place
// only gets DescribeDivergence's line; a pair that diverges in several
// gets a count, how many checkpoints and scenarios, and either the one
// place where all first differ or the first of them. When every divergence
// names the same diverging configuration, a leading line says so.
std::vector<std::string> RollUpDivergences(const std::vector<Divergence>& divergences);

// Returns the failed cells (FAIL, UNRESOLVED, TIMEOUT) as lines for the
// terminal, one per result code x configuration: a lone cell as
// "FAIL: <checkpoint> <scenario> <config>: <message>", several as a count
// with the first cell's message. A child that did not finish shows the last
// lines of its standard error (`stderr_lines` of them) under its line.
std::vector<std::string> RollUpFailedCells(const RunResult& run, int stderr_lines);

// Returns RollUpFailedCells's lines for the children that did not finish
// (UNRESOLVED, TIMEOUT) only, without their standard error.
std::vector<std::string> RollUpUnfinishedChildren(const RunResult& run);

}  // namespace samebits::harness
