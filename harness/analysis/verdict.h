// The verdict on a judged run, in one place: the gate's exit code, the
// status the store records and the headline of every report all follow
// from RunVerdict, so none of them can say PASS where another does not.
#pragma once

#include "harness/analysis/results.h"

namespace samebits::harness {

enum class Verdict : uint8_t {
  kPass,            // something was checked, and everything agrees
  kFail,            // a cell failed, or the diagnosis is not "all agree"
  kNothingChecked,  // no cell ran (every one UNSUPPORTED): a run that could not be made
};

// Returns the verdict on a judged run: FAIL when any cell fails or the
// diagnosis is anything but all-agree; else NOTHING-CHECKED when no cell
// passed; else PASS.
Verdict RunVerdict(const RunResult& run);

// Returns the status the store records: "PASS", "FAIL" or "UNCHECKED".
const char* VerdictName(Verdict verdict);

// Returns the gate's exit code: 0 PASS, 1 FAIL, 2 NOTHING-CHECKED.
int GateExitCode(Verdict verdict);

// Returns whether the gate passes (RunVerdict is PASS).
bool GatePasses(const RunResult& run);

// Returns the number of PASS cells.
int CountPassing(const RunResult& run);

}  // namespace samebits::harness
