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
//   - Δp = p_B(t) - p_A(t), the change in the probability of A's top-1
//     token t (the token A's greedy continuation feeds next, as llama.cpp's
//     Δp is that of the text's next token);
//   - top-1 agreement (the argmax of each row, ties to the lower index and
//     NaN never chosen, as the protocol's `argmax`) and top-5 overlap (how
//     many of A's five largest are among B's, ties again to the lower index);
//   - max |a - b| and ULP distances (p50, p99, max; report/ulp.h).
// A step deviates when its NMSE exceeds the threshold (default 1e-4, the
// limit llama.cpp's `test-llama-archs` uses), when the NMSE is undefined, or
// when an element is non-finite in one row and not the same in the other.
//
// Stability, after detLLM's near-ties. Let t1 and t2 be A's two largest
// logits (ties to the lower index, NaN never chosen), the margin
// m = a[t1] - a[t2], and the disagreement there
// d = |a[t1] - b[t1]| + |a[t2] - b[t2]|. A step is
//   - unstable when the argmax moved (B's top-1 is not t1);
//   - else fragile when d >= m (NaN counts as fragile): had the engines'
//     differences at t1 and t2 pointed against each other, B's margin
//     m - (a[t1] - b[t1]) + (a[t2] - b[t2]) could be 0 or less, so a token
//     flip is within the observed disagreement. d ignores the signs, so a
//     shift common to the whole row (which the softmax ignores) counts too,
//     and a tie in A (m = 0) is always fragile: its argmax is the tie rule's;
//   - else stable. A row with one non-NaN value has no t2: m = +inf.
// A pair is its worst step's: unstable, else fragile, else stable.
//
// Over the steps of a pair (ConformanceSummary), every mean comes with its
// standard error, the sample standard deviation over sqrt(n)
// (sample_statistics.h), as llama-perplexity prints "mean ± se": NMSE, KLD
// (also median, p99, p99.9 and max), Δp (mean, and RMS with the delta
// method's error se(Δp^2) / (2 RMS)), top-1 agreement as a percentage with
// the binomial error sqrt(p (1 - p) / n), and the top-5 overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/analysis/sample_statistics.h"

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

// How near a step (or, its worst step, a pair) is to a token flip (above).
enum class Stability : uint8_t { kStable, kFragile, kUnstable };

// Returns "stable", "fragile" or "unstable".
const char* StabilityName(Stability stability);

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
  // The probability of A's top-1 token under each side's softmax, and
  // delta_p = p_b_top1 - p_a_top1; NaN when a softmax is not defined.
  double p_a_top1 = 0, p_b_top1 = 0, delta_p = 0;
  // A's second largest (-1 when A has one non-NaN value), the margin
  // a[top1_a] - a[top2_a] (+inf without a second), the disagreement
  // |a - b| at top1_a plus at top2_a, and the stability they give (above).
  int top2_a = -1;
  double margin = 0, top_disagreement = 0;
  Stability stability = Stability::kStable;
  int top_count = 0;    // min(kTopOverlapCount, non-NaN elements of A's row)
  int top_overlap = 0;  // how many of A's top `top_count` are among B's
  // Over the elements finite in both rows; NaN when there are none, +inf
  // when an element is non-finite in one row only.
  double max_abs_diff = 0;
  UlpPercentiles ulp;  // over every element of the row
  // Elements that are non-finite in one row and not the same non-finite
  // class (NaN, +inf, -inf) in the other.
  int64_t nonfinite_mismatches = 0;
  // The element a report names for this step (its index, a token id): the
  // first one non-finite on one side only, else the one with the largest
  // |a - b| (ties to the lower index); -1 when there is neither (the rows
  // equal wherever both are finite). `worst_a` and `worst_b` are its values.
  int64_t worst_token = -1;
  float worst_a = 0, worst_b = 0;
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

// The summary of every measured step of one pair. Each `*_se` is the
// standard error of the mean beside it (sample_statistics.h): NaN with
// fewer than two steps or when a value is not finite.
struct ConformanceSummary {
  int steps = 0;
  double max_nmse = 0, mean_nmse = 0, mean_nmse_se = 0;
  // Over the steps whose KL divergence is defined (`kld_steps` of them);
  // NaN when none is. `max_nmse` and `max_abs_diff` are NaN when a step's is.
  // The median is the middle value (the mean of the middle two for an even
  // count); p99 and p99.9 are nearest-rank percentiles.
  int kld_steps = 0;
  double kld_mean = 0, kld_mean_se = 0, kld_median = 0, kld_p99 = 0, kld_p999 = 0, kld_max = 0;
  // Over the steps whose Δp is defined (`delta_p_steps` of them): the mean
  // of Δp and its RMS, each with its standard error; NaN when none is.
  int delta_p_steps = 0;
  Estimate delta_p_mean, delta_p_rms;
  int top1_agreements = 0;  // steps whose argmaxes agree
  Estimate top1_percent;    // 100 top1_agreements / steps, binomial error
  double top_overlap_mean = 0, top_overlap_mean_se = 0;
  double max_abs_diff = 0;
  UlpPercentiles ulp;  // over every element of every step
  int fragile_steps = 0, unstable_steps = 0;
  Stability stability = Stability::kStable;  // the worst step's
  // The first deviating step's index, when one deviates, and what a verdict
  // says of it: "step 3, token 1234 (A 1.5, B 2.25): NMSE 2.10e-03 >
  // 1.00e-04" (its worst element, StepConformance::worst_token, when there
  // is one).
  std::optional<int> first_deviating_step;
  std::optional<int64_t> first_deviating_token;
  std::string first_deviation;
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

// Returns the verdict with what a reviewer reads first: the stability, and
// for DEVIATES where and why. "CONFORMS (stable)", "CONFORMS (fragile: 2 of
// 40 steps within their margin)", "CONFORMS (unstable: the argmax moved at
// 1 of 40 steps)", "DEVIATES at step 3, token 1234 (A 1.5, B 2.25): NMSE
// 2.10e-03 > 1.00e-04 (stable)"; "NOT COMPARED" when no step was measured.
std::string ConformanceVerdictLine(const ConformanceSummary& summary);

}  // namespace samebits::harness
