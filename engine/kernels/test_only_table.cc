#include "engine/kernels/test_only_table.h"

#include <cmath>
#include <cstddef>
#include <vector>

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
  GetKernelTable(isa);  // throws, naming the ISA, when it is not available
  // One table per ISA, indexed by the enumerator; unavailable ones stay empty.
  static const std::vector<KernelTable> tables = [] {
    std::vector<KernelTable> all;
    for (Isa each : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
      all.push_back(IsaAvailable(each) ? Reversed(each) : KernelTable{});
    }
    return all;
  }();
  return tables[static_cast<size_t>(isa)];
}

}  // namespace samebits::kernels
