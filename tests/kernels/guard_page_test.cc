// Over-read checks: inputs are placed so that they end exactly at a page
// mapped PROT_NONE, so any load past the last element (a full-width vector
// load in a tail, say) faults and kills the test. Prefetch hints past the
// end are allowed: they never fault.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/kernels/kernels.h"
#include "tests/kernels/kernel_test_helpers.h"

namespace samebits::kernels {
namespace {

using testing::GuardedBuffer;

class GuardPageTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaAvailable(GetParam())) {
      GTEST_SKIP() << "ISA " << IsaName(GetParam()) << " is not available here";
    }
  }
};

TEST_P(GuardPageTest, NoReadPastTheInputs) {
  const KernelTable& t = GetKernelTable(GetParam());
  uint64_t seed = 70000;
  for (DType dtype : testing::kAllDTypes) {
    for (int64_t k : {1, 15, 17, 31, 33, 100}) {
      for (int64_t m : {1, 2, 5}) {
        ++seed;
        const int64_t rows = 6;
        const size_t es = static_cast<size_t>(numerics::DTypeSize(dtype));
        const std::vector<float> x0 =
            testing::MakeActivations(static_cast<size_t>(m * k), testing::Mode::kUnit, seed);
        const std::vector<uint8_t> w0 = testing::MakeWeights(dtype, static_cast<size_t>(rows * k),
                                                             testing::Mode::kUnit, seed + 1);
        GuardedBuffer xg(x0.size() * sizeof(float));
        GuardedBuffer wg(w0.size());
        ASSERT_NE(xg.data(), nullptr);
        ASSERT_NE(wg.data(), nullptr);
        std::memcpy(xg.data(), x0.data(), x0.size() * sizeof(float));
        std::memcpy(wg.data(), w0.data(), w0.size());
        const float* x = reinterpret_cast<const float*>(xg.data());

        // The last activation row and the last weight row touch the guard.
        std::vector<float> y(static_cast<size_t>(m * rows));
        t.gemm(x, m, wg.data(), dtype, k, 0, rows, y.data(), rows);
        t.gemv(x + (m - 1) * k, wg.data(), dtype, k, rows - 3, rows, y.data());
        for (int64_t r = rows - 3; r < rows; ++r) {
          EXPECT_EQ(testing::Bits(y[static_cast<size_t>(r - (rows - 3))]),
                    testing::Bits(testing::ReferenceDot(x + (m - 1) * k, wg.data(), dtype, k, r)))
              << "k=" << k << " es=" << es;
        }
      }
    }
  }
}

TEST_P(GuardPageTest, DotAndAxpyStayInBounds) {
  const KernelTable& t = GetKernelTable(GetParam());
  for (int64_t n : {1, 3, 7, 15, 17, 33, 100}) {
    const std::vector<float> a0 =
        testing::MakeActivations(static_cast<size_t>(n), testing::Mode::kUnit, 80000 + n);
    GuardedBuffer ag(a0.size() * sizeof(float));
    GuardedBuffer og(a0.size() * sizeof(float));
    ASSERT_NE(ag.data(), nullptr);
    ASSERT_NE(og.data(), nullptr);
    std::memcpy(ag.data(), a0.data(), a0.size() * sizeof(float));
    std::memcpy(og.data(), a0.data(), a0.size() * sizeof(float));
    const float* a = reinterpret_cast<const float*>(ag.data());
    float* o = reinterpret_cast<float*>(og.data());
    EXPECT_EQ(testing::Bits(t.dot(a, a, n)),
              testing::Bits(testing::ReferenceDot(a0.data(), a0.data(), DType::kF32, n, 0)));
    t.axpy(0.5f, a, o, n);  // writes up to the guard, not into it
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, GuardPageTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace samebits::kernels
