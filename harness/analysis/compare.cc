// First differences (compare.h).
#include "harness/analysis/compare.h"

#include <algorithm>

namespace samebits::harness {

std::optional<StepDifference> FirstStepDifference(const std::vector<StepRecord>& a,
                                                  const std::vector<StepRecord>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const StepRecord& x = a[i];
    const StepRecord& y = b[i];
    std::string detail;
    if (x.kind != y.kind || x.position != y.position || x.index != y.index) {
      detail = "step " + x.kind + " at position " + std::to_string(x.position) + " vs " + y.kind +
               " at position " + std::to_string(y.position);
    } else if (x.input_token != y.input_token) {
      detail =
          "input token " + std::to_string(x.input_token) + " vs " + std::to_string(y.input_token);
    } else if (x.xxh3_64 != y.xxh3_64 || x.fnv1a64 != y.fnv1a64) {
      // The hash that differs (a difference in fnv1a64 alone is rare but
      // real, and printing two equal xxh3_64 values would hide it).
      detail = x.xxh3_64 != y.xxh3_64
                   ? "logits xxh3_64 " + Hex16(x.xxh3_64) + " vs " + Hex16(y.xxh3_64)
                   : "logits fnv1a64 " + Hex16(x.fnv1a64) + " vs " + Hex16(y.fnv1a64) +
                         " (xxh3_64 equal)";
      if (x.token != y.token) {
        detail += ", token " + std::to_string(x.token) + " vs " + std::to_string(y.token);
      }
    } else if (x.token != y.token) {
      detail = "token " + std::to_string(x.token) + " vs " + std::to_string(y.token) +
               " with equal logits (the sampler differs)";
    }
    if (!detail.empty()) return StepDifference{static_cast<int>(i), x.kind, x.position, detail};
  }
  if (a.size() != b.size()) {
    const StepRecord* at = a.size() > n ? &a[n] : &b[n];
    return StepDifference{static_cast<int>(n), at->kind, at->position,
                          std::to_string(a.size()) + " steps vs " + std::to_string(b.size())};
  }
  return std::nullopt;
}

std::optional<TraceDifference> FirstTraceDifference(const std::vector<TraceRecord>& a,
                                                    const std::vector<TraceRecord>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const TraceRecord& x = a[i];
    const TraceRecord& y = b[i];
    if (x.position != y.position || x.layer != y.layer || x.op != y.op) {
      return TraceDifference{x.position, x.layer, x.op,
                             "the traces take different paths: " + x.op + " vs " + y.op};
    }
    if (x.xxh3_64 != y.xxh3_64) {
      return TraceDifference{x.position, x.layer, x.op,
                             "xxh3_64 " + Hex16(x.xxh3_64) + " vs " + Hex16(y.xxh3_64)};
    }
  }
  if (a.size() != b.size()) {
    const TraceRecord& at = a.size() > n ? a[n] : b[n];
    return TraceDifference{
        at.position, at.layer, at.op,
        std::to_string(a.size()) + " trace records vs " + std::to_string(b.size())};
  }
  return std::nullopt;
}

}  // namespace samebits::harness
