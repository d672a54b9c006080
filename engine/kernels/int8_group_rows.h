// The integer profile's rows by scale groups (C12.3), written once for the
// ISA files that take every quantized type this way: int8_avx2.cc and
// int8_neon.cc. A row is taken sixteen scale groups at a time, one group to
// an f32 lane (group g in lane g mod 16); each batch of a weight row's
// groups is unpacked once for all m activation rows, whose sides of every
// batch are prepared once for all the weight rows. The ISA file forms each
// group's exact integer sum; the f32 steps are here, in the definition's
// order.
//
// Internal header: include it from an ISA file after its lanes header (V16,
// Zero16, Fma16, Mul16, TailMask, Reduce16) and its own GroupBatch (d_sc
// and m_mn lanes), BatchActs (d and signed_asum lanes), PrepareActs<Type>(x,
// g0, n, BatchActs*), GroupSums<Type>(batch, acts) (the exact group sums as
// f32 lanes) and the eight types' Groups structs (kSub, kMinSign and
// Unpack(row, g0, n, GroupBatch*)).
// Everything is in an anonymous namespace and nothing here instantiates a
// standard-library template (isa_symbols_test).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/kernels/int8_rows.h"
#include "engine/kernels/stream_prefetch.h"
#include "engine/numerics/int8_dot.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::kernels::internal {
namespace {

// Adds a batch's n groups to the lanes of one activation row: C12.3's f32
// steps, written once for both ISAs. Lane g takes fma(dot, (d * sc) * d_a)
// and, for the types with a min, fma(min_sign * asum, (m * mn) * d_a).
template <class Type>
inline V16 AccumulateBatch(const V16& acc, const GroupBatch& batch, const BatchActs& a, int n) {
  V16 updated = Fma16(GroupSums<Type>(batch, a), Mul16(batch.d_sc, a.d), acc);
  if constexpr (Type::kMinSign != 0) {
    updated = Fma16(a.signed_asum, Mul16(batch.m_mn, a.d), updated);
  }
  // Lanes past the row's groups keep their bits, as the definition's do
  // (an fma of zeros would turn a -0.0 lane into +0.0).
  return n == 16 ? updated : TailMask(n).Blend(acc, updated);
}

// Weight rows [0, n) against m activation rows (decode's one too); the
// lanes wait in this thread's scratch (Int8Scratch).
template <class Type>
int64_t GemmGroups(const std::byte* w, int64_t row_bytes, int64_t n,
                   const numerics::Int8Activations* x, int64_t m, int64_t k, float* y,
                   int64_t ldy) {
  const int64_t groups = k / Type::kSub, batches = (groups + 15) / 16;
  auto* acts = static_cast<BatchActs*>(
      Int8Scratch(static_cast<size_t>(m * batches) * sizeof(BatchActs) + m * sizeof(V16)));
  auto* acc = reinterpret_cast<V16*>(acts + m * batches);
  const auto count = [&](int64_t b) {
    return static_cast<int>(groups - 16 * b < 16 ? groups - 16 * b : 16);
  };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < batches; ++b) {
      PrepareActs<Type>(x[i], 16 * b, count(b), &acts[i * batches + b]);
    }
  }
  GroupBatch batch;
  for (int64_t r = 0; r < n; ++r) {
    const auto* row = reinterpret_cast<const uint8_t*>(w + r * row_bytes);
    HintStreamAhead(row, row_bytes);
    for (int64_t b = 0; b < batches; ++b) {
      Type::Unpack(row, 16 * b, count(b), &batch);
      for (int64_t i = 0; i < m; ++i) {
        const V16 lanes = b == 0 ? Zero16() : acc[i];
        acc[i] = AccumulateBatch<Type>(lanes, batch, acts[i * batches + b], count(b));
      }
    }
    for (int64_t i = 0; i < m; ++i) y[i * ldy + r] = Reduce16(acc[i]);
  }
  return n;
}

// The rows GemmGroups takes (Int8Rows of quant_int8_loops.h): every row of
// the eight quantized types, none of another.
inline int64_t GroupRows(numerics::QuantType type, const std::byte* rows, int64_t row_bytes,
                         int64_t n, const numerics::Int8Activations* x, int64_t m, int64_t k,
                         float* y, int64_t ldy) {
  using numerics::QuantType;
  switch (type) {
    case QuantType::kQ8_0:
      return GemmGroups<Q8_0Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ4_0:
      return GemmGroups<Q4_0Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ4_1:
      return GemmGroups<Q4_1Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ5_0:
      return GemmGroups<Q5_0Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ5_1:
      return GemmGroups<Q5_1Groups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ4_K:
      return GemmGroups<Q4_KGroups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ5_K:
      return GemmGroups<Q5_KGroups>(rows, row_bytes, n, x, m, k, y, ldy);
    case QuantType::kQ6_K:
      return GemmGroups<Q6_KGroups>(rows, row_bytes, n, x, m, k, y, ldy);
    default:
      return 0;
  }
}

}  // namespace
}  // namespace samebits::kernels::internal
