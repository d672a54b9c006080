// Means with their standard errors (sample_statistics.h).
#include "harness/analysis/sample_statistics.h"

#include <cmath>
#include <limits>
#include <vector>

namespace samebits::harness {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

Estimate MeanWithError(std::span<const double> values) {
  if (values.empty()) return {kNaN, kNaN};
  const auto n = static_cast<double>(values.size());
  double total = 0;
  bool finite = true;
  for (const double x : values) {
    total += x;
    finite = finite && std::isfinite(x);
  }
  const double mean = total / n;
  if (values.size() < 2 || !finite) return {mean, kNaN};
  double squares = 0;
  for (const double x : values) squares += (x - mean) * (x - mean);
  const double sample_variance = squares / (n - 1);  // Bessel's correction
  return {mean, std::sqrt(sample_variance / n)};
}

Estimate RootMeanSquareWithError(std::span<const double> values) {
  std::vector<double> squares;
  squares.reserve(values.size());
  for (const double x : values) squares.push_back(x * x);
  const Estimate mean_square = MeanWithError(squares);
  const double rms = std::sqrt(mean_square.value);
  // d sqrt(m) / dm = 1 / (2 sqrt(m)): the delta method.
  const double se = rms == 0 ? mean_square.se : mean_square.se / (2 * rms);
  return {rms, se};
}

Estimate PercentWithError(int hits, int n) {
  if (n <= 0) return {kNaN, kNaN};
  const double p = static_cast<double>(hits) / n;
  return {100 * p, 100 * std::sqrt(p * (1 - p) / n)};
}

}  // namespace samebits::harness
