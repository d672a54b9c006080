#include "engine/kernels/int8_repack.h"

#include <cstring>

namespace samebits::kernels {
namespace {

uint8_t ByteAt(const std::byte* p, int64_t i) {
  return static_cast<uint8_t>(p[i]);
}

// Weight i (0..255) of a Q4_K block: 32 bytes of nibbles per pair of
// groups, the low nibbles group 2h, the high ones 2h + 1.
int Q4KWeight(const std::byte* block, int i) {
  const int group = i / 32, l = i % 32;
  const uint8_t byte = ByteAt(block + 16, 32 * (group / 2) + l);
  return group % 2 == 0 ? byte & 0x0F : byte >> 4;
}

void RepackQ4KTile(const std::byte* const rows[kRepackRows], std::byte* tile) {
  std::memset(tile, 0, kQ4KRepackedTileBytes);
  for (int r = 0; r < kRepackRows; ++r) {
    const std::byte* block = rows[r];
    if (block == nullptr) continue;  // past the matrix: zero
    std::memcpy(tile + 2 * r, block, 2);
    std::memcpy(tile + 32 + 2 * r, block + 2, 2);
    for (int j = 0; j < 8; ++j) {
      int sc, mn;
      numerics::KQuantScaleMin(j, block + 4, &sc, &mn);
      tile[64 + 32 * j + r] = static_cast<std::byte>(sc);
      tile[64 + 32 * j + 16 + r] = static_cast<std::byte>(mn);
      for (int c = 0; c < 4; ++c) {
        for (int t = 0; t < 4; ++t) {
          const int lo = Q4KWeight(block, 32 * j + 8 * c + t);
          const int hi = Q4KWeight(block, 32 * j + 8 * c + 4 + t);
          tile[320 + 64 * (4 * j + c) + 4 * r + t] = static_cast<std::byte>(lo | hi << 4);
        }
      }
    }
  }
}

void RepackQ8Tile(const std::byte* const rows[kRepackRows], std::byte* tile) {
  std::memset(tile, 0, kQ8RepackedTileBytes);
  for (int r = 0; r < kRepackRows; ++r) {
    const std::byte* block = rows[r];
    if (block == nullptr) continue;  // past the matrix: zero
    std::memcpy(tile + 2 * r, block, 2);
    for (int c = 0; c < 8; ++c) std::memcpy(tile + 32 + 64 * c + 4 * r, block + 2 + 4 * c, 4);
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
