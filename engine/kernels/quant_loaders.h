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
//
// A loader has `T` (uint8_t), `kStep` (the weights it prepares at once: 32,
// one block or sub-block), `RowStride(k)` and `Offset(c)` in bytes, a
// `Group` prepared by `At(row, c)` for the kStep weights from column c (a
// multiple of kStep) and `Lanes(group, s)`, the weights c + 16 s .. + 15.
#pragma once

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

// Q4_K and Q5_K: super-blocks of 256 weights in 8 sub-blocks of 32, each
// with w = d1 * q - m1, d1 = d * sc and m1 = dmin * m (f32 products).
// Sub-block t's nibbles are the low (t even) or high (t odd) halves of the
// 32 bytes at 32 (t / 2).
struct KSubBlock {
  float d1, m1;
  const uint8_t* q;   // the sub-block's 32 nibble bytes
  int high;           // 1: the high nibbles
  const uint8_t* qh;  // Q5_K: the super-block's 32 fifth-bit bytes (bit t)
  int t;
};

inline KSubBlock KSubBlockAt(const uint8_t* sb, int64_t c, float d, float dmin,
                             const uint8_t* nibbles) {
  const int t = static_cast<int>(c % 256 / 32);
  int sc, m;
  ScaleMinK4(t, sb + 4, &sc, &m);
  return {d * static_cast<float>(sc),
          dmin * static_cast<float>(m),
          nibbles + 32 * (t / 2),
          t & 1,
          nullptr,
          t};
}

template <class V>
auto KNibbles(const KSubBlock& g, int s) {
  const auto bytes = V::U8(g.q + 16 * s);
  return g.high ? V::Shr(bytes, 4) : V::And(bytes, 0x0F);
}

// An ISA whose operations have a 16-entry lookup: V::Lookup16(table, q)
// gives lanes table[q & 15], V::Iota16() the integers 0 .. 15, V::F the
// float vector type, and V::KScalesMins(sb, out) the eight d1 = d * sc and
// eight m1 = dmin * m of the super-block at sb at once (ScaleMinK4's values).
template <class V>
concept HasLookup16 = requires {
  V::kLookup16;
};

// Q4_K computed per quant, one sub-block at a time.
template <class V>
struct Q4KArithmetic : BlockRows<256, 144> {
  using Group = KSubBlock;
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* sb = BlockRows::BlockAt(row, c);
    return KSubBlockAt(sb, c, V::Half(sb), V::Half(sb + 2), sb + 16);
  }
  static auto Lanes(const Group& g, int s) {
    return V::SubS(V::MulS(V::ToF32(KNibbles<V>(g, s)), g.d1), g.m1);
  }
};

// Q4_K by lookup, a whole super-block at a time: a sub-block has only 16
// distinct weights, so Lanes computes them once per sub-block, with the
// very f32 operations Q4KArithmetic applies to each quant (d1 * q - m1, d1
// = d * sc and m1 = dmin * m), and looks every quant up: the same bits in
// fewer instructions per weight. At decodes the super-block's scales once,
// all eight at a time.
//
// Why the tables are made in Lanes rather than in At: BlockLoaderSteps
// prepares all its rows before it asks for lanes, so tables made in At (8
// per row, 64 for a GEMV block) live in memory, and a super-block costs
// each row 8 vector stores and 16 loads beside its lookups. Made in Lanes,
// the compiler makes each sub-block's table once for its two calls and
// keeps it in a register.
template <class V>
struct Q4KLookup : BlockRows<256, 144> {
  static constexpr int kStep = 256;
  static constexpr bool kGroupsInMemory = true;  // see BlockLoaderSteps
  struct Group {
    const uint8_t* q;  // the super-block's 128 nibble bytes
    // d1 of sub-block t at t, m1 at 8 + t; read one at a time from memory,
    // which a vector operation takes as a broadcast operand.
    alignas(64) float d1m1[16];
  };
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* sb = BlockRows::BlockAt(row, c);
    Group g;
    g.q = sb + 16;
    V::KScalesMins(sb, g.d1m1);
    return g;
  }
  // Weights 16 s .. 16 s + 15 of the super-block: sub-block t = s / 2, the
  // low (t even) or high nibbles of the 32 bytes at 32 (t / 2). The lookup
  // reads the low four bits only, so the low nibbles need no mask.
  static auto Lanes(const Group& g, int s) {
    const int t = s / 2;
    const auto table = V::SubS(V::MulS(V::ToF32(V::Iota16()), g.d1m1[t]), g.d1m1[8 + t]);
    const auto bytes = V::U8(g.q + 32 * (t / 2) + 16 * (s % 2));
    return V::Lookup16(table, (t & 1) != 0 ? V::Shr(bytes, 4) : bytes);
  }
};

template <class V>
struct QuantLoader<V, QuantType::kQ4_K>
    : std::conditional_t<HasLookup16<V>, Q4KLookup<V>, Q4KArithmetic<V>> {};

template <class V>
struct QuantLoader<V, QuantType::kQ5_K> : BlockRows<256, 176> {
  using Group = KSubBlock;
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* sb = BlockRows::BlockAt(row, c);
    KSubBlock g = KSubBlockAt(sb, c, V::Half(sb), V::Half(sb + 2), sb + 48);
    g.qh = sb + 16;
    return g;
  }
  static auto Lanes(const Group& g, int s) {
    const auto fifth = V::Shl(V::And(V::Shr(V::U8(g.qh + 16 * s), g.t), 1), 4);
    return V::SubS(V::MulS(V::ToF32(V::Or(KNibbles<V>(g, s), fifth)), g.d1), g.m1);
  }
};

// Q6_K: super-blocks of 256 weights in two halves of 128, each of four
// quarters of 32: w = (d * sc) * (q - 32) with a signed 8-bit scale per 16
// weights; quarter u's low four bits are the low (u < 2) or high nibbles of
// the 32 bytes at 32 (u % 2), its top two bits are bits 2u, 2u + 1 of the
// half's 32 high bytes.
template <class V>
struct QuantLoader<V, QuantType::kQ6_K> : BlockRows<256, 210> {
  struct Group {
    float d;
    const uint8_t* ql;
    const uint8_t* qh;
    const uint8_t* sc;  // the quarter's two scales
    int high;
    int shift;
  };
  static Group At(const uint8_t* row, int64_t c) {
    const uint8_t* sb = BlockRows::BlockAt(row, c);
    const int half = static_cast<int>(c % 256 / 128);
    const int u = static_cast<int>(c % 128 / 32);
    return {V::Half(sb + 208),
            sb + 64 * half + 32 * (u % 2),
            sb + 128 + 32 * half,
            sb + 192 + 8 * half + 2 * u,
            u / 2,
            2 * u};
  }
  static auto Lanes(const Group& g, int s) {
    const auto low = V::U8(g.ql + 16 * s);
    const auto nibble = g.high ? V::Shr(low, 4) : V::And(low, 0x0F);
    const auto top = V::Shl(V::And(V::Shr(V::U8(g.qh + 16 * s), g.shift), 3), 4);
    const float ds = g.d * static_cast<float>(static_cast<int8_t>(g.sc[s]));
    return V::MulS(V::ToF32(V::AddInt(V::Or(nibble, top), -32)), ds);
  }
};

}  // namespace
}  // namespace samebits::kernels::internal
