// The statistics of `samebits bench A B`: medians, and the paired ratio B/A
// with a confidence interval. Runs are interleaved A B B A, so each A run
// has a B run next to it in time; their ratio cancels most of the machine's
// drift. The interval is a Student t-interval over the paired log-ratios
// ln(B_i / A_i), turned back into a ratio: the geometric mean of the ratios,
// exp(mean ± t(0.975, n-1) · sd / √n).
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace samebits::harness {

// Returns the median (the mean of the middle two for an even count).
// Requires a non-empty vector.
double Median(std::vector<double> values);

// Returns the two-sided 95% quantile of Student's t with `df` degrees of
// freedom (df >= 1), from a table (rounded up between its rows, so the
// interval errs wide).
double StudentT975(int df);

struct PairedRatio {
  int pairs = 0;
  double ratio = 0;  // the geometric mean of B/A over the pairs
  // The 95% interval of the ratio; absent with fewer than two pairs.
  std::optional<double> low, high;
};

// Returns the paired ratio of (a, b) times. Every time must be positive.
PairedRatio PairedRatioOf(const std::vector<std::pair<double, double>>& pairs);

}  // namespace samebits::harness
