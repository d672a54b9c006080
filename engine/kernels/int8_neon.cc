// The integer profile's products (C12) in NEON, for all eight quantized
// types. Until these, the NEON table computed every output through the
// scalar definition, one weight at a time.
//
// A row is taken sixteen scale groups at a time, one group to an f32 lane
// (group g in lane g mod 16, C12.3; four q registers of lanes,
// neon_lanes.h), by the loops of int8_group_rows.h. Each group's weights are
// unpacked to signed bytes with their offset (8, 16 or 32) removed, so every
// type's quants lie in [-128, 127]. Their exact sums with the activations
// are SMULL / SMLAL2 (two products to an int16: |w| <= 128 and |a| <= 127,
// so 2 * 128 * 127 < 2^15) then SADALP into int32 lanes, and pairwise adds
// put group g's sum in lane g. The f32 steps are the definition's:
// fma(dot, (d * sc) * d_a) and, for the types with a min,
// fma(min_sign * asum, (m * mn) * d_a), then C1's tree.
//
// Baseline AArch64 (no dot-product extension), so it runs on every aarch64
// machine the NEON table does. Like every ISA file it exports only its
// functions (kernel_tables.h) and instantiates no standard-library template.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "engine/kernels/int8_group_parts.h"
#include "engine/kernels/int8_rows.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/neon_lanes.h"

namespace samebits::kernels::internal {
namespace {

using numerics::Int8Activations;
using numerics::QuantType;

// Sixteen consecutive scale groups of one weight row, as signed quants:
// w[2g] and w[2g + 1] group g's 32 weights (groups of 32), or w[g] group
// g's 16 (Q6_K's groups of 16), zero past the row's groups; lane g of d_sc
// and m_mn the group's exact d * sc and m * mn.
struct GroupBatch {
  int8x16_t w[32];
  V16 d_sc;
  V16 m_mn;
};

inline V16 HalvesToLanes(const HalfWords& h) {
  const auto eight = [&](int j) {
    return vreinterpretq_f16_u64(vcombine_u64(vcreate_u64(h.word[j]), vcreate_u64(h.word[j + 1])));
  };
  const float16x8_t lo = eight(0), hi = eight(2);
  return {{vcvt_f32_f16(vget_low_f16(lo)), vcvt_high_f32_f16(lo), vcvt_f32_f16(vget_low_f16(hi)),
           vcvt_high_f32_f16(hi)}};
}

// Sixteen bytes as f32 lanes times `scale` (exact: a byte times an F16).
inline V16 ScaledBytes(uint8x16_t bytes, float scale) {
  const uint16x8_t lo = vmovl_u8(vget_low_u8(bytes)), hi = vmovl_high_u8(bytes);
  return {{vmulq_n_f32(vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))), scale),
           vmulq_n_f32(vcvtq_f32_u32(vmovl_high_u16(lo)), scale),
           vmulq_n_f32(vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))), scale),
           vmulq_n_f32(vcvtq_f32_u32(vmovl_high_u16(hi)), scale)}};
}
inline V16 ScaledSignedBytes(int8x16_t bytes, float scale) {
  const int16x8_t lo = vmovl_s8(vget_low_s8(bytes)), hi = vmovl_high_s8(bytes);
  return {{vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), scale),
           vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(lo)), scale),
           vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), scale),
           vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(hi)), scale)}};
}

// Byte i: 16 when bit i of `bits` is set, else 0 (sixteen fifth bits of
// Q5_0 or Q5_1).
inline uint8x16_t FifthBits16(uint32_t bits) {
  const uint8x16_t spread = vcombine_u8(vdup_n_u8(static_cast<uint8_t>(bits & 0xFF)),
                                        vdup_n_u8(static_cast<uint8_t>((bits >> 8) & 0xFF)));
  const uint8x16_t bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ULL));
  return vandq_u8(vtstq_u8(spread, bit), vdupq_n_u8(16));
}

// Bits [shift_to_4 ... ] of each byte of `qh` moved to bit 4 and up, keeping
// `mask` (a left shift by 4 - s puts bit s at bit 4; negative shifts right).
inline uint8x16_t BitsAt4(uint8x16_t qh, int s, uint8_t mask) {
  return vandq_u8(vshlq_u8(qh, vdupq_n_s8(static_cast<int8_t>(4 - s))), vdupq_n_u8(mask));
}

inline int8x16_t MinusOffset(uint8x16_t u, int offset) {
  return vsubq_s8(vreinterpretq_s8_u8(u), vdupq_n_s8(static_cast<int8_t>(offset)));
}

// The blocks of 32, one group each (int8_group_parts.h's layouts).
template <class Layout>
struct Block32 : Layout {
  using Layout::kBytes, Layout::kHighBitsAt, Layout::kMinAt, Layout::kQuantsAt,
      Layout::kWeightOffset;
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    for (int g = 0; g < 16; ++g) {
      if (g >= n) {
        out->w[2 * g] = out->w[2 * g + 1] = vdupq_n_s8(0);
        continue;
      }
      const uint8_t* b = row + (g0 + g) * kBytes;
      const uint8x16_t v = vld1q_u8(b + kQuantsAt);
      uint8x16_t lo = vandq_u8(v, vdupq_n_u8(0x0F));
      uint8x16_t hi = vshrq_n_u8(v, 4);
      if constexpr (kHighBitsAt > 0) {
        uint32_t bits;
        std::memcpy(&bits, b + kHighBitsAt, 4);
        lo = vorrq_u8(lo, FifthBits16(bits));
        hi = vorrq_u8(hi, FifthBits16(bits >> 16));
      }
      out->w[2 * g] = MinusOffset(lo, kWeightOffset);
      out->w[2 * g + 1] = MinusOffset(hi, kWeightOffset);
    }
    out->d_sc = HalvesToLanes(BlockHalfWords(row, kBytes, g0, n, 0));
    if constexpr (kMinAt > 0) out->m_mn = HalvesToLanes(BlockHalfWords(row, kBytes, g0, n, kMinAt));
  }
};
using Q4_0Groups = Block32<Q4_0Layout>;
using Q4_1Groups = Block32<Q4_1Layout>;
using Q5_0Groups = Block32<Q5_0Layout>;
using Q5_1Groups = Block32<Q5_1Layout>;

// Q8_0: blocks of 34 bytes, an F16 d then 32 signed quants.
struct Q8_0Groups : Q8_0Layout {
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    for (int g = 0; g < 16; ++g) {
      const auto* q = reinterpret_cast<const int8_t*>(row + (g0 + g) * kBytes + 2);
      out->w[2 * g] = g < n ? vld1q_s8(q) : vdupq_n_s8(0);
      out->w[2 * g + 1] = g < n ? vld1q_s8(q + 16) : vdupq_n_s8(0);
    }
    out->d_sc = HalvesToLanes(BlockHalfWords(row, kBytes, g0, n, 0));
  }
};

// A Q4_K / Q5_K super-block's packed scales and mins (its 16 bytes from
// offset 4) to bytes [sc0 .. sc7, mn0 .. mn7], by get_scale_min_k4's rule
// (int8_x86_unpack.h's UnpackScalesAndMins in NEON: TBL gives 0 for an
// index past 15 as PSHUFB does for a set top bit).
inline uint8x16_t UnpackScalesAndMins(uint8x16_t v) {
  static constexpr uint8_t kX[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11};
  static constexpr uint8_t kY[16] = {255, 255, 255, 255, 0, 1, 2, 3,
                                     255, 255, 255, 255, 4, 5, 6, 7};
  static constexpr uint8_t kLow[16] = {63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0};
  static constexpr uint8_t kHigh[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15};
  const uint8x16_t x = vqtbl1q_u8(v, vld1q_u8(kX));
  const uint8x16_t y = vqtbl1q_u8(v, vld1q_u8(kY));
  const uint8x16_t low = vandq_u8(x, vld1q_u8(kLow));
  const uint8x16_t high_nibbles = vandq_u8(vshrq_n_u8(x, 4), vld1q_u8(kHigh));
  const uint8x16_t top_bits = vandq_u8(vshrq_n_u8(y, 2), vdupq_n_u8(0x30));
  return vorrq_u8(vorrq_u8(low, high_nibbles), top_bits);
}

// Q4_K and Q5_K: eight groups of 32 to a block (d, dmin, 12 bytes of
// scales, Q5_K's 32 bytes of fifth bits, 128 bytes of nibbles). Groups 2j
// and 2j + 1 are the low and high nibbles of quants 32j .. 32j + 31, their
// fifth bits bit 2j and 2j + 1 of qh[l]. A batch is one block or two.
template <bool kFifthBits>
struct KGroups : KQuantLayout<kFifthBits> {
  using KQuantLayout<kFifthBits>::kBytes, KQuantLayout<kFifthBits>::kQuantsAt;
  static void Unpack(const uint8_t* row, int64_t g0, int n, GroupBatch* out) {
    V16 d_sc[2], m_mn[2];
    for (int half = 0; half < 2; ++half) {
      int8x16_t* w = out->w + 16 * half;
      if (8 * half >= n) {
        for (int v = 0; v < 16; ++v) w[v] = vdupq_n_s8(0);
        d_sc[half] = m_mn[half] = Zero16();
        continue;
      }
      const uint8_t* b = row + (g0 / 8 + half) * kBytes;
      for (int j = 0; j < 4; ++j) {
        for (int l = 0; l < 2; ++l) {  // quants 32j + 16l .. 32j + 16l + 15
          const uint8x16_t q = vld1q_u8(b + kQuantsAt + 32 * j + 16 * l);
          uint8x16_t lo = vandq_u8(q, vdupq_n_u8(0x0F));
          uint8x16_t hi = vshrq_n_u8(q, 4);
          if constexpr (kFifthBits) {
            const uint8x16_t qh = vld1q_u8(b + 16 + 16 * l);
            lo = vorrq_u8(lo, BitsAt4(qh, 2 * j, 0x10));
            hi = vorrq_u8(hi, BitsAt4(qh, 2 * j + 1, 0x10));
          }
          w[2 * (2 * j) + l] = vreinterpretq_s8_u8(lo);
          w[2 * (2 * j + 1) + l] = vreinterpretq_s8_u8(hi);
        }
      }
      const uint8x16_t sm = UnpackScalesAndMins(vld1q_u8(b + 4));
      d_sc[half] = ScaledBytes(sm, HalfAt(b));
      m_mn[half] = ScaledBytes(vextq_u8(sm, sm, 8), HalfAt(b + 2));
    }
    // Lanes 0-7 the first block's (the low eight bytes of each), 8-15 the
    // second's.
    out->d_sc = {{d_sc[0].v[0], d_sc[0].v[1], d_sc[1].v[0], d_sc[1].v[1]}};
    out->m_mn = {{m_mn[0].v[0], m_mn[0].v[1], m_mn[1].v[0], m_mn[1].v[1]}};
  }
};
using Q4_KGroups = KGroups<false>;
using Q5_KGroups = KGroups<true>;

// Q6_K: sixteen groups of 16, one block to a batch. Weight 128 h + 32 t + l
// takes the low nibble of ql[64 h + l + 32 (t & 1)] (the high one when
// t >= 2) and bits 2t, 2t + 1 of qh[32 h + l] as bits 4-5, less 32; its
// scale is the signed byte sc[(128 h + 32 t + l) / 16].
struct Q6_KGroups : Q6_KLayout {
  static void Unpack(const uint8_t* row, int64_t g0, int, GroupBatch* out) {
    const uint8_t* b = row + g0 / 16 * kBytes;
    for (int g = 0; g < 16; ++g) {  // weights 16g .. 16g + 15
      const int h = g / 8, t = (g / 2) % 4, l = 16 * (g % 2);
      const uint8x16_t ql = vld1q_u8(b + 64 * h + 32 * (t & 1) + l);
      const uint8x16_t nibble = t < 2 ? vandq_u8(ql, vdupq_n_u8(0x0F)) : vshrq_n_u8(ql, 4);
      const uint8x16_t high = BitsAt4(vld1q_u8(b + 128 + 32 * h + l), 2 * t, 0x30);
      out->w[g] = MinusOffset(vorrq_u8(nibble, high), 32);
    }
    out->d_sc =
        ScaledSignedBytes(vld1q_s8(reinterpret_cast<const int8_t*>(b + 192)), HalfAt(b + 208));
  }
};

// One activation row's side of a batch, the same for every weight row: its
// quants and per-group scales and sums (int8_group_parts.h), and min_sign
// times each group's sum as f32 (exact: below 2^24).
struct BatchActs {
  GroupActivations raw;
  V16 d;
  V16 signed_asum;
};
template <class Type>
void PrepareActs(const Int8Activations& x, int64_t g0, int n, BatchActs* out) {
  GatherGroupActivations(x, Type::kSub, Type::kGroupsPerBlock, g0, n, &out->raw);
  out->d = LoadX(out->raw.d);
  for (int q = 0; q < 4; ++q) {
    out->signed_asum.v[q] = vcvtq_f32_s32(
        vmulq_n_s32(vld1q_s32(out->raw.asum + 4 * q), static_cast<int32_t>(Type::kMinSign)));
  }
}

// s plus the sixteen products w_i a_i, pairwise.
inline int32x4_t DotInto(int32x4_t s, int8x16_t w, int8x16_t a) {
  const int16x8_t pairs = vmlal_high_s8(vmull_s8(vget_low_s8(w), vget_low_s8(a)), w, a);
  return vpadalq_s16(s, pairs);
}

// Lane g: group g's exact sum (the definition's integer) as f32, exact
// below 2^24 (C12.2); int8_group_rows.h's AccumulateBatch scales it.
template <class Type>
inline V16 GroupSums(const GroupBatch& batch, const BatchActs& a) {
  constexpr int kVectorsPerGroup = Type::kSub / 16;
  V16 sums;
  for (int q = 0; q < 4; ++q) {
    int32x4_t s[4];
    for (int j = 0; j < 4; ++j) {
      const int g = 4 * q + j;
      s[j] = vdupq_n_s32(0);
      for (int v = 0; v < kVectorsPerGroup; ++v) {
        const int index = kVectorsPerGroup * g + v;
        s[j] = DotInto(s[j], batch.w[index], vld1q_s8(a.raw.q + 16 * index));
      }
    }
    sums.v[q] = vcvtq_f32_s32(vpaddq_s32(vpaddq_s32(s[0], s[1]), vpaddq_s32(s[2], s[3])));
  }
  return sums;
}

}  // namespace
}  // namespace samebits::kernels::internal

#include "engine/kernels/int8_group_rows.h"

namespace samebits::kernels::internal {

int64_t NeonInt8Rows(QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                     const Int8Activations* x, int64_t m, int64_t k, float* y, int64_t ldy) {
  return GroupRows(type, rows, row_bytes, n, x, m, k, y, ldy);
}

}  // namespace samebits::kernels::internal
