// Block-quantized rows repacked for the integer profile's decode (C12):
// sixteen rows interleaved, so that the sixteen 32-bit lanes of a vector
// hold sixteen rows ("rows in lanes") and each scale group's exact integer
// sum forms in its row's lane with no horizontal sum. A layout only: the
// values are the GGUF blocks' (C12.2) and the kernels that read it keep
// C12.3's order, group by group in each row's sixteen f32 lanes.
//
// Q4_K, for each group of sixteen rows (rows past the matrix are zero)
// and, within it, each super-block b of the row, one tile of
// kQ4KRepackedTileBytes:
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 64)     dmin of rows 0..15 (F16)
//   [64, 320)    for scale group j = 0..7: 16 bytes sc (row r at byte r),
//                then 16 bytes mn
//   [320, 2368)  for group j, then quarter c = 0..3 (weights 8c..8c+7 of
//                the group): 64 bytes, row r's at 4r..4r+3, byte t holding
//                weight 8c + t in its low nibble and 8c + 4 + t in its high
// so that one 64-byte load and a mask give sixteen rows' four consecutive
// weights, each row's in its own lane.
//
// Q8_0, for each group of sixteen rows and each block b, one tile of
// kQ8RepackedTileBytes (the sixteen blocks' own bytes, reordered):
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 544)    for quarter-octet c = 0..7 (weights 4c..4c+3): 64 bytes,
//                row r's four at 4r..4r+3
//
// Q4_0, for each group of sixteen rows and each block b, one tile of
// kQ4_0RepackedTileBytes (the sixteen blocks' own bytes, reordered):
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 288)    for quarter c = 0..3 (weights 8c..8c+7): 64 bytes, row r's
//                at 4r..4r+3, byte t holding weight 8c + t in its low nibble
//                and 8c + 4 + t in its high (Q4_K's arrangement)
//
// Baseline-compiled: the model repacks once at load, for tables with a
// `gemv_quant_repacked` entry (kernels.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/numerics/quant_blocks.h"

namespace samebits::kernels {

inline constexpr int64_t kRepackRows = 16;
inline constexpr int64_t kQ4KRepackedTileBytes = 2368;
inline constexpr int64_t kQ8RepackedTileBytes = 544;
inline constexpr int64_t kQ4_0RepackedTileBytes = 288;

// Returns the bytes `rows` rows of k weights of `type` take repacked (rows
// rounded up to a multiple of kRepackRows), or 0 when `type` has no
// repacked form (every type but Q4_0, Q4_K and Q8_0).
int64_t RepackedBytes(numerics::QuantType type, int64_t rows, int64_t k);

// Writes the repacked form of the `rows` rows of `w` (row-major blocks of
// `type`, k weights a row) into `out`, RepackedBytes(type, rows, k) bytes.
void RepackRows(numerics::QuantType type, const std::byte* w, int64_t rows, int64_t k,
                std::byte* out);

}  // namespace samebits::kernels
