// Prefaulting (prefault.h).
#include "engine/platform/prefault.h"

#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

// glibc 2.36's headers name it; older ones do not, though the kernel may.
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

namespace samebits::platform {

bool PrefaultForWrite(void* p, size_t bytes) {
#ifdef __linux__
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return false;
  if (p == nullptr) return true;
  const auto page = static_cast<uintptr_t>(page_size);
  // Only pages wholly inside the range: the ones at its edges may hold
  // other allocations, which this must not touch.
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const uintptr_t begin = (address + page - 1) / page * page;
  const uintptr_t end = (address + bytes) / page * page;
  if (end <= begin) return true;
  char* const first = static_cast<char*>(p) + (begin - address);
  // EINVAL on kernels before 5.14: the pages fault when first written, which
  // is correct, only slower.
  return ::madvise(first, end - begin, MADV_POPULATE_WRITE) == 0;
#else
  (void)p;
  (void)bytes;
  return false;
#endif
}

}  // namespace samebits::platform
