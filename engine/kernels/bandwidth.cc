#include "engine/kernels/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace samebits::kernels {
namespace {

// Returns the wrapping sum of `n` words. Eight independent accumulators keep
// the loads, not an add chain, the bottleneck; integer sums are exact in any
// order, so the compiler is free to vectorise this loop too.
uint64_t SumWords(const uint64_t* p, size_t n) {
  uint64_t a[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) a[j] += p[i + static_cast<size_t>(j)];
  }
  for (; i < n; ++i) a[0] += p[i];
  uint64_t s = 0;
  for (uint64_t v : a) s += v;
  return s;
}

}  // namespace

double MeasureReadBandwidthGBs(threads::ThreadPool& pool, size_t bytes, int repeats) {
  if (bytes < 4096) {
    throw std::invalid_argument("bandwidth probe: buffer of " + std::to_string(bytes) +
                                " bytes is too small (at least 4096)");
  }
  if (repeats < 1) {
    throw std::invalid_argument("bandwidth probe: repeats must be >= 1, got " +
                                std::to_string(repeats));
  }
  const int n_threads = pool.size();
  const size_t words = bytes / sizeof(uint64_t);
  const size_t per_thread = words / static_cast<size_t>(n_threads);
  // Not value-initialised: each slice is first written by the thread that
  // reads it, so its pages land near that thread.
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
  uint64_t* data = buffer.get();
  auto slice = [&](int64_t t, size_t* begin, size_t* end) {
    *begin = static_cast<size_t>(t) * per_thread;
    *end = t + 1 == n_threads ? words : *begin + per_thread;
  };
  pool.ParallelFor(n_threads, [&](int64_t t, int) {
    size_t b = 0;
    size_t e = 0;
    slice(t, &b, &e);
    for (size_t i = b; i < e; ++i) data[i] = i * 0x9e3779b97f4a7c15ull;
  });

  // The sums are written out so the reads cannot be optimised away.
  std::vector<uint64_t> sinks(static_cast<size_t>(n_threads));
  std::vector<double> rates;
  rates.reserve(static_cast<size_t>(repeats));
  for (int rep = 0; rep < repeats; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(n_threads, [&](int64_t t, int) {
      size_t b = 0;
      size_t e = 0;
      slice(t, &b, &e);
      sinks[static_cast<size_t>(t)] += SumWords(data + b, e - b);
    });
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    rates.push_back(static_cast<double>(words * sizeof(uint64_t)) / seconds.count() / 1e9);
  }
  volatile uint64_t keep = 0;
  for (uint64_t s : sinks) keep = keep + s;
  std::sort(rates.begin(), rates.end());
  const size_t mid = rates.size() / 2;
  return rates.size() % 2 ? rates[mid] : (rates[mid - 1] + rates[mid]) / 2.0;
}

}  // namespace samebits::kernels
