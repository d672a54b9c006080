// Fixed runs for the report tests: every result code, a divergence, hostile
// strings, raw logit dumps and both kinds of diagnosis the reports word
// differently. The hashes are made-up fixture data, not engine output.
#pragma once

#include <string>

#include "harness/analysis/results.h"
#include "harness/report/exporter.h"

namespace samebits::harness::report::testing {

// A hostile name: markup, both quotes and an ampersand.
inline constexpr const char* kHostileCheckpoint = "<script>alert(1)</script>\"quoted' & co";

// Returns a run with PASS, FAIL (cpu-t3 diverges at step 3 and has a raw
// dump), UNSUPPORTED, UNRESOLVED (a stderr tail with <, &,
// quotes and a control character) and TIMEOUT cells, diagnosed as identity
// broken. Its dumps are written by `WriteMixedRunDumps`.
RunResult MixedRun();

// Returns `run`'s report in `format`, as `samebits report` writes it.
std::string ExportToString(const RunResult& run, const std::string& format,
                           const ReportOptions& options = {});

// Writes the raw logit dumps `MixedRun` refers to (relative paths) under
// `dir`: 16 logits per row, identical except at step 3 of cpu-t3, where one
// value is 1 ulp away and another is raised to 3 ulps above the row's
// maximum, so the argmax moves from 10 to 8; steps 4 and 5 each differ in
// one value by a few ulps.
void WriteMixedRunDumps(const std::string& dir);

// Returns an all-PASS run with the libm profile whose configurations agree
// with each other but not with the stored reference, diagnosed as "math
// library differs" with two different math libraries.
RunResult MathLibraryRun();

}  // namespace samebits::harness::report::testing
