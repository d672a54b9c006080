// The bandwidth probe: a smoke test (timings are not asserted beyond being
// positive and finite) and its argument checks.
#include "engine/kernels/bandwidth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "engine/threads/thread_pool.h"

namespace samebits::kernels {
namespace {

TEST(Bandwidth, ReturnsAPositiveRate) {
  for (int threads : {1, 2}) {
    threads::ThreadPool pool(threads);
    const double gbs = MeasureReadBandwidthGBs(pool, 4u << 20, 3);
    EXPECT_GT(gbs, 0.0) << threads << " threads";
    EXPECT_TRUE(std::isfinite(gbs)) << threads << " threads";
  }
}

TEST(Bandwidth, OddSizesAreCovered) {
  // A size that does not split evenly: the last thread takes the remainder.
  threads::ThreadPool pool(2);
  EXPECT_GT(MeasureReadBandwidthGBs(pool, 3 * 4096 + 8 * 3, 1), 0.0);
}

TEST(Bandwidth, RejectsBadArguments) {
  threads::ThreadPool pool(1);
  EXPECT_THROW(MeasureReadBandwidthGBs(pool, 100, 3), std::invalid_argument);
  EXPECT_THROW(MeasureReadBandwidthGBs(pool, 1u << 20, 0), std::invalid_argument);
}

}  // namespace
}  // namespace samebits::kernels
