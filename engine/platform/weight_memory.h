// Memory for weights that decode streams every token. A decoded token reads
// every weight once (about 200 MB for synthetic:bench), so with 4 KiB pages
// it walks the page tables every 4 KiB; on Linux, where transparent huge
// pages are usually left to `madvise`, weights in 2 MiB pages avoid that.
// Where the memory lies never changes a bit of the result.
#pragma once

#include <cstddef>
#include <memory>

namespace samebits::platform {

// Returns `bytes` of uninitialised memory aligned to 2 MiB and, on Linux,
// advised into transparent huge pages (MADV_HUGEPAGE; without effect where
// the kernel has them off). Throws std::bad_alloc when none is left.
std::shared_ptr<void> AllocateWeightMemory(size_t bytes);

}  // namespace samebits::platform
