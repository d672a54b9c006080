// The kernel table: every ISA-specific entry point of the engine, chosen
// once per process (STYLE: "dispatch decided once") from `--isa`. Nothing
// outside engine/kernels/ holds SIMD code or checks the CPU: both forward
// passes compute through this table, so the ISA a run records is the ISA
// that ran. Kernels know nothing of
// the model graph; each computes whole outputs in the contract's order
// (engine/numerics/README.md), so any ISA gives the same bits as the scalar
// table, which is itself pinned against `numerics::Dot`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/numerics/dtype.h"
#include "engine/numerics/int8_dot.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::platform {
struct CpuFeatures;
}  // namespace samebits::platform

namespace samebits::kernels {

using numerics::DType;
using numerics::QuantType;

// The instruction sets the engine has kernel tables for, in the order of
// dispatch.cc's `kIsas`, which says everything else about each (adding an
// ISA: README.md).
enum class Isa : uint8_t { kScalar, kAvx2, kAvx512, kNeon };
inline constexpr int kIsaCount = 4;

struct KernelTable;

// One ISA as the engine knows it: the only list of ISAs (dispatch.cc).
struct IsaEntry {
  Isa isa;
  int rank;          // `--isa auto` picks the available ISA of highest rank
  const char* name;  // `--isa`'s value, the `isa` of records and of cpu-<isa> cells
  // Whether this CPU and OS can run the table's instructions.
  bool (*cpu_runs)(const platform::CpuFeatures&);
  // The table, or null when this build lacks it (another architecture).
  const KernelTable& (*table)();
};

// Returns every ISA, built or not, in enumerator order.
std::span<const IsaEntry> Isas();
// Returns "scalar", "avx2", "avx512" or "neon".
const char* IsaName(Isa isa);
// Returns every ISA's name, in enumerator order.
std::vector<std::string> IsaNames();
// Returns true and sets `*out` for one of the names above.
bool ParseIsa(std::string_view name, Isa* out);
// Returns whether this build has the ISA's kernels and this CPU and OS can
// run them (CPUID and XGETBV on x86; always true for NEON on aarch64).
bool IsaAvailable(Isa isa);
// Returns every available ISA, scalar first.
std::vector<Isa> AvailableIsas();
// Returns the fastest available ISA.
Isa BestIsa();
// Returns the CPU feature names this machine reports ("avx2", "fma", ...).
std::vector<std::string> CpuFeatures();

struct KernelTable {
  Isa isa;

  // GEMV (C2): y[r - row_begin] = dot(x, W[r, :], k) for r in [row_begin,
  // row_end). `w` points at row 0 of a row-major (rows, k) matrix of `dtype`.
  // No pointer needs any alignment; nothing past x[k - 1], the last row's
  // last weight or y[row_end - row_begin - 1] is read or written. Denormal
  // operands are legal (the contract forbids FTZ/DAZ) but slow on x86.
  void (*gemv)(const float* x, const void* w, DType dtype, int64_t k, int64_t row_begin,
               int64_t row_end, float* y);

  // GEMM (C2): y[i * ldy + (r - row_begin)] = dot(x + i * k, W[r, :], k) for
  // i in [0, m) and r in [row_begin, row_end). Each output is computed whole,
  // so the result equals `m` GEMV calls bit for bit.
  void (*gemm)(const float* x, int64_t m, const void* w, DType dtype, int64_t k, int64_t row_begin,
               int64_t row_end, float* y, int64_t ldy);

  // Returns dot(a, b, n) for f32 vectors (C1); used for attention scores.
  float (*dot)(const float* a, const float* b, int64_t n);

  // o[d] = fma(p, v[d], o[d]) for d in [0, n): one key's step of the
  // attention output chain (C5).
  void (*axpy)(float p, const float* v, float* o, int64_t n);

  // The two halves of attention (C5) around the softmax, for one query row
  // of `heads` query heads that share one K/V head (GQA; 1 without it),
  // over keys j in [0, n) at k_rows + j * stride (v_rows + j * stride). Head
  // i's query is q + i * head_dim and its output o + i * head_dim. Reading
  // a key once for every head of its group is what the grouping is for;
  // each head's numbers are those of a call for it alone.
  // s[i * s_stride + j] = dot(q_i, k_j, head_dim) * scale (each a whole C1
  // dot product).
  void (*attention_scores)(const float* q, int heads, const float* k_rows, int64_t stride, int n,
                           int head_dim, float scale, float* s, int64_t s_stride);
  // o_i[d] = fma(p[i * p_stride + j], v_j[d], o_i[d]) for j = 0 .. n-1 in
  // increasing order, o_i starting at +0.0f: one fma chain per output
  // element, key by key.
  void (*attention_values)(const float* p, int64_t p_stride, int heads, const float* v_rows,
                           int64_t stride, int n, int head_dim, float* o);

  // x[i] = numerics::PortableExp(x[i]) for i in [0, n), bit for bit: the
  // portable math profile's exp, many at once (model/cpu_ops.h's
  // ExpInPlace: the softmax of attention, SwiGLU's SiLU).
  void (*exp_portable)(float* x, int64_t n);

  // C4's softmax of s[0 .. n) in place, in the portable math profile:
  // m = max(s), e[j] = PortableExp(s[j] - m), z = the C1-order sum of e,
  // s[j] = e[j] / z, bit for bit (model/cpu_ops.h's SoftmaxInPlace:
  // attention's scores).
  void (*softmax_portable)(float* s, int64_t n);

  // GEMV and GEMM over a block-quantized W (numerics/quant_blocks.h): `w`
  // points at row 0 of `rows` rows of k / block_elements whole blocks of
  // `type` each, and `k` must be a multiple of the type's block_elements.
  // Weight W[r, i] is exactly ggml's dequantized f32 value (what
  // `numerics::DequantizeRow` writes), so every output has the bits of
  // dequantizing the row and running `gemv` / `gemm` on F32; the kernels
  // dequantize 16 or 32 weights at a time into registers and never hold an
  // f32 copy of W. Same pointer rules as above (blocks have no alignment).
  void (*gemv_quant)(const float* x, const std::byte* w, QuantType type, int64_t k,
                     int64_t row_begin, int64_t row_end, float* y);
  void (*gemm_quant)(const float* x, int64_t m, const std::byte* w, QuantType type, int64_t k,
                     int64_t row_begin, int64_t row_end, float* y, int64_t ldy);

  // The same products in the integer profile (numerics/int8_dot.h, C12):
  // y[i * ldy + (r - row_begin)] = numerics::DotInt8 of W's row r and row i
  // of x quantized by C12.1, bit for bit. A table of the int8 profile (see
  // quant_dot) holds these in gemv_quant / gemm_quant as well, so the
  // forward passes need not know the profile.
  void (*gemv_quant_int8)(const float* x, const std::byte* w, QuantType type, int64_t k,
                          int64_t row_begin, int64_t row_end, float* y);
  void (*gemm_quant_int8)(const float* x, int64_t m, const std::byte* w, QuantType type, int64_t k,
                          int64_t row_begin, int64_t row_end, float* y, int64_t ldy);

  // GEMV and GEMM over a matrix repacked by kernels::RepackRows
  // (int8_repack.h): the bits of gemv_quant_int8 / gemm_quant_int8 on the
  // original rows, for the types
  // RepackedBytes gives a form to. Null where the table has none (every
  // table of the exact profile, and the int8 tables but AVX-512's and
  // AVX2's); the model repacks a matrix only for a table that has it.
  void (*gemv_quant_repacked)(const float* x, const std::byte* packed, QuantType type, int64_t k,
                              int64_t row_begin, int64_t row_end, float* y) = nullptr;
  void (*gemm_quant_repacked)(const float* x, int64_t m, const std::byte* packed, QuantType type,
                              int64_t k, int64_t row_begin, int64_t row_end, float* y,
                              int64_t ldy) = nullptr;
  // gemm_quant_repacked over activation rows already quantized by C12.1
  // for weights of `type` (numerics::Int8ActivationRow): the same bits,
  // for a caller that quantizes each input once for all the units that
  // read it (the cpu forward's Flush). Null where gemm_quant_repacked is.
  void (*gemm_quant_repacked_rows)(const numerics::Int8Activations* x, int64_t m,
                                   const std::byte* packed, QuantType type, int64_t k,
                                   int64_t row_begin, int64_t row_end, float* y,
                                   int64_t ldy) = nullptr;

  // Which of the two gemv_quant / gemm_quant compute.
  numerics::QuantDot quant_dot = numerics::QuantDot::kExact;
};

// How far ahead of the weights being read the integer profile's row loops
// and repacked tiles hint the stream into cache (stream_prefetch.h): a
// tuning knob (model/tuning.h), set by the cpu pass at the start of each
// forward call. A hint only moves data, so no value changes a bit. Values
// are clamped to [kMinStreamAheadBytes, kMaxStreamAheadBytes]; one below a
// cache line (64 bytes) issues no hints over block-quantized weights in
// either profile (the exact one's GEMV hints too), leaving the streams to
// the hardware prefetcher (some machines read them faster so).
inline constexpr int64_t kDefaultStreamAheadBytes = 4096;
inline constexpr int64_t kMinStreamAheadBytes = 1;
inline constexpr int64_t kMaxStreamAheadBytes = int64_t{1} << 20;
void SetStreamAheadBytes(int64_t bytes);
int64_t StreamAheadBytes();

// Returns the table for `isa`, its quantized products in profile
// `quant_dot`. Throws std::invalid_argument naming the ISA when it is not
// available (check `IsaAvailable` first).
const KernelTable& GetKernelTable(Isa isa,
                                  numerics::QuantDot quant_dot = numerics::QuantDot::kExact);

}  // namespace samebits::kernels
