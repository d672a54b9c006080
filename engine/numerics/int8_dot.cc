// The integer profile's scalar definition (README.md, C12). The unpacking
// below reads the same bits as quant_blocks.cc's dequantizers, keeping the
// quants as integers instead of multiplying them out.
#include "engine/numerics/int8_dot.h"

#include <bit>
#include <cfloat>
#include <cmath>

#include "engine/numerics/block_bytes.h"
#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"

namespace samebits::numerics {
namespace {

// A block whose largest magnitude is below this quantizes to zero (C12.1):
// then 1 / d and 127 / amax are always finite.
constexpr float kSmallestScaledMagnitude = 0x1p-100f;

using block_bytes::Byte;
using block_bytes::HalfAt;
using block_bytes::U32At;

// Byte i of p read as a two's-complement int8 (Q8_0's quants, Q6_K's scales).
int SignedByte(const std::byte* p, int i) {
  const int v = Byte(p, i);
  return v >= 128 ? v - 256 : v;
}

// One activation block of n values (C12.1). `n` is a constant and the
// loops have no early exit, so the compiler vectorizes them (at -O2 GCC 12
// vectorizes only loops of known trip count): the quantization of every
// matrix product's input is on the integer profile's path.
template <int n>
void QuantizeBlock(const float* x, bool k_quant_rule, int8_t* q, float* d) {
  // amax over the magnitudes' bit patterns: for non-negative floats the
  // integer order is the float order, and infinities and NaNs lie above
  // every finite value, so one integer maximum (a reduction the compiler
  // vectorizes, where a float one it may not reorder) gives both amax and
  // whether the block holds a non-finite value.
  int32_t largest = 0;
  for (int i = 0; i < n; ++i) {
    const int32_t magnitude = static_cast<int32_t>(std::bit_cast<uint32_t>(x[i]) & 0x7FFFFFFFu);
    largest = magnitude > largest ? magnitude : largest;
  }
  const bool finite = largest < 0x7F800000;
  const float amax = std::bit_cast<float>(largest);
  if (!finite || !(amax >= kSmallestScaledMagnitude)) {
    // Non-finite activations give a NaN scale, so every output the block
    // feeds is NaN (counted, as in the exact profile); tiny ones are zero.
    *d = finite ? 0.0f : NAN;
    for (int i = 0; i < n; ++i) q[i] = 0;
    return;
  }
  // Both rules scale by 127 / amax; they keep different scales, as ggml's
  // quantize_row_q8_K (f32 1 / id) and quantize_row_q8_0's SIMD forms (the
  // F16 nearest amax / 127) do.
  const float id = 127.0f / amax;
  *d = k_quant_rule ? 1.0f / id : ToFloat(ToF16(amax / 127.0f));
  for (int i = 0; i < n; ++i) {
    // Round half to even, as nearbyint, cvtps2dq and fcvtns do in the
    // default rounding mode: adding and subtracting 1.5 * 2^23 leaves the
    // nearest integer, ties to even, of any |v| < 2^22 (here |v| <= 127 up
    // to one rounding, so the clamp is a guard). Plain f32 additions, which
    // the compiler vectorizes, where nearbyint is a libm call on x86-64.
    constexpr float kRoundingShift = 12582912.0f;  // 1.5 * 2^23
    const float v = x[i] * id;
    const float r = (v + kRoundingShift) - kRoundingShift;
    q[i] = static_cast<int8_t>(r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r));
  }
}

void SetScales(IntegerBlock* out, int sub_blocks, int sc, int mn) {
  for (int j = 0; j < sub_blocks; ++j) {
    out->sc[j] = static_cast<int16_t>(sc);
    out->mn[j] = static_cast<int16_t>(mn);
  }
}

// Blocks of 32: the low nibbles are weights 0..15, the high ones 16..31;
// `qh` (when given) holds each weight's fifth bit.
void UnpackNibbles(const std::byte* nibbles, const uint32_t* qh, int offset, int16_t* q) {
  for (int j = 0; j < 16; ++j) {
    int lo = Byte(nibbles, j) & 0x0F, hi = Byte(nibbles, j) >> 4;
    if (qh != nullptr) {
      lo |= static_cast<int>(((*qh >> j) << 4) & 0x10);
      hi |= static_cast<int>((*qh >> (j + 12)) & 0x10);
    }
    q[j] = static_cast<int16_t>(lo - offset);
    q[j + 16] = static_cast<int16_t>(hi - offset);
  }
}

// Q4_K / Q5_K: sub-blocks 2j (low nibbles of 32 bytes) and 2j+1 (high),
// fifth bits (Q5_K) at bit 2j and 2j+1 of qh[l].
void UnpackKQuant(const std::byte* b, bool five_bits, IntegerBlock* out) {
  out->d = HalfAt(b);
  out->m = HalfAt(b + 2);
  out->min_sign = -1;
  out->sub = 32;
  const std::byte* scales = b + 4;
  const std::byte* qh = b + 16;
  const std::byte* ql = five_bits ? b + 48 : b + 16;
  for (int j = 0; j < 8; ++j) {
    int sc, mn;
    KQuantScaleMin(j, scales, &sc, &mn);
    out->sc[j] = static_cast<int16_t>(sc);
    out->mn[j] = static_cast<int16_t>(mn);
  }
  for (int j = 0; j < 4; ++j) {
    for (int l = 0; l < 32; ++l) {
      const int byte = Byte(ql, 32 * j + l);
      int lo = byte & 0xF, hi = byte >> 4;
      if (five_bits) {
        lo += (Byte(qh, l) >> (2 * j)) & 1 ? 16 : 0;
        hi += (Byte(qh, l) >> (2 * j + 1)) & 1 ? 16 : 0;
      }
      out->q[64 * j + l] = static_cast<int16_t>(lo);
      out->q[64 * j + 32 + l] = static_cast<int16_t>(hi);
    }
  }
}

// Q6_K: weight 128 h + 32 t + l takes the low nibble of ql[64 h + l + 32 (t & 1)]
// (the high one when t >= 2) and bits 2t, 2t+1 of qh[32 h + l]; its scale is
// sc[(128 h + 32 t + l) / 16].
void UnpackQ6K(const std::byte* b, IntegerBlock* out) {
  const std::byte* ql = b;
  const std::byte* qh = b + 128;
  const std::byte* sc = b + 192;
  out->d = HalfAt(b + 208);
  out->m = 0.0f;
  out->min_sign = 0;
  out->sub = 16;
  for (int j = 0; j < 16; ++j) {
    out->sc[j] = static_cast<int16_t>(SignedByte(sc, j));
    out->mn[j] = 0;
  }
  for (int h = 0; h < 2; ++h) {
    for (int t = 0; t < 4; ++t) {
      for (int l = 0; l < 32; ++l) {
        const int byte = Byte(ql, 64 * h + l + 32 * (t & 1));
        const int nibble = t < 2 ? byte & 0xF : byte >> 4;
        const int high = (Byte(qh, 32 * h + l) >> (2 * t)) & 3;
        out->q[128 * h + 32 * t + l] = static_cast<int16_t>((nibble | (high << 4)) - 32);
      }
    }
  }
}

}  // namespace

std::string_view QuantDotName(QuantDot profile) {
  return profile == QuantDot::kInt8 ? "int8" : "exact";
}

bool ParseQuantDot(std::string_view name, QuantDot* out) {
  if (name == "exact") {
    *out = QuantDot::kExact;
  } else if (name == "int8") {
    *out = QuantDot::kInt8;
  } else {
    return false;
  }
  return true;
}

int ActivationBlockElements(QuantType type) {
  return LayoutOf(type).block_elements;
}

void QuantizeActivations(QuantType type, const float* x, int64_t k, int8_t* q, float* d,
                         int16_t* sums) {
  const int block = ActivationBlockElements(type);
  for (int64_t b = 0; b < k / block; ++b) {
    if (block == 256) {
      QuantizeBlock<256>(x + b * block, /*k_quant_rule=*/true, q + b * block, d + b);
    } else {
      QuantizeBlock<32>(x + b * block, /*k_quant_rule=*/false, q + b * block, d + b);
    }
  }
  for (int64_t s = 0; s < k / kActivationSumSpan; ++s) {
    int sum = 0;
    for (int i = 0; i < kActivationSumSpan; ++i) sum += q[s * kActivationSumSpan + i];
    sums[s] = static_cast<int16_t>(sum);
  }
}

void Int8ActivationRow::Quantize(QuantType type, const float* x, int64_t k) {
  q_.resize(static_cast<size_t>(k));
  d_.resize(static_cast<size_t>(k / ActivationBlockElements(type)));
  sums_.resize(static_cast<size_t>(k / kActivationSumSpan));
  QuantizeActivations(type, x, k, q_.data(), d_.data(), sums_.data());
}

void UnpackIntegerBlock(QuantType type, const std::byte* b, IntegerBlock* out) {
  out->elements = LayoutOf(type).block_elements;
  out->sub = 32;
  out->m = 0.0f;
  out->min_sign = 0;
  switch (type) {
    case QuantType::kQ8_0:
      out->d = HalfAt(b);
      for (int i = 0; i < 32; ++i) out->q[i] = static_cast<int16_t>(SignedByte(b, 2 + i));
      SetScales(out, 1, 1, 0);
      return;
    case QuantType::kQ4_0:
      out->d = HalfAt(b);
      UnpackNibbles(b + 2, nullptr, 8, out->q);
      SetScales(out, 1, 1, 0);
      return;
    case QuantType::kQ4_1:
      out->d = HalfAt(b);
      out->m = HalfAt(b + 2);
      out->min_sign = 1;
      UnpackNibbles(b + 4, nullptr, 0, out->q);
      SetScales(out, 1, 1, 1);
      return;
    case QuantType::kQ5_0: {
      out->d = HalfAt(b);
      const uint32_t qh = U32At(b + 2);
      UnpackNibbles(b + 6, &qh, 16, out->q);
      SetScales(out, 1, 1, 0);
      return;
    }
    case QuantType::kQ5_1: {
      out->d = HalfAt(b);
      out->m = HalfAt(b + 2);
      out->min_sign = 1;
      const uint32_t qh = U32At(b + 4);
      UnpackNibbles(b + 8, &qh, 0, out->q);
      SetScales(out, 1, 1, 1);
      return;
    }
    case QuantType::kQ4_K:
      UnpackKQuant(b, /*five_bits=*/false, out);
      return;
    case QuantType::kQ5_K:
      UnpackKQuant(b, /*five_bits=*/true, out);
      return;
    case QuantType::kQ6_K:
      UnpackQ6K(b, out);
      return;
  }
}

GroupSums IntegerGroupSums(const IntegerBlock& w, int j, const int8_t* a) {
  // Bounds: |dot| <= 32 * 128 * 127 (Q8_0's) < 2^19, |asum| <= 32 * 127.
  GroupSums out;
  for (int i = j * w.sub; i < (j + 1) * w.sub; ++i) {
    out.dot += int32_t{w.q[i]} * a[i];
    out.asum += a[i];
  }
  return out;
}

float DotInt8(QuantType type, const std::byte* row, const Int8Activations& x, int64_t k) {
  const QuantLayout& layout = LayoutOf(type);
  float acc[kLanes] = {};
  IntegerBlock w;
  int64_t group = 0;
  for (int64_t b = 0; b < k / layout.block_elements; ++b) {
    UnpackIntegerBlock(type, row + b * layout.block_bytes, &w);
    const int8_t* a = x.q + b * layout.block_elements;
    for (int j = 0; j < w.elements / w.sub; ++j, ++group) {
      const GroupSums sums = IntegerGroupSums(w, j, a);
      float& lane = acc[group % kLanes];
      // d * sc and m * mn are exact (F16 times a 6- or 8-bit integer).
      const float scale = (w.d * static_cast<float>(w.sc[j])) * x.d[b];
      lane = std::fma(static_cast<float>(sums.dot), scale, lane);
      if (w.min_sign != 0) {
        const float min = (w.m * static_cast<float>(w.mn[j])) * x.d[b];
        lane = std::fma(static_cast<float>(w.min_sign * sums.asum), min, lane);
      }
    }
  }
  return ReduceLanes(acc);
}

}  // namespace samebits::numerics
