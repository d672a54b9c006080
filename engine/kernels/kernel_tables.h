// The per-ISA kernel tables, one per source file. Internal to
// engine/kernels: callers go through `GetKernelTable`, which checks that the
// CPU and OS can run a table before handing it out.
#pragma once

#include "engine/kernels/kernels.h"

namespace samebits::kernels::internal {

// Returns the scalar table (matmul_scalar.cc), built on `numerics::Dot`.
const KernelTable& ScalarTable();
// numerics::PortableExp of x[0 .. n), in place, one at a time: the scalar,
// AVX2 and NEON tables' exp_portable.
void ScalarExpPortable(float* x, int64_t n);
// C4's softmax in the portable profile over ScalarExpPortable: the scalar
// and NEON tables' softmax_portable (matmul_scalar.cc).
void ScalarSoftmaxPortable(float* s, int64_t n);

// The x86 tables exist whenever the build targets x86-64, because
// kernels.cmake lists the AVX2 and AVX-512 files there, with their
// own ISA flags; whether the CPU can run them is decided at run time.
#if defined(__x86_64__) || defined(_M_X64)
#define SAMEBITS_KERNELS_HAVE_X86 1
// Returns the AVX2 + FMA + F16C table (matmul_avx2.cc).
const KernelTable& Avx2Table();
// The integer profile's rows in AVX2 (int8_avx2.cc, Int8Rows of
// quant_int8_loops.h): every row of the eight quantized types, with
// numerics::DotInt8's bits; 0 for any other type.
int64_t Avx2Int8Rows(numerics::QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                     const numerics::Int8Activations* x, int64_t m, int64_t k, float* y,
                     int64_t ldy);
// The integer-profile products over repacked rows in AVX2
// (int8_avx2_repacked.cc): the int8 AVX2 table's gemv_quant_repacked and
// gemm_quant_repacked.
void Avx2GemvQuantRepacked(const float* x, const std::byte* packed, numerics::QuantType type,
                           int64_t k, int64_t row_begin, int64_t row_end, float* y);
void Avx2GemmQuantRepacked(const float* x, int64_t m, const std::byte* packed,
                           numerics::QuantType type, int64_t k, int64_t row_begin, int64_t row_end,
                           float* y, int64_t ldy);
void Avx2GemmQuantRepackedRows(const numerics::Int8Activations* x, int64_t m,
                               const std::byte* packed, numerics::QuantType type, int64_t k,
                               int64_t row_begin, int64_t row_end, float* y, int64_t ldy);
// numerics::PortableExp of x[0 .. n), in place, eight at a time
// (exp_avx2.cc): the same bits.
void Avx2ExpPortable(float* x, int64_t n);
// C4's softmax in the portable profile over Avx2ExpPortable, the rest
// compiled for the baseline (matmul_scalar.cc): the AVX2 table's
// softmax_portable.
void Avx2SoftmaxPortable(float* s, int64_t n);
// Returns the AVX-512 F/BW/VL table (matmul_avx512.cc).
const KernelTable& Avx512Table();
// The AVX-512 attention halves (attention_avx512.cc), entries of that table:
// see KernelTable::attention_scores and attention_values.
void Avx512AttentionScores(const float* q, int heads, const float* k_rows, int64_t stride, int n,
                           int head_dim, float scale, float* s, int64_t s_stride);
void Avx512AttentionValues(const float* p, int64_t p_stride, int heads, const float* v_rows,
                           int64_t stride, int n, int head_dim, float* o);
// The integer profile's one-row dot product (int8_avx512.cc): the bits of
// numerics::DotInt8, with Q8_0 and Q4_K in AVX-512 BW and the other types
// through the scalar definition (Avx512Int8Rows takes all their rows).
float Avx512DotInt8(numerics::QuantType type, const std::byte* row,
                    const numerics::Int8Activations& x, int64_t k);
// The rows int8_avx512.cc's kernels take at once (Int8Rows of
// quant_int8_loops.h): all of them for the eight quantized types.
int64_t Avx512Int8Rows(numerics::QuantType type, const std::byte* rows, int64_t row_bytes,
                       int64_t n, const numerics::Int8Activations* x, int64_t m, int64_t k,
                       float* y, int64_t ldy);
// numerics::PortableExp of x[0 .. n), in place, sixteen at a time
// (exp_avx512.cc): the same bits.
void Avx512ExpPortable(float* x, int64_t n);
// C4's softmax in the portable profile, sixteen lanes at a time
// (exp_avx512.cc): the bits of the scalar definition.
void Avx512SoftmaxPortable(float* s, int64_t n);
// The products over rows repacked sixteen to a vector (int8_repack.h),
// AVX-512 BW and VNNI: the bits of numerics::DotInt8 on the original rows.
void Avx512GemvQuantRepacked(const float* x, const std::byte* packed, numerics::QuantType type,
                             int64_t k, int64_t row_begin, int64_t row_end, float* y);
void Avx512VnniGemvQuantRepacked(const float* x, const std::byte* packed, numerics::QuantType type,
                                 int64_t k, int64_t row_begin, int64_t row_end, float* y);
void Avx512GemmQuantRepacked(const float* x, int64_t m, const std::byte* packed,
                             numerics::QuantType type, int64_t k, int64_t row_begin,
                             int64_t row_end, float* y, int64_t ldy);
void Avx512VnniGemmQuantRepacked(const float* x, int64_t m, const std::byte* packed,
                                 numerics::QuantType type, int64_t k, int64_t row_begin,
                                 int64_t row_end, float* y, int64_t ldy);
void Avx512GemmQuantRepackedRows(const numerics::Int8Activations* x, int64_t m,
                                 const std::byte* packed, numerics::QuantType type, int64_t k,
                                 int64_t row_begin, int64_t row_end, float* y, int64_t ldy);
void Avx512VnniGemmQuantRepackedRows(const numerics::Int8Activations* x, int64_t m,
                                     const std::byte* packed, numerics::QuantType type, int64_t k,
                                     int64_t row_begin, int64_t row_end, float* y, int64_t ldy);
// The int8 products with VNNI (int8_avx512_vnni.cc), in place of the AVX-512
// table's own gemv_quant_int8 / gemm_quant_int8 when the CPU has VNNI
// (dispatch.cc decides, once).
void Avx512VnniGemvQuantInt8(const float* x, const std::byte* w, numerics::QuantType type,
                             int64_t k, int64_t row_begin, int64_t row_end, float* y);
void Avx512VnniGemmQuantInt8(const float* x, int64_t m, const std::byte* w,
                             numerics::QuantType type, int64_t k, int64_t row_begin,
                             int64_t row_end, float* y, int64_t ldy);
#endif

// NEON is part of the aarch64 baseline, so matmul_neon.cc is compiled there
// without extra flags.
#if defined(__aarch64__)
#define SAMEBITS_KERNELS_HAVE_NEON 1
// Returns the NEON table (matmul_neon.cc).
const KernelTable& NeonTable();
// The integer profile's rows in NEON (int8_neon.cc, Int8Rows of
// quant_int8_loops.h): every row of the eight quantized types, with
// numerics::DotInt8's bits; 0 for any other type.
int64_t NeonInt8Rows(numerics::QuantType type, const std::byte* rows, int64_t row_bytes, int64_t n,
                     const numerics::Int8Activations* x, int64_t m, int64_t k, float* y,
                     int64_t ldy);
#endif

}  // namespace samebits::kernels::internal
