// The quantized GEMV / GEMM entries of every kernel table against their
// contract, bit for bit: each output equals `numerics::Dot` over the row as
// `numerics::DequantizeRow` writes it (the scalar table's definition), and
// equals the same table's F32 kernel run on that dequantized row. Over
// every block type, 1 to several blocks per row, 1 to 9 rows, row ranges
// not starting at 0, misaligned activations and blocks, random blocks with
// extreme F16 scales (zero, subnormal, largest, infinite, NaN), canaries
// around the outputs and inputs ending at a PROT_NONE page.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/numerics/half.h"
#include "engine/numerics/int8_dot.h"
#include "engine/numerics/lanes.h"
#include "engine/numerics/quant_blocks.h"
#include "tests/kernels/kernel_test_helpers.h"
#include "tests/kernels/quant_test_blocks.h"

namespace samebits::kernels {
namespace {

using numerics::QuantLayout;
using testing::Bits;
using testing::GuardedBuffer;
using testing::kCanaryBits;
using testing::kGuardFloats;
using testing::MakeBlocks;
using testing::PutF16;
using testing::Scales;
using testing::SplitMix64;

// Returns W's rows dequantized by ggml's reference routine.
std::vector<float> Dequantized(QuantType type, const uint8_t* w, int64_t rows, int64_t k) {
  std::vector<float> out(static_cast<size_t>(rows * k));
  numerics::DequantizeRow(type, reinterpret_cast<const std::byte*>(w), rows * k, out.data());
  return out;
}

struct QuantCase {
  QuantType type;
  int64_t blocks;  // per row
  int64_t rows;
  int64_t row_begin, row_end;
  int x_misalign;  // floats
  int w_misalign;  // bytes
  Scales scales;
  testing::Mode mode;
  uint64_t seed;
};

std::string Describe(const QuantCase& c) {
  std::ostringstream s;
  s << numerics::LayoutOf(c.type).name << " blocks=" << c.blocks << " rows=" << c.rows << " ["
    << c.row_begin << ", " << c.row_end << ") misalign x=" << c.x_misalign << " w=" << c.w_misalign
    << " scales=" << static_cast<int>(c.scales) << " mode=" << testing::ModeName(c.mode)
    << " seed=" << c.seed;
  return s.str();
}

// Runs the table's gemv_quant (and gemm_quant over m activation rows) on the
// case and compares every output with the contract. Returns "" when every
// bit matches.
std::string CheckQuant(const KernelTable& t, const QuantCase& c, int64_t m) {
  const QuantLayout& l = numerics::LayoutOf(c.type);
  const int64_t k = c.blocks * l.block_elements;
  const std::vector<uint8_t> blocks = MakeBlocks(c.type, c.rows, c.blocks, c.scales, c.seed);
  std::vector<uint8_t> wbuf(blocks.size() + static_cast<size_t>(c.w_misalign));
  std::memcpy(wbuf.data() + c.w_misalign, blocks.data(), blocks.size());
  const auto* w = reinterpret_cast<const std::byte*>(wbuf.data() + c.w_misalign);
  const std::vector<float> x0 =
      testing::MakeActivations(static_cast<size_t>(m * k), c.mode, c.seed + 1);
  std::vector<float> xbuf(x0.size() + static_cast<size_t>(c.x_misalign));
  std::memcpy(xbuf.data() + c.x_misalign, x0.data(), x0.size() * sizeof(float));
  const float* x = xbuf.data() + c.x_misalign;
  const std::vector<float> deq = Dequantized(c.type, blocks.data(), c.rows, k);

  const int64_t n = c.row_end - c.row_begin;
  const int64_t ldy = n + 1;  // one column between rows stays a canary
  float canary;
  std::memcpy(&canary, &kCanaryBits, sizeof(canary));
  std::vector<float> y(static_cast<size_t>(m * ldy + int64_t{2} * kGuardFloats), canary);
  std::vector<float> y_f32(static_cast<size_t>(n));
  float* out = y.data() + kGuardFloats;
  if (m == 1) {
    t.gemv_quant(x, w, c.type, k, c.row_begin, c.row_end, out);
  } else {
    t.gemm_quant(x, m, w, c.type, k, c.row_begin, c.row_end, out, ldy);
  }
  for (int64_t i = 0; i < m; ++i) {
    const float* xi = x + i * k;
    // The same table's F32 kernel on the dequantized rows.
    t.gemv(xi, deq.data(), DType::kF32, k, c.row_begin, c.row_end, y_f32.data());
    for (int64_t r = c.row_begin; r < c.row_end; ++r) {
      const float got = out[i * ldy + (r - c.row_begin)];
      const float want = numerics::Dot(xi, deq.data() + r * k, static_cast<size_t>(k));
      if (Bits(got) != Bits(want) ||
          Bits(got) != Bits(y_f32[static_cast<size_t>(r - c.row_begin)])) {
        std::ostringstream s;
        s << IsaName(t.isa) << " " << Describe(c) << " m=" << m << ": output (" << i << ", " << r
          << ") has bits 0x" << std::hex << Bits(got) << ", dequantize-then-Dot gives 0x"
          << Bits(want) << ", dequantize-then-F32-kernel 0x"
          << Bits(y_f32[static_cast<size_t>(r - c.row_begin)]);
        return s.str();
      }
    }
  }
  for (size_t i = 0; i < y.size(); ++i) {
    const bool written = i >= static_cast<size_t>(kGuardFloats) &&
                         i < static_cast<size_t>(kGuardFloats + m * ldy) &&
                         (i - kGuardFloats) % static_cast<size_t>(ldy) < static_cast<size_t>(n);
    if (!written && Bits(y[i]) != kCanaryBits) {
      return std::string(IsaName(t.isa)) + " " + Describe(c) + ": wrote outside its outputs at " +
             std::to_string(i);
    }
  }
  return "";
}

using GemvQuantFn = decltype(KernelTable::gemv_quant);
using GemmQuantFn = decltype(KernelTable::gemm_quant);

class QuantKernelTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaAvailable(GetParam())) {
      GTEST_SKIP() << "ISA " << IsaName(GetParam()) << " is not available here";
    }
  }
  const KernelTable& Table() const { return GetKernelTable(GetParam()); }
};

TEST_P(QuantKernelTest, GemvAndGemmMatchDequantizeThenDot) {
  uint64_t seed = 900000;
  int checked = 0;
  for (const QuantLayout& l : numerics::QuantLayouts()) {
    const std::vector<int64_t> block_counts =
        l.block_elements == 32 ? std::vector<int64_t>{1, 2, 3, 8} : std::vector<int64_t>{1, 2, 3};
    for (int64_t blocks : block_counts) {
      for (int64_t rows = 1; rows <= 9; ++rows) {
        for (Scales scales : {Scales::kFinite, Scales::kInfinite, Scales::kNan}) {
          for (testing::Mode mode : {testing::Mode::kUnit, testing::Mode::kMixed}) {
            ++seed;
            const int64_t begin = rows > 2 ? static_cast<int64_t>(seed % 2) : 0;
            const QuantCase c{l.type,
                              blocks,
                              rows,
                              begin,
                              rows,
                              static_cast<int>(seed % 2),
                              static_cast<int>(seed % 3),
                              scales,
                              mode,
                              seed};
            for (int64_t m : {1, 2, 5}) {
              EXPECT_EQ(CheckQuant(Table(), c, m), "");
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST_P(QuantKernelTest, EqualsTheScalarTable) {
  const KernelTable& scalar = GetKernelTable(Isa::kScalar);
  uint64_t seed = 910000;
  for (const QuantLayout& l : numerics::QuantLayouts()) {
    const int64_t blocks = l.block_elements == 32 ? 5 : 2;
    const int64_t k = blocks * l.block_elements;
    const int64_t rows = 9;
    const std::vector<uint8_t> w = MakeBlocks(l.type, rows, blocks, Scales::kFinite, ++seed);
    const std::vector<float> x =
        testing::MakeActivations(static_cast<size_t>(3 * k), testing::Mode::kMixed, ++seed);
    std::vector<float> got(static_cast<size_t>(3 * rows)), want(got.size());
    const auto* wp = reinterpret_cast<const std::byte*>(w.data());
    Table().gemm_quant(x.data(), 3, wp, l.type, k, 0, rows, got.data(), rows);
    scalar.gemm_quant(x.data(), 3, wp, l.type, k, 0, rows, want.data(), rows);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << l.name;
  }
}

// With the stream-ahead knob below a cache line, the exact profile's GEMV
// and GEMM over quantized rows issue no hints (stream_prefetch.h's
// StreamHintsOn): the same bits as with them, over every type, 9 and 17
// rows (one and two full passes of GEMV's row runs, then the remainder)
// and 1, 2 and 5 activation rows.
TEST_P(QuantKernelTest, ExactEntriesMatchWithoutStreamHints) {
  SetStreamAheadBytes(kMinStreamAheadBytes);
  uint64_t seed = 905000;
  for (const QuantLayout& l : numerics::QuantLayouts()) {
    for (int64_t rows : {9, 17}) {
      ++seed;
      const QuantCase c{l.type, 3, rows, 0, rows, 0, 1, Scales::kFinite, testing::Mode::kMixed,
                        seed};
      for (int64_t m : {1, 2, 5}) EXPECT_EQ(CheckQuant(Table(), c, m), "") << l.name;
    }
  }
  SetStreamAheadBytes(kDefaultStreamAheadBytes);
}

// The integer profile (C12): every table's int8 entries give
// numerics::DotInt8's bits for every output, over every type, row lengths
// that fill 16 lanes not at all, exactly, and past once or twice, row
// ranges not starting at 0, 1 to 5 activation rows, misaligned inputs, and
// scales that are zero, subnormal, largest, infinite or NaN. NaNs compare
// as NaN, as the logit hashes see them (C9): their payloads are not part of
// the contract. Both the int8 table's quantized entries (on AVX-512 with
// VNNI, the VNNI kernels) and the ISA table's own int8 entries (AVX-512
// BW's) are checked.
void ExpectInt8EntriesMatchTheDefinition(Isa isa, const std::string& which, GemvQuantFn gemv_quant,
                                         GemmQuantFn gemm_quant) {
  uint64_t seed = 950000;
  int checked = 0;
  for (const QuantLayout& l : numerics::QuantLayouts()) {
    const std::vector<int64_t> block_counts = l.block_elements == 32
                                                  ? std::vector<int64_t>{1, 3, 16, 17, 33}
                                                  : std::vector<int64_t>{1, 2, 5, 17, 33};
    for (int64_t blocks : block_counts) {
      for (Scales scales : {Scales::kFinite, Scales::kInfinite, Scales::kNan}) {
        for (testing::Mode mode : {testing::Mode::kUnit, testing::Mode::kMixed}) {
          ++seed;
          const int64_t k = blocks * l.block_elements, rows = 9, begin = seed % 2;
          const int64_t m = seed % 4 == 3 ? 11 : 1 + seed % 5;  // 11: past one tile of 8
          const std::vector<uint8_t> blocks_bytes = MakeBlocks(l.type, rows, blocks, scales, seed);
          std::vector<uint8_t> wbuf(blocks_bytes.size() + seed % 3);
          std::memcpy(wbuf.data() + seed % 3, blocks_bytes.data(), blocks_bytes.size());
          const auto* w = reinterpret_cast<const std::byte*>(wbuf.data() + seed % 3);
          const std::vector<float> x =
              testing::MakeActivations(static_cast<size_t>(m * k + 1), mode, seed + 1);
          const float* xm = x.data() + 1;  // misaligned
          std::vector<float> y(static_cast<size_t>(m * rows)), y1(static_cast<size_t>(rows));
          gemm_quant(xm, m, w, l.type, k, begin, rows, y.data(), rows);
          gemv_quant(xm + (m - 1) * k, w, l.type, k, begin, rows, y1.data());
          for (int64_t i = 0; i < m; ++i) {
            numerics::Int8ActivationRow row;
            row.Quantize(l.type, xm + i * k, k);
            for (int64_t r = begin; r < rows; ++r) {
              const float want =
                  numerics::DotInt8(l.type, w + r * (blocks * l.block_bytes), row.View(), k);
              const float got = y[static_cast<size_t>(i * rows + (r - begin))];
              const bool same = Bits(got) == Bits(want) || (std::isnan(got) && std::isnan(want));
              ASSERT_TRUE(same) << IsaName(isa) << " " << which << " " << l.name
                                << " blocks=" << blocks << " m=" << m << " output (" << i << ", "
                                << r << "): 0x" << std::hex << Bits(got)
                                << " vs the definition's 0x" << Bits(want);
              if (i == m - 1) {
                const float g1 = y1[static_cast<size_t>(r - begin)];
                ASSERT_TRUE(Bits(g1) == Bits(want) || (std::isnan(g1) && std::isnan(want)))
                    << "gemv " << l.name << " row " << r;
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST_P(QuantKernelTest, Int8EntriesMatchTheDefinition) {
  const KernelTable& t = GetKernelTable(GetParam(), numerics::QuantDot::kInt8);
  ASSERT_EQ(t.quant_dot, numerics::QuantDot::kInt8);
  ExpectInt8EntriesMatchTheDefinition(GetParam(), "int8 table", t.gemv_quant, t.gemm_quant);
  ExpectInt8EntriesMatchTheDefinition(GetParam(), "gemm_quant_int8", Table().gemv_quant_int8,
                                      Table().gemm_quant_int8);
}

// The prefetch distance is a tuning knob (kernels.h's StreamAheadBytes): a
// hint moves data only, so at its smallest (below a cache line: no hints)
// and largest the integer entries still give the definition's bits (hints
// 1 MiB ahead run far past every buffer here, which a hint may do).
TEST_P(QuantKernelTest, Int8EntriesMatchTheDefinitionAtEveryStreamAhead) {
  const KernelTable& t = GetKernelTable(GetParam(), numerics::QuantDot::kInt8);
  for (const int64_t ahead : {kMinStreamAheadBytes, int64_t{100}, kMaxStreamAheadBytes}) {
    SetStreamAheadBytes(ahead);
    ASSERT_EQ(StreamAheadBytes(), ahead);
    ExpectInt8EntriesMatchTheDefinition(GetParam(), "int8 table, ahead " + std::to_string(ahead),
                                        t.gemv_quant, t.gemm_quant);
  }
  SetStreamAheadBytes(0);  // clamped to the smallest
  EXPECT_EQ(StreamAheadBytes(), kMinStreamAheadBytes);
  SetStreamAheadBytes(kDefaultStreamAheadBytes);
}

// Blocks and activations end exactly at an inaccessible page: a load past
// the last block or activation faults. The int8 entries (the int8 table's
// and the table's own, as above) run on the same inputs.
TEST_P(QuantKernelTest, NoReadPastTheInputs) {
  uint64_t seed = 920000;
  const KernelTable& int8 = GetKernelTable(GetParam(), numerics::QuantDot::kInt8);
  for (const QuantLayout& l : numerics::QuantLayouts()) {
    for (int64_t blocks : {1, 3, 17}) {
      for (int64_t m : {1, 3}) {
        const int64_t k = blocks * l.block_elements;
        const int64_t rows = 5;
        const std::vector<uint8_t> w0 = MakeBlocks(l.type, rows, blocks, Scales::kFinite, ++seed);
        const std::vector<float> x0 =
            testing::MakeActivations(static_cast<size_t>(m * k), testing::Mode::kUnit, ++seed);
        GuardedBuffer wg(w0.size());
        GuardedBuffer xg(x0.size() * sizeof(float));
        ASSERT_NE(wg.data(), nullptr);
        ASSERT_NE(xg.data(), nullptr);
        std::memcpy(wg.data(), w0.data(), w0.size());
        std::memcpy(xg.data(), x0.data(), x0.size() * sizeof(float));
        const auto* w = reinterpret_cast<const std::byte*>(wg.data());
        const float* x = reinterpret_cast<const float*>(xg.data());
        std::vector<float> y(static_cast<size_t>(m * rows));
        for (GemmQuantFn gemm : {int8.gemm_quant, Table().gemm_quant_int8}) {
          gemm(x, m, w, l.type, k, 0, rows, y.data(), rows);
        }
        Table().gemm_quant(x, m, w, l.type, k, 0, rows, y.data(), rows);
        Table().gemv_quant(x + (m - 1) * k, w, l.type, k, rows - 3, rows, y.data());
        const std::vector<float> deq = Dequantized(l.type, w0.data(), rows, k);
        for (int64_t r = rows - 3; r < rows; ++r) {
          EXPECT_EQ(
              Bits(y[static_cast<size_t>(r - (rows - 3))]),
              Bits(numerics::Dot(x + (m - 1) * k, deq.data() + r * k, static_cast<size_t>(k))))
              << l.name << " k=" << k;
        }
      }
    }
  }
}

// Q4_K and Q5_K super-blocks whose d and dmin are two different NaNs: ggml's
// w = d1 * q - m1 is d's NaN for every weight (the multiply's NaN is the
// subtraction's first operand), so every output is that NaN, on every ISA.
// A kernel that fused the multiply and the subtract for such a block (its
// product is not exact: the AVX-512 loaders keep a separate multiply and
// subtract for it, quant_loaders.h's KHeaderFinite) would return dmin's
// where the processor's fused instruction prefers its addend's NaN. (The
// project's AMD Zen 4 prefers the multiplicand's: there the fused form
// happens to give d's NaN too, and this test passes with or without the
// loaders' check.)
TEST_P(QuantKernelTest, TwoNanScalesGiveTheMultiplysNan) {
  constexpr uint16_t kNanD = 0x7E55, kNanDmin = 0xFE01;
  for (const QuantType type : {QuantType::kQ4_K, QuantType::kQ5_K}) {
    const QuantLayout& l = numerics::LayoutOf(type);
    const int64_t blocks = 2, k = blocks * l.block_elements, rows = 9;
    std::vector<uint8_t> w = MakeBlocks(type, rows, blocks, Scales::kFinite, 940001);
    for (int64_t b = 0; b < rows * blocks; ++b) {
      PutF16(w.data() + b * l.block_bytes, kNanD);
      PutF16(w.data() + b * l.block_bytes + 2, kNanDmin);
    }
    const std::vector<float> x =
        testing::MakeActivations(static_cast<size_t>(2 * k), testing::Mode::kUnit, 940002);
    const std::vector<float> deq = Dequantized(type, w.data(), rows, k);
    // GEMV's rows, then GEMM's two activation rows' (the GEMV-like pass).
    std::vector<float> y(static_cast<size_t>(3 * rows));
    const auto* wp = reinterpret_cast<const std::byte*>(w.data());
    Table().gemv_quant(x.data(), wp, type, k, 0, rows, y.data());
    Table().gemm_quant(x.data(), 2, wp, type, k, 0, rows, y.data() + rows, rows);
    const uint32_t want = Bits(deq[0]);
    EXPECT_EQ(want & 0xffc00000u, 0x7fc00000u)
        << l.name << ": the reference's weight is not d's NaN";
    for (size_t i = 0; i < y.size(); ++i) {
      EXPECT_EQ(Bits(y[i]), want) << l.name << " output " << i;
    }
  }
}

// Negative control: a kernel that factored each block's scale out of its
// dot product, y = sum_b d_b * dot(x_b, q_b) (as integer-dot kernels do),
// would be caught: on the test's data its outputs differ in some bit. (A
// kernel that fused ggml's dequantization multiply into an add or an fma
// could not be: every such product is exact in f32, see
// engine/numerics/README.md, so it would give the same bits.)
TEST_P(QuantKernelTest, FactoredScalesWouldBeCaught) {
  const QuantType type = QuantType::kQ8_0;
  const int64_t blocks = 8, k = 256, rows = 9;
  const std::vector<uint8_t> w = MakeBlocks(type, rows, blocks, Scales::kFinite, 930001);
  const std::vector<float> x =
      testing::MakeActivations(static_cast<size_t>(k), testing::Mode::kUnit, 930002);
  std::vector<float> y(static_cast<size_t>(rows));
  Table().gemv_quant(x.data(), reinterpret_cast<const std::byte*>(w.data()), type, k, 0, rows,
                     y.data());
  int differing = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float factored = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* block = w.data() + (r * blocks + b) * 34;
      const float d =
          numerics::ToFloat(numerics::F16{static_cast<uint16_t>(block[0] | block[1] << 8)});
      float q[32];
      for (int i = 0; i < 32; ++i) q[i] = static_cast<float>(static_cast<int8_t>(block[2 + i]));
      factored = std::fma(d, numerics::Dot(x.data() + 32 * b, q, 32), factored);
    }
    differing += Bits(factored) != Bits(y[static_cast<size_t>(r)]);
  }
  EXPECT_GT(differing, 0);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, QuantKernelTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace samebits::kernels
