// The NEON kernel table (aarch64). The contract's 16 virtual lanes (C1) live
// in four q registers: v[0] holds lanes 0-3, v[1] 4-7, v[2] 8-11, v[3]
// 12-15. Each lane is one fma chain in index order; a k tail is computed on
// a zero-padded copy and then selected in only for its own lanes (a plain
// fma(0, 0, acc) would turn a -0.0 lane into +0.0); the lanes are reduced by
// the fixed 16 -> 8 -> 4 -> 2 -> 1 tree. The register block itself is
// register_block.h's, over this file's vector operations (`Ops`).
#include <arm_neon.h>

#include <cmath>
#include <cstdint>

#include "engine/kernels/attention_loops.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/neon_lanes.h"
#include "engine/kernels/quant_int8_loops.h"
#include "engine/kernels/quant_loaders.h"
#include "engine/kernels/register_block.h"
#include "engine/kernels/tiling.h"

namespace samebits::kernels::internal {
namespace {

// Weight loaders: 16 weights as 16 exact f32 lanes.
struct LoadF32 {
  using T = float;
  static V16 Full(const float* p) { return LoadX(p); }
};
struct LoadBF16 {
  using T = uint16_t;
  // A BF16 is the top half of an f32: widening and shifting left by 16 is
  // exact (USHLL / USHLL2).
  static V16 Full(const uint16_t* p) {
    const uint16x8_t a = vld1q_u16(p);
    const uint16x8_t b = vld1q_u16(p + 8);
    return {{vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(a), 16)),
             vreinterpretq_f32_u32(vshll_high_n_u16(a, 16)),
             vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(b), 16)),
             vreinterpretq_f32_u32(vshll_high_n_u16(b, 16))}};
  }
};
struct LoadF16 {
  using T = uint16_t;
  // FCVTL is exact for every F16, subnormals included (FPCR.FZ and FZ16
  // are clear under Linux).
  static V16 Full(const uint16_t* p) {
    const float16x8_t a = vreinterpretq_f16_u16(vld1q_u16(p));
    const float16x8_t b = vreinterpretq_f16_u16(vld1q_u16(p + 8));
    return {{vcvt_f32_f16(vget_low_f16(a)), vcvt_high_f32_f16(a), vcvt_f32_f16(vget_low_f16(b)),
             vcvt_high_f32_f16(b)}};
  }
};

// The vector operations quant_loaders.h builds its loaders from, and
// BlockLoaderSteps (tiling.h) runs its fma chains with.
struct Ops {
  using V = V16;
  // No masked loads: register_block.h's zero-padded tail blends with this.
  using TailMask = internal::TailMask;
  static V16 Zero() { return Zero16(); }
  static V16 LoadX(const float* p) { return internal::LoadX(p); }
  static V16 Fma(const V16& x, const V16& w, const V16& acc) { return Fma16(x, w, acc); }
  static float Reduce(const V16& acc) { return Reduce16(acc); }
  static I16 U8(const uint8_t* p) {
    const uint8x16_t b = vld1q_u8(p);
    const uint16x8_t lo = vmovl_u8(vget_low_u8(b));
    const uint16x8_t hi = vmovl_high_u8(b);
    return {{vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo))),
             vreinterpretq_s32_u32(vmovl_high_u16(lo)),
             vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi))),
             vreinterpretq_s32_u32(vmovl_high_u16(hi))}};
  }
  static I16 I8(const uint8_t* p) {
    const int8x16_t b = vreinterpretq_s8_u8(vld1q_u8(p));
    const int16x8_t lo = vmovl_s8(vget_low_s8(b));
    const int16x8_t hi = vmovl_high_s8(b);
    return {{vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)),
             vmovl_high_s16(hi)}};
  }
  static I16 And(const I16& a, int b) {
    const int32x4_t m = vdupq_n_s32(b);
    return {
        {vandq_s32(a.v[0], m), vandq_s32(a.v[1], m), vandq_s32(a.v[2], m), vandq_s32(a.v[3], m)}};
  }
  // USHL by a negative count is a logical right shift.
  static I16 Shr(const I16& a, int n) {
    const int32x4_t count = vdupq_n_s32(-n);
    I16 r;
    for (int q = 0; q < 4; ++q) {
      r.v[q] = vreinterpretq_s32_u32(vshlq_u32(vreinterpretq_u32_s32(a.v[q]), count));
    }
    return r;
  }
  static I16 Shl(const I16& a, int n) {
    const int32x4_t count = vdupq_n_s32(n);
    return {{vshlq_s32(a.v[0], count), vshlq_s32(a.v[1], count), vshlq_s32(a.v[2], count),
             vshlq_s32(a.v[3], count)}};
  }
  static I16 Or(const I16& a, const I16& b) {
    return {{vorrq_s32(a.v[0], b.v[0]), vorrq_s32(a.v[1], b.v[1]), vorrq_s32(a.v[2], b.v[2]),
             vorrq_s32(a.v[3], b.v[3])}};
  }
  static I16 AddInt(const I16& a, int b) {
    const int32x4_t v = vdupq_n_s32(b);
    return {
        {vaddq_s32(a.v[0], v), vaddq_s32(a.v[1], v), vaddq_s32(a.v[2], v), vaddq_s32(a.v[3], v)}};
  }
  static I16 BitLanes(uint32_t bits) {
    static const int32_t kDown[16] = {0,  -1, -2,  -3,  -4,  -5,  -6,  -7,
                                      -8, -9, -10, -11, -12, -13, -14, -15};
    const uint32x4_t b = vdupq_n_u32(bits);
    const uint32x4_t one = vdupq_n_u32(1);
    I16 r;
    for (int q = 0; q < 4; ++q) {
      r.v[q] = vreinterpretq_s32_u32(vandq_u32(vshlq_u32(b, vld1q_s32(kDown + 4 * q)), one));
    }
    return r;
  }
  static V16 ToF32(const I16& a) {
    return {{vcvtq_f32_s32(a.v[0]), vcvtq_f32_s32(a.v[1]), vcvtq_f32_s32(a.v[2]),
             vcvtq_f32_s32(a.v[3])}};
  }
  static V16 MulS(const V16& a, float b) {
    return {{vmulq_n_f32(a.v[0], b), vmulq_n_f32(a.v[1], b), vmulq_n_f32(a.v[2], b),
             vmulq_n_f32(a.v[3], b)}};
  }
  static V16 AddS(const V16& a, float b) {
    const float32x4_t v = vdupq_n_f32(b);
    return {
        {vaddq_f32(a.v[0], v), vaddq_f32(a.v[1], v), vaddq_f32(a.v[2], v), vaddq_f32(a.v[3], v)}};
  }
  static V16 SubS(const V16& a, float b) {
    const float32x4_t v = vdupq_n_f32(b);
    return {
        {vsubq_f32(a.v[0], v), vsubq_f32(a.v[1], v), vsubq_f32(a.v[2], v), vsubq_f32(a.v[3], v)}};
  }
  // FCVTL: exact for every F16, subnormals included.
  static float Half(const uint8_t* p) { return HalfAt(p); }
};

// What tiling.h needs: GEMV takes four rows at a time (sixteen q
// accumulators of the thirty-two registers give sixteen independent fma
// chains); GEMM blocks are up to 2 activation rows x 3 weight rows, i.e. 24
// of the 32 q registers as accumulators.
struct Neon {
  using F32 = LoadF32;
  using F16 = LoadF16;
  using BF16 = LoadBF16;
  template <QuantType Q>
  using Quant = QuantLoader<Ops, Q>;
  static constexpr int kGemvRows = 4;
  static constexpr Hints kGemvHints = Hints::kNextBlock;
  static constexpr int kMaxMi = 2;
  static constexpr int kMaxRj = 3;
  template <class L, int MI, int RJ, Hints kHints>
  static constexpr BlockFn<typename L::T> kBlock = RegisterBlock<Ops, L, MI, RJ, kHints>;
};

void Axpy(float p, const float* v, float* o, int64_t n) {
  const float32x4_t pv = vdupq_n_f32(p);
  int64_t d = 0;
  for (; d + 4 <= n; d += 4) vst1q_f32(o + d, vfmaq_f32(vld1q_f32(o + d), pv, vld1q_f32(v + d)));
  // Elementwise, so a scalar fma (one FMADD on aarch64) gives the same bits
  // as a vector lane.
  for (; d < n; ++d) o[d] = __builtin_fmaf(p, v[d], o[d]);  // not std::fma: a weak symbol
}

}  // namespace

const KernelTable& NeonTable() {
  static constexpr KernelTable kTable{Isa::kNeon, Gemv<Neon>, Gemm<Neon>, Dot<Neon>, Axpy,
                                      AttentionScoresBy<Dot<Neon>>, AttentionValuesBy<Axpy>,
                                      ScalarExpPortable, ScalarSoftmaxPortable, GemvQuant<Neon>,
                                      GemmQuant<Neon>,
                                      // The integer profile: int8_neon.cc takes every row of the
                                      // quantized types; the definition would have any other.
                                      Int8Products<numerics::DotInt8, NeonInt8Rows>::Gemv,
                                      Int8Products<numerics::DotInt8, NeonInt8Rows>::Gemm};
  return kTable;
}

}  // namespace samebits::kernels::internal
