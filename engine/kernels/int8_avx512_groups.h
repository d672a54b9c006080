// The integer profile's AVX-512 products (C12.3) for the six types without a
// kernel of their own in int8_avx512_kernels.h: Q4_0, Q4_1, Q5_0, Q5_1,
// Q5_K and Q6_K. They went through the scalar definition, which made the
// int8 profile 5 to 10 times slower than the exact one on these types.
//
// A row is taken sixteen scale groups at a time, one group to an f32 lane
// (group g in lane g mod 16, C12.3). Each block's weights are unpacked to
// unsigned bytes: the stored quants with their fifth and sixth bits, the
// offset (8, 16 or 32) not yet removed. A group's exact sum is then
// sum_i u_i a_i - offset * sum_i a_i, the same integer as the definition's
// sum_i (u_i - offset) a_i, and sum_i a_i comes from the activations' sums
// of sixteen. The f32 steps are the definition's: fma(dot, (d * sc) * d_a)
// and, for the types with a min, fma(min_sign * asum, (m * mn) * d_a).
//
// The unpacking AVX2 shares is in int8_x86_unpack.h.
//
// Internal header: included by int8_avx512_kernels.h after GroupSums16,
// Q8Order and PairScales, which it uses, and before RowsWith, which calls
// GroupRowsWith for every row of these types.
// Everything is in an anonymous namespace, and nothing here instantiates a
// standard-library template (engine/kernels/README.md: an ISA object may
// export no weak symbol).
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/kernels/int8_group_parts.h"
#include "engine/kernels/stream_prefetch.h"

namespace samebits::kernels::internal {
namespace {

// Sixteen consecutive scale groups of a row, unpacked: the weights as
// unsigned bytes in the vectors that meet the activations (vector p holds
// weights 64p .. 64p + 63 of the batch: groups 2p and 2p + 1 of 32, or 4p
// .. 4p + 3 of 16; zero past the row's groups), lane g of d_sc and m_mn
// group g's exact d * sc and m * mn.
struct GroupBatch {
  __m512i w[8];
  __m512 d_sc;
  __m512 m_mn;
};

// Two 32-byte halves as one vector.
inline __m512i Join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Adds 16 to the weights whose bit is set in `bits` (bit i: weight i).
inline __m256i AddFifthBits(__m256i w, uint32_t bits) {
  return _mm256_or_si256(w, _mm256_maskz_mov_epi8(bits, _mm256_set1_epi8(16)));
}

// The blocks of 32, one group each (int8_group_parts.h's layouts).
template <class Layout>
struct Block32 : Layout {
  using Layout::kBytes, Layout::kHighBitsAt, Layout::kMinAt, Layout::kQuantsAt;
  static __m256i Weights(const uint8_t* b) {
    const __m256i w = Nibbles32(b + kQuantsAt);
    if constexpr (kHighBitsAt > 0) {
      uint32_t bits;
      std::memcpy(&bits, b + kHighBitsAt, 4);
      return AddFifthBits(w, bits);
    }
    return w;
  }
  // The F16 at `offset` of blocks [g0, g0 + n) (zero past n), to f32 lanes.
  static __m512 Halves(const uint8_t* row, int64_t g0, int n, int offset) {
    const Halves16 h = BlockHalves(row, kBytes, g0, n, offset);
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(h.lo), h.hi, 1));
  }
  // Groups (blocks) [g0, g0 + n) of the row.
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    for (int64_t p = 0; p < 8; ++p) {
      __m256i half[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
      for (int64_t h = 0; h < 2 && 2 * p + h < n; ++h) {
        half[h] = Weights(row + (g0 + 2 * p + h) * kBytes);
      }
      out->w[p] = Join(half[0], half[1]);
    }
    out->d_sc = Halves(row, g0, n, 0);
    if constexpr (kMinAt > 0) out->m_mn = Halves(row, g0, n, kMinAt);
  }
};
using Q4_0Groups = Block32<Q4_0Layout>;
using Q4_1Groups = Block32<Q4_1Layout>;
using Q5_0Groups = Block32<Q5_0Layout>;
using Q5_1Groups = Block32<Q5_1Layout>;

// Q5_K: eight groups of 32 to a block. Groups 2j and 2j + 1 are the low and
// high nibbles of quants 32j .. 32j + 31, their fifth bits bit 2j and
// 2j + 1 of qh[l]; scales and mins by get_scale_min_k4's rule.
struct Q5_KGroups : KQuantLayout<true> {
  // Groups [g0, g0 + n) of the row: one block or two.
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    for (int64_t half = 0; half < 2; ++half) {
      if (8 * half >= n) {
        for (int64_t j = 0; j < 4; ++j) out->w[4 * half + j] = _mm512_setzero_si512();
        continue;
      }
      const uint8_t* b = row + (g0 / 8 + half) * kBytes;
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
      for (int64_t j = 0; j < 4; ++j) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 48 + 32 * j));
        const __m256i lo = _mm256_and_si256(q, mask);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
        const __mmask32 lo_bit =
            _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * j))));
        const __mmask32 hi_bit =
            _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * j))));
        out->w[4 * half + j] = Join(AddFifthBits(lo, lo_bit), AddFifthBits(hi, hi_bit));
      }
    }
    // Lanes 0-7 the first block's d * sc and dmin * mn, 8-15 the second's
    // (zero without one): Q4_K's scales, the same bytes (PairScales).
    const uint8_t* b0 = row + g0 / 8 * kBytes;
    const Q4KScales scales = PairScales(b0, n > 8 ? b0 + kBytes : nullptr);
    out->d_sc = scales.d_sc;
    out->m_mn = scales.dmin_mn;
  }
};

// Q6_K: sixteen groups of 16, one block to a batch (weights as
// Q6KWeights reads them); weight i's scale is the signed byte sc[i / 16].
struct Q6_KGroups : Q6_KLayout {
  // Groups [g0, g0 + 16) of the row: block g0 / 16.
  static void Unpack(const uint8_t* row, int64_t g0, int, GroupBatch* out) {
    const uint8_t* b = row + g0 / 16 * kBytes;
    // Vector p: weights 64p .. 64p + 63, that is h = p / 2, t = 2 (p % 2) and
    // the next t.
    for (int64_t p = 0; p < 4; ++p) {
      out->w[p] = Join(Q6KWeights(b, p / 2, 2 * (p % 2)), Q6KWeights(b, p / 2, 2 * (p % 2) + 1));
    }
    uint16_t h;
    std::memcpy(&h, b + 208, 2);
    const __m512 sc = _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192))));
    out->d_sc = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(h)), sc);
  }
};

// Groups of 16 four to a vector: vector v's 128-bit lane c holds group
// 4v + c's partial sums. Returns lane g = group g's whole sum.
inline __m512i QuarterGroupSums16(const __m512i p[4]) {
  const __m512i t0 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(p[0], p[1]), _mm512_unpackhi_epi32(p[0], p[1]));
  const __m512i t1 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(p[2], p[3]), _mm512_unpackhi_epi32(p[2], p[3]));
  // Lane 4c + v: group 4v + c.
  const __m512i s = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
  return _mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), s);
}

// Bytes [0, n) of 64 valid: the load mask of vector p of a batch whose
// valid bytes are `valid`.
inline __mmask64 ValidBytes(int64_t valid, int64_t p) {
  const int64_t n = valid - 64 * p;
  return n >= 64 ? ~__mmask64{0} : (n <= 0 ? __mmask64{0} : (__mmask64{1} << n) - 1);
}

// Lane g: the exact sum of group g0 + g's activations, for the n valid groups.
template <int kSub>
inline __m512i GroupActivationSums(const int16_t* sums, int64_t g0, int n) {
  if constexpr (kSub == 32) {
    const __mmask32 valid = n == 16 ? ~__mmask32{0} : (__mmask32{1} << (2 * n)) - 1;
    return _mm512_madd_epi16(_mm512_maskz_loadu_epi16(valid, sums + 2 * g0), _mm512_set1_epi16(1));
  } else {
    const __mmask16 valid = static_cast<__mmask16>((1u << n) - 1u);
    return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(valid, sums + g0));
  }
}

// One activation row's side of a batch, the same for every weight row:
// its quants as the weights' vectors (zero past the row's groups), lane g
// the scale of group g's block, the offset times group g's activation sum,
// and min_sign times that sum as f32 (exact: below 2^24); the last two
// only for the types that have an offset and a min.
struct BatchActs {
  __m512i a[8];
  __m512 d;
  __m512i offset_asum;
  __m512 signed_asum;
};
template <class Type>
inline void PrepareActs(const Int8Activations& x, int64_t g0, int n, BatchActs* out) {
  constexpr int kSub = Type::kSub, kPerBlock = Type::kGroupsPerBlock;
  out->d = _mm512_permutexvar_ps(
      _mm512_setr_epi32(0 / kPerBlock, 1 / kPerBlock, 2 / kPerBlock, 3 / kPerBlock, 4 / kPerBlock,
                        5 / kPerBlock, 6 / kPerBlock, 7 / kPerBlock, 8 / kPerBlock, 9 / kPerBlock,
                        10 / kPerBlock, 11 / kPerBlock, 12 / kPerBlock, 13 / kPerBlock,
                        14 / kPerBlock, 15 / kPerBlock),
      _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n / kPerBlock)) - 1u),
                            x.d + g0 / kPerBlock));
  const int64_t valid_bytes = int64_t{n} * kSub;
  for (int64_t p = 0; p < 16 * kSub / 64; ++p) {
    out->a[p] = _mm512_maskz_loadu_epi8(ValidBytes(valid_bytes, p), x.q + g0 * kSub + 64 * p);
  }
  // Only what AccumulateBatch reads for this type.
  const __m512i asum = GroupActivationSums<kSub>(x.sums, g0, n);
  if constexpr (Type::kWeightOffset != 0) {
    out->offset_asum = _mm512_mullo_epi32(asum, _mm512_set1_epi32(Type::kWeightOffset));
  }
  if constexpr (Type::kMinSign != 0) {
    out->signed_asum = _mm512_cvtepi32_ps(
        Type::kMinSign > 0 ? asum : _mm512_sub_epi32(_mm512_setzero_si512(), asum));
  }
}

// Adds a batch's n groups to the lanes of one activation row (C12.3): the
// exact sums u . a over the weights' vectors minus the offset times the
// activations' sums, then each group's fmas in its lane.
template <class D, class Type>
inline __m512 AccumulateBatch(__m512 acc, const GroupBatch& batch, const BatchActs& a, int n) {
  constexpr int kVectors = 16 * Type::kSub / 64;
  __m512i partial[kVectors];
  for (int64_t p = 0; p < kVectors; ++p) partial[p] = D::Dot4(batch.w[p], a.a[p]);
  __m512i dots;
  if constexpr (Type::kSub == 32) {
    dots = GroupSums16(partial, Q8Order());
  } else {
    dots = QuarterGroupSums16(partial);
  }
  if constexpr (Type::kWeightOffset != 0) dots = _mm512_sub_epi32(dots, a.offset_asum);
  const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1u);
  acc = _mm512_mask3_fmadd_ps(_mm512_cvtepi32_ps(dots), _mm512_mul_ps(batch.d_sc, a.d), acc, lanes);
  if constexpr (Type::kMinSign != 0) {
    acc = _mm512_mask3_fmadd_ps(a.signed_asum, _mm512_mul_ps(batch.m_mn, a.d), acc, lanes);
  }
  return acc;
}

// Weight rows against m activation rows (decode's one too): one weight
// row at a time, each batch of its groups unpacked once for all m
// activation rows, whose sides of every batch are prepared once for all the
// weight rows; their lanes wait in this thread's scratch. Each output takes
// the definition's steps in its order.
template <class D, class Type>
int64_t GemmGroups(const std::byte* w, int64_t row_bytes, int64_t n, const Int8Activations* x,
                   int64_t m, int64_t k, float* y, int64_t ldy) {
  struct Lanes {
    __m512 v;
  };
  const int64_t groups = k / Type::kSub, batches = (groups + 15) / 16;
  auto* acts = static_cast<BatchActs*>(
      Int8Scratch(static_cast<size_t>(m * batches) * sizeof(BatchActs) + m * sizeof(Lanes)));
  auto* acc = reinterpret_cast<Lanes*>(acts + m * batches);
  const auto count = [&](int64_t b) {
    return static_cast<int>(groups - 16 * b < 16 ? groups - 16 * b : 16);
  };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < batches; ++b)
      PrepareActs<Type>(x[i], 16 * b, count(b), &acts[i * batches + b]);
  }
  GroupBatch batch;
  for (int64_t r = 0; r < n; ++r) {
    const auto* row = reinterpret_cast<const uint8_t*>(w + r * row_bytes);
    HintStreamAhead(row, row_bytes);
    for (int64_t b = 0; b < batches; ++b) {
      Type::Unpack(row, 16 * b, count(b), &batch);
      for (int64_t i = 0; i < m; ++i) {
        const __m512 lanes = b == 0 ? _mm512_setzero_ps() : acc[i].v;
        acc[i].v = AccumulateBatch<D, Type>(lanes, batch, acts[i * batches + b], count(b));
      }
    }
    for (int64_t i = 0; i < m; ++i) y[i * ldy + r] = Reduce16(acc[i].v);
  }
  return n;
}

// The rows GemmGroups takes (Int8Rows of quant_int8_loops.h): all of them,
// for these types.
template <class D>
int64_t GroupRowsWith(QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                      const Int8Activations* x, int64_t m, int64_t k, float* y, int64_t ldy) {
  switch (type) {
    case QuantType::kQ4_0:
      return GemmGroups<D, Q4_0Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ4_1:
      return GemmGroups<D, Q4_1Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ5_0:
      return GemmGroups<D, Q5_0Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ5_1:
      return GemmGroups<D, Q5_1Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ5_K:
      return GemmGroups<D, Q5_KGroups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ6_K:
      return GemmGroups<D, Q6_KGroups>(rows, row_bytes, n, x, m, k, y, ldy);
    default:
      return 0;
  }
}

}  // namespace
}  // namespace samebits::kernels::internal
