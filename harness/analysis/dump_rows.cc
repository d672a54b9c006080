// A dump's rows against their steps (dump_rows.h).
#include "harness/analysis/dump_rows.h"

#include "engine/numerics/hash.h"

namespace samebits::harness {

std::string RowHashMismatch(std::span<const float> row, const StepRecord& step) {
  const numerics::LogitHashes h = numerics::HashLogits(row);
  if (h.xxh3_64 != step.xxh3_64)
    return "xxh3_64 " + numerics::Hex16(h.xxh3_64) + " vs the step's " +
           numerics::Hex16(step.xxh3_64);
  if (h.fnv1a64 != step.fnv1a64)
    return "fnv1a64 " + numerics::Hex16(h.fnv1a64) + " vs the step's " +
           numerics::Hex16(step.fnv1a64);
  return "";
}

std::string DumpRowsMismatch(const LogitDump& dump, const std::vector<StepRecord>& steps) {
  for (size_t r = 0; r < steps.size() && static_cast<int64_t>(r) < dump.rows; ++r) {
    const std::string bad = RowHashMismatch(dump.Row(static_cast<int64_t>(r)), steps[r]);
    if (!bad.empty())
      return "row " + std::to_string(r) + " does not hash to its step (" + bad + ")";
  }
  return "";
}

}  // namespace samebits::harness
