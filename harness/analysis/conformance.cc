// Conformance measurements (conformance.h).
#include "harness/analysis/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "harness/analysis/bench_statistics.h"
#include "harness/analysis/ulp.h"

namespace samebits::harness {
namespace {

enum class FloatClass : uint8_t { kFinite, kNaN, kPlusInf, kMinusInf };

FloatClass Classify(float x) {
  if (std::isnan(x)) return FloatClass::kNaN;
  if (std::isinf(x)) return x > 0 ? FloatClass::kPlusInf : FloatClass::kMinusInf;
  return FloatClass::kFinite;
}

// Returns log softmax(row) in double, computed stably (the maximum
// subtracted before exp), or nothing when no softmax is defined: a NaN or
// +infinity in the row, or no finite element. -infinity has probability 0.
std::optional<std::vector<double>> LogSoftmax(std::span<const float> row) {
  double max = -std::numeric_limits<double>::infinity();
  for (const float x : row) {
    const FloatClass c = Classify(x);
    if (c == FloatClass::kNaN || c == FloatClass::kPlusInf) return std::nullopt;
    if (c == FloatClass::kFinite) max = std::max(max, static_cast<double>(x));
  }
  if (std::isinf(max)) return std::nullopt;  // only -infinity
  double sum = 0;
  for (const float x : row) {
    if (std::isfinite(x)) sum += std::exp(static_cast<double>(x) - max);
  }
  const double log_sum = std::log(sum);  // sum >= 1: the maximum contributes exp(0)
  std::vector<double> out(row.size());
  for (size_t i = 0; i < row.size(); ++i) {
    out[i] = std::isfinite(row[i]) ? static_cast<double>(row[i]) - max - log_sum
                                   : -std::numeric_limits<double>::infinity();
  }
  return out;
}

// Returns KL(P || Q) from the two log-softmax rows, clamped at 0 (it is
// never negative; rounding can leave a tiny negative for rows that are
// nearly equal).
double KlDivergence(const std::vector<double>& log_p, const std::vector<double>& log_q) {
  double kl = 0;
  for (size_t i = 0; i < log_p.size(); ++i) {
    const double p = std::exp(log_p[i]);
    if (p == 0) continue;             // 0 * log(0 / q) = 0
    kl += p * (log_p[i] - log_q[i]);  // +infinity when q is 0 and p is not
  }
  return std::max(kl, 0.0);
}

// Returns the indices of the `k` largest non-NaN values of `row`, ties to
// the lower index (fewer when the row has fewer non-NaN values).
std::vector<int> TopIndices(std::span<const float> row, int k) {
  std::vector<int> indices;
  for (size_t i = 0; i < row.size(); ++i) {
    if (!std::isnan(row[i])) indices.push_back(static_cast<int>(i));
  }
  const auto larger_first = [&](int x, int y) {
    const float vx = row[static_cast<size_t>(x)], vy = row[static_cast<size_t>(y)];
    return vx > vy || (vx == vy && x < y);
  };
  const size_t count = std::min(indices.size(), static_cast<size_t>(k));
  std::partial_sort(indices.begin(), indices.begin() + static_cast<std::ptrdiff_t>(count),
                    indices.end(), larger_first);
  indices.resize(count);
  return indices;
}

template <typename T>
T NearestRank(std::vector<T>& values, double percentile) {
  if (values.empty()) return T{};
  const auto n = static_cast<double>(values.size());
  auto rank = static_cast<size_t>(std::ceil(percentile / 100.0 * n));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   values.end());
  return values[rank - 1];
}

std::string Scientific(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", x);
  return text;
}

// Returns a logit for a verdict line: "%.6g", and "nan" for every NaN
// (printf writes "-nan" for one with its sign bit set, as x86 makes them).
std::string Short(float x) {
  if (std::isnan(x)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", static_cast<double>(x));
  return text;
}

// Returns where and why a deviating step deviates: "step 3, token 1234
// (A 1.5, B 2.25): NMSE 2.10e-03 > 1.00e-04".
std::string DescribeDeviation(const StepConformance& s) {
  std::string where = "step " + std::to_string(s.step_index);
  if (s.worst_token >= 0) {
    where += ", token " + std::to_string(s.worst_token) + " (A " + Short(s.worst_a) + ", B " +
             Short(s.worst_b) + ")";
  }
  return where + ": " + s.why;
}

}  // namespace

double NearestRankPercentile(std::vector<double>& values, double percentile) {
  return NearestRank(values, percentile);
}

uint64_t NearestRankPercentile(std::vector<uint64_t>& values, double percentile) {
  return NearestRank(values, percentile);
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Sets the margin, the disagreement at A's two largest and the stability of
// `s` (conformance.h), `top_a` being A's largest non-NaN indices in order.
void MeasureStability(std::span<const float> a, std::span<const float> b,
                      const std::vector<int>& top_a, StepConformance* s) {
  // |a - b| in double; an infinity on both sides of the same sign is no
  // disagreement (inf - inf would be NaN).
  const auto disagreement = [&](int i) {
    const auto k = static_cast<size_t>(i);
    if (a[k] == b[k]) return 0.0;
    return std::fabs(static_cast<double>(a[k]) - static_cast<double>(b[k]));
  };
  if (top_a.empty()) {  // A's row is all NaN: no margin, nothing to keep stable
    s->margin = s->top_disagreement = kNaN;
  } else if (top_a.size() == 1) {
    s->margin = std::numeric_limits<double>::infinity();
    s->top_disagreement = disagreement(top_a[0]);
  } else {
    s->top2_a = top_a[1];
    const auto t1 = static_cast<size_t>(top_a[0]), t2 = static_cast<size_t>(top_a[1]);
    s->margin = a[t1] == a[t2] ? 0.0 : static_cast<double>(a[t1]) - static_cast<double>(a[t2]);
    s->top_disagreement = disagreement(top_a[0]) + disagreement(top_a[1]);
  }
  if (!s->top1_agrees) {
    s->stability = Stability::kUnstable;
  } else if (!(s->top_disagreement < s->margin)) {  // NaN cannot be shown stable
    s->stability = Stability::kFragile;
  } else {
    s->stability = Stability::kStable;
  }
}

// Measures everything but the ULP percentiles, and appends each element's
// ULP distance to `ulps`.
StepConformance Measure(int step_index, std::span<const float> a, std::span<const float> b,
                        const ConformanceThreshold& threshold, std::vector<uint64_t>* ulps) {
  if (a.size() != b.size()) {
    throw std::invalid_argument("step " + std::to_string(step_index) +
                                ": logit rows of different lengths (" + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + ")");
  }
  if (a.empty()) {
    throw std::invalid_argument("step " + std::to_string(step_index) + ": empty logit rows");
  }
  StepConformance s;
  s.step_index = step_index;
  s.elements = static_cast<int64_t>(a.size());
  double squared_error = 0, squared_a = 0;
  int64_t first_mismatch = -1, largest_diff_at = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    const FloatClass ca = Classify(a[i]), cb = Classify(b[i]);
    ulps->push_back(harness::UlpDistance(a[i], b[i]));
    if (ca != cb) {  // one side non-finite, or two different kinds
      ++s.nonfinite_mismatches;
      if (first_mismatch < 0) first_mismatch = static_cast<int64_t>(i);
    }
    if (ca != FloatClass::kFinite || cb != FloatClass::kFinite) continue;
    const double da = a[i], diff = da - static_cast<double>(b[i]);
    squared_error += diff * diff;
    squared_a += da * da;
    if (largest_diff_at < 0 || std::fabs(diff) > s.max_abs_diff) {  // ties keep the lower
      s.max_abs_diff = std::fabs(diff);
      largest_diff_at = static_cast<int64_t>(i);
    }
  }
  // Rows equal wherever both are finite have no worst element to name.
  s.worst_token = first_mismatch >= 0 ? first_mismatch : s.max_abs_diff > 0 ? largest_diff_at : -1;
  if (s.worst_token >= 0) {
    s.worst_a = a[static_cast<size_t>(s.worst_token)];
    s.worst_b = b[static_cast<size_t>(s.worst_token)];
  }
  int64_t finite_pairs = 0;
  for (size_t i = 0; i < a.size(); ++i) finite_pairs += std::isfinite(a[i]) && std::isfinite(b[i]);
  if (finite_pairs == 0 || s.nonfinite_mismatches > 0) {
    // Over no finite pair, or beside values non-finite on one side only,
    // a sum over the finite pairs would read as agreement (an all-NaN pair
    // once printed NMSE 0 and max |a - b| 0 beside DEVIATES): not defined.
    s.nmse = kNaN;
    if (finite_pairs == 0) s.max_abs_diff = kNaN;
    if (s.nonfinite_mismatches > 0) s.max_abs_diff = std::numeric_limits<double>::infinity();
  } else if (squared_error == 0) {
    s.nmse = 0;
  } else {
    s.nmse = squared_a > 0 ? squared_error / squared_a : std::numeric_limits<double>::infinity();
  }
  const std::optional<std::vector<double>> log_a = LogSoftmax(a), log_b = LogSoftmax(b);
  s.kl_divergence = (log_a && log_b) ? KlDivergence(*log_a, *log_b) : kNaN;
  s.top1_a = harness::ArgMax(a);
  s.top1_b = harness::ArgMax(b);
  s.top1_agrees = s.top1_a == s.top1_b;
  const auto t1 = static_cast<size_t>(s.top1_a);
  s.p_a_top1 = log_a ? std::exp((*log_a)[t1]) : kNaN;
  s.p_b_top1 = log_b ? std::exp((*log_b)[t1]) : kNaN;
  s.delta_p = s.p_b_top1 - s.p_a_top1;  // NaN when either is
  const std::vector<int> top_a = TopIndices(a, kTopOverlapCount);
  const std::vector<int> top_b = TopIndices(b, kTopOverlapCount);
  s.top_count = static_cast<int>(top_a.size());
  for (const int i : top_a) {
    if (std::find(top_b.begin(), top_b.end(), i) != top_b.end()) ++s.top_overlap;
  }
  MeasureStability(a, b, top_a, &s);
  if (s.nonfinite_mismatches > 0) {
    s.deviates = true;
    s.why = std::to_string(s.nonfinite_mismatches) + " of " + std::to_string(s.elements) +
            " values non-finite on one side only";
  } else if (!(s.nmse <= threshold.max_nmse)) {  // NaN deviates too
    s.deviates = true;
    s.why = "NMSE " + Scientific(s.nmse) + " > " + Scientific(threshold.max_nmse);
  }
  return s;
}

}  // namespace

namespace {

// Returns the percentiles of a non-empty list of distances (reordered).
UlpPercentiles Percentiles(std::vector<uint64_t>& ulps) {
  UlpPercentiles p;
  p.max = *std::max_element(ulps.begin(), ulps.end());
  p.p99 = NearestRankPercentile(ulps, 99);
  p.p50 = NearestRankPercentile(ulps, 50);
  return p;
}

}  // namespace

StepConformance MeasureStep(int step_index, std::span<const float> a, std::span<const float> b,
                            const ConformanceThreshold& threshold) {
  std::vector<uint64_t> ulps;
  StepConformance s = Measure(step_index, a, b, threshold, &ulps);
  s.ulp = Percentiles(ulps);
  return s;
}

const StepConformance& ConformanceMeter::AddStep(int step_index, std::span<const float> a,
                                                 std::span<const float> b) {
  std::vector<uint64_t> ulps;
  StepConformance s = Measure(step_index, a, b, threshold_, &ulps);
  ulps_.insert(ulps_.end(), ulps.begin(), ulps.end());
  s.ulp = Percentiles(ulps);
  steps_.push_back(std::move(s));
  return steps_.back();
}

ConformanceSummary ConformanceMeter::Summary() const {
  ConformanceSummary sum;
  sum.steps = static_cast<int>(steps_.size());
  if (steps_.empty()) return sum;
  std::vector<double> klds, delta_ps, nmses, overlaps;
  // A step whose NMSE or max |a - b| is not defined (NaN) leaves the
  // summary's undefined too, never hidden by std::max.
  const auto larger = [](double x, double y) {
    return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN()
                                          : std::max(x, y);
  };
  for (const StepConformance& s : steps_) {
    sum.max_nmse = larger(sum.max_nmse, s.nmse);
    nmses.push_back(s.nmse);
    if (!std::isnan(s.kl_divergence)) klds.push_back(s.kl_divergence);
    if (!std::isnan(s.delta_p)) delta_ps.push_back(s.delta_p);
    if (s.top1_agrees) ++sum.top1_agreements;
    overlaps.push_back(s.top_overlap);
    sum.max_abs_diff = larger(sum.max_abs_diff, s.max_abs_diff);
    if (s.stability == Stability::kFragile) ++sum.fragile_steps;
    if (s.stability == Stability::kUnstable) ++sum.unstable_steps;
    sum.stability = std::max(sum.stability, s.stability);  // the enum is ordered by severity
    if (s.deviates && !sum.first_deviating_step) {
      sum.first_deviating_step = s.step_index;
      if (s.worst_token >= 0) sum.first_deviating_token = s.worst_token;
      sum.first_deviation = DescribeDeviation(s);
    }
  }
  const Estimate nmse = MeanWithError(nmses);
  sum.mean_nmse = nmse.value;
  sum.mean_nmse_se = nmse.se;
  const Estimate overlap = MeanWithError(overlaps);
  sum.top_overlap_mean = overlap.value;
  sum.top_overlap_mean_se = overlap.se;
  sum.top1_percent = PercentWithError(sum.top1_agreements, sum.steps);
  sum.delta_p_steps = static_cast<int>(delta_ps.size());
  sum.delta_p_mean = MeanWithError(delta_ps);  // NaN without a defined Δp
  sum.delta_p_rms = RootMeanSquareWithError(delta_ps);
  sum.kld_steps = static_cast<int>(klds.size());
  if (klds.empty()) {
    // No step has a defined KL divergence: none is reported as 0.
    sum.kld_mean = sum.kld_mean_se = sum.kld_median = sum.kld_p99 = sum.kld_p999 = sum.kld_max =
        kNaN;
  } else {
    const Estimate kld = MeanWithError(klds);
    sum.kld_mean = kld.value;
    sum.kld_mean_se = kld.se;
    sum.kld_median = Median(klds);
    sum.kld_max = *std::max_element(klds.begin(), klds.end());
    sum.kld_p999 = NearestRankPercentile(klds, 99.9);
    sum.kld_p99 = NearestRankPercentile(klds, 99);
  }
  std::vector<uint64_t> ulps = ulps_;
  sum.ulp = Percentiles(ulps);
  return sum;
}

const char* ConformanceVerdictName(const ConformanceSummary& summary) {
  if (summary.steps == 0) return "NOT COMPARED";
  return summary.Conforms() ? "CONFORMS" : "DEVIATES";
}

const char* StabilityName(Stability stability) {
  switch (stability) {
    case Stability::kStable:
      return "stable";
    case Stability::kFragile:
      return "fragile";
    case Stability::kUnstable:
      return "unstable";
  }
  return "?";
}

std::string ConformanceVerdictLine(const ConformanceSummary& summary) {
  if (summary.steps == 0) return "NOT COMPARED";
  const std::string of = " of " + std::to_string(summary.steps) + " steps";
  std::string stability = StabilityName(summary.stability);
  if (summary.stability == Stability::kUnstable) {
    stability += ": the argmax moved at " + std::to_string(summary.unstable_steps) + of;
    if (summary.fragile_steps > 0) {
      stability += ", " + std::to_string(summary.fragile_steps) + " more within their margin";
    }
  } else if (summary.stability == Stability::kFragile) {
    stability += ": " + std::to_string(summary.fragile_steps) + of + " within their margin";
  }
  if (summary.Conforms()) return "CONFORMS (" + stability + ")";
  return "DEVIATES at " + summary.first_deviation + " (" + stability + ")";
}

}  // namespace samebits::harness
