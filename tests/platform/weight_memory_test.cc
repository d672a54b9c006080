// Weight memory (engine/platform/weight_memory.h): 2 MiB aligned, every
// byte usable, and on Linux advised into transparent huge pages, which
// /proc/self/smaps shows as the mapping's THPeligible flag wherever the
// kernel has them on (`always` or `madvise`).
#include "engine/platform/weight_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace samebits::platform {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

TEST(WeightMemory, IsAlignedToHugePagesAndUsable) {
  for (size_t bytes : {size_t{0}, size_t{1}, kHugePage - 1, kHugePage, 3 * kHugePage + 5}) {
    const std::shared_ptr<void> memory = AllocateWeightMemory(bytes);
    ASSERT_NE(memory, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(memory.get()) % kHugePage, 0u) << bytes;
    std::memset(memory.get(), 0xab, bytes);
    if (bytes > 0) {
      EXPECT_EQ(static_cast<unsigned char*>(memory.get())[bytes - 1], 0xab);
    }
  }
}

// Returns the text of the sysfs switch, or "" where it does not exist.
std::string TransparentHugePages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  return text;
}

// Returns the value of `field` in the smaps entry of the mapping that holds
// `address`, or "" when none does.
std::string SmapsField(const void* address, const std::string& field) {
  std::ifstream in("/proc/self/smaps");
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) {
      std::string value = line.substr(field.size() + 1);
      value.erase(0, value.find_first_not_of(' '));
      return value;
    }
  }
  return "";
}

TEST(WeightMemory, IsAdvisedIntoHugePagesWhereTheKernelHasThem) {
  const std::string thp = TransparentHugePages();
  if (thp.find("[always]") == std::string::npos && thp.find("[madvise]") == std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off here ('" << thp << "')";
  }
  const std::shared_ptr<void> memory = AllocateWeightMemory(8 * kHugePage);
  const std::string eligible = SmapsField(memory.get(), "THPeligible");
  ASSERT_FALSE(eligible.empty()) << "no smaps entry holds the allocation";
  EXPECT_EQ(eligible, "1");
}

}  // namespace
}  // namespace samebits::platform
