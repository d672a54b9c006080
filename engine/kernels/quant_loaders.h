// Weight loaders for ggml's block-quantized types, written once over an ISA's
// vector operations `V`: each turns 16 consecutive weights of a row into 16
// f32 lanes holding exactly the values `numerics::DequantizeRow` gives (the
// same f32 operations in the same order: an exact integer -> f32
// conversion, then ggml's multiply and, where ggml has one, its separate
// add or subtract; never an fma), so a kernel that feeds these lanes to the
// C1 fma chains gives the bits of dequantize-then-F32-kernel. The formulas
// are those of engine/numerics/quant_blocks.cc.
//
// Internal header, like tiling.h: include it only from an ISA file, after
// that file's own `V` is declared; everything is in an anonymous namespace
// and is instantiated only with the file's own types (README.md).
//
// What `V` provides (I: 16 int32 lanes, F: 16 f32 lanes):
//   I V::U8(const uint8_t* p)        16 bytes zero-extended
//   I V::I8(const uint8_t* p)        16 bytes sign-extended
//   I V::And(I, int), V::Shr(I, int) (logical), V::Shl(I, int),
//     V::Or(I, I), V::AddInt(I, int)
//   I V::BitLanes(uint32_t bits)     lane i = (bits >> i) & 1
//   F V::ToF32(I)                    exact for the small integers here
//   F V::MulS(F, float), V::AddS(F, float), V::SubS(F, float)
//   float V::Half(const uint8_t* p)  a little-endian F16, converted exactly
// and, optionally (HasMulSubS below):
//   F V::MulSubS(F a, const float& b, const float& c)
//                                    a * b - c with one rounding (fused)
//
// A loader has `T` (uint8_t), `kStep` (the weights it prepares at once: 32,
// one block, or 256, a K-quant super-block), `RowStride(k)` and `Offset(c)`
// in bytes, a `Group` prepared by `At(row, c)` for the kStep weights from
// column c (a multiple of kStep) and `Lanes(group, s)`, the weights c + 16 s
// .. + 15.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "engine/numerics/quant_blocks.h"

namespace samebits::kernels::internal {
namespace {

using numerics::QuantType;

// The loader of `Q` over vector operations `V`, specialised below.
template <class V, QuantType Q>
struct QuantLoader;

// The layout facts every loader shares: blocks of `kElements` weights in
// `kBytes` bytes, rows of whole blocks.
template <int kElements, int kBytes>
struct BlockRows {
  using T = uint8_t;
  static constexpr int kStep = 32;
  static int64_t RowStride(int64_t k) { return k / kElements * kBytes; }
  static constexpr int64_t Offset(int64_t c) { return c / kElements * kBytes; }
  static const uint8_t* BlockAt(const uint8_t* row, int64_t c) { return row + Offset(c); }
};

// Blocks of 32 that start with their F16 scale `d`, then the quants.
template <class V, int kBytes>
struct ScaledBlocks : BlockRows<32, kBytes> {
  struct Group {
    float d;
    const uint8_t* q;
  };
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* b = BlockRows<32, kBytes>::BlockAt(row, c);
    return {V::Half(b), b + 2};
  }
};

// Returns weights 16 s .. 16 s + 15 of a block of 32 four-bit quants: the
// low nibbles of its 16 bytes `q` (s = 0), or the high ones (s = 1).
template <class V>
auto HalfNibbles(const uint8_t* q, int s) {
  const auto bytes = V::U8(q);
  return s == 0 ? V::And(bytes, 0x0F) : V::Shr(bytes, 4);
}

// Q8_0: w = q * d, q the signed byte.
template <class V>
struct QuantLoader<V, QuantType::kQ8_0> : ScaledBlocks<V, 34> {
  using Group = typename ScaledBlocks<V, 34>::Group;
  static auto Lanes(const Group& g, int s) { return V::MulS(V::ToF32(V::I8(g.q + 16 * s)), g.d); }
};

// Q4_0: w = (nibble - 8) * d; weights 0-15 are the low nibbles of the 16
// bytes, 16-31 the high ones.
template <class V>
struct QuantLoader<V, QuantType::kQ4_0> : ScaledBlocks<V, 18> {
  using Group = typename ScaledBlocks<V, 18>::Group;
  static auto Lanes(const Group& g, int s) {
    return V::MulS(V::ToF32(V::AddInt(HalfNibbles<V>(g.q, s), -8)), g.d);
  }
};

// Q4_1: w = nibble * d + m.
template <class V>
struct QuantLoader<V, QuantType::kQ4_1> : BlockRows<32, 20> {
  struct Group {
    float d, m;
    const uint8_t* q;
  };
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* b = BlockRows::BlockAt(row, c);
    return {V::Half(b), V::Half(b + 2), b + 4};
  }
  static auto Lanes(const Group& g, int s) {
    return V::AddS(V::MulS(V::ToF32(HalfNibbles<V>(g.q, s)), g.d), g.m);
  }
};

// Returns weight c + 16 s + i's five-bit quant of a Q5_0 / Q5_1 block: the
// nibble as in Q4_0, with bit 16 s + i of `qh` as its fifth bit.
template <class V>
auto FiveBits(const uint8_t* q, uint32_t qh, int s) {
  return V::Or(HalfNibbles<V>(q, s), V::Shl(V::BitLanes(qh >> (16 * s)), 4));
}

inline uint32_t U32At(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Q5_0: w = (q - 16) * d.
template <class V>
struct QuantLoader<V, QuantType::kQ5_0> : BlockRows<32, 22> {
  struct Group {
    float d;
    uint32_t qh;
    const uint8_t* q;
  };
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* b = BlockRows::BlockAt(row, c);
    return {V::Half(b), U32At(b + 2), b + 6};
  }
  static auto Lanes(const Group& g, int s) {
    return V::MulS(V::ToF32(V::AddInt(FiveBits<V>(g.q, g.qh, s), -16)), g.d);
  }
};

// Q5_1: w = q * d + m.
template <class V>
struct QuantLoader<V, QuantType::kQ5_1> : BlockRows<32, 24> {
  struct Group {
    float d, m;
    uint32_t qh;
    const uint8_t* q;
  };
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* b = BlockRows::BlockAt(row, c);
    return {V::Half(b), V::Half(b + 2), U32At(b + 4), b + 8};
  }
  static auto Lanes(const Group& g, int s) {
    return V::AddS(V::MulS(V::ToF32(FiveBits<V>(g.q, g.qh, s)), g.d), g.m);
  }
};

// ggml's get_scale_min_k4: the 6-bit scale and min of sub-block `j` of a
// Q4_K / Q5_K super-block's 12 packed scale bytes `q`.
inline void ScaleMinK4(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// The K-quants, a whole super-block of 256 weights at a time: At decodes
// its scales once, all of them, and Lanes reads the one it needs from
// memory, where a vector operation takes it as a broadcast operand
// (kGroupsInMemory, see BlockLoaderSteps).
struct KSuperBlock {
  const uint8_t* sb;
  // Q4_K and Q5_K: d and dmin are finite, so d1 * q is exact for every
  // quant (below, KHeaderFinite) and Lanes may fuse w = d1 * q - m1.
  bool exact_products = false;
  // Q4_K and Q5_K: d1 of sub-block t at t, m1 at 8 + t. Q6_K: d * sc of
  // weights 16 s .. 16 s + 15 at s.
  alignas(64) float scales[16];
};

template <int kBytes>
struct KSuperBlocks : BlockRows<256, kBytes> {
  static constexpr int kStep = 256;
  static constexpr bool kGroupsInMemory = true;
  using Group = KSuperBlock;
};

// Returns whether the F16 d and dmin heading a Q4_K / Q5_K super-block are
// both finite (their exponent bits not all ones). Then d1 = d * sc is exact
// in f32 (11 significant bits times at most 6), and so is d1 * q for a
// quant of at most 5 bits (22 bits, within f32's 24, far from overflow and
// from f32's subnormals): w = d1 * q - m1 rounds once, at the subtraction,
// and a fused multiply-subtract gives its bits. An infinite or NaN d or
// dmin keeps the separate multiply and subtract, whose NaN (which operand's
// payload and sign) the fused form need not reproduce.
inline bool KHeaderFinite(const uint8_t* sb) {
  const uint32_t halves = U32At(sb);
  return (halves & 0x7C00u) != 0x7C00u && (halves & 0x7C000000u) != 0x7C000000u;
}

// The loaders with a fused form of Lanes (Lanes<true>): BlockLoaderSteps
// uses it for a step whose groups all allow it (FusedLanesOk).
template <class L>
concept HasFusedLanes = requires(const typename L::Group& g) {
  { L::FusedLanesOk(g) } -> std::same_as<bool>;
};

// An ISA that decodes a Q4_K / Q5_K super-block's scales in vector lanes:
// V::KScalesMins(sb, out) writes ScaleMinK4's eight d1 = d * sc and eight
// m1 = dmin * m of the super-block at sb, as KScalesMinsOf below.
template <class V>
concept HasKScalesMins = requires(const uint8_t* sb, float* out) {
  V::KScalesMins(sb, out);
};

// Q4_K and Q5_K: super-blocks of 256 weights in 8 sub-blocks of 32, each
// with w = d1 * q - m1, d1 = d * sc and m1 = dmin * m (f32 products), d and
// dmin the F16 at bytes 0 and 2, sc and m packed in the 12 bytes from 4.
// Writes d1 of sub-block t to out[t], m1 to out[8 + t].
template <class V>
void KScalesMinsOf(const uint8_t* sb, float* out) {
  if constexpr (HasKScalesMins<V>) {
    V::KScalesMins(sb, out);
  } else {
    const float d = V::Half(sb);
    const float dmin = V::Half(sb + 2);
    for (int t = 0; t < 8; ++t) {
      int sc, m;
      ScaleMinK4(t, sb + 4, &sc, &m);
      out[t] = d * static_cast<float>(sc);
      out[8 + t] = dmin * static_cast<float>(m);
    }
  }
}

// An ISA with a fused multiply-subtract of two scalars (V::MulSubS).
template <class V>
concept HasMulSubS = requires(typename V::F a, const float& b) {
  V::MulSubS(a, b, b);
};

// Returns a * b - c (per lane) for a product a * b that is exact in f32: the
// fused form where V has one and kFused asks for it, else a multiply and a
// subtract. With the product exact, the multiply does not round, so both
// round once, the same difference: the same bits. Callers pass kFused only
// where they have shown the product exact (KSuperBlock::exact_products).
template <class V, bool kFused, class F>
F ExactProductMinus(F a, const float& b, const float& c) {
  if constexpr (kFused && HasMulSubS<V>) {
    return V::MulSubS(a, b, c);
  } else {
    return V::SubS(V::MulS(a, b), c);
  }
}

// Weights 16 s .. 16 s + 15 of a Q4_K / Q5_K super-block's low four bits:
// sub-block t = s / 2 is the low (t even) or high (t odd) nibbles of the 32
// bytes at 32 (t / 2) of `nibbles`. With kMasked false the low nibbles keep
// the high ones above them (for a lookup that reads the low four bits).
template <class V, bool kMasked>
auto KNibbles(const uint8_t* nibbles, int s) {
  const int t = s / 2;
  const auto bytes = V::U8(nibbles + int64_t{32} * (t / 2) + int64_t{16} * (s % 2));
  if ((t & 1) != 0) return V::Shr(bytes, 4);
  return kMasked ? V::And(bytes, 0x0F) : bytes;
}

// An ISA whose operations have a 16-entry lookup: V::Lookup16(table, q)
// gives lanes table[q & 15], V::Iota16() the integers 0 .. 15, V::F the
// float vector type.
template <class V>
concept HasLookup16 = requires {
  V::kLookup16;
};

// What Q4_K and Q5_K share: At decodes the scales and checks the header.
template <class V, int kBytes>
struct KScaledMinBlocks : KSuperBlocks<kBytes> {
  using Group = KSuperBlock;
  static Group At(const uint8_t* row, int64_t c) {
    Group g;
    g.sb = KSuperBlocks<kBytes>::BlockAt(row, c);
    KScalesMinsOf<V>(g.sb, g.scales);
    g.exact_products = KHeaderFinite(g.sb);
    return g;
  }
  static bool FusedLanesOk(const Group& g) { return g.exact_products; }
};

// Q4_K computed per quant.
template <class V>
struct Q4KArithmetic : KScaledMinBlocks<V, 144> {
  template <bool kFused = false>
  static auto Lanes(const KSuperBlock& g, int s) {
    const int t = s / 2;
    return ExactProductMinus<V, kFused>(V::ToF32(KNibbles<V, true>(g.sb + 16, s)), g.scales[t],
                                        g.scales[8 + t]);
  }
};

// Q4_K by lookup: a sub-block has only 16 distinct weights, so Lanes
// computes them, with the very f32 operations Q4KArithmetic applies to each
// quant (d1 * q - m1), and looks every quant up: the same bits in fewer
// instructions per weight. The compiler makes each sub-block's table once
// for its two calls and keeps it in a register. (Tables made in At would
// live in memory: BlockLoaderSteps prepares all its rows before it asks for
// lanes, and a GEMV block's 8 rows have 64 tables.)
template <class V>
struct Q4KLookup : Q4KArithmetic<V> {
  template <bool kFused = false>
  static auto Lanes(const KSuperBlock& g, int s) {
    const int t = s / 2;
    const auto table =
        ExactProductMinus<V, kFused>(V::ToF32(V::Iota16()), g.scales[t], g.scales[8 + t]);
    return V::Lookup16(table, KNibbles<V, false>(g.sb + 16, s));
  }
};

template <class V>
struct QuantLoader<V, QuantType::kQ4_K>
    : std::conditional_t<HasLookup16<V>, Q4KLookup<V>, Q4KArithmetic<V>> {};

// Q5_K: as Q4_K, with a fifth bit per quant: bit t of the 32 bytes at 16
// (the same byte index as the nibble's), the nibbles at 48.
template <class V>
struct QuantLoader<V, QuantType::kQ5_K> : KScaledMinBlocks<V, 176> {
  template <bool kFused = false>
  static auto Lanes(const KSuperBlock& g, int s) {
    const int t = s / 2;
    const auto fifth = V::Shl(V::And(V::Shr(V::U8(g.sb + 16 + int64_t{16} * (s % 2)), t), 1), 4);
    const auto q = V::Or(KNibbles<V, true>(g.sb + 48, s), fifth);
    return ExactProductMinus<V, kFused>(V::ToF32(q), g.scales[t], g.scales[8 + t]);
  }
};

// Q6_K: super-blocks of 256 weights in two halves of 128, each of four
// quarters of 32: w = (d * sc) * (q - 32) with d the F16 at byte 208 and a
// signed 8-bit scale per 16 weights (the 16 bytes at 192); half h's
// quarter u has the low (u < 2) or high nibbles of the 32 bytes at 64 h +
// 32 (u % 2) as its low four bits, and bits 2u, 2u + 1 of the 32 bytes at
// 128 + 32 h as its top two.
template <class V>
struct QuantLoader<V, QuantType::kQ6_K> : KSuperBlocks<210> {
  static Group At(const uint8_t* row, int64_t c) {
    Group g;
    g.sb = BlockAt(row, c);
    const float d = V::Half(g.sb + 208);
    for (int s = 0; s < 16; ++s) {
      g.scales[s] = d * static_cast<float>(static_cast<int8_t>(g.sb[192 + s]));
    }
    return g;
  }
  // Weights 16 s .. 16 s + 15: half s / 8, quarter u = s % 8 / 2, bytes
  // 16 (s % 2) onwards of its 32, and scale s.
  static auto Lanes(const Group& g, int s) {
    const int half = s / 8;
    const int u = s % 8 / 2;
    const int64_t l = int64_t{16} * (s % 2);
    const auto low = V::U8(g.sb + int64_t{64} * half + int64_t{32} * (u % 2) + l);
    const auto nibble = u >= 2 ? V::Shr(low, 4) : V::And(low, 0x0F);
    const auto top =
        V::Shl(V::And(V::Shr(V::U8(g.sb + 128 + int64_t{32} * half + l), 2 * u), 3), 4);
    return V::MulS(V::ToF32(V::AddInt(V::Or(nibble, top), -32)), g.scales[s]);
  }
};

}  // namespace
}  // namespace samebits::kernels::internal
