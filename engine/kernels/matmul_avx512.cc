// The AVX-512 kernel table. One zmm register holds the contract's 16
// virtual lanes exactly (C1): lane l of the register is lane l of the
// contract, each lane is one fma chain in index order, a k tail is a masked
// fma (masked-off lanes keep their bits, -0.0 included), and the lanes are
// reduced by the fixed 16 -> 8 -> 4 -> 2 -> 1 tree. The register block
// itself is register_block.h's, over this file's vector operations (`Ops`).

#include <cstdint>

#include "engine/kernels/avx512_lanes.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/quant_int8_loops.h"
#include "engine/kernels/quant_loaders.h"
#include "engine/kernels/register_block.h"
#include "engine/kernels/tiling.h"

namespace samebits::kernels::internal {
namespace {

// Weight loaders: 16 weights as 16 exact f32 lanes, and the same for a tail
// of fewer than 16 (masked loads never touch memory past the tail).
struct LoadF32 {
  using T = float;
  static __m512 Full(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 Masked(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
};
struct LoadBF16 {
  using T = uint16_t;
  // A BF16 is the top half of an f32: widening and shifting left by 16 is exact.
  static __m512 Widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 Full(const uint16_t* p) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 Masked(const uint16_t* p, __mmask16 m) {
    return Widen(_mm256_maskz_loadu_epi16(m, p));
  }
};
struct LoadF16 {
  using T = uint16_t;
  // VCVTPH2PS is exact for every F16, subnormals included (it does not
  // consult MXCSR.DAZ).
  static __m512 Full(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 Masked(const uint16_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};

// The vector operations quant_loaders.h builds its loaders from, and
// BlockLoaderSteps (tiling.h) runs its fma chains with: 16 int32 or f32
// lanes in one zmm.
struct Ops {
  using F = __m512;
  // VPERMPS reads the low four bits of each index: a 16-entry lookup.
  static constexpr bool kLookup16 = true;
  static __m512 Lookup16(__m512 table, __m512i q) { return _mm512_permutexvar_ps(q, table); }
  static __m512i Iota16() {
    return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  }
  // Writes d * sc[t] to out[t] and dmin * m[t] to out[8 + t] for the eight
  // sub-blocks t of the Q4_K / Q5_K super-block at `sb` (d and dmin, two
  // F16, then the 12 packed scale bytes): ScaleMinK4's formulas in all 16
  // lanes at once, each a single f32 product of exact values, so the bits
  // of ScaleMinK4, Half and a scalar multiply. One 16-byte load holds d,
  // dmin and the scales.
  static void KScalesMins(const uint8_t* sb, float* out) {
    const __m128i head = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb));
    // Lanes 0-7 are the scales of t = 0..7, lanes 8-15 the mins. Every one
    // is (q[a] >> a_shift) & a_mask, and for t >= 4 the top two bits of
    // q[b] as its bits 4-5; q[i] is byte 4 + i of the super-block.
    const __m512i bytes = _mm512_cvtepu8_epi32(head);
    const __m512i a = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15), bytes);
    const __m512i a_shift = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4);
    const __m512i a_mask =
        _mm512_setr_epi32(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15);
    const __m512i b = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(4, 4, 4, 4, 4, 5, 6, 7, 4, 4, 4, 4, 8, 9, 10, 11), bytes);
    const __m512i b_mask = _mm512_setr_epi32(0, 0, 0, 0, 3, 3, 3, 3, 0, 0, 0, 0, 3, 3, 3, 3);
    const __m512i low = _mm512_and_si512(_mm512_srlv_epi32(a, a_shift), a_mask);
    const __m512i high = _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(b, 6), b_mask), 4);
    // VCVTPH2PS (exact) turns the first two F16 into d and dmin, spread to
    // lanes 0-7 and 8-15.
    const __m512 d_dmin = _mm512_castps128_ps512(_mm_cvtph_ps(head));
    const __m512 factor = _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), d_dmin);
    _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_or_si512(low, high)), factor));
  }
  using V = __m512;
  static __m512 Zero() { return _mm512_setzero_ps(); }
  static __m512 LoadX(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 Fma(__m512 x, __m512 w, __m512 acc) { return _mm512_fmadd_ps(x, w, acc); }
  static float Reduce(__m512 acc) { return Reduce16(acc); }
  // register_block.h's k tail (defined below).
  template <class L, int MI, int RJ>
  static void Tail(const float* x, int64_t ldx, const typename L::T* w, int64_t stride, int64_t c,
                   int64_t n, __m512 (&acc)[MI][RJ]);
  static __m512i U8(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m512i I8(const uint8_t* p) {
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m512i And(__m512i a, int b) { return _mm512_and_si512(a, _mm512_set1_epi32(b)); }
  static __m512i Shr(__m512i a, int n) { return _mm512_srli_epi32(a, static_cast<unsigned>(n)); }
  static __m512i Shl(__m512i a, int n) { return _mm512_slli_epi32(a, static_cast<unsigned>(n)); }
  static __m512i Or(__m512i a, __m512i b) { return _mm512_or_si512(a, b); }
  static __m512i AddInt(__m512i a, int b) { return _mm512_add_epi32(a, _mm512_set1_epi32(b)); }
  static __m512i BitLanes(uint32_t bits) {
    const __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return And(_mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int>(bits)), index), 1);
  }
  static __m512 ToF32(__m512i a) { return _mm512_cvtepi32_ps(a); }
  static __m512 MulS(__m512 a, float b) { return _mm512_mul_ps(a, _mm512_set1_ps(b)); }
  static __m512 AddS(__m512 a, float b) { return _mm512_add_ps(a, _mm512_set1_ps(b)); }
  static __m512 SubS(__m512 a, float b) { return _mm512_sub_ps(a, _mm512_set1_ps(b)); }
  // a * b - c in one VFMSUB132PS, b and c read from memory where they are
  // (KSuperBlock's scales): b as the instruction's broadcast operand, c by
  // a broadcasting load. Written as assembly because the compiler, given
  // the intrinsics, broadcasts every scale of a step ahead of time into
  // stack slots of 64 bytes and reads those back (measured 2x slower).
  static __m512 MulSubS(__m512 a, const float& b, const float& c) {
    __m512 c16;
    __asm__("vbroadcastss %1, %0" : "=v"(c16) : "m"(c));
    __asm__("vfmsub132ps %2%{1to16%}, %1, %0" : "+v"(a) : "v"(c16), "m"(b));
    return a;
  }
  // F16C's scalar VCVTPH2PS: exact for every F16, subnormals included.
  static float Half(const uint8_t* p) {
    return _cvtsh_ss(static_cast<unsigned short>(p[0] | (p[1] << 8)));
  }
};

// register_block.h's k tail of n < 16 columns from column c: masked loads
// (which never touch memory past the mask) and a masked fma, so lanes
// [n, 16) keep their bits. Defined outside Ops so that its loop pragmas do
// not sit inside the struct.
template <class L, int MI, int RJ>
void Ops::Tail(const float* x, int64_t ldx, const typename L::T* w, int64_t stride, int64_t c,
               int64_t n, __m512 (&acc)[MI][RJ]) {
  const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
  __m512 wv[RJ];
#pragma GCC unroll 16
  for (int j = 0; j < RJ; ++j) wv[j] = L::Masked(w + j * stride + c, m);
#pragma GCC unroll 16
  for (int i = 0; i < MI; ++i) {
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + i * ldx + c);
#pragma GCC unroll 16
    for (int j = 0; j < RJ; ++j) acc[i][j] = _mm512_mask3_fmadd_ps(xv, wv[j], acc[i][j], m);
  }
}

// What tiling.h needs: GEMV takes four rows at a time from four far-apart
// runs, each hinted 1 KiB ahead in its own run (tiling.h's RowStreamTyped
// and HintRunAhead: on an AMD EPYC Zen 5 four streams read faster than
// eight, BENCHMARKS.md run 17); GEMM blocks are up to 4 activation rows x 4
// weight rows (16 zmm accumulators), edge blocks use the smaller
// instantiations.
struct Avx512 {
  using F32 = LoadF32;
  using F16 = LoadF16;
  using BF16 = LoadBF16;
  template <QuantType Q>
  using Quant = QuantLoader<Ops, Q>;
  static constexpr int kGemvRows = 4;
  static constexpr Hints kGemvHints = Hints::kRunAhead;
  static constexpr int kMaxMi = 4;
  static constexpr int kMaxRj = 4;
  template <class L, int MI, int RJ, Hints kHints>
  static constexpr BlockFn<typename L::T> kBlock = RegisterBlock<Ops, L, MI, RJ, kHints>;
};

void Axpy(float p, const float* v, float* o, int64_t n) {
  const __m512 pv = _mm512_set1_ps(p);
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    _mm512_storeu_ps(o + d, _mm512_fmadd_ps(pv, _mm512_loadu_ps(v + d), _mm512_loadu_ps(o + d)));
  }
  if (d < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - d)) - 1u);
    const __m512 r =
        _mm512_fmadd_ps(pv, _mm512_maskz_loadu_ps(m, v + d), _mm512_maskz_loadu_ps(m, o + d));
    _mm512_mask_storeu_ps(o + d, m, r);
  }
}

}  // namespace

const KernelTable& Avx512Table() {
  static constexpr KernelTable kTable{Isa::kAvx512,
                                      Gemv<Avx512>,
                                      Gemm<Avx512>,
                                      Dot<Avx512>,
                                      Axpy,
                                      Avx512AttentionScores,
                                      Avx512AttentionValues,
                                      Avx512ExpPortable,
                                      Avx512SoftmaxPortable,
                                      GemvQuant<Avx512>,
                                      GemmQuant<Avx512>,
                                      Int8Products<Avx512DotInt8, Avx512Int8Rows>::Gemv,
                                      Int8Products<Avx512DotInt8, Avx512Int8Rows>::Gemm};
  return kTable;
}

}  // namespace samebits::kernels::internal
