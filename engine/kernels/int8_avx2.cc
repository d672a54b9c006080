// The integer profile's products (C12) in AVX2, for all eight quantized
// types. Until these, the AVX2 table computed every output through the
// scalar definition, so on a machine without AVX-512 `--quant-dot int8`
// decoded 2.6 to 8.5 times slower than the exact profile, and prefilled 4 to
// 16 times slower (BENCHMARKS.md).
//
// A row is taken sixteen scale groups at a time, one group to an f32 lane
// (group g in lane g mod 16, C12.3; lanes 0-7 in one ymm, 8-15 in the
// other, avx2_lanes.h), by the loops of int8_group_rows.h. Each group's weights are unpacked to
// bytes in one ymm register (a group of 32), or two groups to a register (Q6_K's groups of 16).
// Their exact sums with the activations:
// - unsigned weights (every type but Q8_0, the offset of 8, 16 or 32 not
//   yet removed): pmaddubsw then pmaddwd by ones, minus the offset times
//   the group's activation sum, which is the definition's integer
//   sum_i (u_i - offset) a_i. No pair of products can saturate: u <= 63 and
//   |a| <= 127.
// - Q8_0's signed weights: pmaddubsw(|w|, a with w's sign), the usual
//   trick (|w| <= 128, so a pair is at most 2 * 128 * 127 < 2^15).
// The f32 steps are the definition's: fma(dot, (d * sc) * d_a) and, for the
// types with a min, fma(min_sign * asum, (m * mn) * d_a), then C1's tree.
//
// Like every ISA file it exports only its functions (kernel_tables.h) and
// instantiates no standard-library template (isa_symbols_test).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "engine/kernels/avx2_lanes.h"
#include "engine/kernels/int8_group_parts.h"
#include "engine/kernels/int8_rows.h"
#include "engine/kernels/int8_x86_unpack.h"
#include "engine/kernels/kernel_tables.h"

namespace samebits::kernels::internal {
namespace {

using numerics::Int8Activations;
using numerics::QuantType;

// Sixteen consecutive scale groups of one weight row: w[g] the bytes of
// group g (groups of 32), or of groups 2g and 2g + 1 in its two halves
// (groups of 16), zero past the row's groups; lane g of d_sc and m_mn the
// group's exact d * sc and m * mn.
struct GroupBatch {
  __m256i w[16];
  V16 d_sc;
  V16 m_mn;
};

inline V16 HalvesToLanes(const Halves16& h) {
  return {_mm256_cvtph_ps(h.lo), _mm256_cvtph_ps(h.hi)};
}

// Byte i: 16 when bit i of `bits` is set, else 0 (the fifth bits of Q5_0
// and Q5_1: bit i belongs to weight i).
inline __m256i FifthBits(uint32_t bits) {
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                           2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(16));
}

// Byte l: 16 when bit `s` of byte l of `qh` is set (Q5_K's fifth bits).
inline __m256i FifthBitsOf(__m256i qh, int s) {
  const __m256i bit =
      _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(s)), _mm256_set1_epi8(1));
  return _mm256_slli_epi16(bit, 4);  // a byte of at most 1 stays inside its byte
}

// The blocks of 32, one group each (int8_group_parts.h's layouts).
template <class Layout>
struct Block32 : Layout {
  using Layout::kBytes, Layout::kHighBitsAt, Layout::kMinAt, Layout::kQuantsAt;
  static constexpr bool kSignedWeights = false;
  static __m256i Weights(const uint8_t* b) {
    const __m256i w = Nibbles32(b + kQuantsAt);
    if constexpr (kHighBitsAt > 0) {
      uint32_t bits;
      std::memcpy(&bits, b + kHighBitsAt, 4);
      return _mm256_or_si256(w, FifthBits(bits));
    }
    return w;
  }
  // Groups (blocks) [g0, g0 + n) of the row.
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    for (int g = 0; g < 16; ++g) {
      out->w[g] = g < n ? Weights(row + (g0 + g) * kBytes) : _mm256_setzero_si256();
    }
    out->d_sc = HalvesToLanes(BlockHalves(row, kBytes, g0, n, 0));
    if constexpr (kMinAt > 0) out->m_mn = HalvesToLanes(BlockHalves(row, kBytes, g0, n, kMinAt));
  }
};
using Q4_0Groups = Block32<Q4_0Layout>;
using Q4_1Groups = Block32<Q4_1Layout>;
using Q5_0Groups = Block32<Q5_0Layout>;
using Q5_1Groups = Block32<Q5_1Layout>;

// Q8_0: blocks of 34 bytes, an F16 d then 32 signed quants.
struct Q8_0Groups : Q8_0Layout {
  static constexpr bool kSignedWeights = true;
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    for (int g = 0; g < 16; ++g) {
      out->w[g] =
          g < n ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + (g0 + g) * kBytes + 2))
                : _mm256_setzero_si256();
    }
    out->d_sc = HalvesToLanes(BlockHalves(row, kBytes, g0, n, 0));
  }
};

// Q4_K and Q5_K: eight groups of 32 to a block (d, dmin, 12 bytes of
// scales, Q5_K's 32 bytes of fifth bits, 128 bytes of nibbles). Groups 2j
// and 2j + 1 are the low and high nibbles of quants 32j .. 32j + 31, their
// fifth bits bit 2j and 2j + 1 of qh[l]; scales and mins by
// get_scale_min_k4's rule. A batch is one block or two.
template <bool kFifthBits>
struct KGroups : KQuantLayout<kFifthBits> {
  using KQuantLayout<kFifthBits>::kBytes, KQuantLayout<kFifthBits>::kQuantsAt;
  static constexpr bool kSignedWeights = false;
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    __m256 d_sc[2], m_mn[2];
    for (int half = 0; half < 2; ++half) {
      if (8 * half >= n) {
        for (int g = 0; g < 8; ++g) out->w[8 * half + g] = _mm256_setzero_si256();
        d_sc[half] = m_mn[half] = _mm256_setzero_ps();
        continue;
      }
      const uint8_t* b = row + (g0 / 8 + half) * kBytes;
      for (int j = 0; j < 4; ++j) {
        const __m256i q =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + kQuantsAt + int64_t{32} * j));
        __m256i lo = _mm256_and_si256(q, mask);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
        if constexpr (kFifthBits) {
          const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
          lo = _mm256_or_si256(lo, FifthBitsOf(qh, 2 * j));
          hi = _mm256_or_si256(hi, FifthBitsOf(qh, 2 * j + 1));
        }
        out->w[8 * half + 2 * j] = lo;
        out->w[8 * half + 2 * j + 1] = hi;
      }
      // [sc0 .. sc7, mn0 .. mn7], each times the block's d or dmin (exact).
      const __m128i sm =
          UnpackScalesAndMins(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 4)));
      uint16_t d, dmin;
      std::memcpy(&d, b, 2);
      std::memcpy(&dmin, b + 2, 2);
      d_sc[half] =
          _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(d)), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sm)));
      m_mn[half] = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(dmin)),
                                 _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8))));
    }
    out->d_sc = {d_sc[0], d_sc[1]};
    out->m_mn = {m_mn[0], m_mn[1]};
  }
};
using Q4_KGroups = KGroups<false>;
using Q5_KGroups = KGroups<true>;

// Q6_K: sixteen groups of 16, one block to a batch (weights as Q6KWeights
// reads them); weight i's scale is the signed byte sc[i / 16].
struct Q6_KGroups : Q6_KLayout {
  static constexpr bool kSignedWeights = false;
  // Groups [g0, g0 + 16) of the row: block g0 / 16. Vector v: groups 2v
  // and 2v + 1, that is h = v / 4 and t = v % 4.
  static void Unpack(const uint8_t* row, int64_t g0, int, GroupBatch* out) {
    const uint8_t* b = row + g0 / 16 * kBytes;
    for (int v = 0; v < 8; ++v) out->w[v] = Q6KWeights(b, v / 4, v % 4);
    uint16_t h;
    std::memcpy(&h, b + 208, 2);
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(h));
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192));
    out->d_sc = {_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc))),
                 _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8))))};
  }
};

// One activation row's side of a batch, the same for every weight row: its
// quants and per-group scales and sums (int8_group_parts.h), the offset
// times each group's activation sum, and min_sign times that sum as f32
// (exact: below 2^24).
struct BatchActs {
  GroupActivations raw;
  V16 d;
  I16 offset_asum;
  V16 signed_asum;
};
template <class Type>
void PrepareActs(const Int8Activations& x, int64_t g0, int n, BatchActs* out) {
  GatherGroupActivations(x, Type::kSub, Type::kGroupsPerBlock, g0, n, &out->raw);
  out->d = {_mm256_load_ps(out->raw.d), _mm256_load_ps(out->raw.d + 8)};
  const I16 sums{_mm256_load_si256(reinterpret_cast<const __m256i*>(out->raw.asum)),
                 _mm256_load_si256(reinterpret_cast<const __m256i*>(out->raw.asum + 8))};
  const __m256i offset = _mm256_set1_epi32(Type::kWeightOffset);
  out->offset_asum = {_mm256_mullo_epi32(sums.lo, offset), _mm256_mullo_epi32(sums.hi, offset)};
  const __m256i sign = _mm256_set1_epi32(Type::kMinSign);
  out->signed_asum = {_mm256_cvtepi32_ps(_mm256_mullo_epi32(sums.lo, sign)),
                      _mm256_cvtepi32_ps(_mm256_mullo_epi32(sums.hi, sign))};
}

// Eight int32 lanes of partial sums per vector: pmaddubsw then pmaddwd.
template <bool kSigned>
inline __m256i PartialSums(__m256i w, __m256i a) {
  const __m256i pairs = kSigned ? _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w))
                                : _mm256_maddubs_epi16(w, a);
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// p[j] holds group j's eight partial sums: returns lane j = group j's sum.
inline __m256i SumsOfEight(const __m256i p[8]) {
  const __m256i h0 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
  const __m256i h1 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
  // h0: groups 0-3 over each 128-bit half; h1: groups 4-7.
  return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                          _mm256_permute2x128_si256(h0, h1, 0x31));
}

// p[v] holds group 2v's four partial sums in its low half and group
// 2v + 1's in its high half: returns lane j = group j's sum (j < 8).
inline __m256i SumsOfFourPairs(const __m256i p[4]) {
  const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
  // s: groups 0, 2, 4, 6 | 1, 3, 5, 7.
  return _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Lane g: group g's exact sum (the definition's integer) as f32, exact
// below 2^24 (C12.2); int8_group_rows.h's AccumulateBatch scales it.
template <class Type>
inline V16 GroupSums(const GroupBatch& batch, const BatchActs& a) {
  constexpr int kVectors = 16 * Type::kSub / 32;
  __m256i p[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    p[v] = PartialSums<Type::kSignedWeights>(
        batch.w[v], _mm256_load_si256(reinterpret_cast<const __m256i*>(a.raw.q + int64_t{32} * v)));
  }
  I16 dots;
  if constexpr (Type::kSub == 32) {
    dots = {SumsOfEight(p), SumsOfEight(p + 8)};
  } else {
    dots = {SumsOfFourPairs(p), SumsOfFourPairs(p + 4)};
  }
  if constexpr (Type::kWeightOffset != 0) {
    dots = {_mm256_sub_epi32(dots.lo, a.offset_asum.lo),
            _mm256_sub_epi32(dots.hi, a.offset_asum.hi)};
  }
  return {_mm256_cvtepi32_ps(dots.lo), _mm256_cvtepi32_ps(dots.hi)};
}

}  // namespace
}  // namespace samebits::kernels::internal

#include "engine/kernels/int8_group_rows.h"

namespace samebits::kernels::internal {

int64_t Avx2Int8Rows(QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                     const Int8Activations* x, int64_t m, int64_t k, float* y, int64_t ldy) {
  return GroupRows(type, rows, row_bytes, n, x, m, k, y, ldy);
}

}  // namespace samebits::kernels::internal
