// ISA names, availability and table selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "engine/kernels/kernels.h"

namespace samebits::kernels {
namespace {

TEST(Dispatch, NamesRoundTrip) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    Isa parsed = Isa::kScalar;
    ASSERT_TRUE(ParseIsa(IsaName(isa), &parsed)) << IsaName(isa);
    EXPECT_EQ(parsed, isa);
  }
  Isa parsed = Isa::kAvx2;
  EXPECT_FALSE(ParseIsa("sse9", &parsed));
  EXPECT_FALSE(ParseIsa("", &parsed));
  EXPECT_FALSE(ParseIsa("AVX2", &parsed));  // names are lower case
  EXPECT_EQ(parsed, Isa::kAvx2);            // untouched on failure
}

TEST(Dispatch, ScalarAlwaysAvailableAndFirst) {
  const std::vector<Isa> isas = AvailableIsas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::kScalar);
  EXPECT_TRUE(IsaAvailable(Isa::kScalar));
}

TEST(Dispatch, BestIsaIsAvailableAndTablesMatch) {
  EXPECT_TRUE(IsaAvailable(BestIsa()));
  for (Isa isa : AvailableIsas()) EXPECT_EQ(GetKernelTable(isa).isa, isa);
}

TEST(Dispatch, ArchitectureDecidesTheFamilies) {
#if defined(__x86_64__)
  EXPECT_FALSE(IsaAvailable(Isa::kNeon));
#elif defined(__aarch64__)
  EXPECT_TRUE(IsaAvailable(Isa::kNeon));
  EXPECT_FALSE(IsaAvailable(Isa::kAvx2));
  EXPECT_FALSE(IsaAvailable(Isa::kAvx512));
  EXPECT_EQ(BestIsa(), Isa::kNeon);
#endif
}

// Availability must agree with the features reported, so that a machine
// without OS support for wide registers never gets the wide table.
TEST(Dispatch, AvailabilityFollowsFeatures) {
  const std::vector<std::string> f = CpuFeatures();
  auto has = [&](const char* name) { return std::find(f.begin(), f.end(), name) != f.end(); };
  if (IsaAvailable(Isa::kAvx2)) {
    EXPECT_TRUE(has("avx2") && has("fma") && has("f16c") && has("os-ymm"));
  }
  if (IsaAvailable(Isa::kAvx512)) {
    EXPECT_TRUE(has("avx512f") && has("avx512bw") && has("avx512vl") && has("os-zmm"));
    EXPECT_TRUE(IsaAvailable(Isa::kAvx2));
    EXPECT_EQ(BestIsa(), Isa::kAvx512);
  }
}

TEST(Dispatch, UnavailableTableThrows) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (!IsaAvailable(isa)) {
      EXPECT_THROW(GetKernelTable(isa), std::invalid_argument);
    }
  }
}

}  // namespace
}  // namespace samebits::kernels
