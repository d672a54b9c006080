// The ISA-independent part of the matrix kernels: how GEMV and GEMM split
// their outputs into register blocks and L2 tiles, and the dtype dispatch.
// Each ISA file (matmul_avx2.cc, matmul_avx512.cc, matmul_neon.cc) includes
// this header and instantiates it with its own register-block function.
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

namespace samebits::kernels::internal {
namespace {

// How far ahead of the current column the GEMV streams prefetch each weight
// row, in bytes. The hardware prefetcher tracks a few streams per core; with
// eight rows in flight an explicit hint keeps every stream ahead of use.
constexpr int64_t kPrefetchBytes = 512;

// GEMM keeps a tile of weight rows of about this many bytes in L2 while the
// activation rows pass over it.
constexpr int64_t kGemmWTileBytes = 256 * 1024;

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

// A register block: the MI x RJ outputs y[i * ldy + j] = dot(x + i * ldx,
// w + j * k, k).
template <class T>
using BlockFn = void (*)(const float* x, int64_t ldx, const T* w, int64_t k, float* y, int64_t ldy);

// What an ISA type `K` provides:
//   K::F32, K::F16, K::BF16   weight loaders, each with `using T` (the
//                             stored element type);
//   K::kGemvRows              weight rows per GEMV pass (a power of two);
//   K::kMaxMi, K::kMaxRj      the largest GEMM block (activation rows x
//                             weight rows);
//   K::template kBlock<L, MI, RJ, kPrefetch>
//                             the BlockFn for loader L, an MI x RJ block,
//                             with or without software prefetch.

// Runs the GEMV remainder after the full passes: one block of R rows if at
// least R are left, then R / 2, ..., 1 (at most one block of each size).
template <class K, class L, int R>
void GemvRemainder(const float* x, const typename L::T* w, int64_t k, int64_t row_begin, int64_t& r,
                   int64_t row_end, float* y) {
  if constexpr (R >= 1) {
    if (r + R <= row_end) {
      K::template kBlock<L, 1, R, true>(x, k, w + r * k, k, y + (r - row_begin), 0);
      r += R;
    }
    GemvRemainder<K, L, R / 2>(x, w, k, row_begin, r, row_end, y);
  }
}

// GEMV: K::kGemvRows rows at a time give that many independent fma chains
// and prefetched streams; x is re-read from L1.
template <class K, class L>
void GemvTyped(const float* x, const typename L::T* w, int64_t k, int64_t row_begin,
               int64_t row_end, float* y) {
  constexpr int kRows = K::kGemvRows;
  static_assert(kRows >= 1 && (kRows & (kRows - 1)) == 0, "kGemvRows must be a power of two");
  int64_t r = row_begin;
  for (; r + kRows <= row_end; r += kRows) {
    K::template kBlock<L, 1, kRows, true>(x, k, w + r * k, k, y + (r - row_begin), 0);
  }
  GemvRemainder<K, L, kRows / 2>(x, w, k, row_begin, r, row_end, y);
}

// The table of GEMM blocks, [mi - 1][rj - 1] for the edge blocks.
template <class K, class L, int MI, int... RJ>
constexpr auto BlockRow(std::integer_sequence<int, RJ...>) {
  return FixedArray<BlockFn<typename L::T>, K::kMaxRj>{
      {K::template kBlock<L, MI, RJ + 1, false>...}};
}
template <class K, class L, int... MI>
constexpr auto BlockTable(std::integer_sequence<int, MI...>) {
  return FixedArray<FixedArray<BlockFn<typename L::T>, K::kMaxRj>, K::kMaxMi>{
      {BlockRow<K, L, MI + 1>(std::make_integer_sequence<int, K::kMaxRj>())...}};
}

template <class K, class L>
void GemmTyped(const float* x, int64_t m, const typename L::T* w, int64_t k, int64_t row_begin,
               int64_t row_end, float* y, int64_t ldy) {
  constexpr int kMaxMi = K::kMaxMi;
  constexpr int kMaxRj = K::kMaxRj;
  static constexpr auto kBlocks = BlockTable<K, L>(std::make_integer_sequence<int, kMaxMi>());
  // A tile of weight rows (about kGemmWTileBytes) is read from memory once
  // and stays in L2 while every block of activation rows (a few KiB each,
  // kept in L1) passes over it. The tile depends on the shape only (k and
  // the dtype), never on timings.
  const int64_t row_bytes = Max64(k, 1) * static_cast<int64_t>(sizeof(typename L::T));
  const int64_t tile_r = Max64(kMaxRj, kGemmWTileBytes / row_bytes / kMaxRj * kMaxRj);
  for (int64_t r0 = row_begin; r0 < row_end; r0 += tile_r) {
    const int64_t r1 = Min64(row_end, r0 + tile_r);
    for (int64_t i = 0; i < m; i += kMaxMi) {
      const int mi = static_cast<int>(Min64(kMaxMi, m - i));
      for (int64_t r = r0; r < r1; r += kMaxRj) {
        const int rj = static_cast<int>(Min64(kMaxRj, r1 - r));
        kBlocks[mi - 1][rj - 1](x + i * k, k, w + r * k, k, y + i * ldy + (r - row_begin), ldy);
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

template <class K>
float Dot(const float* a, const float* b, int64_t n) {
  float out;
  K::template kBlock<typename K::F32, 1, 1, false>(a, n, b, n, &out, 0);
  return out;
}

}  // namespace
}  // namespace samebits::kernels::internal
