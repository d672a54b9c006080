// The integer profile's AVX-512 kernels (C12) for Q8_0 and Q4_K, written
// once over `D::Dot4(u8, s8)`: the sum of four adjacent u8 x s8 products in
// each int32 lane (and, where `D::kOffsetActivations`, `D::Dot4Into(acc,
// u8, s8)`, the same added to acc, with which Q8_0's signed weights meet
// activations offset to unsigned bytes). int8_avx512.cc instantiates them with AVX-512 BW's
// pmaddubsw + pmaddwd (no pair can saturate: Q8_0's |w| <= 128 meets
// |a| <= 127, 2 * 128 * 127 < 2^15; Q4_K's nibbles are <= 15), and
// int8_avx512_vnni.cc with VNNI's vpdpbusd. Every group sum is an exact
// integer however it is formed, so these only have to keep C12.3's f32
// steps: group g's `fma(dot, (d * sc) * d_a)` (and its min term) in lane
// g mod 16, in increasing g, then the C1 tree.
//
// Internal header like tiling.h: include it only from those two files;
// everything is in an anonymous namespace.
#pragma once

#include <cmath>
#include <cstring>

#include "engine/kernels/avx512_lanes.h"
#include "engine/kernels/int8_repack.h"
#include "engine/kernels/int8_rows.h"
#include "engine/kernels/int8_x86_unpack.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/stream_prefetch.h"

namespace samebits::kernels::internal {
namespace {

using numerics::Int8Activations;
using numerics::QuantType;

// Sums of w * a over signed bytes, 4 adjacent pairs to an int32 lane:
// |w| (unsigned) times a with w's sign.
template <class D>
inline __m512i SignedDot(__m512i w, __m512i a) {
  const __m512i magnitude = _mm512_abs_epi8(w);
  const __mmask64 negative = _mm512_movepi8_mask(w);
  const __m512i signed_a = _mm512_mask_sub_epi8(a, negative, _mm512_setzero_si512(), a);
  return D::Dot4(magnitude, signed_a);
}

// Eight vectors, each holding two groups' partial sums (lanes 0-7 and
// 8-15 of vector p: slots 2p and 2p + 1), to one vector of the sixteen
// groups' whole sums, lane g taking slot `order[g]`'s.
inline __m512i GroupSums16(const __m512i p[8], __m512i order) {
  __m512i q[4];
  for (int64_t k = 0; k < 4; ++k) {
    q[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2 * k], p[2 * k + 1]),
                            _mm512_unpackhi_epi32(p[2 * k], p[2 * k + 1]));
  }
  // 128-bit lane t of r0: slots (0, 2, 4, 6) for t < 2, (1, 3, 5, 7) else,
  // each t holding half of each slot's partials; r1 the same for 8-15.
  const __m512i r0 =
      _mm512_add_epi32(_mm512_unpacklo_epi64(q[0], q[1]), _mm512_unpackhi_epi64(q[0], q[1]));
  const __m512i r1 =
      _mm512_add_epi32(_mm512_unpacklo_epi64(q[2], q[3]), _mm512_unpackhi_epi64(q[2], q[3]));
  // Slots 0 2 4 6 1 3 5 7 8 10 12 14 9 11 13 15, in lane order.
  const __m512i s =
      _mm512_add_epi32(_mm512_shuffle_i32x4(r0, r1, 0x88), _mm512_shuffle_i32x4(r0, r1, 0xDD));
  return _mm512_permutexvar_epi32(order, s);
}

// Q8_0's vectors hold blocks 2p and 2p + 1: slot n is group n.
inline __m512i Q8Order() {
  return _mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
}

constexpr int kQ8Bytes = 34;

template <class D>
float DotQ8_0(const std::byte* row, const Int8Activations& x, int64_t k) {
  const auto* w = reinterpret_cast<const uint8_t*>(row);
  const int64_t blocks = k / 32;
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b0 = 0; b0 < blocks; b0 += 16) {
    const int n = static_cast<int>(blocks - b0 < 16 ? blocks - b0 : 16);
    __m512i partial[8];
    alignas(32) uint16_t dw[16] = {};
    for (int64_t p = 0; p < 8; ++p) {
      const int64_t a = b0 + 2 * p;
      __m256i w_lo = _mm256_setzero_si256(), w_hi = _mm256_setzero_si256();
      __m512i act = _mm512_setzero_si512();
      if (2 * p + 1 < n) {
        w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + a * kQ8Bytes + 2));
        w_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (a + 1) * kQ8Bytes + 2));
        act = _mm512_loadu_si512(x.q + a * 32);
      } else if (2 * p < n) {
        w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + a * kQ8Bytes + 2));
        act = _mm512_zextsi256_si512(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + a * 32)));
      }
      partial[p] = SignedDot<D>(_mm512_inserti64x4(_mm512_castsi256_si512(w_lo), w_hi, 1), act);
    }
    for (int64_t j = 0; j < n; ++j) std::memcpy(&dw[j], w + (b0 + j) * kQ8Bytes, 2);
    const __mmask16 valid = static_cast<__mmask16>((1u << n) - 1u);
    const __m512 scale =
        _mm512_mul_ps(_mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(dw))),
                      _mm512_maskz_loadu_ps(valid, x.d + b0));
    const __m512 sums = _mm512_cvtepi32_ps(GroupSums16(partial, Q8Order()));
    acc = _mm512_mask3_fmadd_ps(sums, scale, acc, valid);
  }
  return Reduce16(acc);
}

constexpr int kQ4KBytes = 144;

// Q4_K by scale groups (C12.3): two super-blocks are sixteen groups of 32,
// one vector of lanes. Each 64 bytes of nibbles hold groups 4h, 4h + 2 (low
// nibbles) and 4h + 1, 4h + 3 (high), so vector p of a pair holds groups
// (0, 2) (1, 3) (4, 6) (5, 7), then the same plus 8.
inline __m512i Q4KOrder() {
  return _mm512_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
}

// One weight row's exact group scales for a pair: d * sc and dmin * mn.
struct Q4KScales {
  __m512 d_sc, dmin_mn;
};
inline Q4KScales PairScales(const uint8_t* b0, const uint8_t* b1) {
  const __m128i r0 = UnpackScalesAndMins(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0 + 4)));
  const __m128i r1 =
      b1 != nullptr ? UnpackScalesAndMins(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b1 + 4)))
                    : _mm_setzero_si128();
  const auto widen = [](__m128i bytes) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)); };
  // [d0, dmin0, d1, dmin1] as f32, then each spread over its half.
  uint32_t h0, h1 = 0;
  std::memcpy(&h0, b0, 4);
  if (b1 != nullptr) std::memcpy(&h1, b1, 4);
  const __m512 halves = _mm512_castps128_ps512(_mm_cvtph_ps(
      _mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(h0)), static_cast<int>(h1), 1)));
  const __m512 d = _mm512_permutexvar_ps(
      _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2), halves);
  const __m512 dmin = _mm512_permutexvar_ps(
      _mm512_setr_epi32(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3), halves);
  return {_mm512_mul_ps(d, widen(_mm_unpacklo_epi64(r0, r1))),
          _mm512_mul_ps(dmin, widen(_mm_unpackhi_epi64(r0, r1)))};
}

// One activation row's side of a pair (super-blocks b and b + 1 when
// `pair`): the quants arranged as the weights' vectors, each lane's d_a,
// and each group's -asum (exact as f32).
struct Q4KActs {
  __m512i a[8];
  __m512 d;
  __m512 minus_asum;
};
inline void PairActs(const Int8Activations& x, int64_t b, bool pair, Q4KActs* out) {
  for (int64_t s = 0; s < 2; ++s) {
    for (int64_t h = 0; h < 2; ++h) {
      if (s == 1 && !pair) {
        out->a[4 * s + 2 * h] = out->a[4 * s + 2 * h + 1] = _mm512_setzero_si512();
        continue;
      }
      const int8_t* a = x.q + (b + s) * 256 + 128 * h;
      const __m512i a0 = _mm512_loadu_si512(a), a1 = _mm512_loadu_si512(a + 64);
      out->a[4 * s + 2 * h] = _mm512_shuffle_i64x2(a0, a1, 0x44);
      out->a[4 * s + 2 * h + 1] = _mm512_shuffle_i64x2(a0, a1, 0xEE);
    }
  }
  out->d = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(x.d[b]),
                                _mm512_set1_ps(pair ? x.d[b + 1] : 0.0f));
  const __m512i sums16 = pair ? _mm512_loadu_si512(x.sums + b * 16)
                              : _mm512_zextsi256_si512(_mm256_loadu_si256(
                                    reinterpret_cast<const __m256i*>(x.sums + b * 16)));
  const __m512i asum = _mm512_madd_epi16(sums16, _mm512_set1_epi16(1));
  out->minus_asum = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_setzero_si512(), asum));
}

// A weight row's pair as eight vectors of nibbles, in the order of the
// activation side's vectors (zero past the row's last block).
struct Q4KNibbles {
  __m512i v[8];
};
inline void PairNibbles(const uint8_t* b0, const uint8_t* b1, Q4KNibbles* out) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  for (int64_t s = 0; s < 2; ++s) {
    const uint8_t* block = s == 0 ? b0 : b1;
    for (int64_t h = 0; h < 2; ++h) {
      if (block == nullptr) {
        out->v[4 * s + 2 * h] = out->v[4 * s + 2 * h + 1] = _mm512_setzero_si512();
        continue;
      }
      const __m512i v = _mm512_loadu_si512(block + 16 + 64 * h);
      out->v[4 * s + 2 * h] = _mm512_and_si512(v, nibble);
      out->v[4 * s + 2 * h + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    }
  }
}

// The sixteen groups' exact dot products of one weight row's pair.
template <class D>
inline __m512i PairDots(const Q4KNibbles& w, const Q4KActs& a) {
  __m512i p[8];
  for (int64_t v = 0; v < 8; ++v) p[v] = D::Dot4(w.v[v], a.a[v]);
  return GroupSums16(p, Q4KOrder());
}
template <class D>
inline __m512i PairDots(const uint8_t* b0, const uint8_t* b1, const Q4KActs& a) {
  Q4KNibbles w;
  PairNibbles(b0, b1, &w);
  return PairDots<D>(w, a);
}

// Group g's two fmas into lane g (C12.3), for the pair's valid lanes.
inline __m512 AccumulatePair(__m512 acc, __m512i dots, const Q4KScales& w, const Q4KActs& a,
                             __mmask16 valid) {
  acc = _mm512_mask3_fmadd_ps(_mm512_cvtepi32_ps(dots), _mm512_mul_ps(w.d_sc, a.d), acc, valid);
  return _mm512_mask3_fmadd_ps(a.minus_asum, _mm512_mul_ps(w.dmin_mn, a.d), acc, valid);
}

// One Q4_K row: its pairs of super-blocks in order, `acts(p, pair)` giving
// the activation side of pair p (prepared there, or looked up).
template <class D, class Acts>
float Q4KRow(const uint8_t* row, int64_t blocks, const Acts& acts) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; b += 2) {
    const bool pair = b + 1 < blocks;
    const uint8_t* b0 = row + b * kQ4KBytes;
    const uint8_t* b1 = pair ? b0 + kQ4KBytes : nullptr;
    const Q4KActs& a = acts(b / 2, pair);
    acc =
        AccumulatePair(acc, PairDots<D>(b0, b1, a), PairScales(b0, b1), a, pair ? 0xFFFF : 0x00FF);
  }
  return Reduce16(acc);
}

template <class D>
float DotQ4_K(const std::byte* row, const Int8Activations& x, int64_t k) {
  Q4KActs a;
  return Q4KRow<D>(reinterpret_cast<const uint8_t*>(row), k / 256,
                   [&](int64_t p, bool pair) -> const Q4KActs& {
                     PairActs(x, 2 * p, pair, &a);
                     return a;
                   });
}

}  // namespace
}  // namespace samebits::kernels::internal

#include "engine/kernels/int8_avx512_groups.h"

namespace samebits::kernels::internal {
namespace {

// The row dot of C12, for the rows RowsWith leaves: the kernels above for
// Q8_0 and Q4_K, the definition otherwise.
template <class D>
float DotInt8With(QuantType type, const std::byte* row, const Int8Activations& x, int64_t k) {
  switch (type) {
    case QuantType::kQ8_0:
      return DotQ8_0<D>(row, x, k);
    case QuantType::kQ4_K:
      return DotQ4_K<D>(row, x, k);
    default:
      // Never reached for the other six types: GroupRowsWith (RowsWith)
      // takes every row of theirs.
      return numerics::DotInt8(type, row, x, k);
  }
}

// Decode's Q4_K product: one activation row against n weight rows, each
// row streamed on its own (measured on 32000 x 1024 matrices out of cache,
// four rows interleaved streamed at 13.3 GB/s where one row at a time read
// 16.0), with the activation side of every pair prepared once for all the
// rows. Returns 0 (not covered) past kMaxPairs pairs.
constexpr int64_t kMaxPairs = 16;
template <class D>
int64_t GemvQ4_K(const uint8_t* w, int64_t row_bytes, int64_t n, const Int8Activations& x,
                 int64_t k, float* y) {
  const int64_t blocks = k / 256, pairs = (blocks + 1) / 2;
  if (pairs > kMaxPairs) return 0;
  Q4KActs acts[kMaxPairs];
  for (int64_t p = 0; p < pairs; ++p) PairActs(x, 2 * p, 2 * p + 1 < blocks, &acts[p]);
  const auto prepared = [&](int64_t p, bool) -> const Q4KActs& { return acts[p]; };
  for (int64_t r = 0; r < n; ++r) {
    HintStreamAhead(w + r * row_bytes, row_bytes);
    y[r] = Q4KRow<D>(w + r * row_bytes, blocks, prepared);
  }
  return n;
}

// Several activation rows' Q4_K product: one weight row at a time, its
// pairs' nibbles and scales unpacked once for all m activation rows, whose
// activation sides are prepared once for all n weight rows. Each output
// takes the row dot's fmas in the row dot's order.
template <class D>
int64_t GemmQ4_K(const uint8_t* w, int64_t row_bytes, int64_t n, const Int8Activations* x,
                 int64_t m, int64_t k, float* y, int64_t ldy) {
  const int64_t blocks = k / 256, pairs = (blocks + 1) / 2;
  struct Lanes {
    __m512 v;
  };
  // This thread's scratch: the activation sides, then the outputs' lanes.
  auto* acts = static_cast<Q4KActs*>(
      Int8Scratch(static_cast<size_t>(m * pairs) * sizeof(Q4KActs) + m * sizeof(Lanes)));
  Lanes* acc = reinterpret_cast<Lanes*>(acts + m * pairs);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < pairs; ++p) {
      PairActs(x[i], 2 * p, 2 * p + 1 < blocks, &acts[i * pairs + p]);
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row = w + r * row_bytes;
    HintStreamAhead(row, row_bytes);
    for (int64_t p = 0; p < pairs; ++p) {
      const bool pair = 2 * p + 1 < blocks;
      const uint8_t* b0 = row + 2 * p * kQ4KBytes;
      const uint8_t* b1 = pair ? b0 + kQ4KBytes : nullptr;
      const Q4KScales scales = PairScales(b0, b1);
      Q4KNibbles nibbles;
      PairNibbles(b0, b1, &nibbles);
      const __mmask16 valid = pair ? 0xFFFF : 0x00FF;
      for (int64_t i = 0; i < m; ++i) {
        const Q4KActs& a = acts[i * pairs + p];
        // The lanes start at +0.0f with the first pair (no separate
        // clearing pass, which the compiler made a memset per row).
        const __m512 lanes = p == 0 ? _mm512_setzero_ps() : acc[i].v;
        acc[i].v = AccumulatePair(lanes, PairDots<D>(nibbles, a), scales, a, valid);
      }
    }
    for (int64_t i = 0; i < m; ++i) y[i * ldy + r] = Reduce16(acc[i].v);
  }
  return n;
}

// Several activation rows' Q8_0 product: one weight row at a time, sixteen
// blocks of it (one vector of lanes) unpacked once for all m activation
// rows, and each activation row offset to unsigned bytes once for all n
// weight rows where D offsets them. Each output takes the row dot's fmas
// (DotQ8_0) in the row dot's order.
template <class D>
int64_t GemmQ8_0(const uint8_t* w, int64_t row_bytes, int64_t n, const Int8Activations* x,
                 int64_t m, int64_t k, float* y, int64_t ldy) {
  const int64_t blocks = k / 32;
  struct Lanes {
    __m512 v;
  };
  // This thread's scratch: the outputs' lanes, then the offset activations.
  Lanes* acc = static_cast<Lanes*>(
      Int8Scratch(m * sizeof(Lanes) + (D::kOffsetActivations ? static_cast<size_t>(m * k) : 0)));
  uint8_t* offset = reinterpret_cast<uint8_t*>(acc + m);
  if constexpr (D::kOffsetActivations) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; j += 32) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].q + j));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(offset + i * k + j),
                            _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80))));
      }
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row = w + r * row_bytes;
    HintStreamAhead(row, row_bytes);
    for (int64_t b0 = 0; b0 < blocks; b0 += 16) {
      const int nb = static_cast<int>(blocks - b0 < 16 ? blocks - b0 : 16);
      // Vector p: blocks b0 + 2p and b0 + 2p + 1 (zero past the row) as |w|
      // and where w < 0; or, where D offsets the activations (a + 128 as
      // unsigned bytes), w itself and the sum's start, -128 * sum w, so that
      // one four-product step gives sum (a + 128) w - 128 sum w = sum a w
      // exactly.
      __m512i weights[8], start[8];
      __mmask64 negative[8];
      __mmask64 loads[8];  // the activation bytes vector p reads
      for (int64_t p = 0; p < 8; ++p) {
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        if (2 * p < nb) {
          lo = _mm256_loadu_si256(
              reinterpret_cast<const __m256i*>(row + (b0 + 2 * p) * kQ8Bytes + 2));
        }
        if (2 * p + 1 < nb) {
          hi = _mm256_loadu_si256(
              reinterpret_cast<const __m256i*>(row + (b0 + 2 * p + 1) * kQ8Bytes + 2));
        }
        loads[p] = 2 * p + 1 < nb ? ~__mmask64{0} : (2 * p < nb ? __mmask64{0xFFFFFFFF} : 0);
        const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        if constexpr (D::kOffsetActivations) {
          weights[p] = v;
          const __m512i sum_w = D::Dot4Into(_mm512_setzero_si512(), _mm512_set1_epi8(1), v);
          start[p] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum_w, 7));
        } else {
          weights[p] = _mm512_abs_epi8(v);
          negative[p] = _mm512_movepi8_mask(v);
        }
      }
      alignas(32) uint16_t dw[16] = {};
      for (int64_t j = 0; j < nb; ++j) std::memcpy(&dw[j], row + (b0 + j) * kQ8Bytes, 2);
      const __m512 scale_w =
          _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(dw)));
      const __mmask16 valid = static_cast<__mmask16>((1u << nb) - 1u);
      for (int64_t i = 0; i < m; ++i) {
        __m512i partial[8];
        for (int64_t p = 0; p < 8; ++p) {
          if constexpr (D::kOffsetActivations) {
            const uint8_t* a = offset + i * k + (b0 + 2 * p) * 32;
            partial[p] = D::Dot4Into(start[p], _mm512_maskz_loadu_epi8(loads[p], a), weights[p]);
          } else {
            const __m512i a = _mm512_maskz_loadu_epi8(loads[p], x[i].q + (b0 + 2 * p) * 32);
            partial[p] = D::Dot4(weights[p],
                                 _mm512_mask_sub_epi8(a, negative[p], _mm512_setzero_si512(), a));
          }
        }
        const __m512 scale = _mm512_mul_ps(scale_w, _mm512_maskz_loadu_ps(valid, x[i].d + b0));
        const __m512 sums = _mm512_cvtepi32_ps(GroupSums16(partial, Q8Order()));
        const __m512 lanes = b0 == 0 ? _mm512_setzero_ps() : acc[i].v;  // as in GemmQ4_K
        acc[i].v = _mm512_mask3_fmadd_ps(sums, scale, lanes, valid);
      }
    }
    for (int64_t i = 0; i < m; ++i) y[i * ldy + r] = Reduce16(acc[i].v);
  }
  return n;
}

// ------------------------------------------------- repacked rows (decode)
// C1's tree over sixteen lane-vectors, each row in its lane, and the rows
// of group g that lie in [row_begin, row_end) written to y.
inline void StoreRowSums(const __m512 lanes[16], int64_t g, int64_t row_begin, int64_t row_end,
                         float* y) {
  __m512 s8[8], s4[4];
  for (int64_t i = 0; i < 8; ++i) s8[i] = _mm512_add_ps(lanes[i], lanes[i + 8]);
  for (int64_t i = 0; i < 4; ++i) s4[i] = _mm512_add_ps(s8[i], s8[i + 4]);
  const __m512 sums = _mm512_add_ps(_mm512_add_ps(s4[0], s4[2]), _mm512_add_ps(s4[1], s4[3]));
  const int64_t first = g * 16 > row_begin ? g * 16 : row_begin;
  const int64_t last = g * 16 + 16 < row_end ? g * 16 + 16 : row_end;
  alignas(64) float out[16];
  _mm512_store_ps(out, sums);
  std::memcpy(y + (first - row_begin), out + (first - g * 16),
              static_cast<size_t>(last - first) * sizeof(float));
}

// One 64-byte quarter of repacked nibbles (int8_repack.h: row r's bytes
// at 4r..4r+3, byte t holding weight t in its low nibble and 4 + t in its
// high) against the eight activations `a`, added to each row's lane of
// `dot`: two four-product steps.
template <class D>
inline __m512i NibbleQuarterDot(__m512i dot, const uint8_t* quarter, const int8_t* a) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i v = _mm512_loadu_si512(quarter);
  int32_t lo_a, hi_a;
  std::memcpy(&lo_a, a, 4);
  std::memcpy(&hi_a, a + 4, 4);
  dot = D::Dot4Into(dot, _mm512_and_si512(v, nibble), _mm512_set1_epi32(lo_a));
  return D::Dot4Into(dot, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble),
                     _mm512_set1_epi32(hi_a));
}

// Decode's Q4_K product over rows repacked sixteen to a vector
// (int8_repack.h): lane r of every vector is row 16g + r. Each scale group
// j of super-block b (group 8b + j along the row) forms its exact sum in
// the lanes with eight four-product steps, each one 64-byte load of
// nibbles against four activation bytes broadcast; then C12.3's two fmas
// go into f32 lane-vector (8b + j) mod 16, and the C1 tree adds those
// sixteen vectors: row r's lanes and order, sixteen rows at once.
template <class D>
void GemvQ4KRepacked(const uint8_t* packed, const Int8Activations& x, int64_t k, int64_t row_begin,
                     int64_t row_end, float* y) {
  const int64_t blocks = k / 256;
  for (int64_t g = row_begin / 16; g * 16 < row_end; ++g) {
    __m512 lanes[16];
    for (__m512& lane : lanes) lane = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* tile = packed + (g * blocks + b) * kQ4KRepackedTileBytes;
      HintStreamAhead(tile, kQ4KRepackedTileBytes);
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile)));
      const __m512 dmin =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + 32)));
      const __m512 d_a = _mm512_set1_ps(x.d[b]);
      const int8_t* a = x.q + b * 256;
      for (int64_t j = 0; j < 8; ++j) {
        __m512i dot = _mm512_setzero_si512();
        for (int64_t c = 0; c < 4; ++c) {
          dot = NibbleQuarterDot<D>(dot, tile + 320 + 64 * (4 * j + c), a + 32 * j + 8 * c);
        }
        const __m512 sc = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + 64 + 32 * j))));
        const __m512 mn = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + 64 + 32 * j + 16))));
        const int64_t group = 8 * b + j;
        const int asum = x.sums[2 * group] + x.sums[2 * group + 1];
        __m512& lane = lanes[group % 16];
        // d * sc and dmin * mn are exact; each product with d_a one rounding.
        lane = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(_mm512_mul_ps(d, sc), d_a),
                               lane);
        lane = _mm512_fmadd_ps(_mm512_set1_ps(static_cast<float>(-asum)),
                               _mm512_mul_ps(_mm512_mul_ps(dmin, mn), d_a), lane);
      }
    }
    StoreRowSums(lanes, g, row_begin, row_end, y);
  }
}

// Decode's Q8_0 product over repacked rows: block b's exact sums form in
// the row lanes with eight four-product steps, then its fma goes into
// lane-vector b mod 16. Signed weights meet signed activations as in
// SignedDot (|w| against a with w's sign), or, where D offsets, as w + 128
// against a, the accumulator starting at -128 * asum: sum (w + 128) a -
// 128 sum a = sum w a, exact.
template <class D>
void GemvQ8Repacked(const uint8_t* packed, const Int8Activations& x, int64_t k, int64_t row_begin,
                    int64_t row_end, float* y) {
  const int64_t blocks = k / 32;
  for (int64_t g = row_begin / 16; g * 16 < row_end; ++g) {
    __m512 lanes[16];
    for (__m512& lane : lanes) lane = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* tile = packed + (g * blocks + b) * kQ8RepackedTileBytes;
      HintStreamAhead(tile, kQ8RepackedTileBytes);
      const int8_t* a = x.q + b * 32;
      __m512i dot = _mm512_setzero_si512();
      if constexpr (D::kOffsetActivations) {
        dot = _mm512_set1_epi32(-128 * (x.sums[2 * b] + x.sums[2 * b + 1]));
      }
      for (int64_t c = 0; c < 8; ++c) {
        const __m512i w = _mm512_loadu_si512(tile + 32 + 64 * c);
        int32_t four;
        std::memcpy(&four, a + 4 * c, 4);
        const __m512i act = _mm512_set1_epi32(four);
        if constexpr (D::kOffsetActivations) {
          dot =
              D::Dot4Into(dot, _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80))), act);
        } else {
          dot = _mm512_add_epi32(dot, SignedDot<D>(w, act));
        }
      }
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile)));
      __m512& lane = lanes[b % 16];
      lane =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, _mm512_set1_ps(x.d[b])), lane);
    }
    StoreRowSums(lanes, g, row_begin, row_end, y);
  }
}

// Decode's Q4_0 product over repacked rows: block b's sums form in the
// row lanes with eight four-product steps of unsigned nibbles against
// signed activations, the accumulator starting at -8 * asum (sum (u - 8) a
// = sum u a - 8 sum a, exact), then its fma goes into lane-vector b mod 16.
template <class D>
void GemvQ4_0Repacked(const uint8_t* packed, const Int8Activations& x, int64_t k, int64_t row_begin,
                      int64_t row_end, float* y) {
  const int64_t blocks = k / 32;
  for (int64_t g = row_begin / 16; g * 16 < row_end; ++g) {
    __m512 lanes[16];
    for (__m512& lane : lanes) lane = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* tile = packed + (g * blocks + b) * kQ4_0RepackedTileBytes;
      HintStreamAhead(tile, kQ4_0RepackedTileBytes);
      const int8_t* a = x.q + b * 32;
      __m512i dot = _mm512_set1_epi32(-8 * (x.sums[2 * b] + x.sums[2 * b + 1]));
      for (int64_t c = 0; c < 4; ++c) dot = NibbleQuarterDot<D>(dot, tile + 32 + 64 * c, a + 8 * c);
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile)));
      __m512& lane = lanes[b % 16];
      lane =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, _mm512_set1_ps(x.d[b])), lane);
    }
    StoreRowSums(lanes, g, row_begin, row_end, y);
  }
}

// Several activation rows over repacked rows (prefill): each group of 32
// weights of sixteen rows is unpacked once for up to kRepackedTileM
// activation rows, each of which forms its sixteen rows' exact sums with
// eight four-product steps and takes C12.3's fmas into its own sixteen
// lane-vectors (kept in this thread's scratch), in group order.
constexpr int64_t kRepackedTileM = 8;
struct RepackedLanes {
  __m512 v[16];
};
// A row of `units` groups (blocks) reaches lanes 0 .. units - 1 only; the
// others stay +0.0f. The reached ones start at zero with their first unit.
inline void ZeroUnreachedLanes(RepackedLanes* lanes, int64_t rows, int64_t units) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t l = units; l < 16; ++l) lanes[i].v[l] = _mm512_setzero_ps();
  }
}

// The traversal both repacked GEMMs share: each group of sixteen rows
// touching [row_begin, row_end), each tile of up to kRepackedTileM
// activation rows, each block b of the rows in order, `block(i0, mi, b,
// tile, d)` doing the work (d: the sixteen rows' F16 d of block b as f32),
// then the tile's outputs stored. `units` is the groups (or blocks) a row
// has, which say which lanes it reaches.
template <class Block>
void ForEachRepackedTile(const uint8_t* packed, int64_t tile_bytes, int64_t blocks, int64_t units,
                         int64_t m, int64_t row_begin, int64_t row_end, RepackedLanes* lanes,
                         float* y, int64_t ldy, const Block& block) {
  for (int64_t g16 = row_begin / 16; g16 * 16 < row_end; ++g16) {
    for (int64_t i0 = 0; i0 < m; i0 += kRepackedTileM) {
      const int64_t mi = m - i0 < kRepackedTileM ? m - i0 : kRepackedTileM;
      ZeroUnreachedLanes(lanes, mi, units);
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* tile = packed + (g16 * blocks + b) * tile_bytes;
        block(i0, mi, b, tile,
              _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile))));
      }
      for (int64_t i = 0; i < mi; ++i) {
        StoreRowSums(lanes[i].v, g16, row_begin, row_end, y + (i0 + i) * ldy);
      }
    }
  }
}

template <class D>
void GemmQ4KRepacked(const uint8_t* packed, const Int8Activations* x, int64_t m, int64_t k,
                     int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  const int64_t blocks = k / 256, groups = k / 32;
  // Scratch: the lanes of a tile of activation rows, then each row's
  // -asum per group (exact in f32).
  auto* lanes = static_cast<RepackedLanes*>(
      Int8Scratch(kRepackedTileM * sizeof(RepackedLanes) + m * groups * sizeof(float)));
  float* minus_asum = reinterpret_cast<float*>(lanes + kRepackedTileM);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      minus_asum[i * groups + g] = static_cast<float>(-(x[i].sums[2 * g] + x[i].sums[2 * g + 1]));
    }
  }
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const auto block = [&](int64_t i0, int64_t mi, int64_t b, const uint8_t* tile, __m512 d) {
    const __m512 dmin =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + 32)));
    for (int64_t j = 0; j < 8; ++j) {
      __m512i w[8];
      for (int64_t c = 0; c < 4; ++c) {
        const __m512i v = _mm512_loadu_si512(tile + 320 + 64 * (4 * j + c));
        w[2 * c] = _mm512_and_si512(v, nibble);
        w[2 * c + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
      }
      const __m512 d_sc = _mm512_mul_ps(
          d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + 64 + 32 * j)))));
      const __m512 dmin_mn = _mm512_mul_ps(
          dmin, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + 80 + 32 * j)))));
      const int64_t group = 8 * b + j;
      for (int64_t i = 0; i < mi; ++i) {
        const Int8Activations& xi = x[i0 + i];
        const int8_t* a = xi.q + 256 * b + 32 * j;
        __m512i dot = _mm512_setzero_si512();
        for (int64_t t = 0; t < 8; ++t) {
          int32_t four;
          std::memcpy(&four, a + 4 * t, 4);
          dot = D::Dot4Into(dot, w[t], _mm512_set1_epi32(four));
        }
        const __m512 d_a = _mm512_set1_ps(xi.d[b]);
        __m512& lane = lanes[i].v[group % 16];
        const __m512 before = group < 16 ? _mm512_setzero_ps() : lane;
        const __m512 after =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d_sc, d_a), before);
        lane = _mm512_fmadd_ps(_mm512_set1_ps(minus_asum[(i0 + i) * groups + group]),
                               _mm512_mul_ps(dmin_mn, d_a), after);
      }
    }
  };
  ForEachRepackedTile(packed, kQ4KRepackedTileBytes, blocks, groups, m, row_begin, row_end, lanes,
                      y, ldy, block);
}

template <class D>
void GemmQ8Repacked(const uint8_t* packed, const Int8Activations* x, int64_t m, int64_t k,
                    int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  const int64_t blocks = k / 32;
  // Scratch: the lanes of a tile of activation rows, then each row's sums'
  // start per block (GemvQ8Repacked's -128 * asum where D offsets).
  auto* lanes = static_cast<RepackedLanes*>(
      Int8Scratch(kRepackedTileM * sizeof(RepackedLanes) + m * blocks * sizeof(int32_t)));
  int32_t* start = reinterpret_cast<int32_t*>(lanes + kRepackedTileM);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {
      start[i * blocks + b] =
          D::kOffsetActivations ? -128 * (x[i].sums[2 * b] + x[i].sums[2 * b + 1]) : 0;
    }
  }
  const auto block = [&](int64_t i0, int64_t mi, int64_t b, const uint8_t* tile, __m512 d) {
    // Per step: w + 128 as unsigned bytes where D offsets, else |w| and
    // where w < 0.
    __m512i w[8];
    __mmask64 negative[8];
    for (int64_t c = 0; c < 8; ++c) {
      const __m512i v = _mm512_loadu_si512(tile + 32 + 64 * c);
      if constexpr (D::kOffsetActivations) {
        w[c] = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
      } else {
        w[c] = _mm512_abs_epi8(v);
        negative[c] = _mm512_movepi8_mask(v);
      }
    }
    for (int64_t i = 0; i < mi; ++i) {
      const Int8Activations& xi = x[i0 + i];
      const int8_t* a = xi.q + 32 * b;
      __m512i dot = _mm512_set1_epi32(start[(i0 + i) * blocks + b]);
      for (int64_t c = 0; c < 8; ++c) {
        int32_t four;
        std::memcpy(&four, a + 4 * c, 4);
        const __m512i act = _mm512_set1_epi32(four);
        if constexpr (D::kOffsetActivations) {
          dot = D::Dot4Into(dot, w[c], act);
        } else {
          const __m512i signed_act =
              _mm512_mask_sub_epi8(act, negative[c], _mm512_setzero_si512(), act);
          dot = _mm512_add_epi32(dot, D::Dot4(w[c], signed_act));
        }
      }
      __m512& lane = lanes[i].v[b % 16];
      const __m512 before = b < 16 ? _mm512_setzero_ps() : lane;
      lane = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, _mm512_set1_ps(xi.d[b])),
                             before);
    }
  };
  ForEachRepackedTile(packed, kQ8RepackedTileBytes, blocks, blocks, m, row_begin, row_end, lanes, y,
                      ldy, block);
}

// Several activation rows over repacked Q4_0 rows: each block of sixteen
// rows unpacked once (eight vectors of nibbles) for a tile of activation
// rows, each taking GemvQ4_0Repacked's steps in its own lanes.
template <class D>
void GemmQ4_0Repacked(const uint8_t* packed, const Int8Activations* x, int64_t m, int64_t k,
                      int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  const int64_t blocks = k / 32;
  auto* lanes = static_cast<RepackedLanes*>(Int8Scratch(kRepackedTileM * sizeof(RepackedLanes)));
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const auto block = [&](int64_t i0, int64_t mi, int64_t b, const uint8_t* tile, __m512 d) {
    __m512i w[8];
    for (int64_t c = 0; c < 4; ++c) {
      const __m512i v = _mm512_loadu_si512(tile + 32 + 64 * c);
      w[2 * c] = _mm512_and_si512(v, nibble);
      w[2 * c + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    }
    for (int64_t i = 0; i < mi; ++i) {
      const Int8Activations& xi = x[i0 + i];
      const int8_t* a = xi.q + 32 * b;
      __m512i dot = _mm512_set1_epi32(-8 * (xi.sums[2 * b] + xi.sums[2 * b + 1]));
      for (int64_t c = 0; c < 8; ++c) {
        int32_t four;
        std::memcpy(&four, a + 4 * c, 4);
        dot = D::Dot4Into(dot, w[c], _mm512_set1_epi32(four));
      }
      __m512& lane = lanes[i].v[b % 16];
      const __m512 before = b < 16 ? _mm512_setzero_ps() : lane;
      lane = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, _mm512_set1_ps(xi.d[b])),
                             before);
    }
  };
  ForEachRepackedTile(packed, kQ4_0RepackedTileBytes, blocks, blocks, m, row_begin, row_end, lanes,
                      y, ldy, block);
}

// The repacked products this file has (int8_repack.h): decode
// (GemvRepackedWith) and several activation rows.
template <class D>
void GemmRepackedWith(QuantType type, const std::byte* packed, const Int8Activations* x, int64_t m,
                      int64_t k, int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  const auto* p = reinterpret_cast<const uint8_t*>(packed);
  if (type == QuantType::kQ4_K) GemmQ4KRepacked<D>(p, x, m, k, row_begin, row_end, y, ldy);
  if (type == QuantType::kQ8_0) GemmQ8Repacked<D>(p, x, m, k, row_begin, row_end, y, ldy);
  if (type == QuantType::kQ4_0) GemmQ4_0Repacked<D>(p, x, m, k, row_begin, row_end, y, ldy);
}

template <class D>
void GemvRepackedWith(QuantType type, const std::byte* packed, const Int8Activations& x, int64_t k,
                      int64_t row_begin, int64_t row_end, float* y) {
  const auto* p = reinterpret_cast<const uint8_t*>(packed);
  if (type == QuantType::kQ4_K) GemvQ4KRepacked<D>(p, x, k, row_begin, row_end, y);
  if (type == QuantType::kQ8_0) GemvQ8Repacked<D>(p, x, k, row_begin, row_end, y);
  if (type == QuantType::kQ4_0) GemvQ4_0Repacked<D>(p, x, k, row_begin, row_end, y);
}

// The rows this file's kernels take (Int8Rows of quant_int8_loops.h):
// several activation rows one weight row at a time; one (decode) Q4_K row
// by row with shared activations; one Q8_0 row by the row dot (four-row
// tiles streamed Q8_0 at 5.6 GB/s against 20.7 for the row dot, measured
// on 32000 x 1024 matrices out of cache); the other types' several rows
// by GroupRowsWith (int8_avx512_groups.h).
template <class D>
int64_t RowsWith(QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                 const Int8Activations* x, int64_t m, int64_t k, float* y, int64_t ldy) {
  const auto* w = reinterpret_cast<const uint8_t*>(rows);
  if (type == QuantType::kQ4_K) {
    return m == 1 ? GemvQ4_K<D>(w, row_bytes, n, x[0], k, y)
                  : GemmQ4_K<D>(w, row_bytes, n, x, m, k, y, ldy);
  }
  if (type == QuantType::kQ8_0) return m == 1 ? 0 : GemmQ8_0<D>(w, row_bytes, n, x, m, k, y, ldy);
  return GroupRowsWith<D>(type, rows, row_bytes, n, x, m, k, y, ldy);
}

}  // namespace
}  // namespace samebits::kernels::internal
