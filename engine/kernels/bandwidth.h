// A STREAM-like memory read-bandwidth probe. The harness reports it beside
// decode timings, so a GEMV's GB/s can be read against what the machine can
// deliver (decode is bound by reading the weights).
#pragma once

#include <cstddef>
#include <memory>

#include "engine/threads/thread_pool.h"

namespace samebits::kernels {

// The probe's buffer, kept so that it can be read again and again: `bench`
// reads it once right after each decode run, so that a run's GB/s is set
// against what the memory gave at that moment (the hosts it runs on change
// speed within minutes).
class ReadBandwidthProbe {
 public:
  // Allocates `bytes` (weight memory: huge pages where the kernel gives
  // them) and writes every word, each slice from the `pool` thread that
  // reads it in Measure on a pool of the same size. Throws
  // std::invalid_argument when `bytes` < 4096.
  ReadBandwidthProbe(threads::ThreadPool& pool, size_t bytes);

  // Returns the median, over `repeats` timed passes, of the read bandwidth
  // in GB/s (1e9 bytes per second) of summing the buffer split into one
  // contiguous slice per thread of `pool` (any size), each read as eight
  // interleaved streams (as a GEMV reads several runs of weight rows at
  // once). Throws std::invalid_argument when `repeats` < 1.
  double Measure(threads::ThreadPool& pool, int repeats);

 private:
  std::shared_ptr<void> buffer_;
  size_t words_ = 0;
};

// Returns ReadBandwidthProbe(pool, bytes).Measure(pool, repeats): the
// median GB/s of `repeats` passes over a fresh `bytes`-sized buffer.
// `bytes` should be well above the last-level cache (e.g. 256 MiB) to
// measure DRAM rather than cache.
// Throws std::invalid_argument when `bytes` < 4096 or `repeats` < 1.
double MeasureReadBandwidthGBs(threads::ThreadPool& pool, size_t bytes, int repeats);

}  // namespace samebits::kernels
