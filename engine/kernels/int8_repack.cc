#include "engine/kernels/int8_repack.h"

#include <cstring>

namespace samebits::kernels {
namespace {

// Writes weights q[0..7] (each below 16) as one row's four bytes of a
// repacked quarter: byte t holds q[t] in its low nibble, q[4 + t] in its high.
void PackNibbleQuarter(const uint8_t q[8], std::byte* out) {
  for (int64_t t = 0; t < 4; ++t) out[t] = static_cast<std::byte>(q[t] | q[4 + t] << 4);
}

// The 256 weights of a Q4_K block in order: 32 bytes of nibbles per pair
// of groups, the low nibbles group 2h, the high ones 2h + 1.
void Q4KWeights(const std::byte* block, uint8_t out[256]) {
  for (int64_t h = 0; h < 4; ++h) {
    for (int64_t l = 0; l < 32; ++l) {
      const auto byte = static_cast<uint8_t>(block[16 + 32 * h + l]);
      out[64 * h + l] = byte & 0x0F;
      out[64 * h + 32 + l] = byte >> 4;
    }
  }
}

void RepackQ4KTile(const std::byte* const rows[kRepackRows], std::byte* tile) {
  std::memset(tile, 0, kQ4KRepackedTileBytes);
  for (int64_t r = 0; r < kRepackRows; ++r) {
    const std::byte* block = rows[r];
    if (block == nullptr) continue;  // past the matrix: zero
    std::memcpy(tile + 2 * r, block, 2);
    std::memcpy(tile + 32 + 2 * r, block + 2, 2);
    uint8_t w[256];
    Q4KWeights(block, w);
    for (int64_t j = 0; j < 8; ++j) {
      int sc, mn;
      numerics::KQuantScaleMin(j, block + 4, &sc, &mn);
      tile[64 + 32 * j + r] = static_cast<std::byte>(sc);
      tile[64 + 32 * j + 16 + r] = static_cast<std::byte>(mn);
      for (int64_t c = 0; c < 4; ++c) {
        PackNibbleQuarter(w + 32 * j + 8 * c, tile + 320 + 64 * (4 * j + c) + 4 * r);
      }
    }
  }
}

void RepackQ8Tile(const std::byte* const rows[kRepackRows], std::byte* tile) {
  std::memset(tile, 0, kQ8RepackedTileBytes);
  for (int64_t r = 0; r < kRepackRows; ++r) {
    const std::byte* block = rows[r];
    if (block == nullptr) continue;  // past the matrix: zero
    std::memcpy(tile + 2 * r, block, 2);
    for (int64_t c = 0; c < 8; ++c) std::memcpy(tile + 32 + 64 * c + 4 * r, block + 2 + 4 * c, 4);
  }
}

// Q4_0's weight j is the low nibble of quant byte j, weight 16 + j its high.
void RepackQ4_0Tile(const std::byte* const rows[kRepackRows], std::byte* tile) {
  std::memset(tile, 0, kQ4_0RepackedTileBytes);
  for (int64_t r = 0; r < kRepackRows; ++r) {
    const std::byte* block = rows[r];
    if (block == nullptr) continue;  // past the matrix: zero
    std::memcpy(tile + 2 * r, block, 2);
    uint8_t w[32];
    for (int64_t j = 0; j < 16; ++j) {
      const auto byte = static_cast<uint8_t>(block[2 + j]);
      w[j] = byte & 0x0F;
      w[16 + j] = byte >> 4;
    }
    for (int64_t c = 0; c < 4; ++c) PackNibbleQuarter(w + 8 * c, tile + 32 + 64 * c + 4 * r);
  }
}

// The tile of a type with a repacked form, and what writes one.
struct RepackedForm {
  int64_t tile_bytes = 0;
  void (*repack)(const std::byte* const rows[kRepackRows], std::byte* tile) = nullptr;
};

RepackedForm FormOf(numerics::QuantType type) {
  switch (type) {
    case numerics::QuantType::kQ4_K:
      return {kQ4KRepackedTileBytes, RepackQ4KTile};
    case numerics::QuantType::kQ8_0:
      return {kQ8RepackedTileBytes, RepackQ8Tile};
    case numerics::QuantType::kQ4_0:
      return {kQ4_0RepackedTileBytes, RepackQ4_0Tile};
    default:
      return {};
  }
}

}  // namespace

int64_t RepackedBytes(numerics::QuantType type, int64_t rows, int64_t k) {
  const RepackedForm form = FormOf(type);
  const int64_t block = numerics::LayoutOf(type).block_elements;
  if (form.repack == nullptr || rows <= 0 || k <= 0 || k % block != 0) return 0;
  const int64_t groups = (rows + kRepackRows - 1) / kRepackRows;
  return groups * (k / block) * form.tile_bytes;
}

void RepackRows(numerics::QuantType type, const std::byte* w, int64_t rows, int64_t k,
                std::byte* out) {
  if (RepackedBytes(type, rows, k) == 0) return;
  const RepackedForm form = FormOf(type);
  const numerics::QuantLayout& layout = numerics::LayoutOf(type);
  const int64_t blocks = k / layout.block_elements, row_bytes = blocks * layout.block_bytes;
  for (int64_t g = 0; g * kRepackRows < rows; ++g) {
    for (int64_t b = 0; b < blocks; ++b) {
      const std::byte* sources[kRepackRows];
      for (int64_t r = 0; r < kRepackRows; ++r) {
        const int64_t row = g * kRepackRows + r;
        sources[r] = row < rows ? w + row * row_bytes + b * layout.block_bytes : nullptr;
      }
      form.repack(sources, out + (g * blocks + b) * form.tile_bytes);
    }
  }
}

}  // namespace samebits::kernels
