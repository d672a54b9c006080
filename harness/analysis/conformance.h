// Conformance across engines: how close two engines' logits are, step by
// step, measured with stated tolerances (DESIGN.md section 3a). Identity
// within one engine is bits and hashes (compare.h); this is the other kind
// of comparison and the two are never mixed.
//
// Side A is the reference (our reference pass, or whichever engine the user
// names first) and side B the engine measured against it. Per step:
//   - NMSE = sum (a - b)^2 / sum a^2, as llama.cpp's `test-backend-ops`
//     defines it (there in float; here in double, over the elements finite in
//     both rows);
//   - the KL divergence KL(P_A || P_B) of the two softmax distributions, in
//     nats, as `llama-perplexity --kl-divergence` reports it (the base
//     model's distribution first); the softmax is computed stably in double
//     (the row's maximum subtracted before exp);
//   - top-1 agreement (the argmax of each row, ties to the lower index and
//     NaN never chosen, as the protocol's `argmax`) and top-5 overlap (how
//     many of A's five largest are among B's, ties again to the lower index);
//   - max |a - b| and ULP distances (p50, p99, max; report/ulp.h).
// A step deviates when its NMSE exceeds the threshold (default 1e-4, the
// limit llama.cpp's `test-llama-archs` uses), when the NMSE is undefined, or
// when an element is non-finite in one row and not the same in the other.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace samebits::harness {

// The tolerance of one pair of engines.
struct ConformanceThreshold {
  double max_nmse = 1e-4;
};

// How many of each row's largest values the overlap counts.
inline constexpr int kTopOverlapCount = 5;

// ULP distances at three ranks (nearest rank; report/ulp.h's UlpDistance,
// a NaN against a number counting as harness::kUlpNaNMismatch).
struct UlpPercentiles {
  uint64_t p50 = 0, p99 = 0, max = 0;
};

// The measurements of one step (one output row of each side).
struct StepConformance {
  int step_index = 0;
  int64_t elements = 0;  // the row length (the vocabulary)
  // sum (a - b)^2 / sum a^2 over the elements finite in both rows; 0 when
  // both sums are 0, +infinity when only the denominator is; NaN (not
  // defined) when no element is finite in both rows or some element is
  // non-finite in one row only.
  double nmse = 0;
  // KL(P_A || P_B) in nats, never negative (rounding below 0 is clamped);
  // NaN when a row holds NaN or +infinity, or only -infinity, so that no
  // softmax is defined; +infinity when B gives probability 0 where A does not.
  double kl_divergence = 0;
  int top1_a = 0, top1_b = 0;
  bool top1_agrees = true;
  int top_count = 0;    // min(kTopOverlapCount, non-NaN elements of A's row)
  int top_overlap = 0;  // how many of A's top `top_count` are among B's
  // Over the elements finite in both rows; NaN when there are none, +inf
  // when an element is non-finite in one row only.
  double max_abs_diff = 0;
  UlpPercentiles ulp;  // over every element of the row
  // Elements that are non-finite in one row and not the same non-finite
  // class (NaN, +inf, -inf) in the other.
  int64_t nonfinite_mismatches = 0;
  bool deviates = false;
  std::string why;  // for a deviating step: "NMSE 2.1e-03 > 1e-04", ...
};

// Returns the measurements of one step. Throws std::invalid_argument when
// the rows differ in length or are empty.
StepConformance MeasureStep(int step_index, std::span<const float> a, std::span<const float> b,
                            const ConformanceThreshold& threshold);

// Returns the `percentile`-th (0 < percentile <= 100) value of `values` by
// nearest rank (the value at rank ceil(percentile / 100 * n) of the sorted
// values), or 0 for an empty list. Reorders `values`.
double NearestRankPercentile(std::vector<double>& values, double percentile);
uint64_t NearestRankPercentile(std::vector<uint64_t>& values, double percentile);

// The summary of every measured step of one pair.
struct ConformanceSummary {
  int steps = 0;
  double max_nmse = 0, mean_nmse = 0;
  // Over the steps whose KL divergence is defined (`kld_steps` of them);
  // NaN when none is. `max_nmse` and `max_abs_diff` are NaN when a step's is.
  int kld_steps = 0;
  double kld_mean = 0, kld_p99 = 0, kld_max = 0;
  int top1_agreements = 0;  // steps whose argmaxes agree
  double top_overlap_mean = 0;
  double max_abs_diff = 0;
  UlpPercentiles ulp;  // over every element of every step
  // The first deviating step's index, when one deviates.
  std::optional<int> first_deviating_step;
  bool Conforms() const { return steps > 0 && !first_deviating_step; }
};

// Measures a pair step by step and summarizes it.
class ConformanceMeter {
 public:
  explicit ConformanceMeter(ConformanceThreshold threshold) : threshold_(threshold) {}

  // Measures one more step (see MeasureStep) and returns its measurements.
  const StepConformance& AddStep(int step_index, std::span<const float> a,
                                 std::span<const float> b);

  const std::vector<StepConformance>& Steps() const { return steps_; }
  const ConformanceThreshold& Threshold() const { return threshold_; }

  // Returns the summary of the steps added so far.
  ConformanceSummary Summary() const;

 private:
  ConformanceThreshold threshold_;
  std::vector<StepConformance> steps_;
  std::vector<uint64_t> ulps_;  // every element's ULP distance, every step
};

// Returns "CONFORMS" or "DEVIATES" (the verdict's stable name, as reports
// write it), "NOT COMPARED" when no step was measured.
const char* ConformanceVerdictName(const ConformanceSummary& summary);

}  // namespace samebits::harness
