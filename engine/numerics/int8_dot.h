// The integer profile for block-quantized weights (README.md, clause C12):
// activations rounded to int8 per block, each scale group's
// weight-by-activation sum an exact integer, group sums scaled and
// accumulated in f32 in the 16-lane order of C1. This file is the profile's scalar definition;
// every kernel (engine/kernels/) reproduces `DotInt8` bit for bit, which the integers make easy: an
// exact sum has one value, whatever order or instruction (VNNI, pmaddubsw, sdot, scalar) computed
// it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/numerics/quant_blocks.h"

namespace samebits::numerics {

// How a block-quantized matrix meets its f32 activations, chosen once per
// process like the math profile. `exact` (the default) multiplies every
// weight's exact f32 value (C11) in the C1 fma chains; `int8` follows C12.
// Matrices of F32, F16 and BF16 weights compute the same in both.
enum class QuantDot : uint8_t { kExact, kInt8 };

// Returns "exact" or "int8".
std::string_view QuantDotName(QuantDot profile);
// Returns true and sets `*out` when `name` is "exact" or "int8".
bool ParseQuantDot(std::string_view name, QuantDot* out);

// Activations quantized per block. The blocks are as long as the weights'
// (32, or 256 for the k-quants); `sums` holds the exact sum of every 16
// consecutive quants, which the affine types (and fast kernels) use.
inline constexpr int kActivationSumSpan = 16;
struct Int8Activations {
  const int8_t* q = nullptr;      // k quants
  const float* d = nullptr;       // k / block scales
  const int16_t* sums = nullptr;  // k / 16 sums
};

// Returns the elements per activation block for weights of `type` (C12.1).
int ActivationBlockElements(QuantType type);

// Quantizes the k values `x` (k a multiple of the block) by C12.1 into `q`
// (k), `d` (k / block) and `sums` (k / 16).
void QuantizeActivations(QuantType type, const float* x, int64_t k, int8_t* q, float* d,
                         int16_t* sums);

// Storage for one quantized row; kernels keep one per thread.
class Int8ActivationRow {
 public:
  // Quantizes `x`, reusing the storage of earlier rows.
  void Quantize(QuantType type, const float* x, int64_t k);
  Int8Activations View() const { return {q_.data(), d_.data(), sums_.data()}; }

 private:
  std::vector<int8_t> q_;
  std::vector<float> d_;
  std::vector<int16_t> sums_;
};

// One weight block in integer form (C12.2): weight i is
// `d * sc[i / sub] * q[i] + min_sign * m * mn[i / sub]`, the value C11's
// dequantization gives (checked weight by weight in int8_dot_test).
struct IntegerBlock {
  int elements = 32;  // weights in the block: 32, or 256 for the k-quants
  int16_t q[256];     // the quants, offset removed (Q4_0: q - 8, Q5_0: q - 16, Q6_K: q - 32)
  int sub = 32;       // weights per integer scale (16 for Q6_K)
  int16_t sc[16];     // integer scale per sub-block (1 for the blocks of 32)
  int16_t mn[16];     // integer min per sub-block (1 for Q4_1 / Q5_1; 0 without a min)
  float d = 0.0f;     // the F16 scale, exact in f32
  float m = 0.0f;     // the F16 min (Q4_1, Q5_1) or dmin (Q4_K, Q5_K); 0 otherwise
  int min_sign = 0;   // +1 (Q4_1, Q5_1), -1 (Q4_K, Q5_K), 0 (no min)
};
void UnpackIntegerBlock(QuantType type, const std::byte* block, IntegerBlock* out);

// One scale group's two exact integers (C12.2): dot = sum_i q_i a_i and
// asum = sum_i a_i over the `sub` weights of group `j` of `w` and their
// activations `a` (the block's). Both are below 2^24 in magnitude, so their
// f32 conversions are exact as well.
struct GroupSums {
  int32_t dot = 0;
  int32_t asum = 0;
};
GroupSums IntegerGroupSums(const IntegerBlock& w, int j, const int8_t* a);

// Returns one output of the integer profile (C12.3): the row of k / block
// blocks at `row` times the quantized activations `x`. Scale group g of the
// row (32 weights; 16 for Q6_K) is accumulated in lane g mod 16.
float DotInt8(QuantType type, const std::byte* row, const Int8Activations& x, int64_t k);

}  // namespace samebits::numerics
