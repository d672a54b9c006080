// The verdict on a judged run (verdict.h).
#include "harness/analysis/verdict.h"

#include <algorithm>

namespace samebits::harness {

int CountPassing(const RunResult& run) {
  return static_cast<int>(
      std::count_if(run.cells.begin(), run.cells.end(),
                    [](const CellResult& c) { return c.code == ResultCode::kPass; }));
}

Verdict RunVerdict(const RunResult& run) {
  if (run.diagnosis.kind != Diagnosis::Kind::kAllAgree) return Verdict::kFail;
  for (const CellResult& c : run.cells) {
    if (IsFailure(c.code)) return Verdict::kFail;
  }
  return CountPassing(run) > 0 ? Verdict::kPass : Verdict::kNothingChecked;
}

namespace {

// Each verdict's stored status and the gate's exit code for it.
struct VerdictInfo {
  Verdict verdict;
  const char* name;
  int exit_code;
};
constexpr VerdictInfo kVerdicts[] = {
    {Verdict::kPass, "PASS", 0},
    {Verdict::kFail, "FAIL", 1},
    {Verdict::kNothingChecked, "UNCHECKED", 2},
};

const VerdictInfo& Info(Verdict verdict) {
  for (const VerdictInfo& info : kVerdicts) {
    if (info.verdict == verdict) return info;
  }
  return kVerdicts[1];  // unreachable: every verdict has a row
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  return Info(verdict).name;
}

int GateExitCode(Verdict verdict) {
  return Info(verdict).exit_code;
}

bool GatePasses(const RunResult& run) {
  return RunVerdict(run) == Verdict::kPass;
}

}  // namespace samebits::harness
