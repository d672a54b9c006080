#include "engine/kernels/int8_rows.h"

#include <cstddef>
#include <cstring>
#include <vector>

namespace samebits::kernels::internal {
namespace {

struct RowCache {
  numerics::QuantType type = numerics::QuantType::kQ8_0;
  int64_t k = 0;
  std::vector<float> source;  // the m * k floats last quantized
  std::vector<numerics::Int8ActivationRow> rows;
  std::vector<numerics::Int8Activations> views;
};

}  // namespace

const numerics::Int8Activations* QuantizedRows(numerics::QuantType type, const float* x, int64_t m,
                                               int64_t k) {
  thread_local RowCache cache;
  const size_t floats = static_cast<size_t>(m * k);
  const bool same = cache.type == type && cache.k == k && cache.source.size() == floats &&
                    std::memcmp(cache.source.data(), x, floats * sizeof(float)) == 0;
  if (!same) {
    cache.type = type;
    cache.k = k;
    cache.source.assign(x, x + floats);
    // Rows are never dropped: a product of fewer rows (an expert's share
    // of a prompt) keeps the storage of the others for the next, which
    // then neither allocates nor clears it again.
    if (cache.rows.size() < static_cast<size_t>(m)) cache.rows.resize(static_cast<size_t>(m));
    cache.views.resize(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      cache.rows[i].Quantize(type, x + i * k, k);
      cache.views[i] = cache.rows[i].View();
    }
  }
  return cache.views.data();
}

void* Int8Scratch(size_t bytes) {
  struct Aligned {
    alignas(64) std::byte bytes[64];
  };
  thread_local std::vector<Aligned> scratch;
  if (scratch.size() * sizeof(Aligned) < bytes) scratch.resize((bytes + 63) / 64);
  return scratch.data();
}

}  // namespace samebits::kernels::internal
