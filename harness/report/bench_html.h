// The HTML report of `samebits bench A B`: the summary table with the
// prefill/decode split (per token, when the engine's `done` reports it),
// token identity, and an SVG plot of every timed run (one row of dots per
// side, warm-up runs hollow) with both medians marked: one panel for the
// whole run and one per known phase.
#pragma once

#include <ostream>
#include <string>

#include "harness/store/bench_records.h"

namespace samebits::harness::report {

// Writes a self-contained HTML page (no scripts, no external files).
void WriteBenchHtml(const store::BenchRecord& bench, std::ostream& out);

// Returns the SVG plot alone (an <svg> element).
std::string BenchSvg(const store::BenchRecord& bench);

// Returns the plain-text summary table printed on stdout.
std::string BenchTable(const store::BenchRecord& bench);

}  // namespace samebits::harness::report
