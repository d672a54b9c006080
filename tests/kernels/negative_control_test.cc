// Negative controls: deliberately order-changing GEMV variants that live
// only here (never in a kernel table). The bit-comparison harness used by
// matmul_test must reject them, which shows that harness can fail.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"
#include "tests/kernels/kernel_test_helpers.h"

namespace samebits::kernels {
namespace {

using numerics::BF16;
using numerics::F16;

template <typename W>
float SplitDot(const float* x, const W* w, int64_t k) {
  // Two halves, each reduced in the C1 order, then added: a different
  // association of the same products.
  const int64_t half = k / 2;
  return numerics::Dot(x, w, static_cast<size_t>(half)) +
         numerics::Dot(x + half, w + half, static_cast<size_t>(k - half));
}

template <typename W>
float ZeroPaddedTailDot(const float* x, const W* w, int64_t k) {
  // Pads the tail with fma(0, 0, acc) on the unused lanes, the mistake C1
  // warns about: a -0.0 lane becomes +0.0.
  float acc[numerics::kLanes] = {};
  const int64_t padded = (k + 15) / 16 * 16;
  for (int64_t i = 0; i < padded; ++i) {
    const float xi = i < k ? x[i] : 0.0f;
    const float wi = i < k ? numerics::ToFloat(w[i]) : 0.0f;
    acc[i % 16] = std::fma(xi, wi, acc[i % 16]);
  }
  return numerics::ReduceLanes(acc);
}

template <template <typename> class F>
struct Variant {
  template <typename W>
  static void Rows(const float* x, const W* w, int64_t k, int64_t b, int64_t e, float* y) {
    for (int64_t r = b; r < e; ++r) y[r - b] = F<W>::Run(x, w + r * k, k);
  }
  static void Gemv(const float* x, const void* w, DType dtype, int64_t k, int64_t b, int64_t e,
                   float* y) {
    switch (dtype) {
      case DType::kF32:
        return Rows(x, static_cast<const float*>(w), k, b, e, y);
      case DType::kF16:
        return Rows(x, static_cast<const F16*>(w), k, b, e, y);
      case DType::kBF16:
        return Rows(x, static_cast<const BF16*>(w), k, b, e, y);
    }
  }
};
template <typename W>
struct Split {
  static float Run(const float* x, const W* w, int64_t k) { return SplitDot(x, w, k); }
};
template <typename W>
struct Reference {
  static float Run(const float* x, const W* w, int64_t k) {
    return numerics::Dot(x, w, static_cast<size_t>(k));
  }
};
template <typename W>
struct ZeroPad {
  static float Run(const float* x, const W* w, int64_t k) { return ZeroPaddedTailDot(x, w, k); }
};

// Returns how many of a sweep of cases the harness rejects.
int CountRejected(testing::GemvFn fn, testing::Mode mode) {
  int rejected = 0;
  uint64_t seed = 40000;
  for (DType dtype : testing::kAllDTypes) {
    for (int64_t k : {17, 31, 33, 100, 255, 1031}) {
      testing::GemvCase c{dtype, k, 9, 1, 9, 0, mode, ++seed};
      if (!testing::CheckGemv(fn, c).empty()) ++rejected;
    }
  }
  return rejected;
}

TEST(NegativeControl, SplitReductionIsDetected) {
  EXPECT_GT(CountRejected(&Variant<Split>::Gemv, testing::Mode::kUnit), 0);
  EXPECT_GT(CountRejected(&Variant<Split>::Gemv, testing::Mode::kMixed), 0);
}

TEST(NegativeControl, ZeroPaddedTailIsDetected) {
  // Only a dot whose lanes are all -0.0 can tell, which the negzero data
  // makes for every size; every size in the sweep has a tail.
  EXPECT_EQ(CountRejected(&Variant<ZeroPad>::Gemv, testing::Mode::kNegZero), 18);
  EXPECT_EQ(CountRejected(&Variant<ZeroPad>::Gemv, testing::Mode::kUnit), 0);
}

// The same harness accepts the reference itself, so the rejections above are
// about order, not about the harness.
TEST(NegativeControl, ReferenceIsAccepted) {
  for (testing::Mode mode : testing::kAllModes) {
    EXPECT_EQ(CountRejected(&Variant<Reference>::Gemv, mode), 0);
  }
}

}  // namespace
}  // namespace samebits::kernels
