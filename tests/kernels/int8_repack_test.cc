// Rows repacked for the integer profile (engine/kernels/int8_repack.h): the
// layout holds every weight and scale of the original blocks, and every
// table's gemv_quant_repacked / gemm_quant_repacked gives
// numerics::DotInt8's bits on the original rows, for any row range,
// whatever the scales, reading nothing past the packed matrix and writing
// nothing but its outputs.
#include "engine/kernels/int8_repack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/kernels.h"
#include "engine/numerics/int8_dot.h"
#include "tests/kernels/kernel_test_helpers.h"
#include "tests/kernels/quant_test_blocks.h"

namespace samebits::kernels {
namespace {

using numerics::QuantType;
using testing::Bits;
using testing::GuardedBuffer;
using testing::kCanaryBits;
using testing::kGuardFloats;
using testing::MakeBlocks;
using testing::Scales;

constexpr int64_t kQ4KBytes = 144;

TEST(Int8Repack, OnlyQ4_0Q4KAndQ8_0HaveARepackedForm) {
  EXPECT_EQ(RepackedBytes(QuantType::kQ4_K, 17, 512), 4 * kQ4KRepackedTileBytes);
  EXPECT_EQ(RepackedBytes(QuantType::kQ4_K, 16, 256), kQ4KRepackedTileBytes);
  EXPECT_EQ(RepackedBytes(QuantType::kQ8_0, 17, 64), 4 * kQ8RepackedTileBytes);
  EXPECT_EQ(RepackedBytes(QuantType::kQ4_0, 17, 64), 4 * kQ4_0RepackedTileBytes);
  EXPECT_EQ(RepackedBytes(QuantType::kQ4_0, 16, 48), 0);  // not whole blocks
  for (QuantType type :
       {QuantType::kQ4_1, QuantType::kQ5_0, QuantType::kQ5_1, QuantType::kQ5_K, QuantType::kQ6_K}) {
    EXPECT_EQ(RepackedBytes(type, 16, 256), 0) << numerics::LayoutOf(type).name;
  }
  EXPECT_EQ(RepackedBytes(QuantType::kQ4_K, 0, 256), 0);
  EXPECT_EQ(RepackedBytes(QuantType::kQ4_K, 16, 100), 0);  // not whole blocks
  EXPECT_EQ(RepackedBytes(QuantType::kQ8_0, 16, 48), 0);
}

// Every Q4_K weight, scale and min of the original rows is where the
// layout says, and the rows past the matrix are zero.
TEST(Int8Repack, TheQ4KLayoutHoldsEveryValue) {
  const int64_t rows = 19, blocks = 2, k = 256 * blocks;
  const std::vector<uint8_t> w = MakeBlocks(QuantType::kQ4_K, rows, blocks, Scales::kFinite, 7);
  std::vector<std::byte> packed(static_cast<size_t>(RepackedBytes(QuantType::kQ4_K, rows, k)));
  RepackRows(QuantType::kQ4_K, reinterpret_cast<const std::byte*>(w.data()), rows, k,
             packed.data());
  const auto at = [&](int64_t offset) { return static_cast<int>(packed[offset]); };
  for (int64_t row = 0; row < 32; ++row) {
    const int64_t g = row / 16, r = row % 16;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t tile = (g * blocks + b) * kQ4KRepackedTileBytes;
      const uint8_t* block = w.data() + (row * blocks + b) * kQ4KBytes;
      numerics::IntegerBlock ib;
      if (row < rows) {
        numerics::UnpackIntegerBlock(QuantType::kQ4_K, reinterpret_cast<const std::byte*>(block),
                                     &ib);
      }
      for (int64_t byte = 0; byte < 2; ++byte) {
        EXPECT_EQ(at(tile + 2 * r + byte), row < rows ? block[byte] : 0);
        EXPECT_EQ(at(tile + 32 + 2 * r + byte), row < rows ? block[2 + byte] : 0);
      }
      for (int64_t j = 0; j < 8; ++j) {
        EXPECT_EQ(at(tile + 64 + 32 * j + r), row < rows ? ib.sc[j] : 0) << row << " " << j;
        EXPECT_EQ(at(tile + 64 + 32 * j + 16 + r), row < rows ? ib.mn[j] : 0) << row << " " << j;
        for (int64_t i = 0; i < 32; ++i) {
          const int c = i / 8, t = i % 4, high = i % 8 >= 4 ? 4 : 0;
          const int nibble = (at(tile + 320 + 64 * (4 * j + c) + 4 * r + t) >> high) & 0x0F;
          ASSERT_EQ(nibble, row < rows ? ib.q[32 * j + i] : 0)
              << "row " << row << " block " << b << " weight " << 32 * j + i;
        }
      }
    }
  }
}

// Q8_0's tiles hold the sixteen blocks' own bytes: each row's d, then its
// weights four at a time; rows past the matrix are zero.
TEST(Int8Repack, TheQ8_0LayoutHoldsEveryByte) {
  const int64_t rows = 18, blocks = 3, k = 32 * blocks;
  const std::vector<uint8_t> w = MakeBlocks(QuantType::kQ8_0, rows, blocks, Scales::kFinite, 8);
  std::vector<std::byte> packed(static_cast<size_t>(RepackedBytes(QuantType::kQ8_0, rows, k)));
  RepackRows(QuantType::kQ8_0, reinterpret_cast<const std::byte*>(w.data()), rows, k,
             packed.data());
  for (int64_t row = 0; row < 32; ++row) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t tile = (row / 16 * blocks + b) * kQ8RepackedTileBytes, r = row % 16;
      const uint8_t* block = w.data() + (row * blocks + b) * 34;
      const auto want = [&](int i) { return row < rows ? block[i] : 0; };
      EXPECT_EQ(static_cast<int>(packed[tile + 2 * r]), want(0));
      EXPECT_EQ(static_cast<int>(packed[tile + 2 * r + 1]), want(1));
      for (int64_t i = 0; i < 32; ++i) {
        ASSERT_EQ(static_cast<int>(packed[tile + 32 + 64 * (i / 4) + 4 * r + i % 4]), want(2 + i))
            << "row " << row << " block " << b << " weight " << i;
      }
    }
  }
}

// Q4_0's tiles hold the sixteen blocks' d, then every weight's nibble where
// the layout says (weight 8c + t in the low nibble of byte t of quarter c,
// 8c + 4 + t in its high); rows past the matrix are zero.
TEST(Int8Repack, TheQ4_0LayoutHoldsEveryValue) {
  const int64_t rows = 18, blocks = 3, k = 32 * blocks;
  const std::vector<uint8_t> w = MakeBlocks(QuantType::kQ4_0, rows, blocks, Scales::kFinite, 9);
  std::vector<std::byte> packed(static_cast<size_t>(RepackedBytes(QuantType::kQ4_0, rows, k)));
  RepackRows(QuantType::kQ4_0, reinterpret_cast<const std::byte*>(w.data()), rows, k,
             packed.data());
  for (int64_t row = 0; row < 32; ++row) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t tile = (row / 16 * blocks + b) * kQ4_0RepackedTileBytes, r = row % 16;
      const uint8_t* block = w.data() + (row * blocks + b) * 18;
      EXPECT_EQ(static_cast<int>(packed[tile + 2 * r]), row < rows ? block[0] : 0);
      EXPECT_EQ(static_cast<int>(packed[tile + 2 * r + 1]), row < rows ? block[1] : 0);
      // The definition's unpacking gives each weight (q - 8).
      numerics::IntegerBlock want;
      if (row < rows) {
        numerics::UnpackIntegerBlock(QuantType::kQ4_0, reinterpret_cast<const std::byte*>(block),
                                     &want);
      }
      for (int64_t i = 0; i < 32; ++i) {
        const auto byte = static_cast<int>(packed[tile + 32 + 64 * (i / 8) + 4 * r + i % 4]);
        const int nibble = i % 8 < 4 ? byte & 0x0F : byte >> 4;
        ASSERT_EQ(nibble, row < rows ? want.q[i] + 8 : 0)
            << "row " << row << " block " << b << " weight " << i;
      }
    }
  }
}

// One table's (or kernel's) repacked products; `gemm` null where a table
// has the decode entry alone (several activation rows then read the
// original rows, the model's RunMatTask); `gemm_rows`, the GEMM over rows
// quantized before, null with it.
struct Entry {
  std::string name;
  decltype(KernelTable::gemv_quant_repacked) gemv;
  decltype(KernelTable::gemm_quant_repacked) gemm;
  decltype(KernelTable::gemm_quant_repacked_rows) gemm_rows;
};

// Activations for case `seed`: mixed magnitudes (zeros, subnormals, huge)
// or uniform in [-1, 1), in turn. Mixed alone hides the f32 steps: a
// block's one huge value makes most quants 0 and the blocks' products
// differ in scale so much that a lane's second rounding never shows (a Q8_0
// GEMM with mul and add in place of its fma passed every mixed case).
testing::Mode ActivationMode(uint64_t seed) {
  return seed % 2 == 0 ? testing::Mode::kMixed : testing::Mode::kUnit;
}

// One repacked matrix against the definition on the original rows, by the
// GEMV (one activation row) and the GEMM (`m` rows, past one tile of 8
// when m > 8): every output of rows [begin, end) compared, the packed
// matrix ending at a guard page, the outputs fenced by canaries. Returns
// the outputs compared.
int ExpectRepackedProductsMatch(const Entry& e, QuantType type, int64_t rows, int64_t blocks,
                                int64_t m, Scales scales, uint64_t seed) {
  const numerics::QuantLayout& l = numerics::LayoutOf(type);
  const int64_t k = l.block_elements * blocks;
  const std::vector<uint8_t> w = MakeBlocks(type, rows, blocks, scales, seed);
  const auto* wb = reinterpret_cast<const std::byte*>(w.data());
  GuardedBuffer packed(static_cast<size_t>(RepackedBytes(type, rows, k)));
  EXPECT_NE(packed.data(), nullptr);
  if (packed.data() == nullptr) return 0;
  RepackRows(type, wb, rows, k, reinterpret_cast<std::byte*>(packed.data()));
  const auto* p = reinterpret_cast<const std::byte*>(packed.data());
  const std::vector<float> x =
      testing::MakeActivations(static_cast<size_t>(m * k), ActivationMode(seed), seed + 1);
  const int64_t begin = rows > 3 ? static_cast<int64_t>(seed % 3) : 0;
  const int64_t end = rows > 18 ? rows - 1 : rows, n = end - begin, ldy = n + 1;
  // Rows of ldy outputs: n of them, then a canary; canaries around all.
  std::vector<float> y(static_cast<size_t>(m * ldy + int64_t{2} * kGuardFloats)), y1(y.size());
  for (float& v : y) std::memcpy(&v, &kCanaryBits, 4);
  y1 = y;
  if (e.gemm != nullptr) e.gemm(x.data(), m, p, type, k, begin, end, y.data() + kGuardFloats, ldy);
  e.gemv(x.data() + (m - 1) * k, p, type, k, begin, end, y1.data() + kGuardFloats);
  if (e.gemm_rows != nullptr) {
    // The same rows quantized by the definition first: every byte of y,
    // outputs and canaries, the same.
    std::vector<numerics::Int8ActivationRow> quantized(static_cast<size_t>(m));
    std::vector<numerics::Int8Activations> views(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      quantized[static_cast<size_t>(i)].Quantize(type, x.data() + i * k, k);
      views[static_cast<size_t>(i)] = quantized[static_cast<size_t>(i)].View();
    }
    std::vector<float> y2(y.size());
    for (float& v : y2) std::memcpy(&v, &kCanaryBits, 4);
    e.gemm_rows(views.data(), m, p, type, k, begin, end, y2.data() + kGuardFloats, ldy);
    EXPECT_EQ(std::memcmp(y2.data(), y.data(), y.size() * sizeof(float)), 0)
        << e.name << " gemm over quantized rows " << l.name << " rows=" << rows
        << " blocks=" << blocks << " m=" << m;
  }
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t at = static_cast<int64_t>(i) - kGuardFloats;
    const bool output = at >= 0 && at < m * ldy && at % ldy < n;
    if (!output || e.gemm == nullptr) {
      EXPECT_EQ(Bits(y[i]), kCanaryBits) << e.name << " gemm wrote " << at;
    }
    if (!(at >= 0 && at < n)) {
      EXPECT_EQ(Bits(y1[i]), kCanaryBits) << e.name << " gemv wrote " << at;
    }
  }
  int checked = 0;
  for (int64_t i = 0; i < m; ++i) {
    if (e.gemm == nullptr && i != m - 1) continue;  // only the GEMV's row was computed
    numerics::Int8ActivationRow row;
    row.Quantize(type, x.data() + i * k, k);
    for (int64_t r = begin; r < end; ++r) {
      const float want = numerics::DotInt8(type, wb + r * blocks * l.block_bytes, row.View(), k);
      const float got = y[static_cast<size_t>(kGuardFloats + i * ldy + r - begin)];
      if (e.gemm != nullptr) {
        EXPECT_TRUE(Bits(got) == Bits(want) || (std::isnan(got) && std::isnan(want)))
            << e.name << " gemm " << l.name << " rows=" << rows << " blocks=" << blocks
            << " m=" << m << " output (" << i << ", " << r << "): 0x" << std::hex << Bits(got)
            << " vs the definition's 0x" << Bits(want);
        ++checked;
      }
      if (i == m - 1) {
        const float got1 = y1[static_cast<size_t>(kGuardFloats + r - begin)];
        EXPECT_TRUE(Bits(got1) == Bits(want) || (std::isnan(got1) && std::isnan(want)))
            << e.name << " gemv " << l.name << " rows=" << rows << " blocks=" << blocks << " row "
            << r << ": 0x" << std::hex << Bits(got1) << " vs the definition's 0x" << Bits(want);
        ++checked;
      }
    }
  }
  return checked;
}

// Every int8 table with repacked entries (on AVX-512 with VNNI, the VNNI
// kernels) and, where AVX-512 runs, its BW kernels, against the definition
// for Q4_0, Q4_K and Q8_0: row counts below, at and past one and two groups of
// 16, rows whose blocks fill the sixteen lanes not at all, exactly and
// past once or twice, row ranges starting and ending inside a group, 1 to
// 15 activation rows, and scales finite, infinite or NaN (NaN compares as
// NaN, C9).
TEST(Int8Repack, ProductsMatchTheDefinition) {
  std::vector<Entry> entries;
  for (Isa isa : AvailableIsas()) {
    const KernelTable& t = GetKernelTable(isa, numerics::QuantDot::kInt8);
    if (t.gemv_quant_repacked != nullptr) {
      entries.push_back(
          {IsaName(isa), t.gemv_quant_repacked, t.gemm_quant_repacked, t.gemm_quant_repacked_rows});
      EXPECT_EQ(t.gemm_quant_repacked_rows == nullptr, t.gemm_quant_repacked == nullptr)
          << IsaName(isa);
    }
  }
#if defined(SAMEBITS_KERNELS_HAVE_X86)
  if (IsaAvailable(Isa::kAvx512)) {
    entries.push_back({"avx512 bw", internal::Avx512GemvQuantRepacked,
                       internal::Avx512GemmQuantRepacked, internal::Avx512GemmQuantRepackedRows});
  }
#endif
  if (entries.empty()) GTEST_SKIP() << "no int8 table with repacked products on this machine";
  int checked = 0;
  uint64_t seed = 990000;
  for (const Entry& e : entries) {
    for (QuantType type : {QuantType::kQ4_0, QuantType::kQ4_K, QuantType::kQ8_0}) {
      const std::vector<int64_t> block_counts = type != QuantType::kQ4_K
                                                    ? std::vector<int64_t>{1, 3, 16, 17, 33}
                                                    : std::vector<int64_t>{1, 2, 5, 17};
      for (int64_t rows : {1, 15, 16, 17, 40}) {
        for (int64_t blocks : block_counts) {
          for (Scales scales : {Scales::kFinite, Scales::kInfinite, Scales::kNan}) {
            ++seed;
            // 1, 5 (4 + 1), 9 (8 + 1) and 15 (8 + 4 + 2 + 1): every size of
            // the AVX2 GEMM's runs of activation rows, and AVX-512's tile of 8.
            constexpr int64_t kRowCounts[] = {1, 5, 9, 15};
            const int64_t m = kRowCounts[seed % 4];
            checked += ExpectRepackedProductsMatch(e, type, rows, blocks, m, scales, seed);
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// The exact profile's tables have no repacked entries: the model repacks
// nothing for them.
TEST(Int8Repack, ExactTablesHaveNone) {
  for (Isa isa : AvailableIsas()) {
    const KernelTable& t = GetKernelTable(isa, numerics::QuantDot::kExact);
    EXPECT_EQ(t.gemv_quant_repacked, nullptr) << IsaName(isa);
    EXPECT_EQ(t.gemm_quant_repacked, nullptr) << IsaName(isa);
    EXPECT_EQ(t.gemm_quant_repacked_rows, nullptr) << IsaName(isa);
  }
}

}  // namespace
}  // namespace samebits::kernels
