// The HTML report of `samebits bench A B`: the summary table with the
// prefill/decode split (per token, when the engine's `done` reports it),
// token identity, and an SVG plot of every timed run (one row of dots per
// side, warm-up runs hollow) with both medians marked: one panel for the
// whole run and one per known phase.
#pragma once

#include <ostream>
#include <string>

#include "harness/analysis/bench_summary.h"

namespace samebits::harness::report {

// Writes a self-contained HTML page (no scripts, no external files).
void WriteBenchHtml(const harness::BenchRecord& bench, std::ostream& out);

// Returns the SVG plot alone (an <svg> element).
std::string BenchSvg(const harness::BenchRecord& bench);

// Returns the plain-text summary table printed on stdout.
std::string BenchTable(const harness::BenchRecord& bench);

}  // namespace samebits::harness::report
