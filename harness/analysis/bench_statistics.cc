// Bench statistics (bench_statistics.h).
#include "harness/analysis/bench_statistics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace samebits::harness {

double Median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("the median of no values");
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double StudentT975(int df) {
  static const double kTable[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                    2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                    2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                    2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) throw std::invalid_argument("Student's t needs at least one degree of freedom");
  if (df <= 30) return kTable[df - 1];
  if (df <= 40) return 2.042;  // the value at 30: wider than the true one
  if (df <= 60) return 2.021;
  if (df <= 120) return 2.000;
  return 1.980;
}

PairedRatio PairedRatioOf(const std::vector<std::pair<double, double>>& pairs) {
  PairedRatio r;
  r.pairs = static_cast<int>(pairs.size());
  if (pairs.empty()) return r;
  std::vector<double> logs;
  for (const auto& [a, b] : pairs) {
    if (!(a > 0) || !(b > 0)) throw std::invalid_argument("bench times must be positive");
    logs.push_back(std::log(b / a));
  }
  double sum = 0;
  for (double x : logs) sum += x;
  const double n = static_cast<double>(logs.size());
  const double mean = sum / n;
  r.ratio = std::exp(mean);
  if (logs.size() < 2) return r;
  double squares = 0;
  for (double x : logs) squares += (x - mean) * (x - mean);
  const double sd = std::sqrt(squares / (n - 1));
  const double half = StudentT975(static_cast<int>(logs.size()) - 1) * sd / std::sqrt(n);
  r.low = std::exp(mean - half);
  r.high = std::exp(mean + half);
  return r;
}

}  // namespace samebits::harness
