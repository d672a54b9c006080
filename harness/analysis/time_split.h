// Where a run's time went: each cell's split (CellTiming in results.h)
// summed over the run and written for a person, for `--verbose` and the
// summary, so the slow part of a gate is measured before it is optimised.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness {

// One part of a split: its name ("start", "load", "steps", "exit", "judge",
// "store") and its field.
struct TimingPart {
  const char* name;
  double CellTiming::*field;
};

// Returns the parts in the order a cell spends them; the first four are the
// child's (they add up to its wall time).
const std::vector<TimingPart>& TimingParts();

// The cells' splits summed part by part, in milliseconds. A part counts
// only the cells that measured it; `cells` is the number of cells that
// measured anything.
struct TimeTotals {
  int cells = 0;
  CellTiming sum{0, 0, 0, 0, 0, 0};
  double child_ms = 0;  // the children's whole wall time (elapsed_ms), summed
};

// Returns the sums over `run`'s cells.
TimeTotals SumTiming(const RunResult& run);

// Returns one line for the summary: the parts summed over the run's cells
// ("Time in 1408 cells (children's wall time 230.1 s): start 40.2 s, load
// 150.3 s, ..."), or "" when no cell was timed (a stored run).
std::string FormatTimeSplit(const RunResult& run);

// Returns one line for `--verbose`: the cell and its split ("synthetic:tiny
// classic cpu-t2: 45 ms = start 12 + load 20 + steps 10 + exit 3; judge 0.2
// ms, store 0.1 ms"), parts not measured left out.
std::string FormatCellTiming(const CellResult& cell);

}  // namespace samebits::harness
