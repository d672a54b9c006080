// The integer profile's row dot product (C12) in AVX-512 BW, for the two
// types people decode with most, Q8_0 and Q4_K; the others call the scalar
// definition. Every block sum is an exact integer however it is formed, so
// these only have to keep C12.3's f32 steps: block b's `fma(s, d_w * d_a)`
// (and its min term) in lane b mod 16, in increasing b, then the C1 tree.
//
// Integer products use pmaddubsw (u8 x s8 pairs to s16) and pmaddwd; no
// pair can saturate: Q8_0's |w| <= 128 meets |a| <= 127 (2 * 128 * 127 <
// 2^15), Q4_K's nibbles <= 15.
#include <cmath>
#include <cstring>

#include "engine/kernels/avx512_lanes.h"
#include "engine/kernels/kernel_tables.h"

namespace samebits::kernels::internal {
namespace {

using numerics::Int8Activations;
using numerics::QuantType;

inline float Half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// Sums of a * b over signed bytes, 4 adjacent pairs to an int32 lane.
inline __m512i SignedDot(__m512i w, __m512i a) {
  const __m512i magnitude = _mm512_abs_epi8(w);
  const __mmask64 negative = _mm512_movepi8_mask(w);
  const __m512i signed_a = _mm512_mask_sub_epi8(a, negative, _mm512_setzero_si512(), a);
  return _mm512_madd_epi16(_mm512_maddubs_epi16(magnitude, signed_a), _mm512_set1_epi16(1));
}

// Eight vectors, each holding two blocks' partial sums (lanes 0-7 block 2p,
// 8-15 block 2p + 1), to one vector whose lane j is block j's whole sum.
inline __m512i BlockSums16(const __m512i p[8]) {
  __m512i q[4];
  for (int k = 0; k < 4; ++k) {
    q[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2 * k], p[2 * k + 1]),
                            _mm512_unpackhi_epi32(p[2 * k], p[2 * k + 1]));
  }
  // 128-bit lane t of r0: blocks (0, 2, 4, 6) for t < 2, (1, 3, 5, 7) else,
  // each t holding half of each block; r1 the same for blocks 8-15.
  const __m512i r0 = _mm512_add_epi32(_mm512_unpacklo_epi64(q[0], q[1]),
                                      _mm512_unpackhi_epi64(q[0], q[1]));
  const __m512i r1 = _mm512_add_epi32(_mm512_unpacklo_epi64(q[2], q[3]),
                                      _mm512_unpackhi_epi64(q[2], q[3]));
  const __m512i s = _mm512_add_epi32(_mm512_shuffle_i32x4(r0, r1, 0x88),
                                     _mm512_shuffle_i32x4(r0, r1, 0xDD));
  // s holds blocks 0 2 4 6 1 3 5 7 8 10 12 14 9 11 13 15.
  const __m512i order = _mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
  return _mm512_permutexvar_epi32(order, s);
}

constexpr int kQ8Bytes = 34;

float DotQ8_0(const std::byte* row, const Int8Activations& x, int64_t k) {
  const auto* w = reinterpret_cast<const uint8_t*>(row);
  const int64_t blocks = k / 32;
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b0 = 0; b0 < blocks; b0 += 16) {
    const int n = static_cast<int>(blocks - b0 < 16 ? blocks - b0 : 16);
    __m512i partial[8];
    alignas(32) uint16_t dw[16] = {};
    for (int p = 0; p < 8; ++p) {
      const int64_t a = b0 + 2 * p;
      __m256i w_lo = _mm256_setzero_si256(), w_hi = _mm256_setzero_si256();
      __m512i act = _mm512_setzero_si512();
      if (2 * p + 1 < n) {
        w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + a * kQ8Bytes + 2));
        w_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (a + 1) * kQ8Bytes + 2));
        act = _mm512_loadu_si512(x.q + a * 32);
      } else if (2 * p < n) {
        w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + a * kQ8Bytes + 2));
        act = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + a * 32)));
      }
      partial[p] = SignedDot(_mm512_inserti64x4(_mm512_castsi256_si512(w_lo), w_hi, 1), act);
    }
    for (int j = 0; j < n; ++j) std::memcpy(&dw[j], w + (b0 + j) * kQ8Bytes, 2);
    const __mmask16 valid = static_cast<__mmask16>((1u << n) - 1u);
    const __m512 scale = _mm512_mul_ps(
        _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(dw))),
        _mm512_maskz_loadu_ps(valid, x.d + b0));
    const __m512 sums = _mm512_cvtepi32_ps(BlockSums16(partial));
    acc = _mm512_mask3_fmadd_ps(sums, scale, acc, valid);
  }
  return Reduce16(acc);
}

constexpr int kQ4KBytes = 144;

// The eight 6-bit scales and mins of a Q4_K super-block (ggml's
// get_scale_min_k4, four at a time): bytes 0-3 low scales, 4-7 low mins,
// 8-11 the high sub-blocks' low nibbles (scales) and high nibbles (mins),
// whose top two bits sit in bits 6-7 of bytes 0-3 (scales) and 4-7 (mins).
inline void ScalesAndMins(const uint8_t* packed, uint8_t sc[8], uint8_t mn[8]) {
  uint32_t a, b, c;
  std::memcpy(&a, packed, 4);
  std::memcpy(&b, packed + 4, 4);
  std::memcpy(&c, packed + 8, 4);
  const uint32_t sc_lo = a & 0x3f3f3f3fu, mn_lo = b & 0x3f3f3f3fu;
  const uint32_t sc_hi = (c & 0x0f0f0f0fu) | (((a >> 6) & 0x03030303u) << 4);
  const uint32_t mn_hi = ((c >> 4) & 0x0f0f0f0fu) | (((b >> 6) & 0x03030303u) << 4);
  std::memcpy(sc, &sc_lo, 4);
  std::memcpy(sc + 4, &sc_hi, 4);
  std::memcpy(mn, &mn_lo, 4);
  std::memcpy(mn + 4, &mn_hi, 4);
}

float DotQ4_K(const std::byte* row, const Int8Activations& x, int64_t k) {
  const auto* w = reinterpret_cast<const uint8_t*>(row);
  const int64_t blocks = k / 256;
  // For each 64 bytes of nibbles (j = 0, 1): the low nibbles are sub-blocks
  // 4j and 4j + 2, the high ones 4j + 1 and 4j + 3; these pick each half's
  // scale out of the eight.
  const __m512i pick[4] = {
      _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1),
      _mm512_inserti64x4(_mm512_set1_epi16(1), _mm256_set1_epi16(3), 1),
      _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1),
      _mm512_inserti64x4(_mm512_set1_epi16(5), _mm256_set1_epi16(7), 1),
  };
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  alignas(64) float acc[16] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w + b * kQ4KBytes;
    uint8_t sc[8], mn[8];
    ScalesAndMins(block + 4, sc, mn);
    const __m512i scales = _mm512_broadcast_i32x4(
        _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
    const int8_t* a = x.q + b * 256;
    __m512i sum = _mm512_setzero_si512();
    for (int j = 0; j < 2; ++j) {
      const __m512i v = _mm512_loadu_si512(block + 16 + 64 * j);
      const __m512i a0 = _mm512_loadu_si512(a + 128 * j);
      const __m512i a1 = _mm512_loadu_si512(a + 128 * j + 64);
      const __m512i lo = _mm512_and_si512(v, nibble);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
      const __m512i p_lo = _mm512_maddubs_epi16(lo, _mm512_shuffle_i64x2(a0, a1, 0x44));
      const __m512i p_hi = _mm512_maddubs_epi16(hi, _mm512_shuffle_i64x2(a0, a1, 0xEE));
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(p_lo, _mm512_permutexvar_epi16(pick[2 * j], scales)));
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(p_hi, _mm512_permutexvar_epi16(pick[2 * j + 1], scales)));
    }
    const int32_t s = _mm512_reduce_add_epi32(sum);
    const int16_t* bsums = x.sums + b * 16;
    int32_t t = 0;
    for (int j = 0; j < 8; ++j) t += int32_t{mn[j]} * (bsums[2 * j] + bsums[2 * j + 1]);
    float& lane = acc[b % 16];
    lane = std::fma(static_cast<float>(s), Half(block) * x.d[b], lane);
    lane = std::fma(static_cast<float>(-t), Half(block + 2) * x.d[b], lane);
  }
  return Reduce16(_mm512_load_ps(acc));
}

}  // namespace

float Avx512DotInt8(QuantType type, const std::byte* row, const Int8Activations& x, int64_t k) {
  switch (type) {
    case QuantType::kQ8_0:
      return DotQ8_0(row, x, k);
    case QuantType::kQ4_K:
      return DotQ4_K(row, x, k);
    default:
      return numerics::DotInt8(type, row, x, k);
  }
}

}  // namespace samebits::kernels::internal
