// The stream-ahead distance of the integer profile's prefetch hints
// (kernels.h, stream_prefetch.h). Process-wide because the hints sit deep
// in the ISA loops, below any argument list; atomic because a forward call
// sets it while another pass's workers may read it (two passes in one
// process, as `tune` times them, interleaved). A hint only moves data: a
// worker that reads the other pass's distance changes a timing, never a bit.
#include <algorithm>
#include <atomic>

#include "engine/kernels/kernels.h"

namespace samebits::kernels {
namespace {
std::atomic<int64_t> g_stream_ahead_bytes{kDefaultStreamAheadBytes};
}  // namespace

void SetStreamAheadBytes(int64_t bytes) {
  g_stream_ahead_bytes.store(std::clamp(bytes, kMinStreamAheadBytes, kMaxStreamAheadBytes),
                             std::memory_order_relaxed);
}

int64_t StreamAheadBytes() {
  return g_stream_ahead_bytes.load(std::memory_order_relaxed);
}

}  // namespace samebits::kernels
