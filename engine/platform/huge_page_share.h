// How much of this process's resident memory lies in 2 MiB pages. Decode
// streams every weight once a token, and weights in 4 KiB pages stream
// several percent slower than in 2 MiB ones (a page-table walk every 4 KiB;
// BENCHMARKS.md, "Prefetching the integer profile's weights"). A mapped
// checkpoint's pages are the page cache's: 2 MiB folios when the file was
// read from disk or written in large writes, 4 KiB ones when it was written
// in small writes or while memory was fragmented. So `bench` prints this
// share beside its timings, and a slow run can be told from a slow kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace samebits::platform {

struct HugePageShare {
  int64_t resident_kib = 0;  // Rss
  int64_t huge_kib = 0;      // AnonHugePages + ShmemPmdMapped + FilePmdMapped
};

// Parses the text of /proc/<pid>/smaps_rollup ("Name:   value kB" lines).
// Returns nothing when there is no Rss line or a counted line's value is
// not a whole number of kB; a missing huge-page line counts as 0 (older
// kernels have no FilePmdMapped).
std::optional<HugePageShare> ParseSmapsRollup(std::string_view text);

// This process's share, from /proc/self/smaps_rollup (Linux 4.14 and
// later); nothing where that cannot be read.
std::optional<HugePageShare> ReadHugePageShare();

}  // namespace samebits::platform
