// The integer profile's weight unpacking that the AVX2 and AVX-512 kernels
// share (int8_avx2.cc, int8_avx512_groups.h): 32 weights of a block as
// unsigned bytes in one ymm register, and the blocks' scales, written once
// in AVX2 and SSSE3 instructions so that the two ISAs read a block the same
// way.
//
// Internal header: include it only from a file compiled with at least the
// AVX2 flags. Everything is in an anonymous namespace (each object file
// keeps its own copy; engine/kernels/README.md) and nothing here
// instantiates a standard-library template.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "engine/kernels/int8_group_parts.h"

namespace samebits::kernels::internal {
namespace {

// 32 weights from 16 bytes of nibbles: the low nibbles are weights 0-15,
// the high ones 16-31 (Q4_0, Q4_1, Q5_0, Q5_1).
inline __m256i Nibbles32(const uint8_t* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), mask), _mm_and_si128(v, mask));
}

// Q6_K's weights 128 h + 32 t .. 128 h + 32 t + 31 of block `b` (scale
// groups 8 h + 2 t and 8 h + 2 t + 1), the offset of 32 not removed: the
// low nibble of ql[64 h + l + 32 (t & 1)] (the high one when t >= 2) and
// bits 2t, 2t + 1 of qh[32 h + l] as bits 4-5.
inline __m256i Q6KWeights(const uint8_t* b, int64_t h, int64_t t) {
  const __m256i mask = _mm256_set1_epi8(0x0F);
  const __m256i ql =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * h + 32 * (t & 1)));
  const __m256i nibble =
      t < 2 ? _mm256_and_si256(ql, mask) : _mm256_and_si256(_mm256_srli_epi16(ql, 4), mask);
  // Two bits of each byte moved to bits 4-5 (a byte of at most 3 shifted
  // by 4 stays inside its byte).
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
  const __m256i high = _mm256_slli_epi16(
      _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(static_cast<int>(2 * t))),
                       _mm256_set1_epi8(3)),
      4);
  return _mm256_or_si256(nibble, high);
}

// A Q4_K / Q5_K super-block's packed scales and mins (its 16 bytes from
// offset 4: the 12 packed bytes a, b, c, then nibbles) to bytes [sc0 ..
// sc7, mn0 .. mn7], by get_scale_min_k4's rule: sc = a & 63 and mn = b & 63
// for groups 0-3; for groups 4-7, sc = (c & 15) | (a >> 6) << 4 and
// mn = (c >> 4) | (b >> 6) << 4.
inline __m128i UnpackScalesAndMins(__m128i v) {
  const __m128i x =
      _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i y =
      _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i low =
      _mm_and_si128(x, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
  const __m128i high_nibbles = _mm_and_si128(
      _mm_srli_epi16(x, 4), _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
  const __m128i top_bits = _mm_and_si128(_mm_srli_epi16(y, 2), _mm_set1_epi8(0x30));
  return _mm_or_si128(_mm_or_si128(low, high_nibbles), top_bits);
}

// The F16 at byte `offset` of blocks g0 .. g0 + 15 (`block_bytes` apart),
// zero from block g0 + n on: `lo` holds the first eight, `hi` the rest, for
// VCVTPH2PS (int8_group_parts.h).
struct Halves16 {
  __m128i lo, hi;
};
inline Halves16 BlockHalves(const uint8_t* row, int64_t block_bytes, int64_t g0, int n,
                            int offset) {
  const HalfWords h = BlockHalfWords(row, block_bytes, g0, n, offset);
  const auto pair = [&](int j) {
    return _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<long long>(h.word[j])),
                            static_cast<long long>(h.word[j + 1]), 1);
  };
  return {pair(0), pair(2)};
}

}  // namespace
}  // namespace samebits::kernels::internal
