// Weight memory (weight_memory.h).
#include "engine/platform/weight_memory.h"

#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace samebits::platform {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

struct HugeAlignedDelete {
  void operator()(void* p) const { ::operator delete (p, std::align_val_t{kHugePage}); }
};

}  // namespace

std::shared_ptr<void> AllocateWeightMemory(size_t bytes) {
  // Whole huge pages: the advice covers the allocation's last page too.
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::operator new (rounded == 0 ? kHugePage : rounded, std::align_val_t{kHugePage});
#ifdef MADV_HUGEPAGE
  // Advice only: a kernel without transparent huge pages says EINVAL and
  // the memory stays in small pages, which is correct, only slower.
  if (rounded > 0) (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return std::shared_ptr<void>(p, HugeAlignedDelete{});
}

}  // namespace samebits::platform
