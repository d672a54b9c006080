#include "engine/kernels/test_only_table.h"

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "engine/numerics/dtype.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::kernels {
namespace {

// C5 with the keys in decreasing order: the forbidden order of the control.
void ReversedAttentionValues(const float* p, int64_t p_stride, int heads, const float* v_rows,
                             int64_t stride, int n, int head_dim, float* o) {
  for (int i = 0; i < heads; ++i) {
    const float* p_i = p + i * p_stride;
    float* o_i = o + int64_t{i} * head_dim;
    for (int d = 0; d < head_dim; ++d) o_i[d] = 0.0f;
    for (int j = n - 1; j >= 0; --j) {
      const float* v = v_rows + j * stride;
      for (int d = 0; d < head_dim; ++d) o_i[d] = std::fma(p_i[j], v[d], o_i[d]);
    }
  }
}

KernelTable Reversed(Isa isa) {
  KernelTable table = GetKernelTable(isa);
  table.attention_values = ReversedAttentionValues;
  return table;
}

// The split point of a row of k weights: half of k, rounded down to whole
// quantization blocks (`unit` weights each).
int64_t SplitPoint(int64_t k, int64_t unit) {
  return k / unit / 2 * unit;
}

// Split-K products on the base table of ISA `kIsa`: each output is the
// table's dot of the first half of k plus that of the second half. The two
// halves are one-row products over the row's two parts (a row pointer and
// k' < k: a (1, k') matrix), so every dtype and block type is covered.
template <int kIsa>
struct SplitK {
  static const KernelTable& Base() { return GetKernelTable(static_cast<Isa>(kIsa)); }

  static void Gemv(const float* x, const void* w, DType dtype, int64_t k, int64_t row_begin,
                   int64_t row_end, float* y) {
    const size_t size = numerics::DTypeSize(dtype);
    const int64_t h = SplitPoint(k, 1);
    for (int64_t r = row_begin; r < row_end; ++r) {
      const auto* row = static_cast<const std::byte*>(w) + static_cast<size_t>(r * k) * size;
      float a = 0.0f, b = 0.0f;
      if (h > 0) Base().gemv(x, row, dtype, h, 0, 1, &a);
      Base().gemv(x + h, row + static_cast<size_t>(h) * size, dtype, k - h, 0, 1, &b);
      y[r - row_begin] = a + b;
    }
  }
  static void Gemm(const float* x, int64_t m, const void* w, DType dtype, int64_t k,
                   int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
    for (int64_t i = 0; i < m; ++i) Gemv(x + i * k, w, dtype, k, row_begin, row_end, y + i * ldy);
  }
  static void GemvQuant(const float* x, const std::byte* w, QuantType type, int64_t k,
                        int64_t row_begin, int64_t row_end, float* y) {
    const numerics::QuantLayout& l = numerics::LayoutOf(type);
    const int64_t row_bytes = k / l.block_elements * l.block_bytes;
    const int64_t h = SplitPoint(k, l.block_elements);
    const int64_t h_bytes = h / l.block_elements * l.block_bytes;
    for (int64_t r = row_begin; r < row_end; ++r) {
      const std::byte* row = w + r * row_bytes;
      float a = 0.0f, b = 0.0f;
      if (h > 0) Base().gemv_quant(x, row, type, h, 0, 1, &a);
      Base().gemv_quant(x + h, row + h_bytes, type, k - h, 0, 1, &b);
      y[r - row_begin] = a + b;
    }
  }
  static void GemmQuant(const float* x, int64_t m, const std::byte* w, QuantType type, int64_t k,
                        int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
    for (int64_t i = 0; i < m; ++i) {
      GemvQuant(x + i * k, w, type, k, row_begin, row_end, y + i * ldy);
    }
  }
};

template <int kIsa>
KernelTable Split() {
  KernelTable table = GetKernelTable(static_cast<Isa>(kIsa));
  table.gemv = SplitK<kIsa>::Gemv;
  table.gemm = SplitK<kIsa>::Gemm;
  table.gemv_quant = SplitK<kIsa>::GemvQuant;
  table.gemm_quant = SplitK<kIsa>::GemmQuant;
  return table;
}

// One split table per ISA of kernels.h, indexed by the enumerator; those
// this machine cannot run stay empty.
template <int... kIsas>
std::vector<KernelTable> SplitTables(std::integer_sequence<int, kIsas...>) {
  return {(IsaAvailable(static_cast<Isa>(kIsas)) ? Split<kIsas>() : KernelTable{})...};
}

}  // namespace

const KernelTable& TestOnlySplitReductionTable(Isa isa) {
  GetKernelTable(isa);  // throws, naming the ISA, when it is not available
  static const std::vector<KernelTable> tables =
      SplitTables(std::make_integer_sequence<int, kIsaCount>());
  return tables[static_cast<size_t>(isa)];
}

const KernelTable& TestOnlyReversedAttentionTable(Isa isa) {
  GetKernelTable(isa);  // throws, naming the ISA, when it is not available
  // One table per ISA, indexed by the enumerator; unavailable ones stay empty.
  static const std::vector<KernelTable> tables = [] {
    std::vector<KernelTable> all;
    for (const IsaEntry& each : Isas()) {
      all.push_back(IsaAvailable(each.isa) ? Reversed(each.isa) : KernelTable{});
    }
    return all;
  }();
  return tables[static_cast<size_t>(isa)];
}

}  // namespace samebits::kernels
