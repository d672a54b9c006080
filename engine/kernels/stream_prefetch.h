// Software prefetch for kernels that read their weights as one forward
// stream: the integer profile's row loops and its repacked tiles (each
// row, or each tile of sixteen rows, lies right after the one before).
// Internal header like tiling.h: include it only from a kernel file.
//
// Why: with nothing but the hardware prefetcher, one core reading one
// stream waits on memory latency. Measured on the project's Intel Xeon
// guest (2 vCPUs, AVX-512 VNNI), `samebits-engine bench --quant-dot int8`
// decode, five interleaved rounds each (BENCHMARKS.md, "Prefetching the
// integer profile's weights"): hinting the bytes 1, 2, 4 or 8 KiB ahead
// took Q4_K from 160 to 211-233 tok/s at 1 thread and Q8_0 from 117 to
// 126-132; 4 KiB was best or within noise of it at 1 and 2 threads. A hint
// never faults and only moves data, never a bit of a result, so hints past
// the end of a matrix are harmless. The distance is a tuning knob
// (`--stream-ahead-bytes`, model/tuning.h; kernels.h's StreamAheadBytes),
// 4 KiB by default: other machines want other distances.
//
// Some want none. On an AMD EPYC Zen 5 (1 thread, a 32000 x 1024 Q8_0
// matrix repacked, eight copies read in turn from DRAM, medians of 15 side
// by side, BENCHMARKS.md run 16) the hardware prefetcher alone streamed
// 26.6 GB/s and hints 4 KiB ahead 21.3; every distance from 256 B to 16
// KiB was slower than none. Q4_K's decode on the same machine still gains
// from them (`tune`: 2.16 against 2.71 ms a token). So a distance below
// one cache line, which could only hint the line being read, issues no
// hint at all.
#pragma once

#include <cstdint>

namespace samebits::kernels::internal {
// The distance SetStreamAheadBytes sets (stream_ahead.cc). Read here with
// the compiler's relaxed atomic load, inlined into the row loops: a call
// per row would cost a few per cent of a short row's time.
extern int64_t g_stream_ahead_bytes;
}  // namespace samebits::kernels::internal

namespace samebits::kernels::internal {
// Internal linkage: an inline function compiled under an ISA's flags must
// not be a weak symbol the linker could share with baseline code (the test
// kernels.IsaObjectsExportNoWeakSymbols).
namespace {

// Below this distance no hint is issued (above): the hardware prefetcher
// alone reads the stream.
inline constexpr int64_t kLeastHintedDistance = 64;

// Returns the distance the hints go ahead, or 0 when they are off (a
// distance below kLeastHintedDistance): the one place that rule is read.
inline int64_t HintedDistance() {
  const int64_t distance = __atomic_load_n(&g_stream_ahead_bytes, __ATOMIC_RELAXED);
  return distance < kLeastHintedDistance ? 0 : distance;
}

// Whether hints are on. The exact profile's GEMV over block-quantized rows
// (tiling.h's BlockLoaderSteps) asks this too: its hints go one row ahead
// whatever the distance, but a machine whose hardware prefetcher streams
// the rows faster alone turns them off with the same knob. Measured on an
// AMD EPYC Zen 5, a 32000 x 1024 Q8_0 GEMV from DRAM, eight copies in
// turn, medians of 15 side by side in one process (BENCHMARKS.md run 16):
// 22.0 -> 27.0 GB/s without them at 1 thread, 38.2 -> 45.7 at 2; Q4_K
// 15.6 -> 15.0.
inline bool StreamHintsOn() {
  return HintedDistance() != 0;
}

// Hints the `bytes` bytes that lie StreamAheadBytes() (kernels.h) after `p`, one hint
// per 64-byte line, into every cache level (locality 3): they are read
// within microseconds. Called once per row or tile read from `p`, it keeps
// the whole stream hinted: each call's first hint covers what the previous
// call's last one left. Nothing when hints are off (HintedDistance).
inline void HintStreamAhead(const void* p, int64_t bytes) {
  const int64_t distance = HintedDistance();
  if (distance == 0) return;
  const char* ahead = static_cast<const char*>(p) + distance;
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(ahead + o, 0, 3);
}

}  // namespace
}  // namespace samebits::kernels::internal
