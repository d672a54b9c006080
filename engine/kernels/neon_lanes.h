// The contract's 16 virtual lanes (C1) in four q registers, for every NEON
// translation unit: matmul_neon.cc and int8_neon.cc. v[0] holds lanes 0-3,
// v[1] 4-7, v[2] 8-11, v[3] 12-15; the reduction tree is written here once
// so that the files cannot drift apart.
//
// Internal header: include it only from a NEON kernel file. Everything sits
// in an anonymous namespace, so each object file keeps its own private copy
// (engine/kernels/README.md).
#pragma once

#include <arm_neon.h>

#include <cstdint>

namespace samebits::kernels::internal {
namespace {

// The 16 virtual lanes.
struct V16 {
  float32x4_t v[4];
};

inline V16 LoadX(const float* p) {
  return {{vld1q_f32(p), vld1q_f32(p + 4), vld1q_f32(p + 8), vld1q_f32(p + 12)}};
}

// The F16 at p (little-endian) as f32: FCVTL is exact for every F16,
// subnormals included (FPCR.FZ and FZ16 are clear under Linux).
inline float HalfAt(const uint8_t* p) {
  const uint16x4_t h = vdup_n_u16(static_cast<uint16_t>(p[0] | (p[1] << 8)));
  return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(h)), 0);
}

inline V16 Zero16() {
  const float32x4_t z = vdupq_n_f32(0.0f);
  return {{z, z, z, z}};
}

// vfmaq_f32(acc, x, w) is acc + x * w with one rounding: fma(x, w, acc).
inline V16 Fma16(const V16& x, const V16& w, const V16& acc) {
  return {{vfmaq_f32(acc.v[0], x.v[0], w.v[0]), vfmaq_f32(acc.v[1], x.v[1], w.v[1]),
           vfmaq_f32(acc.v[2], x.v[2], w.v[2]), vfmaq_f32(acc.v[3], x.v[3], w.v[3])}};
}

inline V16 Mul16(const V16& a, const V16& b) {
  return {{vmulq_f32(a.v[0], b.v[0]), vmulq_f32(a.v[1], b.v[1]), vmulq_f32(a.v[2], b.v[2]),
           vmulq_f32(a.v[3], b.v[3])}};
}

// Selects the lanes of `updated` in [0, n) and those of `acc` elsewhere.
struct TailMask {
  explicit TailMask(int64_t n) {
    const uint32x4_t count = vdupq_n_u32(static_cast<uint32_t>(n));
    static const uint32_t kIndex[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int q = 0; q < 4; ++q) m[q] = vcltq_u32(vld1q_u32(kIndex + 4 * q), count);
  }
  V16 Blend(const V16& acc, const V16& updated) const {
    return {{vbslq_f32(m[0], updated.v[0], acc.v[0]), vbslq_f32(m[1], updated.v[1], acc.v[1]),
             vbslq_f32(m[2], updated.v[2], acc.v[2]), vbslq_f32(m[3], updated.v[3], acc.v[3])}};
  }
  uint32x4_t m[4];
};

// Returns the lanes reduced by the contract's tree:
// s8[j] = a[j] + a[j+8], s4[j] = s8[j] + s8[j+4], s2[j] = s4[j] + s4[j+2],
// s2[0] + s2[1].
inline float Reduce16(const V16& acc) {
  const float32x4_t s8_lo = vaddq_f32(acc.v[0], acc.v[2]);  // s8[0..3]
  const float32x4_t s8_hi = vaddq_f32(acc.v[1], acc.v[3]);  // s8[4..7]
  const float32x4_t s4 = vaddq_f32(s8_lo, s8_hi);
  const float32x2_t s2 = vadd_f32(vget_low_f32(s4), vget_high_f32(s4));
  return vget_lane_f32(s2, 0) + vget_lane_f32(s2, 1);
}

// 16 int32 lanes, as V16.
struct I16 {
  int32x4_t v[4];
};

}  // namespace
}  // namespace samebits::kernels::internal
