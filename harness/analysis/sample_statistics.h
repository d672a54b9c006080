// Means with their standard errors, as `llama-perplexity --kl-divergence`
// reports them (its figures "mean ± uncertainty"), for the statistics of
// `samebits conform` over the steps of a pair (conformance.h).
//
// The standard error of a mean is the sample standard deviation (divisor
// n - 1, Bessel's correction) over sqrt(n): se = sqrt(sum (x - mean)^2 /
// (n - 1)) / sqrt(n). llama.cpp writes the same estimator as
// sqrt((mean(x^2) - mean^2) / (n - 1)); here it is computed in two passes
// (the mean first), which does not lose the digits that formula does when
// the spread is small beside the mean.
#pragma once

#include <span>

namespace samebits::harness {

// A figure with its standard error.
struct Estimate {
  double value = 0;
  double se = 0;
};

// Returns the mean of `values` and its standard error (above). The mean is
// NaN for no value; the standard error is NaN with fewer than two values
// (one value says nothing of the spread) or when a value is not finite.
Estimate MeanWithError(std::span<const double> values);

// Returns the root mean square of `values`, sqrt(mean(x^2)), and its
// standard error by the delta method, as llama.cpp's RMS Δp:
// se(rms) = se(mean(x^2)) / (2 rms), se(mean(x^2)) as MeanWithError's over
// the squares. When every value is 0 the RMS is 0 and so is its error (no
// spread), not 0 / 0. NaN as for MeanWithError.
Estimate RootMeanSquareWithError(std::span<const double> values);

// Returns the percentage of `hits` among `n` trials, 100 p, and its
// binomial standard error 100 sqrt(p (1 - p) / n). NaN for no trial.
Estimate PercentWithError(int hits, int n);

}  // namespace samebits::harness
