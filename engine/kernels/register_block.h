// The register block of the matrix kernels, written once for every ISA
// (gemma.cpp's "write the SIMD loop once"): MI activation rows against RJ
// weight rows, each output one C1 dot product. Each ISA file
// (matmul_avx2.cc, matmul_avx512.cc, matmul_neon.cc) instantiates it with
// its own vector operations; tiling.h decides which blocks run where.
//
// Internal header like tiling.h: include it only from an ISA file. Every
// instantiation names the including file's own anonymous-namespace types,
// so each object file keeps a private copy compiled with its own -m flags.
//
// What the vector operations `A` provide (16 f32 lanes of the contract, C1,
// in whatever registers the ISA has):
//   A::V                          the 16 lanes;
//   A::Zero(), A::LoadX(p),       all lanes +0.0; 16 activations from p;
//   A::Fma(x, w, acc)             x * w + acc in each lane, one rounding;
//   A::Reduce(acc)                the contract's 16 -> 8 -> 4 -> 2 -> 1 tree;
// and for the last n < 16 columns from column c (lanes [0, n) take one
// more fma, the others keep their bits, -0.0 included, and nothing past a
// row's end is read) one of:
//   A::TailMask                   for an ISA without masked loads (AVX2,
//                                 NEON): PaddedTail below, blending with it;
//   A::template Tail<L, MI, RJ>(x, ldx, w, stride, c, n, acc)
//                                 the ISA's own (AVX-512's masked loads).
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/kernels/tiling.h"

namespace samebits::kernels::internal {
namespace {

// The k tail of an ISA without masked loads (AVX2, NEON): the tail is copied
// into zero-padded buffers, never reading past a row, and the fma's result
// is taken only in lanes [0, n) (`A::TailMask`'s Blend): a plain
// fma(0, 0, acc) would turn a -0.0 lane into +0.0.
template <class A, class L, int MI, int RJ>
void PaddedTail(const float* x, int64_t ldx, const typename L::T* w, int64_t stride, int64_t c,
                int64_t n, typename A::V (&acc)[MI][RJ]) {
  using T = typename L::T;
  using V = typename A::V;
  const typename A::TailMask mask(n);
  V wv[RJ];
#pragma GCC unroll 16
  for (int j = 0; j < RJ; ++j) {
    T buf[16] = {};
    std::memcpy(buf, w + j * stride + c, static_cast<size_t>(n) * sizeof(T));
    wv[j] = L::Full(buf);
  }
#pragma GCC unroll 16
  for (int i = 0; i < MI; ++i) {
    float xbuf[16] = {};
    std::memcpy(xbuf, x + i * ldx + c, static_cast<size_t>(n) * sizeof(float));
    const V xv = A::LoadX(xbuf);
#pragma GCC unroll 16
    for (int j = 0; j < RJ; ++j) acc[i][j] = mask.Blend(acc[i][j], A::Fma(xv, wv[j], acc[i][j]));
  }
}

// Computes the MI x RJ outputs y[i * ldy + j] = dot(x + i * ldx, row j, k),
// where row j starts rows.stride elements (bytes, for a block-quantized
// loader) after row j - 1. Each lane is one fma chain in index order; the
// blocking only runs independent chains side by side.
template <class A, class L, int MI, int RJ, Hints kHints>
void RegisterBlock(const float* x, int64_t ldx, const typename L::T* w, int64_t k, RowLayout rows,
                   float* y, int64_t ldy) {
  using V = typename A::V;
  V acc[MI][RJ];
#pragma GCC unroll 16
  for (int i = 0; i < MI; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < RJ; ++j) acc[i][j] = A::Zero();
  }
  if constexpr (BlockLoader<L>) {
    BlockLoaderSteps<A, L, MI, RJ, kHints>(x, ldx, w, k, rows, acc);
  } else {
    // One step: 16 columns from c of every row, each lane's chain one fma
    // further in index order.
    auto step = [&](int64_t c) __attribute__((always_inline)) {
      V wv[RJ];
#pragma GCC unroll 16
      for (int j = 0; j < RJ; ++j) wv[j] = L::Full(w + j * rows.stride + c);
#pragma GCC unroll 16
      for (int i = 0; i < MI; ++i) {
        const V xv = A::LoadX(x + i * ldx + c);
#pragma GCC unroll 16
        for (int j = 0; j < RJ; ++j) acc[i][j] = A::Fma(xv, wv[j], acc[i][j]);
      }
    };
    int64_t c = 0;
    if constexpr (kHints == Hints::kRunAhead) {
      // The steps of one cache line of every row, with one hint per row
      // (HintRunAhead): the same steps in the same order as the loop below.
      constexpr int64_t kLine = LineColumns<typename L::T>();
      for (; c + kLine <= k; c += kLine) {
#pragma GCC unroll 16
        for (int j = 0; j < RJ; ++j) HintRunAhead(w + j * rows.stride + c);
#pragma GCC unroll 4
        for (int64_t s = 0; s < kLine; s += 16) step(c + s);
      }
    }
    for (; c + 16 <= k; c += 16) {
      if constexpr (kHints == Hints::kNextBlock) {
#pragma GCC unroll 16
        for (int j = 0; j < RJ; ++j) HintGemvStep(w + j * rows.stride, rows.ahead, c);
      }
      step(c);
    }
    if (c < k) {
      if constexpr (requires { typename A::TailMask; }) {
        PaddedTail<A, L, MI, RJ>(x, ldx, w, rows.stride, c, k - c, acc);
      } else {
        A::template Tail<L, MI, RJ>(x, ldx, w, rows.stride, c, k - c, acc);
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MI; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < RJ; ++j) y[i * ldy + j] = A::Reduce(acc[i][j]);
  }
}

}  // namespace
}  // namespace samebits::kernels::internal
