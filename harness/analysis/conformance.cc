// Conformance measurements (conformance.h).
#include "harness/analysis/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

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

}  // namespace

double NearestRankPercentile(std::vector<double>& values, double percentile) {
  return NearestRank(values, percentile);
}

uint64_t NearestRankPercentile(std::vector<uint64_t>& values, double percentile) {
  return NearestRank(values, percentile);
}

namespace {

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
  for (size_t i = 0; i < a.size(); ++i) {
    const FloatClass ca = Classify(a[i]), cb = Classify(b[i]);
    ulps->push_back(harness::UlpDistance(a[i], b[i]));
    if (ca != cb) ++s.nonfinite_mismatches;  // one side non-finite, or two different kinds
    if (ca != FloatClass::kFinite || cb != FloatClass::kFinite) continue;
    const double da = a[i], diff = da - static_cast<double>(b[i]);
    squared_error += diff * diff;
    squared_a += da * da;
    s.max_abs_diff = std::max(s.max_abs_diff, std::fabs(diff));
  }
  int64_t finite_pairs = 0;
  for (size_t i = 0; i < a.size(); ++i) finite_pairs += std::isfinite(a[i]) && std::isfinite(b[i]);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
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
  s.kl_divergence =
      (log_a && log_b) ? KlDivergence(*log_a, *log_b) : std::numeric_limits<double>::quiet_NaN();
  s.top1_a = harness::ArgMax(a);
  s.top1_b = harness::ArgMax(b);
  s.top1_agrees = s.top1_a == s.top1_b;
  const std::vector<int> top_a = TopIndices(a, kTopOverlapCount);
  const std::vector<int> top_b = TopIndices(b, kTopOverlapCount);
  s.top_count = static_cast<int>(top_a.size());
  for (const int i : top_a) {
    if (std::find(top_b.begin(), top_b.end(), i) != top_b.end()) ++s.top_overlap;
  }
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
  std::vector<double> klds;
  double nmse_total = 0, overlap_total = 0;
  // A step whose NMSE or max |a - b| is not defined (NaN) leaves the
  // summary's undefined too, never hidden by std::max.
  const auto larger = [](double x, double y) {
    return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN()
                                          : std::max(x, y);
  };
  for (const StepConformance& s : steps_) {
    sum.max_nmse = larger(sum.max_nmse, s.nmse);
    nmse_total += s.nmse;
    if (!std::isnan(s.kl_divergence)) klds.push_back(s.kl_divergence);
    if (s.top1_agrees) ++sum.top1_agreements;
    overlap_total += s.top_overlap;
    sum.max_abs_diff = larger(sum.max_abs_diff, s.max_abs_diff);
    if (s.deviates && !sum.first_deviating_step) sum.first_deviating_step = s.step_index;
  }
  sum.mean_nmse = nmse_total / sum.steps;
  sum.top_overlap_mean = overlap_total / sum.steps;
  sum.kld_steps = static_cast<int>(klds.size());
  if (klds.empty()) {
    // No step has a defined KL divergence: none is reported as 0.
    sum.kld_mean = sum.kld_p99 = sum.kld_max = std::numeric_limits<double>::quiet_NaN();
  } else {
    double total = 0;
    for (const double k : klds) total += k;
    sum.kld_mean = total / static_cast<double>(klds.size());
    sum.kld_max = *std::max_element(klds.begin(), klds.end());
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

}  // namespace samebits::harness
