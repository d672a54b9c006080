// The share of resident memory in 2 MiB pages (engine/platform/
// huge_page_share.h): the smaps_rollup parser on real and broken text, and
// this process's own reading.
#include "engine/platform/huge_page_share.h"

#include <gtest/gtest.h>

#include <fstream>

namespace samebits::platform {
namespace {

// The shape of a Linux 6.x /proc/self/smaps_rollup.
constexpr std::string_view kRollup =
    "55d6c0a00000-7ffd1d3f5000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:              564108 kB\n"
    "Pss:              563590 kB\n"
    "Pss_Anon:           3328 kB\n"
    "AnonHugePages:      2048 kB\n"
    "ShmemPmdMapped:        0 kB\n"
    "FilePmdMapped:    550912 kB\n"
    "Swap:                  0 kB\n";

TEST(HugePageShare, SumsTheThreeHugePageCountsAgainstRss) {
  const std::optional<HugePageShare> share = ParseSmapsRollup(kRollup);
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(share->resident_kib, 564108);
  EXPECT_EQ(share->huge_kib, 2048 + 550912);
}

TEST(HugePageShare, AnOlderKernelWithoutFilePmdMappedCountsItAsZero) {
  const std::optional<HugePageShare> share =
      ParseSmapsRollup("Rss: 100 kB\nAnonHugePages: 40 kB\n");
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(share->resident_kib, 100);
  EXPECT_EQ(share->huge_kib, 40);
}

TEST(HugePageShare, BrokenTextGivesNothingRatherThanAWrongShare) {
  EXPECT_FALSE(ParseSmapsRollup("").has_value());
  EXPECT_FALSE(ParseSmapsRollup("AnonHugePages: 40 kB\n").has_value());  // no Rss
  EXPECT_FALSE(ParseSmapsRollup("Rss: lots kB\n").has_value());
  EXPECT_FALSE(ParseSmapsRollup("Rss: 100 MB\n").has_value());
  EXPECT_FALSE(ParseSmapsRollup("Rss: -5 kB\n").has_value());
  EXPECT_FALSE(
      ParseSmapsRollup("Rss: 100 kB\nFilePmdMapped: 99999999999999999999 kB\n").has_value());
  EXPECT_FALSE(ParseSmapsRollup("Rss: 100 kB\nFilePmdMapped:\n").has_value());
}

TEST(HugePageShare, ThisProcessHasAReadingWhereLinuxGivesOne) {
  if (!std::ifstream("/proc/self/smaps_rollup")) GTEST_SKIP() << "no /proc/self/smaps_rollup";
  const std::optional<HugePageShare> share = ReadHugePageShare();
  ASSERT_TRUE(share.has_value());
  EXPECT_GT(share->resident_kib, 0);
  EXPECT_LE(share->huge_kib, share->resident_kib);
}

}  // namespace
}  // namespace samebits::platform
