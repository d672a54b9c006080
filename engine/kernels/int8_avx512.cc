// The integer profile's kernels (int8_avx512_kernels.h) in AVX-512 BW:
// pmaddubsw (u8 x s8 pairs to s16), then pmaddwd by ones (to s32).
#include "engine/kernels/int8_avx512_kernels.h"
#include "engine/kernels/quant_int8_loops.h"

namespace samebits::kernels::internal {
namespace {

struct PairsThenQuads {
  // (a + 128) * w could overflow pmaddubsw's 16-bit pair sums.
  static constexpr bool kOffsetActivations = false;
  static __m512i Dot4Into(__m512i acc, __m512i u, __m512i s) {
    return _mm512_add_epi32(acc, Dot4(u, s));
  }
  static __m512i Dot4(__m512i u, __m512i s) {
    return _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1));
  }
};

}  // namespace

float Avx512DotInt8(QuantType type, const std::byte* row, const Int8Activations& x, int64_t k) {
  return DotInt8With<PairsThenQuads>(type, row, x, k);
}

int64_t Avx512Int8Rows(QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                       const Int8Activations* x, int64_t m, int64_t k, float* y, int64_t ldy) {
  return RowsWith<PairsThenQuads>(type, rows, row_bytes, n, x, m, k, y, ldy);
}

void Avx512GemvQuantRepacked(const float* x, const std::byte* packed, QuantType type, int64_t k,
                             int64_t row_begin, int64_t row_end, float* y) {
  GemvRepackedWith<PairsThenQuads>(type, packed, QuantizedRows(type, x, 1, k)[0], k, row_begin,
                                   row_end, y);
}

void Avx512GemmQuantRepacked(const float* x, int64_t m, const std::byte* packed, QuantType type,
                             int64_t k, int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  GemmRepackedWith<PairsThenQuads>(type, packed, QuantizedRows(type, x, m, k), m, k, row_begin,
                                   row_end, y, ldy);
}

void Avx512GemmQuantRepackedRows(const Int8Activations* x, int64_t m, const std::byte* packed,
                                 QuantType type, int64_t k, int64_t row_begin, int64_t row_end,
                                 float* y, int64_t ldy) {
  GemmRepackedWith<PairsThenQuads>(type, packed, x, m, k, row_begin, row_end, y, ldy);
}

}  // namespace samebits::kernels::internal
