#include "engine/model/cpu_attention.h"

#include "engine/model/cpu_ops.h"

namespace samebits::model::cpu {

AttentionRowFn AttentionRowFor(kernels::Isa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == kernels::Isa::kAvx512) return &AttentionRowAvx512;
#endif
  return &AttentionRow;
}

}  // namespace samebits::model::cpu
