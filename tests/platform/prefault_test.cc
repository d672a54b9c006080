// Prefaulting (engine/platform/prefault.h): the whole pages inside the
// range become resident (mincore), the pages at its edges are left alone,
// and no byte changes.
#include "engine/platform/prefault.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace samebits::platform {
namespace {

// A fresh anonymous mapping of `pages` pages, none touched yet.
class FreshPages {
 public:
  explicit FreshPages(size_t pages)
      : page_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))), bytes_(pages * page_) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
  }
  ~FreshPages() {
    if (base_ != nullptr) ::munmap(base_, bytes_);
  }
  FreshPages(const FreshPages&) = delete;
  FreshPages& operator=(const FreshPages&) = delete;

  unsigned char* base() const { return base_; }
  size_t page() const { return page_; }
  // Returns which pages are resident, one flag per page.
  std::vector<bool> Resident() const {
    std::vector<unsigned char> flags(bytes_ / page_);
    if (::mincore(base_, bytes_, flags.data()) != 0) return {};
    std::vector<bool> resident;
    resident.reserve(flags.size());
    for (unsigned char f : flags) resident.push_back((f & 1) != 0);
    return resident;
  }

 private:
  size_t page_;
  size_t bytes_;
  unsigned char* base_ = nullptr;
};

TEST(Prefault, FaultsInTheWholePagesInsideTheRangeAndNoOther) {
  constexpr size_t kPages = 8;
  FreshPages fresh(kPages);
  ASSERT_NE(fresh.base(), nullptr);
  const std::vector<bool> before = fresh.Resident();
  ASSERT_EQ(before.size(), kPages);
  for (size_t i = 0; i < kPages; ++i) {
    if (before[i]) GTEST_SKIP() << "this kernel maps untouched anonymous pages in at once";
  }
  // From inside page 0 to inside page 7: pages 1 .. 6 are whole.
  const size_t page = fresh.page();
  if (!PrefaultForWrite(fresh.base() + 1, kPages * page - 2)) {
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  }
  const std::vector<bool> after = fresh.Resident();
  ASSERT_EQ(after.size(), kPages);
  EXPECT_FALSE(after[0]) << "the partial first page was touched";
  for (size_t i = 1; i + 1 < kPages; ++i) EXPECT_TRUE(after[i]) << "page " << i;
  EXPECT_FALSE(after[kPages - 1]) << "the partial last page was touched";
  // Fresh pages read as zeros, before and after.
  for (size_t i = 0; i < kPages * page; ++i) ASSERT_EQ(fresh.base()[i], 0) << "byte " << i;
}

TEST(Prefault, ChangesNoByteOfMemoryInUse) {
  std::vector<unsigned char> memory(1 << 20);
  for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<unsigned char>(i * 131 + 7);
  const std::vector<unsigned char> copy = memory;
  PrefaultForWrite(memory.data() + 3, memory.size() - 5);
  EXPECT_EQ(0, std::memcmp(memory.data(), copy.data(), memory.size()));
}

TEST(Prefault, EmptyAndNullRangesDoNothing) {
  unsigned char byte = 42;
  EXPECT_TRUE(PrefaultForWrite(&byte, 0));
  EXPECT_TRUE(PrefaultForWrite(&byte, 1));  // no whole page inside
  EXPECT_TRUE(PrefaultForWrite(nullptr, 4096));
  EXPECT_EQ(byte, 42);
}

}  // namespace
}  // namespace samebits::platform
