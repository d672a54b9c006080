// Every kernel table against the contract's reference (`numerics::Dot`),
// compared bit for bit: GEMV, GEMM (and GEMM against m GEMV calls), dot and
// axpy, across ISAs, dtypes, sizes around the 16-lane width, row ranges
// that do not start at 0, misaligned pointers and guard floats.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"
#include "tests/kernels/kernel_test_helpers.h"

namespace samebits::kernels {
namespace {

using testing::Bits;
using testing::GemvCase;
using testing::kAllDTypes;
using testing::kAllModes;
using testing::kCanaryBits;
using testing::kGuardFloats;

// Around the lane width (15, 16, 17), twice it (31, 33), whole blocks (64,
// 1024 + 7 with a tail) and odd sizes.
constexpr int64_t kSizes[] = {0, 1, 15, 16, 17, 31, 33, 64, 100, 255, 1024 + 7};

class KernelIsaTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaAvailable(GetParam())) {
      GTEST_SKIP() << "ISA " << IsaName(GetParam())
                   << " is not available here (not built for this architecture, or the CPU or "
                      "OS lacks it)";
    }
  }
  const KernelTable& Table() const { return GetKernelTable(GetParam()); }
};

TEST_P(KernelIsaTest, TableReportsItsIsa) {
  EXPECT_EQ(Table().isa, GetParam());
}

TEST_P(KernelIsaTest, GemvMatchesReferenceBits) {
  uint64_t seed = 1000;
  for (DType dtype : kAllDTypes) {
    for (testing::Mode mode : kAllModes) {
      for (int64_t k : kSizes) {
        for (int misalign : {0, 1}) {
          // 19 rows from row 3 exercise full passes (4 rows) and the 2- and
          // 1-row blocks after them.
          GemvCase c{dtype, k, 23, 3, 22, misalign, mode, ++seed};
          EXPECT_EQ(testing::CheckGemv(Table().gemv, c), "");
          GemvCase whole{dtype, k, 7, 0, 7, misalign, mode, ++seed};
          EXPECT_EQ(testing::CheckGemv(Table().gemv, whole), "");
        }
      }
    }
  }
}

TEST_P(KernelIsaTest, GemvEmptyRangeWritesNothing) {
  GemvCase c{DType::kBF16, 33, 5, 2, 2, 0, testing::Mode::kUnit, 7};
  EXPECT_EQ(testing::CheckGemv(Table().gemv, c), "");
}

// A tail that leaves -0.0 lanes alone: 16 products that underflow to -0.0
// fill every lane with -0.0, then one more element updates lane 0 only.
// Worked by hand: every lane is -0.0, and -0.0 + -0.0 = -0.0 all down the
// tree, so the dot is -0.0. A tail written as fma(0, 0, acc) on lanes 1-15
// would make them +0.0 and the result +0.0.
TEST_P(KernelIsaTest, TailKeepsNegativeZeroLanes) {
  for (DType dtype : kAllDTypes) {
    const int64_t k = 17;
    // F16 cannot hold 2^-100, so its weights are 2^-24 (the smallest F16
    // subnormal) against smaller activations; the products stay below the
    // smallest f32 subnormal either way.
    const float xv = dtype == DType::kF16 ? -0x1p-140f : -0x1p-100f;
    const float wv = dtype == DType::kF16 ? 0x1p-24f : 0x1p-100f;
    std::vector<float> x(k, xv);
    std::vector<uint8_t> w(static_cast<size_t>(k * numerics::DTypeSize(dtype)));
    for (int64_t i = 0; i < k; ++i) {
      if (dtype == DType::kF32) std::memcpy(w.data() + 4 * i, &wv, 4);
      if (dtype == DType::kBF16) {
        const uint16_t b = numerics::ToBF16(wv).bits;
        std::memcpy(w.data() + 2 * i, &b, 2);
      }
      if (dtype == DType::kF16) {
        const uint16_t b = numerics::ToF16(wv).bits;
        std::memcpy(w.data() + 2 * i, &b, 2);
      }
    }
    float y = 1.0f;
    Table().gemv(x.data(), w.data(), dtype, k, 0, 1, &y);
    EXPECT_EQ(Bits(y), 0x80000000u) << numerics::DTypeName(dtype);
  }
}

TEST_P(KernelIsaTest, GemmMatchesReferenceAndGemvBits) {
  uint64_t seed = 5000;
  const float canary = std::bit_cast<float>(kCanaryBits);
  for (DType dtype : kAllDTypes) {
    for (testing::Mode mode : {testing::Mode::kMixed, testing::Mode::kTiny}) {
      for (int64_t k : {int64_t{1}, int64_t{15}, int64_t{17}, int64_t{64}, int64_t{100}}) {
        for (int64_t m = 1; m <= 9; ++m) {
          ++seed;
          const int64_t rows = 14;
          const int64_t row_begin = 1;
          const int64_t row_end = 12;  // 11 rows: 4-row blocks and every edge width
          const int64_t n = row_end - row_begin;
          const int64_t ldy = n + 3;  // padding between output rows holds canaries
          const int misalign = static_cast<int>(m % 2);
          const std::vector<float> x0 =
              testing::MakeActivations(static_cast<size_t>(m * k), mode, seed);
          const std::vector<uint8_t> w0 =
              testing::MakeWeights(dtype, static_cast<size_t>(rows * k), mode, seed * 31);
          std::vector<float> xbuf(x0.size() + 2);
          std::copy(x0.begin(), x0.end(), xbuf.begin() + misalign);
          const size_t es = static_cast<size_t>(numerics::DTypeSize(dtype));
          std::vector<uint8_t> wbuf(w0.size() + 2 * es);
          std::copy(w0.begin(), w0.end(), wbuf.begin() + static_cast<int64_t>(es) * misalign);
          const float* x = xbuf.data() + misalign;
          const void* w = wbuf.data() + es * static_cast<size_t>(misalign);

          std::vector<float> out(static_cast<size_t>(m * ldy + kGuardFloats), canary);
          Table().gemm(x, m, w, dtype, k, row_begin, row_end, out.data(), ldy);

          const std::string where = std::string(numerics::DTypeName(dtype)) + " " +
                                    testing::ModeName(mode) + " k=" + std::to_string(k) +
                                    " m=" + std::to_string(m);
          for (int64_t i = 0; i < m; ++i) {
            std::vector<float> by_gemv(static_cast<size_t>(n));
            Table().gemv(x + i * k, w, dtype, k, row_begin, row_end, by_gemv.data());
            const float* row = out.data() + i * ldy;
            // Bit patterns, not values: -0.0 against +0.0 is a difference.
            std::vector<uint32_t> gemm_bits(static_cast<size_t>(n));
            std::vector<uint32_t> gemv_bits(static_cast<size_t>(n));
            for (size_t j = 0; j < gemm_bits.size(); ++j) {
              gemm_bits[j] = Bits(row[j]);
              gemv_bits[j] = Bits(by_gemv[j]);
            }
            EXPECT_EQ(gemm_bits, gemv_bits) << "gemm row " << i << " differs from gemv, " << where;
            for (int64_t r = row_begin; r < row_end; ++r) {
              const float want = testing::ReferenceDot(x + i * k, w, dtype, k, r);
              ASSERT_EQ(Bits(row[r - row_begin]), Bits(want))
                  << "i=" << i << " r=" << r << ", " << where;
            }
            for (int64_t p = n; p < ldy; ++p) {
              ASSERT_EQ(Bits(row[p]), kCanaryBits) << "padding overwritten, " << where;
            }
          }
          for (int g = 0; g < kGuardFloats; ++g) {
            ASSERT_EQ(Bits(out[static_cast<size_t>(m * ldy + g)]), kCanaryBits)
                << "guard overwritten, " << where;
          }
        }
      }
    }
  }
}

// A GEMM whose weight range spans several weight tiles (about 256 KiB
// each: 124 BF16/F16 rows or 60-63 F32 rows at k = 1024 + 7, depending on
// the ISA's block width), with edge blocks on both axes, against m GEMV
// calls and the reference.
TEST_P(KernelIsaTest, GemmAcrossTilesEqualsGemv) {
  const int64_t k = 1024 + 7;
  const int64_t m = 9;
  const int64_t rows = 300;
  const int64_t row_begin = 5;
  const int64_t n = rows - row_begin;
  for (DType dtype : kAllDTypes) {
    const std::vector<float> x =
        testing::MakeActivations(static_cast<size_t>(m * k), testing::Mode::kMixed, 77);
    const std::vector<uint8_t> w =
        testing::MakeWeights(dtype, static_cast<size_t>(rows * k), testing::Mode::kMixed, 78);
    std::vector<float> by_gemm(static_cast<size_t>(m * n));
    std::vector<float> by_gemv(static_cast<size_t>(m * n));
    Table().gemm(x.data(), m, w.data(), dtype, k, row_begin, rows, by_gemm.data(), n);
    for (int64_t i = 0; i < m; ++i) {
      Table().gemv(x.data() + i * k, w.data(), dtype, k, row_begin, rows, by_gemv.data() + i * n);
    }
    EXPECT_EQ(std::memcmp(by_gemm.data(), by_gemv.data(), by_gemm.size() * sizeof(float)), 0)
        << numerics::DTypeName(dtype);
    // And against the reference, for a scattering of outputs.
    for (int64_t i = 0; i < m; i += 4) {
      for (int64_t r = row_begin; r < rows; r += 7) {
        EXPECT_EQ(Bits(by_gemm[static_cast<size_t>(i * n + r - row_begin)]),
                  Bits(testing::ReferenceDot(x.data() + i * k, w.data(), dtype, k, r)))
            << numerics::DTypeName(dtype) << " i=" << i << " r=" << r;
      }
    }
  }
}

TEST_P(KernelIsaTest, DotMatchesReferenceBits) {
  uint64_t seed = 9000;
  for (testing::Mode mode : kAllModes) {
    for (int64_t n : kSizes) {
      for (int misalign : {0, 1}) {
        ++seed;
        const std::vector<float> a0 = testing::MakeActivations(static_cast<size_t>(n), mode, seed);
        const std::vector<float> b0 =
            testing::MakeActivations(static_cast<size_t>(n), testing::Mode::kUnit, seed + 1);
        std::vector<float> a(a0.size() + 1);
        std::vector<float> b(b0.size() + 1);
        std::copy(a0.begin(), a0.end(), a.begin() + misalign);
        std::copy(b0.begin(), b0.end(), b.begin() + misalign);
        const float got = Table().dot(a.data() + misalign, b.data() + misalign, n);
        const float want = numerics::Dot(a0.data(), b0.data(), static_cast<size_t>(n));
        EXPECT_EQ(Bits(got), Bits(want)) << "n=" << n << " mode=" << testing::ModeName(mode);
      }
    }
  }
}

TEST_P(KernelIsaTest, AxpyIsElementwiseFma) {
  uint64_t seed = 12000;
  const float canary = std::bit_cast<float>(kCanaryBits);
  for (testing::Mode mode : kAllModes) {
    for (int64_t n : kSizes) {
      for (float p : {0.3f, -0.0f, -1.5e-20f}) {
        ++seed;
        const std::vector<float> v = testing::MakeActivations(static_cast<size_t>(n), mode, seed);
        const std::vector<float> o0 =
            testing::MakeActivations(static_cast<size_t>(n), mode, seed + 1);
        std::vector<float> o(static_cast<size_t>(n) + kGuardFloats + 1, canary);
        std::copy(o0.begin(), o0.end(), o.begin() + 1);  // misaligned by one float
        Table().axpy(p, v.data(), o.data() + 1, n);
        for (int64_t d = 0; d < n; ++d) {
          const float want = std::fma(p, v[static_cast<size_t>(d)], o0[static_cast<size_t>(d)]);
          ASSERT_EQ(Bits(o[static_cast<size_t>(d + 1)]), Bits(want)) << "n=" << n << " d=" << d;
        }
        ASSERT_EQ(Bits(o[0]), kCanaryBits);
        for (int g = 0; g < kGuardFloats; ++g) {
          ASSERT_EQ(Bits(o[static_cast<size_t>(n + 1 + g)]), kCanaryBits) << "n=" << n;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, KernelIsaTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace samebits::kernels

namespace samebits::kernels {
namespace {

// Returns FNV-1a 64 over the little-endian bytes of the GEMV outputs of
// every dtype and mode for one fixed generator sweep.
uint64_t SweepHash(const KernelTable& t) {
  uint64_t h = 0xcbf29ce484222325ull;
  uint64_t seed = 424242;
  for (DType dtype : kAllDTypes) {
    for (testing::Mode mode : kAllModes) {
      for (int64_t k : {int64_t{17}, int64_t{255}, int64_t{1024 + 7}}) {
        const int64_t rows = 5;
        const std::vector<float> x = testing::MakeActivations(static_cast<size_t>(k), mode, ++seed);
        const std::vector<uint8_t> w =
            testing::MakeWeights(dtype, static_cast<size_t>(rows * k), mode, ++seed);
        std::vector<float> y(rows);
        t.gemv(x.data(), w.data(), dtype, k, 0, rows, y.data());
        for (float v : y) {
          const uint32_t b = Bits(v);
          for (int byte = 0; byte < 4; ++byte) {
            h ^= (b >> (8 * byte)) & 0xffu;
            h *= 0x100000001b3ull;
          }
        }
      }
    }
  }
  return h;
}

// The same sweep gives the same bits on every ISA and architecture. The
// stored value pins the generator and the contract's order together; it
// was computed by the x86-64 scalar, AVX2 and AVX-512 tables and by the
// aarch64 scalar and NEON tables (under qemu-aarch64), which all agreed.
// If the generator changes on purpose, recompute it on both architectures.
TEST_P(KernelIsaTest, SweepHashIsTheSameEverywhere) {
  EXPECT_EQ(SweepHash(Table()), 0xacddef556b8fc707ull);
}

}  // namespace
}  // namespace samebits::kernels

namespace samebits::kernels {
namespace {

// Every finite 16-bit pattern (subnormals, +-0, infinities) must widen
// exactly, through both the full-vector path (k = 16, the value in lane 0)
// and the tail path (k = 1). NaNs are left out: the contract assumes
// NaN-free weights, and hardware converters quiet signalling NaNs.
TEST_P(KernelIsaTest, Every16BitWeightWidensExactly) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    std::vector<uint16_t> values;
    for (uint32_t b = 0; b <= 0xffffu; ++b) {
      const uint32_t exp_mask = dtype == DType::kF16 ? 0x7c00u : 0x7f80u;
      const uint32_t mant_mask = dtype == DType::kF16 ? 0x03ffu : 0x007fu;
      if ((b & exp_mask) == exp_mask && (b & mant_mask) != 0) continue;  // NaN
      values.push_back(static_cast<uint16_t>(b));
    }
    const int64_t rows = static_cast<int64_t>(values.size());
    for (int64_t k : {int64_t{1}, int64_t{16}}) {
      std::vector<uint16_t> w(static_cast<size_t>(rows * k), 0);
      for (int64_t r = 0; r < rows; ++r)
        w[static_cast<size_t>(r * k)] = values[static_cast<size_t>(r)];
      std::vector<float> x(static_cast<size_t>(k), 0.0f);
      x[0] = 1.0f;
      std::vector<float> y(static_cast<size_t>(rows));
      Table().gemv(x.data(), w.data(), dtype, k, 0, rows, y.data());
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(Bits(y[static_cast<size_t>(r)]),
                  Bits(testing::ReferenceDot(x.data(), w.data(), dtype, k, r)))
            << numerics::DTypeName(dtype) << " pattern 0x" << std::hex
            << values[static_cast<size_t>(r)] << std::dec << " k=" << k;
      }
    }
  }
}

}  // namespace
}  // namespace samebits::kernels
