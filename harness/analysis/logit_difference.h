// How far apart two cells' logits are at the step where their hashes first
// differ, from raw logit dumps (`samebits compare`): the ULP statistics of
// that step's rows when both sides have the rows (a local dump file, or rows
// a bundle carried), or the two rows' statistics (argmax, max |logit|) when
// a side has only those (a bundle exported with statistics only).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "harness/analysis/results.h"
#include "harness/analysis/ulp.h"

namespace samebits::harness {

// Returns the statistics of one row of logits.
DumpRowStats RowStatistics(std::span<const float> row);

// Returns every row of `cell`'s raw logit dump, one per step: the rows a
// bundle carried, else the file at `dump_path` (a relative path resolved
// against `dump_base_dir`), or nothing when the cell has neither (no dump,
// or a bundle's statistics only). Throws std::runtime_error naming the
// problem when the rows cannot be read whole (harness::ReadLogitDump).
std::optional<harness::LogitDump> LoadCellDump(const CellResult& cell,
                                               const std::string& dump_base_dir);

struct LogitDifference {
  // True when both sides' rows were compared (`rows` holds the ULP
  // statistics); false when only the statistics were (`a`, `b`).
  bool compared_rows = false;
  RowComparison rows;
  int64_t row_length = 0;
  DumpRowStats a, b;  // each side's statistics of the step
  // Why the dumps could not be used (an unreadable file); the rest is unset.
  std::string error;
};

// Returns how cells `x` and `y` differ at step `step_index` according to
// their dumps (`CellResult::dump` first, else the file at `dump_path`,
// relative paths resolved against `dump_base_dir`), or nothing when a side
// has neither.
std::optional<LogitDifference> CompareStepLogits(const CellResult& x, const CellResult& y,
                                                 int step_index, const std::string& dump_base_dir);

// Returns the difference for a person: "logits: max 3 ulp, 1 of 256 values
// differ, max |a - b| 2.4e-07, argmax 17 on both", or with statistics only
// "logits (statistics only): argmax 17 vs 18, max |logit| 12.5 vs 12.25".
std::string DescribeLogitDifference(const LogitDifference& d);

}  // namespace samebits::harness
