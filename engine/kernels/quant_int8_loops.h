// The integer profile's GEMV and GEMM (C12) over an ISA's one-row dot
// product, written once. Internal header like tiling.h: include it only from
// an ISA file, whose `RowDot` computes numerics::DotInt8's bits.
//
// `RowDot(type, row, x, k)` returns one output; the loops only decide which
// outputs to compute, so every table gives the same bits as its RowDot.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/kernels/int8_rows.h"
#include "engine/kernels/stream_prefetch.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::kernels::internal {
namespace {

using Int8RowDot = float (*)(numerics::QuantType, const std::byte*,
                             const numerics::Int8Activations&, int64_t);
// Computes the first weight rows of `n` consecutive ones (`rows`,
// `row_bytes` apart) against m activation rows: y[i * ldy + j] for i < m
// and j below the count it returns, each output with RowDot's bits. It
// chooses how many (0 for a type or shape it does not cover); RowDot does
// the rest.
using Int8Rows = int64_t (*)(numerics::QuantType, const std::byte* rows, int64_t row_bytes,
                             int64_t n, const numerics::Int8Activations* x, int64_t m, int64_t k,
                             float* y, int64_t ldy);

// Takes no rows: every row goes through RowDot.
inline int64_t NoRows(numerics::QuantType, const std::byte*, int64_t, int64_t,
                      const numerics::Int8Activations*, int64_t, int64_t, float*, int64_t) {
  return 0;
}

template <Int8RowDot RowDot, Int8Rows Rows = NoRows>
struct Int8Products {
  static void Gemm(const float* x, int64_t m, const std::byte* w, numerics::QuantType type,
                   int64_t k, int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
    const numerics::QuantLayout& l = numerics::LayoutOf(type);
    const int64_t row_bytes = k / l.block_elements * l.block_bytes;
    const numerics::Int8Activations* rows = QuantizedRows(type, x, m, k);
    int64_t r = row_begin;
    r += Rows(type, w + r * row_bytes, row_bytes, row_end - row_begin, rows, m, k, y, ldy);
    // Weight row outermost: it stays in cache while every activation row
    // meets it.
    for (; r < row_end; ++r) {
      const std::byte* row = w + r * row_bytes;
      HintStreamAhead(row, row_bytes);
      for (int64_t i = 0; i < m; ++i) y[i * ldy + (r - row_begin)] = RowDot(type, row, rows[i], k);
    }
  }
  static void Gemv(const float* x, const std::byte* w, numerics::QuantType type, int64_t k,
                   int64_t row_begin, int64_t row_end, float* y) {
    Gemm(x, 1, w, type, k, row_begin, row_end, y, 0);
  }
};

}  // namespace
}  // namespace samebits::kernels::internal
