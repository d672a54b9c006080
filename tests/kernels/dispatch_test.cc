// ISA names, availability and table selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"

namespace samebits::kernels {
namespace {

// The ISA table lists every enumerator once, in order, and its names are
// the ones `--isa` and the harness's matrix use.
TEST(Dispatch, TheTableListsEveryIsaInOrder) {
  const std::span<const IsaEntry> isas = Isas();
  ASSERT_EQ(isas.size(), static_cast<size_t>(kIsaCount));
  std::vector<std::string> names;
  for (size_t i = 0; i < isas.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(isas[i].isa), i);
    EXPECT_STREQ(IsaName(isas[i].isa), isas[i].name);
    names.emplace_back(isas[i].name);
  }
  EXPECT_EQ(IsaNames(), names);
  EXPECT_EQ(names, (std::vector<std::string>{"scalar", "avx2", "avx512", "neon"}));
  EXPECT_STREQ(IsaName(static_cast<Isa>(kIsaCount)), "unknown");
}

// `auto` picks the available ISA of highest rank; an ISA this build has no
// table for is never available.
TEST(Dispatch, BestIsaIsTheHighestRankedAvailable) {
  const IsaEntry* best = nullptr;
  for (const IsaEntry& e : Isas()) {
    if (e.table == nullptr) {
      EXPECT_FALSE(IsaAvailable(e.isa)) << e.name;
    }
    if (IsaAvailable(e.isa) && (best == nullptr || e.rank > best->rank)) best = &e;
  }
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(BestIsa(), best->isa);
}

TEST(Dispatch, NamesRoundTrip) {
  for (const IsaEntry& e : Isas()) {
    const Isa isa = e.isa;
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
