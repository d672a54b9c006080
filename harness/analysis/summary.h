// Plain-text summaries of a run for the terminal, in the manner of lit: the
// cells that failed with their reasons, then counts grouped by result code,
// then the diagnosis.
#pragma once

#include <map>
#include <string>

#include "harness/analysis/results.h"

namespace samebits::harness {

// Returns the number of cells per result code, in the codes' order.
std::map<ResultCode, int> CountByCode(const RunResult& run);

// Returns the summary printed at the end of `samebits run` and `gate`.
// With `diagnose`, the diagnosis follows the counts.
std::string FormatSummary(const RunResult& run, bool diagnose);

// Returns one run's cells and steps as a table (`samebits show`).
std::string FormatRunDetails(const RunResult& run, bool with_steps);

}  // namespace samebits::harness
