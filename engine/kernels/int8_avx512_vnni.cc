// The integer profile's kernels (int8_avx512_kernels.h) with AVX-512 VNNI:
// vpdpbusd sums four u8 x s8 products into each s32 lane in one
// instruction. Chosen by dispatch.cc for `--isa avx512` when the CPU has
// VNNI; the bits are those of the BW kernels and of the definition.
#include "engine/kernels/int8_avx512_kernels.h"
#include "engine/kernels/quant_int8_loops.h"

namespace samebits::kernels::internal {
namespace {

struct Quads {
  // vpdpbusd sums in 32 bits: (a + 128) * w cannot overflow.
  static constexpr bool kOffsetActivations = true;
  static __m512i Dot4Into(__m512i acc, __m512i u, __m512i s) {
    return _mm512_dpbusd_epi32(acc, u, s);
  }
  static __m512i Dot4(__m512i u, __m512i s) { return Dot4Into(_mm512_setzero_si512(), u, s); }
};

float DotInt8(QuantType type, const std::byte* row, const Int8Activations& x, int64_t k) {
  return DotInt8With<Quads>(type, row, x, k);
}

int64_t Rows(QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
             const Int8Activations* x, int64_t m, int64_t k, float* y, int64_t ldy) {
  return RowsWith<Quads>(type, rows, row_bytes, n, x, m, k, y, ldy);
}

}  // namespace

void Avx512VnniGemvQuantInt8(const float* x, const std::byte* w, QuantType type, int64_t k,
                             int64_t row_begin, int64_t row_end, float* y) {
  Int8Products<DotInt8, Rows>::Gemv(x, w, type, k, row_begin, row_end, y);
}

void Avx512VnniGemmQuantInt8(const float* x, int64_t m, const std::byte* w, QuantType type,
                             int64_t k, int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  Int8Products<DotInt8, Rows>::Gemm(x, m, w, type, k, row_begin, row_end, y, ldy);
}

void Avx512VnniGemvQuantRepacked(const float* x, const std::byte* packed, QuantType type, int64_t k,
                                 int64_t row_begin, int64_t row_end, float* y) {
  GemvRepackedWith<Quads>(type, packed, QuantizedRows(type, x, 1, k)[0], k, row_begin, row_end, y);
}

void Avx512VnniGemmQuantRepacked(const float* x, int64_t m, const std::byte* packed, QuantType type,
                                 int64_t k, int64_t row_begin, int64_t row_end, float* y,
                                 int64_t ldy) {
  GemmRepackedWith<Quads>(type, packed, QuantizedRows(type, x, m, k), m, k, row_begin, row_end, y,
                          ldy);
}

void Avx512VnniGemmQuantRepackedRows(const Int8Activations* x, int64_t m, const std::byte* packed,
                                     QuantType type, int64_t k, int64_t row_begin, int64_t row_end,
                                     float* y, int64_t ldy) {
  GemmRepackedWith<Quads>(type, packed, x, m, k, row_begin, row_end, y, ldy);
}

}  // namespace samebits::kernels::internal
