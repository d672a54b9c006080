// Attention rows for the cpu pass, one implementation per ISA: the portable
// one (cpu_ops.h `AttentionRow`, through the kernel table) and an AVX-512
// one that keeps four keys' score chains and the V running sums in
// registers. Both compute C5 exactly: each score is the C1 dot product of
// q and k_j times the scale, the softmax is C4, and each output element is
// one fma chain over the keys in increasing order. The choice is made once,
// from CpuOptions::isa, when the pass is built.
#pragma once

#include <cstdint>

#include "engine/kernels/kernels.h"
#include "engine/numerics/math.h"

namespace samebits::model::cpu {

// The signature of `AttentionRow` (cpu_ops.h).
using AttentionRowFn = void (*)(const kernels::KernelTable& kt, const numerics::MathLibrary& math,
                                const float* q, const float* k_rows, const float* v_rows,
                                int64_t stride, int first, int last, int head_dim, float scale,
                                float* scores, float* o, bool reverse_v_for_tests);

// Returns the attention row for `isa`: the AVX-512 one for kAvx512 on an
// x86-64 build, else the portable one.
AttentionRowFn AttentionRowFor(kernels::Isa isa);

#if defined(__x86_64__) || defined(_M_X64)
// The AVX-512 F attention row (cpu_attention_avx512.cc); call only when the
// CPU has AVX-512 (kernels::IsaAvailable).
void AttentionRowAvx512(const kernels::KernelTable& kt, const numerics::MathLibrary& math,
                        const float* q, const float* k_rows, const float* v_rows, int64_t stride,
                        int first, int last, int head_dim, float scale, float* scores, float* o,
                        bool reverse_v_for_tests);
#endif

}  // namespace samebits::model::cpu
