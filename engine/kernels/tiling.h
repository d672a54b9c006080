// The ISA-independent part of the matrix kernels: how GEMV and GEMM split
// their outputs into register blocks and L2 tiles, and the dtype dispatch.
// Each ISA file (matmul_avx2.cc, matmul_avx512.cc, matmul_neon.cc) includes
// this header and instantiates it with its register block
// (register_block.h over the file's own vector operations).
//
// Internal header: include it only from an ISA file, and only after the
// ISA's own types are declared. Everything here sits in an anonymous
// namespace, and every instantiation names the including file's own
// (anonymous-namespace) ISA type, so each object file gets its own private
// copy compiled with its own -m flags. A shared inline or template symbol
// could otherwise be merged by the linker across ISA files and hand AVX-512
// code to a baseline caller (README.md).
//
// Blocking only runs independent outputs side by side; every output is one
// whole C1 dot product computed by the ISA's block function, so nothing here
// can change a bit. Block and tile sizes depend on shapes only.
#pragma once

#include <cstdint>
#include <utility>

#include "engine/kernels/kernels.h"
#include "engine/kernels/stream_prefetch.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::kernels::internal {
namespace {

using numerics::QuantType;

// A block-quantized loader (quant_loaders.h) prepares `kStep` weights at a
// time and has rows of `RowStride(k)` bytes; a plain loader (F32, F16, BF16)
// reads 16 elements of its row of `k` at a time.
template <class L>
concept BlockLoader = requires {
  L::kStep;
};

// Returns the distance from one weight row to the next, in `L::T`s.
template <class L>
int64_t RowStrideOf(int64_t k) {
  if constexpr (BlockLoader<L>) {
    return L::RowStride(k);
  } else {
    return k;
  }
}

// GEMV's software prefetch. The rows of a register block are contiguous, so
// the same column of the next block's rows (RJ rows further on) is exactly
// one block ahead in memory: hinting it while the current block runs keeps
// every row's first bytes in flight too, whatever the row length. The hint
// targets L2 (locality 2), which is far enough ahead to hide DRAM latency
// without evicting the rows in use or the activations from L1. Measured on
// the project's AMD EPYC (Zen 4) machine, one thread, a 32000 x 1024 GEMV
// from DRAM: BF16 5.3 -> 10.8 G weights/s, Q8_0 5.3 -> 17; the former hint
// (512 bytes ahead within the row, into L1) left the first 512 bytes of
// each block's rows cold, a quarter of a 1024-wide BF16 row. A prefetch
// never faults, so the last block's hints past the matrix are harmless; it
// only moves data, never a bit of a result.
template <class T>
inline void PrefetchNextBlock(const T* p) {
  __builtin_prefetch(p, 0, 2);
}

// Where the RJ weight rows of a register block lie, in L::T units from the
// block's first row: row j starts j * stride after it. `ahead` is how far
// past row j the row that the next block reads in row j's place starts:
// GEMV's hints go there (RowStreamTyped). Adjacent rows have stride one row
// and ahead RJ rows; GEMV's far-apart streams have ahead one row.
struct RowLayout {
  int64_t stride;
  int64_t ahead;
};

// The layout of `count` adjacent rows of `stride` each: the next block of
// as many starts right after them.
constexpr RowLayout AdjacentRows(int64_t stride, int64_t count) {
  return {stride, count * stride};
}

// The hints of one GEMV step over one row of a block, at column c: the
// same column of the row the next block reads in its place (RowLayout's
// `ahead`) into L2 (above), and this row 128 bytes further on into L1, so
// that the step after next finds its line in L1 rather than waiting on L2.
// Measured on the project's Intel Xeon guest (2 vCPUs, AVX-512),
// `samebits-engine bench` BF16 decode, seven interleaved rounds: 63.6 ->
// 67.1 tok/s at 1 thread, 119.4 -> 121.4 at 2; 256 and 1024 bytes ahead
// gave less at 2 threads, 512 nothing at either (BENCHMARKS.md, "An L1 hint
// in the GEMV rows").
template <class T>
inline void HintGemvStep(const T* row, int64_t ahead, int64_t c) {
  constexpr int64_t kNearBytes = 128;
  PrefetchNextBlock(row + ahead + c);
  __builtin_prefetch(row + c + kNearBytes / static_cast<int64_t>(sizeof(T)), 0, 3);
}

// GEMV's other software prefetch, for an ISA whose kGemvHints asks for it
// (AVX-512): one hint per 64-byte line of each stream, kRunAheadBytes
// further on in the row's own run (RowStreamTyped), into L1. The rows of a
// run lie one after another, so near a row's end the hint reaches into the
// run's next row, the one this stream reads next. Measured on an AMD EPYC
// Zen 5 (1 thread, AVX-512), a 32000 x 1024 BF16 GEMV from DRAM in 2 MiB
// pages, four copies read in turn, medians of 11 side by side in one
// process: eight runs with HintGemvStep's hints 24.5-25.4 GB/s, four runs
// with these 34.6-34.8 (the probe: 35); 512 bytes ahead gave 32.6-33.2, 2
// KiB 33.6-34.0, none 31.5-32.2, four runs with HintGemvStep's 30.4-30.7
// (BENCHMARKS.md run 17).
inline constexpr int64_t kRunAheadBytes = 1024;
template <class T>
inline void HintRunAhead(const T* p) {
  __builtin_prefetch(reinterpret_cast<const char*>(p) + kRunAheadBytes, 0, 3);
}

// The first kRunAheadBytes of a run starting at `p`, which no HintRunAhead
// covers, hinted as a work unit starts so that its streams start in flight
// together. bench's BF16 decode at 1 thread with 4 MiB units on an AMD EPYC
// Zen 5: 157.3 against 154.0 tok/s (faster in 6 of 7 interleaved rounds).
template <class T>
inline void HintRunStart(const T* p) {
  const auto* first = reinterpret_cast<const char*>(p);
  for (int64_t o = 0; o < kRunAheadBytes; o += 64) __builtin_prefetch(first + o, 0, 3);
}

// The columns of one 64-byte cache line of a row of T, in whole steps of 16.
template <class T>
constexpr int64_t LineColumns() {
  constexpr int64_t kColumns = 64 / static_cast<int64_t>(sizeof(T));
  return kColumns < 16 ? 16 : kColumns;
}

// How a register block hints the weights it will read next: not at all
// (GEMM's blocks that find their tile in L2), the next block's rows
// (HintGemvStep for plain weights, BlockLoaderSteps' hints for quantized:
// GEMM's adjacent rows, and GEMV's runs on AVX2 and NEON, whose next block
// reads each run's next row), or further on in each row's own run
// (HintRunAhead: GEMV's runs on AVX-512). Hints only move data: none can
// change a bit.
enum class Hints { kNone, kNextBlock, kRunAhead };

// GEMM keeps a tile of weight rows of about this many bytes in L2 while the
// activation rows pass over it.
constexpr int64_t kGemmWTileBytes = int64_t{256} * 1024;

// Local stand-ins for std::min, std::max and std::array: a standard inline
// or template function is a weak symbol in an unoptimised build, which the
// linker may merge with the baseline copy of another object and so hand
// ISA-flagged code to a baseline caller. These have internal linkage.
constexpr int64_t Min64(int64_t a, int64_t b) {
  return b < a ? b : a;
}
constexpr int64_t Max64(int64_t a, int64_t b) {
  return a < b ? b : a;
}
template <class T, int N>
struct FixedArray {
  T items[N];
  constexpr const T& operator[](int64_t i) const { return items[i]; }
};

// Returns a block-quantized loader's lanes s of group g, by its fused form
// where kFused asks for it (quant_loaders.h's HasFusedLanes).
template <class L, bool kFused>
auto LoaderLanes(const typename L::Group& g, int s) {
  if constexpr (kFused) {
    return L::template Lanes<true>(g, s);
  } else {
    return L::Lanes(g, s);
  }
}

// Runs the fma chains of an MI x RJ register block over rows of
// block-quantized weights (quant_loaders.h), for an ISA's register blocks:
// per row, the loader prepares kStep weights, then hands them out 16 at a
// time as the 16 lanes `acc[i][j]` chains in index order, exactly where
// 16 F32 weights would go. `A` is the ISA's vector operations: `LoadX`
// (16 activations) and `Fma(x, w, acc)`; the rows lie as `rows` says, in
// bytes, and k is a multiple of kStep.
template <class A, class L, int MI, int RJ, Hints kHints, class V>
void BlockLoaderSteps(const float* x, int64_t ldx, const uint8_t* w, int64_t k, RowLayout rows,
                      V (&acc)[MI][RJ]) {
  // The stream-ahead knob turns these hints off too (stream_prefetch.h).
  const bool hint = kHints != Hints::kNone && StreamHintsOn();
  for (int64_t c = 0; c < k; c += L::kStep) {
    typename L::Group g[RJ];
#pragma GCC unroll 16
    for (int j = 0; j < RJ; ++j) {
      if (hint) {
        // The next block's bytes for these kStep columns (or, for
        // Hints::kRunAhead, the bytes kRunAheadBytes further on in this
        // row's run), a hint every 64 bytes from the first: a fixed number
        // of hints, as a loop over the cache lines would take a varying
        // number of turns by the bytes' alignment, a branch the processor
        // cannot predict. A line these hints miss at the end is the first
        // line of the next step's (or of the next row's first step), hinted
        // there.
        constexpr int64_t kBytes = L::Offset(L::kStep);
        const uint8_t* next = w + j * rows.stride + L::Offset(c) +
                              (kHints == Hints::kRunAhead ? kRunAheadBytes : rows.ahead);
#pragma GCC unroll 8
        for (int64_t o = 0; o < kBytes; o += 64) PrefetchNextBlock(next + o);
      }
      g[j] = L::At(w + j * rows.stride, c);
    }
    if constexpr (requires { L::kGroupsInMemory; }) {
      // The loader's Lanes reads its groups' floats as broadcast operands
      // of vector instructions (quant_loaders.h, KSuperBlocks). Left to
      // itself, the compiler keeps them in registers and broadcasts each
      // with a shuffle, on the ports the lookups need; this says the
      // groups' memory may have changed here, so every read is a load.
      __asm__ volatile("" : "+m"(g));
    }
    // The kStep weights, 16 at a time; kFused picks the loader's fused
    // Lanes (the same bits, quant_loaders.h's HasFusedLanes).
    auto lanes = [&]<bool kFused>() __attribute__((always_inline)) {
#pragma GCC unroll 16
      for (int s = 0; s < L::kStep / 16; ++s) {
        V wv[RJ];
#pragma GCC unroll 16
        for (int j = 0; j < RJ; ++j) wv[j] = LoaderLanes<L, kFused>(g[j], s);
#pragma GCC unroll 16
        for (int i = 0; i < MI; ++i) {
          const V xv = A::LoadX(x + i * ldx + c + int64_t{16} * s);
#pragma GCC unroll 16
          for (int j = 0; j < RJ; ++j) acc[i][j] = A::Fma(xv, wv[j], acc[i][j]);
        }
      }
    };
    if constexpr (HasFusedLanes<L>) {
      // One test per step, not per 16 weights: every row's group must allow
      // the fused form (in practice always; a non-finite scale is the rare
      // file that takes the other copy of the loop).
      bool fused = true;
#pragma GCC unroll 16
      for (int j = 0; j < RJ; ++j) fused = fused && L::FusedLanesOk(g[j]);
      if (fused) {
        lanes.template operator()<true>();
      } else {
        lanes.template operator()<false>();
      }
    } else {
      lanes.template operator()<false>();
    }
  }
}

// A register block: the MI x RJ outputs y[i * ldy + j] = dot(x + i * ldx,
// w + j * rows.stride, k).
template <class T>
using BlockFn = void (*)(const float* x, int64_t ldx, const T* w, int64_t k, RowLayout rows,
                         float* y, int64_t ldy);

// What an ISA type `K` provides:
//   K::F32, K::F16, K::BF16   weight loaders, each with `using T` (the
//                             stored element type);
//   K::template Quant<Q>      the block-quantized loader of type Q
//                             (quant_loaders.h), when the ISA has them;
//   K::kGemvRows              weight rows per GEMV pass (a power of two);
//   K::kGemvHints             how those rows are hinted (Hints);
//   K::kMaxMi, K::kMaxRj      the largest GEMM block (activation rows x
//                             weight rows);
//   K::template kBlock<L, MI, RJ, kHints>
//                             the BlockFn for loader L, an MI x RJ block,
//                             with the software prefetch kHints names.

// Runs the remainder after RowStreamTyped's full passes: one block of R
// rows if at least R are left, then R / 2, ..., 1 (at most one block of
// each size), each over the same MI activation rows.
template <class K, class L, int MI, int R>
void RowStreamRemainder(const float* x, const typename L::T* w, int64_t k, int64_t row_begin,
                        int64_t& r, int64_t row_end, float* y, int64_t ldy) {
  if constexpr (R >= 1) {
    if (r + R <= row_end) {
      const int64_t stride = RowStrideOf<L>(k);
      K::template kBlock<L, MI, R, Hints::kNextBlock>(
          x, k, w + r * stride, k, AdjacentRows(stride, R), y + (r - row_begin), ldy);
      r += R;
    }
    RowStreamRemainder<K, L, MI, R / 2>(x, w, k, row_begin, r, row_end, y, ldy);
  }
}

// GEMV (MI = 1), and GEMM of two activation rows (MI = 2): K::kGemvRows
// weight rows at a time give that many independent prefetched streams
// (times MI fma chains); x is re-read from L1. Two rows are a decode step's
// usual share of one expert in a batch, and deserve GEMV's streams rather
// than GEMM's narrower blocks (K::kGemvRows x 2 accumulators fit every
// ISA's registers).
//
// The rows are split into K::kGemvRows equal runs, and a block takes one
// row from each run: each stream then reads one run front to back, a long
// forward stream the hardware prefetcher follows, where a block of
// adjacent rows ends every stream after one row. Measured on an AMD EPYC
// (Zen 3, AVX2, 1 thread), a 32000 x 1024 BF16 GEMV from DRAM in 2 MiB
// pages, medians of 15: 13.0 GB/s with adjacent rows, 21-22 GB/s with four
// runs (the bandwidth probe: 22.4 GB/s); BENCHMARKS.md, run 12. More runs
// are not better: on an AMD EPYC Zen 5 (AVX-512) eight read slower than four
// (HintRunAhead). Which rows a block takes never changes an output's bits:
// each is one whole C1 dot.
template <class K, class L, int MI>
void RowStreamTyped(const float* x, const typename L::T* w, int64_t k, int64_t row_begin,
                    int64_t row_end, float* y, int64_t ldy) {
  constexpr int kRows = K::kGemvRows;
  static_assert(kRows >= 1 && (kRows & (kRows - 1)) == 0, "kGemvRows must be a power of two");
  const int64_t stride = RowStrideOf<L>(k);
  const int64_t run = (row_end - row_begin) / kRows;
  const RowLayout runs{run * stride, stride};
  if constexpr (K::kGemvHints == Hints::kRunAhead) {
    for (int s = 0; s < kRows && run > 0; ++s) HintRunStart(w + (row_begin + s * run) * stride);
  }
  for (int64_t r = 0; r < run; ++r) {
    float out[MI * kRows];
    K::template kBlock<L, MI, kRows, K::kGemvHints>(x, k, w + (row_begin + r) * stride, k, runs,
                                                    out, kRows);
#pragma GCC unroll 16
    for (int i = 0; i < MI; ++i) {
#pragma GCC unroll 16
      for (int s = 0; s < kRows; ++s) y[i * ldy + s * run + r] = out[i * kRows + s];
    }
  }
  int64_t r = row_begin + kRows * run;
  RowStreamRemainder<K, L, MI, kRows / 2>(x, w, k, row_begin, r, row_end, y, ldy);
}

template <class K, class L>
void GemvTyped(const float* x, const typename L::T* w, int64_t k, int64_t row_begin,
               int64_t row_end, float* y) {
  RowStreamTyped<K, L, 1>(x, w, k, row_begin, row_end, y, 0);
}

// The table of GEMM blocks, [mi - 1][rj - 1] for the edge blocks.
template <class K, class L, int MI, int... RJ>
constexpr auto BlockRow(std::integer_sequence<int, RJ...>) {
  return FixedArray<BlockFn<typename L::T>, K::kMaxRj>{
      {K::template kBlock<L, MI, RJ + 1, Hints::kNone>...}};
}
template <class K, class L, int... MI>
constexpr auto BlockTable(std::integer_sequence<int, MI...>) {
  return FixedArray<FixedArray<BlockFn<typename L::T>, K::kMaxRj>, K::kMaxMi>{
      {BlockRow<K, L, MI + 1>(std::make_integer_sequence<int, K::kMaxRj>())...}};
}

// The full-width GEMM blocks with GEMV's software prefetch, [mi - 1].
template <class K, class L, int... MI>
constexpr auto StreamingBlocks(std::integer_sequence<int, MI...>) {
  return FixedArray<BlockFn<typename L::T>, K::kMaxMi>{
      {K::template kBlock<L, MI + 1, K::kMaxRj, Hints::kNextBlock>...}};
}

template <class K, class L>
void GemmTyped(const float* x, int64_t m, const typename L::T* w, int64_t k, int64_t row_begin,
               int64_t row_end, float* y, int64_t ldy) {
  // Two rows stream like GEMV (RowStreamTyped); no tiling is needed.
  if (m == 2) return RowStreamTyped<K, L, 2>(x, w, k, row_begin, row_end, y, ldy);
  constexpr int kMaxMi = K::kMaxMi;
  constexpr int kMaxRj = K::kMaxRj;
  static constexpr auto kBlocks = BlockTable<K, L>(std::make_integer_sequence<int, kMaxMi>());
  // The first block of activation rows is the one that reads each weight
  // tile from memory; like GEMV, it hints the next block's rows into L2 so
  // that a small batch (a decode step's few rows per expert) is not left
  // waiting on DRAM latency. The later blocks find the tile in L2.
  static constexpr auto kStreaming =
      StreamingBlocks<K, L>(std::make_integer_sequence<int, kMaxMi>());
  // A tile of weight rows (about kGemmWTileBytes) is read from memory once
  // and stays in L2 while every block of activation rows (a few KiB each,
  // kept in L1) passes over it. The tile depends on the shape only (k and
  // the dtype), never on timings.
  const int64_t stride = RowStrideOf<L>(k);
  const int64_t row_bytes = Max64(stride, 1) * static_cast<int64_t>(sizeof(typename L::T));
  const int64_t tile_r = Max64(kMaxRj, kGemmWTileBytes / row_bytes / kMaxRj * kMaxRj);
  for (int64_t r0 = row_begin; r0 < row_end; r0 += tile_r) {
    const int64_t r1 = Min64(row_end, r0 + tile_r);
    for (int64_t i = 0; i < m; i += kMaxMi) {
      const int mi = static_cast<int>(Min64(kMaxMi, m - i));
      for (int64_t r = r0; r < r1; r += kMaxRj) {
        const int rj = static_cast<int>(Min64(kMaxRj, r1 - r));
        const BlockFn<typename L::T> block =
            i == 0 && rj == kMaxRj ? kStreaming[mi - 1] : kBlocks[mi - 1][rj - 1];
        block(x + i * k, k, w + r * stride, k, AdjacentRows(stride, kMaxRj),
              y + i * ldy + (r - row_begin), ldy);
      }
    }
  }
}

// The KernelTable entry points, for ISA K.
template <class K>
void Gemv(const float* x, const void* w, DType dtype, int64_t k, int64_t row_begin, int64_t row_end,
          float* y) {
  switch (dtype) {
    case DType::kF32:
      return GemvTyped<K, typename K::F32>(x, static_cast<const float*>(w), k, row_begin, row_end,
                                           y);
    case DType::kF16:
      return GemvTyped<K, typename K::F16>(x, static_cast<const uint16_t*>(w), k, row_begin,
                                           row_end, y);
    case DType::kBF16:
      return GemvTyped<K, typename K::BF16>(x, static_cast<const uint16_t*>(w), k, row_begin,
                                            row_end, y);
  }
}

template <class K>
void Gemm(const float* x, int64_t m, const void* w, DType dtype, int64_t k, int64_t row_begin,
          int64_t row_end, float* y, int64_t ldy) {
  if (m == 1) return Gemv<K>(x, w, dtype, k, row_begin, row_end, y);
  switch (dtype) {
    case DType::kF32:
      return GemmTyped<K, typename K::F32>(x, m, static_cast<const float*>(w), k, row_begin,
                                           row_end, y, ldy);
    case DType::kF16:
      return GemmTyped<K, typename K::F16>(x, m, static_cast<const uint16_t*>(w), k, row_begin,
                                           row_end, y, ldy);
    case DType::kBF16:
      return GemmTyped<K, typename K::BF16>(x, m, static_cast<const uint16_t*>(w), k, row_begin,
                                            row_end, y, ldy);
  }
}

// The quantized entry points, for an ISA K with block-quantized loaders:
// one case per QuantType.
#define SAMEBITS_EACH_QUANT_TYPE(CASE) \
  CASE(QuantType::kQ8_0)               \
  CASE(QuantType::kQ4_0)               \
  CASE(QuantType::kQ4_1)               \
  CASE(QuantType::kQ5_0)               \
  CASE(QuantType::kQ5_1)               \
  CASE(QuantType::kQ4_K)               \
  CASE(QuantType::kQ5_K)               \
  CASE(QuantType::kQ6_K)
template <class K>
void GemvQuant(const float* x, const std::byte* w, QuantType type, int64_t k, int64_t row_begin,
               int64_t row_end, float* y) {
  const auto* p = reinterpret_cast<const uint8_t*>(w);
  switch (type) {
#define SAMEBITS_QUANT_CASE(Q) \
  case Q:                      \
    return GemvTyped<K, typename K::template Quant<(Q)>>(x, p, k, row_begin, row_end, y);
    SAMEBITS_EACH_QUANT_TYPE(SAMEBITS_QUANT_CASE)
#undef SAMEBITS_QUANT_CASE
  }
}

template <class K>
void GemmQuant(const float* x, int64_t m, const std::byte* w, QuantType type, int64_t k,
               int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  if (m == 1) return GemvQuant<K>(x, w, type, k, row_begin, row_end, y);
  const auto* p = reinterpret_cast<const uint8_t*>(w);
  switch (type) {
#define SAMEBITS_QUANT_CASE(Q) \
  case Q:                      \
    return GemmTyped<K, typename K::template Quant<(Q)>>(x, m, p, k, row_begin, row_end, y, ldy);
    SAMEBITS_EACH_QUANT_TYPE(SAMEBITS_QUANT_CASE)
#undef SAMEBITS_QUANT_CASE
  }
}

#undef SAMEBITS_EACH_QUANT_TYPE

template <class K>
float Dot(const float* a, const float* b, int64_t n) {
  float out;
  K::template kBlock<typename K::F32, 1, 1, Hints::kNone>(a, n, b, n, AdjacentRows(n, 1), &out, 0);
  return out;
}

}  // namespace
}  // namespace samebits::kernels::internal
