// Running a piece of a test in a death-test child whose address space is
// limited, so that "this fits in N bytes" and "this runs out of memory
// with a message that blames the right thing" can be checked without
// taking the machine's memory.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

namespace samebits::model {

constexpr int64_t kAddressSpaceLimit = int64_t{1} << 30;
constexpr int kOutOfMemory = 5;  // std::bad_alloc escaped
constexpr int kOtherError = 6;   // another exception escaped; its what() is on stderr

// AddressSanitizer reserves terabytes of shadow address space, so no run
// fits under an address-space limit: there the limit cannot be measured
// (ci/sanitize.sh), and the Release suite checks it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSpaceLimitWorks = false;
#else
constexpr bool kAddressSpaceLimitWorks = true;
#endif

// In a (death-test) child: limits the address space to `bytes`, runs `fn`,
// and exits 0; kOutOfMemory when it threw std::bad_alloc; kOtherError, with
// the exception's message on stderr, for any other.
template <typename Fn>
[[noreturn]] void ExitUnderLimit(const Fn& fn, int64_t bytes = kAddressSpaceLimit) {
  const rlimit limit{static_cast<rlim_t>(bytes), static_cast<rlim_t>(bytes)};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::exit(3);
  try {
    fn();
  } catch (const std::bad_alloc&) {
    std::exit(kOutOfMemory);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(kOtherError);
  }
  std::exit(0);
}

}  // namespace samebits::model
