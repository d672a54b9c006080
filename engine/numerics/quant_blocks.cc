// Every expression below mirrors the f32 operation order of ggml's
// reference code (C's usual conversions: an integer quant meets a float
// scale as an exact int -> float conversion; `a*b*c` is `(a*b)*c`). The
// engine is built with -ffp-contract=off, so no product is fused into an
// add, as in ggml-base (built for the baseline ISA, without FMA).
#include "engine/numerics/quant_blocks.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>

#include "engine/numerics/block_bytes.h"
#include "engine/numerics/half.h"

namespace samebits::numerics {
namespace {

constexpr int kSuperBlock = 256;  // ggml's QK_K
// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below this is all zero.
constexpr float kGroupMaxEps = 1e-15f;

constexpr QuantLayout kLayouts[] = {
    {QuantType::kQ8_0, "Q8_0", "q8_0", 8, 32, 34, 7},
    {QuantType::kQ4_0, "Q4_0", "q4_0", 2, 32, 18, 2},
    {QuantType::kQ4_1, "Q4_1", "q4_1", 3, 32, 20, 3},
    {QuantType::kQ5_0, "Q5_0", "q5_0", 6, 32, 22, 8},
    {QuantType::kQ5_1, "Q5_1", "q5_1", 7, 32, 24, 9},
    {QuantType::kQ4_K, "Q4_K", "q4_k", 12, kSuperBlock, 144, 14},  // file type Q4_K_S
    {QuantType::kQ5_K, "Q5_K", "q5_k", 13, kSuperBlock, 176, 16},  // file type Q5_K_S
    {QuantType::kQ6_K, "Q6_K", "q6_k", 14, kSuperBlock, 210, 18},
};

using block_bytes::Byte;
using block_bytes::HalfAt;
using block_bytes::U32At;

// Stores `f` as F16 (round to nearest even, as GGML_FP32_TO_FP16) and
// returns the stored value read back exactly.
inline float PutHalf(std::byte* p, float f) {
  const F16 h = ToF16(f);
  p[0] = static_cast<std::byte>(h.bits & 0xff);
  p[1] = static_cast<std::byte>(h.bits >> 8);
  return ToFloat(h);
}
inline void PutU32(std::byte* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

// ggml's nearest_int: round to nearest even through the f32 adder (exact
// for |f| <= 2^22; beyond that the same bits as ggml, whatever they mean).
inline int NearestInt(float f) {
  const float v = f + 12582912.f;
  return static_cast<int>(std::bit_cast<uint32_t>(v) & 0x007fffffu) - 0x00400000;
}

// C's `(int8_t)f` / `(uint8_t)f` as x86 compilers do it: truncate toward
// zero to 32 bits (the "integer indefinite" INT32_MIN when out of range or
// NaN), then keep the low byte. In range this is exactly C's conversion.
inline int TruncLowByte(float f) {
  const int32_t i = (f > -2147483648.0f && f < 2147483648.0f) ? static_cast<int32_t>(f) : INT32_MIN;
  return static_cast<int>(static_cast<uint32_t>(i) & 0xffu);
}
inline int TruncToI8(float f) {
  return static_cast<int8_t>(static_cast<uint8_t>(TruncLowByte(f)));
}

inline int Clamp(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// ---------------------------------------------------------------- dequantize

void DequantQ8_0(const std::byte* b, float* y) {
  const float d = HalfAt(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(Byte(b, 2 + j))) * d;
}

void DequantQ4_0(const std::byte* b, float* y) {
  const float d = HalfAt(b);
  for (int j = 0; j < 16; ++j) {
    const uint8_t q = Byte(b, 2 + j);
    y[j] = static_cast<float>((q & 0x0F) - 8) * d;
    y[j + 16] = static_cast<float>((q >> 4) - 8) * d;
  }
}

void DequantQ4_1(const std::byte* b, float* y) {
  const float d = HalfAt(b), m = HalfAt(b + 2);
  for (int j = 0; j < 16; ++j) {
    const uint8_t q = Byte(b, 4 + j);
    y[j] = static_cast<float>(q & 0x0F) * d + m;
    y[j + 16] = static_cast<float>(q >> 4) * d + m;
  }
}

void DequantQ5_0(const std::byte* b, float* y) {
  const float d = HalfAt(b);
  const uint32_t qh = U32At(b + 2);
  for (int j = 0; j < 16; ++j) {
    const uint8_t q = Byte(b, 6 + j);
    const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    y[j] = static_cast<float>(((q & 0x0F) | h0) - 16) * d;
    y[j + 16] = static_cast<float>(((q >> 4) | h1) - 16) * d;
  }
}

void DequantQ5_1(const std::byte* b, float* y) {
  const float d = HalfAt(b), m = HalfAt(b + 2);
  const uint32_t qh = U32At(b + 4);
  for (int j = 0; j < 16; ++j) {
    const uint8_t q = Byte(b, 8 + j);
    const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    y[j] = static_cast<float>((q & 0x0F) | h0) * d + m;
    y[j + 16] = static_cast<float>((q >> 4) | h1) * d + m;
  }
}

// Q4_K and Q5_K: y = (d * sc) * q - (dmin * m) per 32-weight sub-block.
void DequantQ4_K(const std::byte* b, float* y) {
  const float d = HalfAt(b), dmin = HalfAt(b + 2);
  const std::byte* scales = b + 4;
  const std::byte* q = b + 16;
  for (int j = 0; j < 4; ++j) {  // 64 weights: sub-blocks 2j (low nibbles) and 2j+1 (high)
    int sc, m;
    KQuantScaleMin(2 * j, scales, &sc, &m);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
    KQuantScaleMin(2 * j + 1, scales, &sc, &m);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>(Byte(q, l) & 0xF) - m1;
    for (int l = 0; l < 32; ++l) y[32 + l] = d2 * static_cast<float>(Byte(q, l) >> 4) - m2;
    y += 64;
    q += 32;
  }
}

void DequantQ5_K(const std::byte* b, float* y) {
  const float d = HalfAt(b), dmin = HalfAt(b + 2);
  const std::byte* scales = b + 4;
  const std::byte* qh = b + 16;
  const std::byte* ql = b + 48;
  int u1 = 1, u2 = 2;
  for (int j = 0; j < 4; ++j) {
    int sc, m;
    KQuantScaleMin(2 * j, scales, &sc, &m);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
    KQuantScaleMin(2 * j + 1, scales, &sc, &m);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      const int q = (Byte(ql, l) & 0xF) + ((Byte(qh, l) & u1) ? 16 : 0);
      y[l] = d1 * static_cast<float>(q) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const int q = (Byte(ql, l) >> 4) + ((Byte(qh, l) & u2) ? 16 : 0);
      y[32 + l] = d2 * static_cast<float>(q) - m2;
    }
    y += 64;
    ql += 32;
    u1 <<= 2;
    u2 <<= 2;
  }
}

// Q6_K: y = (d * sc) * q with q in [-32, 31] and an 8-bit signed scale per 16 weights.
void DequantQ6_K(const std::byte* b, float* y) {
  const std::byte* ql = b;
  const std::byte* qh = b + 128;
  const std::byte* sc = b + 192;
  const float d = HalfAt(b + 208);
  for (int half = 0; half < 2; ++half) {  // 128 weights each
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const uint8_t h = Byte(qh, l);
      const int q1 = ((Byte(ql, l) & 0xF) | (((h >> 0) & 3) << 4)) - 32;
      const int q2 = ((Byte(ql, l + 32) & 0xF) | (((h >> 2) & 3) << 4)) - 32;
      const int q3 = ((Byte(ql, l) >> 4) | (((h >> 4) & 3) << 4)) - 32;
      const int q4 = ((Byte(ql, l + 32) >> 4) | (((h >> 6) & 3) << 4)) - 32;
      auto scale = [&](int k) { return static_cast<float>(static_cast<int8_t>(Byte(sc, k))); };
      y[l] = d * scale(is + 0) * static_cast<float>(q1);
      y[l + 32] = d * scale(is + 2) * static_cast<float>(q2);
      y[l + 64] = d * scale(is + 4) * static_cast<float>(q3);
      y[l + 96] = d * scale(is + 6) * static_cast<float>(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// ------------------------------------------------------------------ quantize

void QuantQ8_0(const float* x, std::byte* b) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) {
    const float a = std::fabs(x[j]);
    amax = amax > a ? amax : a;
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  PutHalf(b, d);
  for (int j = 0; j < 32; ++j) {
    b[2 + j] = static_cast<std::byte>(TruncLowByte(std::round(x[j] * id)));
  }
}

// The value of largest magnitude, first one on ties (ggml's `max` beside `amax`).
float SignedAbsMax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void MinMax(const float* x, int n, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

void QuantQ4_0(const float* x, std::byte* b) {
  const float d = SignedAbsMax(x, 32) / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  PutHalf(b, d);
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(15, TruncToI8(x[j] * id + 8.5f));
    const int q1 = std::min(15, TruncToI8(x[j + 16] * id + 8.5f));
    b[2 + j] = static_cast<std::byte>((q0 | (q1 << 4)) & 0xff);
  }
}

// Q4_1 / Q5_1: d = (max - min) / levels and m = min, stored as F16.
// Returns 1 / d (0 for a flat block) and sets *min.
float AffineBlockHeader(const float* x, float levels, std::byte* b, float* min) {
  float max;
  MinMax(x, 32, min, &max);
  const float d = (max - *min) / levels;
  PutHalf(b, d);
  PutHalf(b + 2, *min);
  return d != 0.0f ? 1.0f / d : 0.0f;
}

void QuantQ4_1(const float* x, std::byte* b) {
  float min;
  const float id = AffineBlockHeader(x, 15.0f, b, &min);
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(15, TruncToI8((x[j] - min) * id + 0.5f));
    const int q1 = std::min(15, TruncToI8((x[j + 16] - min) * id + 0.5f));
    b[4 + j] = static_cast<std::byte>((q0 | (q1 << 4)) & 0xff);
  }
}

// Packs 32 five-bit values as Q5_0 / Q5_1 do: low nibbles in `qs`, the
// fifth bits in a little-endian 32-bit `qh`.
void PackFiveBits(const int* q, std::byte* qh_out, std::byte* qs) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const uint32_t q0 = static_cast<uint8_t>(q[j]), q1 = static_cast<uint8_t>(q[j + 16]);
    qs[j] = static_cast<std::byte>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    qh |= ((q0 & 0x10u) >> 4) << j;
    qh |= ((q1 & 0x10u) >> 4) << (j + 16);
  }
  PutU32(qh_out, qh);
}

void QuantQ5_0(const float* x, std::byte* b) {
  const float d = SignedAbsMax(x, 32) / -16.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  PutHalf(b, d);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = std::min(31, TruncToI8(x[j] * id + 16.5f)) & 0xff;
  PackFiveBits(q, b + 2, b + 6);
}

void QuantQ5_1(const float* x, std::byte* b) {
  float min;
  const float id = AffineBlockHeader(x, 31.0f, b, &min);
  int q[32];
  // No clamp here in ggml either: `(uint8_t)(x0 + 0.5f)`.
  for (int j = 0; j < 32; ++j) q[j] = TruncLowByte((x[j] - min) * id + 0.5f);
  PackFiveBits(q, b + 4, b + 8);
}

// ggml's make_qkx2_quants: an affine quantization of n weights to
// [0, nmax] (scale and a non-positive min) minimising the weighted squared
// error over a small grid of scales. Returns the scale; *neg_min = -min.
float AffineQuants(int n, int nmax, const float* x, const float* w, uint8_t* L, float* neg_min,
                   float rmin, float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w = sum_w + w[i];
    sum_x = sum_x + w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *neg_min = -min;
    return 0.0f;
  }
  const float fmax = static_cast<float>(nmax);
  float iscale = fmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(Clamp(NearestInt(iscale * (x[i] - min)), 0, nmax));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = diff * diff;
    best_error = best_error + w[i] * diff;
  }
  uint8_t aux[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + fmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = Clamp(NearestInt(iscale * (x[i] - min)), 0, nmax);
      aux[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l = sum_l + w[i] * fl;
      sum_l2 = sum_l2 + w[i] * fl * fl;
      sum_xl = sum_xl + w[i] * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * static_cast<float>(aux[i]) + this_min - x[i];
        diff = diff * diff;
        cur_error = cur_error + w[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = aux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *neg_min = -min;
  return scale;
}

// Q4_K and Q5_K share everything but the quant width (nmax 15 or 31) and
// the search grid; `L` receives the 256 quants of one super-block.
void QuantKAffine(const float* x, std::byte* b, int nmax, float rmin, float rdelta, int nstep,
                  uint8_t* L) {
  float scales[8], mins[8], weights[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 = sum_x2 + xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = AffineQuants(32, nmax, xs, weights, L + 32 * j, &mins[j], rmin, rdelta, nstep);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::byte* packed = b + 4;
  std::memset(packed, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const int ls = std::min(63, NearestInt(inv_scale * scales[j]) & 0xff);
    const int lm = std::min(63, NearestInt(inv_min * mins[j]) & 0xff);
    if (j < 4) {
      packed[j] = static_cast<std::byte>(ls);
      packed[j + 4] = static_cast<std::byte>(lm);
    } else {
      packed[j + 4] = static_cast<std::byte>((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] |= static_cast<std::byte>((ls >> 4) << 6);
      packed[j] |= static_cast<std::byte>((lm >> 4) << 6);
    }
  }
  const float d = PutHalf(b, max_scale / 63.f);
  const float dmin = PutHalf(b + 2, max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    KQuantScaleMin(j, packed, &sc, &m);
    const float ds = d * static_cast<float>(sc);
    if (ds == 0.0f) continue;
    const float dm = dmin * static_cast<float>(m);
    for (int i = 0; i < 32; ++i) {
      L[32 * j + i] = static_cast<uint8_t>(Clamp(NearestInt((x[32 * j + i] + dm) / ds), 0, nmax));
    }
  }
}

void QuantQ4_K(const float* x, std::byte* b) {
  uint8_t L[kSuperBlock];
  QuantKAffine(x, b, 15, -1.f, 0.1f, 20, L);
  std::byte* q = b + 16;
  for (int j = 0; j < kSuperBlock; j += 64) {
    for (int l = 0; l < 32; ++l) q[l] = static_cast<std::byte>(L[j + l] | (L[j + l + 32] << 4));
    q += 32;
  }
}

void QuantQ5_K(const float* x, std::byte* b) {
  uint8_t L[kSuperBlock];
  QuantKAffine(x, b, 31, -0.5f, 0.1f, 15, L);
  std::byte* qh = b + 16;
  std::byte* ql = b + 48;
  std::memset(qh, 0, 32);
  int m1 = 1, m2 = 2;
  for (int n = 0; n < kSuperBlock; n += 64) {
    for (int j = 0; j < 32; ++j) {
      int l1 = L[n + j], l2 = L[n + j + 32];
      if (l1 > 15) {
        l1 -= 16;
        qh[j] |= static_cast<std::byte>(m1);
      }
      if (l2 > 15) {
        l2 -= 16;
        qh[j] |= static_cast<std::byte>(m2);
      }
      ql[j] = static_cast<std::byte>(l1 | (l2 << 4));
    }
    m1 <<= 2;
    m2 <<= 2;
    ql += 32;
  }
}

// ggml's make_qx_quants with rmse_type 1 (weights x^2) and no importance
// matrix: symmetric quants in [-nmax, nmax - 1] stored as l + nmax, the
// scale chosen among 19 candidates by weighted least squares.
float SymmetricQuants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const float fmax = static_cast<float>(nmax);
  float iscale = -fmax / max;
  auto fit = [&](float is_scale, float* sumlx, float* suml2) {
    *sumlx = 0;
    *suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = Clamp(NearestInt(is_scale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      const float fl = static_cast<float>(l);
      *sumlx = *sumlx + w * x[i] * fl;
      *suml2 = *suml2 + w * fl * fl;
    }
  };
  auto store = [&](float is_scale) {
    for (int i = 0; i < n; ++i) {
      L[i] = static_cast<int8_t>(nmax + Clamp(NearestInt(is_scale * x[i]), -nmax, nmax - 1));
    }
  };
  float sumlx, suml2;
  fit(iscale, &sumlx, &suml2);
  store(iscale);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(fmax + 0.1f * static_cast<float>(is)) / max;
    fit(iscale, &sumlx, &suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      store(iscale);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

void QuantQ6_K(const float* x, std::byte* b) {
  int8_t L[kSuperBlock];
  float scales[16];
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 16; ++ib) {
    scales[ib] = SymmetricQuants(16, 32, x + 16 * ib, L + 16 * ib);
    const float abs_scale = std::fabs(scales[ib]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[ib];
    }
  }
  std::memset(b, 0, 210);
  if (max_abs_scale < kGroupMaxEps) return;  // all zero, d = +0
  const float iscale = -128.f / max_scale;
  const float d = PutHalf(b + 208, 1 / iscale);
  std::byte* sc = b + 192;
  for (int ib = 0; ib < 16; ++ib) {
    sc[ib] = static_cast<std::byte>(std::min(127, NearestInt(iscale * scales[ib])) & 0xff);
  }
  for (int j = 0; j < 16; ++j) {
    const float ds = d * static_cast<float>(static_cast<int8_t>(sc[j]));
    if (ds == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      L[16 * j + i] = static_cast<int8_t>(Clamp(NearestInt(x[16 * j + i] / ds), -32, 31) + 32);
    }
  }
  std::byte* ql = b;
  std::byte* qh = b + 128;
  for (int j = 0; j < kSuperBlock; j += 128) {
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
      const int q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
      ql[l] = static_cast<std::byte>(q1 | (q3 << 4));
      ql[l + 32] = static_cast<std::byte>(q2 | (q4 << 4));
      qh[l] = static_cast<std::byte>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                     ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
}

using DequantFn = void (*)(const std::byte*, float*);
using QuantFn = void (*)(const float*, std::byte*);

DequantFn DequantOf(QuantType t) {
  switch (t) {
    case QuantType::kQ8_0:
      return DequantQ8_0;
    case QuantType::kQ4_0:
      return DequantQ4_0;
    case QuantType::kQ4_1:
      return DequantQ4_1;
    case QuantType::kQ5_0:
      return DequantQ5_0;
    case QuantType::kQ5_1:
      return DequantQ5_1;
    case QuantType::kQ4_K:
      return DequantQ4_K;
    case QuantType::kQ5_K:
      return DequantQ5_K;
    case QuantType::kQ6_K:
      return DequantQ6_K;
  }
  return DequantQ8_0;
}

QuantFn QuantOf(QuantType t) {
  switch (t) {
    case QuantType::kQ8_0:
      return QuantQ8_0;
    case QuantType::kQ4_0:
      return QuantQ4_0;
    case QuantType::kQ4_1:
      return QuantQ4_1;
    case QuantType::kQ5_0:
      return QuantQ5_0;
    case QuantType::kQ5_1:
      return QuantQ5_1;
    case QuantType::kQ4_K:
      return QuantQ4_K;
    case QuantType::kQ5_K:
      return QuantQ5_K;
    case QuantType::kQ6_K:
      return QuantQ6_K;
  }
  return QuantQ8_0;
}

}  // namespace

void KQuantScaleMin(int j, const std::byte* q, int* sc, int* m) {
  if (j < 4) {
    *sc = static_cast<uint8_t>(q[j]) & 63;
    *m = static_cast<uint8_t>(q[j + 4]) & 63;
  } else {
    const auto b = [q](int i) { return static_cast<int>(static_cast<uint8_t>(q[i])); };
    *sc = (b(j + 4) & 0xF) | ((b(j - 4) >> 6) << 4);
    *m = (b(j + 4) >> 4) | ((b(j) >> 6) << 4);
  }
}

std::span<const QuantLayout> QuantLayouts() {
  return kLayouts;
}

const QuantLayout& LayoutOf(QuantType type) {
  return kLayouts[static_cast<size_t>(type)];
}

const QuantLayout* FindQuantByGgmlType(uint32_t ggml_type) {
  for (const QuantLayout& l : kLayouts) {
    if (l.ggml_type == ggml_type) return &l;
  }
  return nullptr;
}

const QuantLayout* FindQuantById(std::string_view id) {
  for (const QuantLayout& l : kLayouts) {
    if (id == l.id) return &l;
  }
  return nullptr;
}

std::string QuantIdList() {
  std::string s;
  for (const QuantLayout& l : kLayouts) s += (s.empty() ? "" : ", ") + std::string(l.id);
  return s;
}

void DequantizeRow(QuantType type, const std::byte* blocks, int64_t n, float* out) {
  const QuantLayout& l = LayoutOf(type);
  const DequantFn fn = DequantOf(type);
  for (int64_t i = 0; i < n / l.block_elements; ++i) {
    fn(blocks + i * l.block_bytes, out + i * l.block_elements);
  }
}

void QuantizeRow(QuantType type, const float* x, int64_t n, std::byte* blocks) {
  const QuantLayout& l = LayoutOf(type);
  const QuantFn fn = QuantOf(type);
  for (int64_t i = 0; i < n / l.block_elements; ++i) {
    fn(x + i * l.block_elements, blocks + i * l.block_bytes);
  }
}

}  // namespace samebits::numerics
