#include "engine/kernels/test_only_table.h"

#include <cmath>

namespace samebits::kernels {
namespace {

// C5 with the keys in decreasing order: the forbidden order of the control.
void ReversedAttentionValues(const float* p, const float* v_rows, int64_t stride, int n,
                             int head_dim, float* o) {
  for (int d = 0; d < head_dim; ++d) o[d] = 0.0f;
  for (int j = n - 1; j >= 0; --j) {
    const float* v = v_rows + j * stride;
    for (int d = 0; d < head_dim; ++d) o[d] = std::fma(p[j], v[d], o[d]);
  }
}

KernelTable Reversed(Isa isa) {
  KernelTable table = GetKernelTable(isa);
  table.attention_values = ReversedAttentionValues;
  return table;
}

}  // namespace

const KernelTable& TestOnlyReversedAttentionTable(Isa isa) {
  switch (isa) {
    case Isa::kScalar: {
      static const KernelTable table = Reversed(Isa::kScalar);
      return table;
    }
    case Isa::kAvx2: {
      static const KernelTable table = Reversed(Isa::kAvx2);
      return table;
    }
    case Isa::kAvx512: {
      static const KernelTable table = Reversed(Isa::kAvx512);
      return table;
    }
    case Isa::kNeon: {
      static const KernelTable table = Reversed(Isa::kNeon);
      return table;
    }
  }
  return GetKernelTable(isa);
}

}  // namespace samebits::kernels
