#include "engine/kernels/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/platform/weight_memory.h"

namespace samebits::kernels {
namespace {

// Returns the wrapping sum of `n` words. The slice is read as eight
// interleaved streams with a prefetch 512 bytes ahead in each, the way a
// GEMV reads several runs of weight rows at once (four today, eight when
// this was written): one stream alone leaves memory-level parallelism
// unused on many machines (measured here: about 2 GB/s for one stream
// against 4 GB/s for eight), and the probe is meant as the ceiling for that
// GEMV. It stays as it is so that its figures compare across runs; on an
// AMD Zen 5 the four-run GEMV itself reads long matrices a little faster
// than it (BENCHMARKS.md run 17). Integer sums are exact in any order.
uint64_t SumWords(const uint64_t* p, size_t n) {
  constexpr size_t kStreams = 8;
  constexpr size_t kLine = 8;  // words per 64-byte step
  const size_t part = n / kStreams / kLine * kLine;
  uint64_t acc[kStreams] = {};
  for (size_t i = 0; i < part; i += kLine) {
    for (size_t s = 0; s < kStreams; ++s) {
      const uint64_t* q = p + s * part + i;
      __builtin_prefetch(q + 64);
      acc[s] += q[0] + q[1] + q[2] + q[3] + q[4] + q[5] + q[6] + q[7];
    }
  }
  uint64_t sum = 0;
  for (size_t i = kStreams * part; i < n; ++i) sum += p[i];
  for (uint64_t v : acc) sum += v;
  return sum;
}

void CheckRepeats(int repeats) {
  if (repeats < 1) {
    throw std::invalid_argument("bandwidth probe: repeats must be >= 1, got " +
                                std::to_string(repeats));
  }
}

// Returns the bounds of thread `t`'s slice of `words` words split among
// `n_threads`: equal slices, the last taking the remainder.
void Slice(size_t words, int n_threads, int64_t t, size_t* begin, size_t* end) {
  const size_t per_thread = words / static_cast<size_t>(n_threads);
  *begin = static_cast<size_t>(t) * per_thread;
  *end = t + 1 == n_threads ? words : *begin + per_thread;
}

}  // namespace

ReadBandwidthProbe::ReadBandwidthProbe(threads::ThreadPool& pool, size_t bytes) {
  if (bytes < 4096) {
    throw std::invalid_argument("bandwidth probe: buffer of " + std::to_string(bytes) +
                                " bytes is too small (at least 4096)");
  }
  words_ = bytes / sizeof(uint64_t);
  // Memory of the kind weights live in (huge pages where the kernel gives
  // them), so that the probe is the ceiling for reading weights, not for
  // reading small pages. Not initialised: each slice is first written by
  // the thread that reads it, so its pages land near that thread.
  buffer_ = platform::AllocateWeightMemory(words_ * sizeof(uint64_t));
  uint64_t* data = static_cast<uint64_t*>(buffer_.get());
  const int n_threads = pool.size();
  pool.ParallelFor(n_threads, [&](int64_t t, int) {
    size_t b = 0;
    size_t e = 0;
    Slice(words_, n_threads, t, &b, &e);
    for (size_t i = b; i < e; ++i) data[i] = i * 0x9e3779b97f4a7c15ull;
  });
}

double ReadBandwidthProbe::Measure(threads::ThreadPool& pool, int repeats) {
  CheckRepeats(repeats);
  const uint64_t* data = static_cast<const uint64_t*>(buffer_.get());
  const int n_threads = pool.size();
  // The sums are written out so the reads cannot be optimised away.
  std::vector<uint64_t> sinks(static_cast<size_t>(n_threads));
  std::vector<double> rates;
  rates.reserve(static_cast<size_t>(repeats));
  for (int rep = 0; rep < repeats; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(n_threads, [&](int64_t t, int) {
      size_t b = 0;
      size_t e = 0;
      Slice(words_, n_threads, t, &b, &e);
      sinks[static_cast<size_t>(t)] += SumWords(data + b, e - b);
    });
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    rates.push_back(static_cast<double>(words_ * sizeof(uint64_t)) / seconds.count() / 1e9);
  }
  volatile uint64_t keep = 0;
  for (uint64_t s : sinks) keep = keep + s;
  std::sort(rates.begin(), rates.end());
  const size_t mid = rates.size() / 2;
  return rates.size() % 2 ? rates[mid] : (rates[mid - 1] + rates[mid]) / 2.0;
}

double MeasureReadBandwidthGBs(threads::ThreadPool& pool, size_t bytes, int repeats) {
  CheckRepeats(repeats);  // before allocating the buffer
  ReadBandwidthProbe probe(pool, bytes);
  return probe.Measure(pool, repeats);
}

}  // namespace samebits::kernels
