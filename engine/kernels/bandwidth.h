// A STREAM-like memory read-bandwidth probe. The harness reports it beside
// decode timings, so a GEMV's GB/s can be read against what the machine can
// deliver (decode is bound by reading the weights).
#pragma once

#include <cstddef>

#include "engine/threads/thread_pool.h"

namespace samebits::kernels {

// Returns the median, over `repeats` timed passes, of the read bandwidth in
// GB/s (1e9 bytes per second) of summing a `bytes`-sized buffer split into
// one contiguous slice per pool thread, each read as eight interleaved
// streams (as a GEMV reads several runs of weight rows at once). An untimed
// pass first touches every page (from the thread that later reads it).
// `bytes` should be well above the last-level cache (e.g. 256 MiB) to
// measure DRAM rather than cache.
// Throws std::invalid_argument when `bytes` < 4096 or `repeats` < 1.
double MeasureReadBandwidthGBs(threads::ThreadPool& pool, size_t bytes, int repeats);

}  // namespace samebits::kernels
