// Faulting memory in before it is written. A page's first write costs a
// fault; under a hypervisor that fault is slow (about 10 us a 4 KiB page on
// the Firecracker VMs this project measures on, where decode appends 1 KiB
// per KV cache and position to synthetic:bench's 16 caches and so took a
// 150 us stall every fourth token). Faulting a whole buffer in at once, when
// it is allocated, moves that cost out of the steps that follow.
#pragma once

#include <cstddef>

namespace samebits::platform {

// Asks the kernel to fault in, writable, every whole page inside
// [p, p + bytes) without changing what the memory holds (Linux 5.14's
// MADV_POPULATE_WRITE). Advice only: where the kernel or the platform lacks
// it, nothing happens and the pages fault when first written. Returns true
// when the kernel faulted them in (or the range holds no whole page).
bool PrefaultForWrite(void* p, size_t bytes);

}  // namespace samebits::platform
