// Activation rows quantized for the integer profile (numerics/int8_dot.h,
// C12.1), kept per thread. Quantizing is a pure function of the row, so a
// unit of work may quantize its rows itself: every unit that reads the same
// activations gets the same quants. The cache below only saves the work
// when consecutive units of one thread read the same rows (the row chunks
// of one GEMV): it compares the rows' bytes, never their address, so a
// buffer refilled with new activations is quantized anew.
//
// Baseline-compiled (a thread_local of the ISA files would export a weak
// TLS wrapper, which isa_symbols_test forbids); the ISA kernels call it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/numerics/int8_dot.h"

namespace samebits::kernels::internal {

// Returns the `m` rows x + i * k quantized for weights of `type`, views into
// this thread's storage, valid until its next call.
const numerics::Int8Activations* QuantizedRows(numerics::QuantType type, const float* x, int64_t m,
                                               int64_t k);

// Returns `bytes` of this thread's scratch memory, 64-byte aligned,
// uninitialized, valid until its next call. The ISA kernels take their
// working memory here: a std::vector in an ISA file would export weak
// template code compiled for that ISA (isa_symbols_test).
void* Int8Scratch(size_t bytes);

}  // namespace samebits::kernels::internal
