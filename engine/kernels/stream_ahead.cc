// The stream-ahead distance of the prefetch hints over quantized weights
// (kernels.h, stream_prefetch.h). Process-wide because the hints sit deep
// in the ISA loops, below any argument list; read and written atomically
// (the compiler's builtins, which ISA files may inline: no library
// template) because a forward call sets it while another pass's workers
// may read it (two passes in one process, as `tune` times them,
// interleaved). A hint only moves data: a worker that reads the other
// pass's distance changes a timing, never a bit.
#include <algorithm>

#include "engine/kernels/kernels.h"
#include "engine/kernels/stream_prefetch.h"

namespace samebits::kernels {

namespace internal {
int64_t g_stream_ahead_bytes = kDefaultStreamAheadBytes;
}  // namespace internal

void SetStreamAheadBytes(int64_t bytes) {
  __atomic_store_n(&internal::g_stream_ahead_bytes,
                   std::clamp(bytes, kMinStreamAheadBytes, kMaxStreamAheadBytes), __ATOMIC_RELAXED);
}

int64_t StreamAheadBytes() {
  return __atomic_load_n(&internal::g_stream_ahead_bytes, __ATOMIC_RELAXED);
}

}  // namespace samebits::kernels
