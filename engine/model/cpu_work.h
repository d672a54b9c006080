// Units of matrix work for the cpu forward pass: GEMV row chunks (one
// activation row) and GEMM output tiles (several), optionally fused with a
// second matrix of the same shape and the SwiGLU that joins them. A unit
// always computes whole outputs (C2), so how the work is cut, and which
// thread runs which unit, cannot change a bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::model::cpu {

// A row-major matrix of `rows` x `cols` elements of `dtype` at `data`, or,
// when `quantized`, of rows of cols / block_elements blocks of `quant`.
struct Matrix {
  const std::byte* data = nullptr;
  numerics::DType dtype = numerics::DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  bool quantized = false;
  numerics::QuantType quant = numerics::QuantType::kQ8_0;
  // The same rows repacked for the integer profile's decode
  // (kernels/int8_repack.h), when RepackedMatrices made them; else null.
  const std::byte* repacked = nullptr;

  // Returns the bytes of one row.
  int64_t row_bytes() const {
    if (!quantized) return cols * numerics::DTypeSize(dtype);
    const numerics::QuantLayout& l = numerics::LayoutOf(quant);
    return cols / l.block_elements * l.block_bytes;
  }
};

// The repacked copies of a forward pass's matrices (kernels/int8_repack.h),
// which it owns for its life: decode reads sixteen rows to a vector there,
// with the bits of the original rows.
class RepackedMatrices {
 public:
  // Points each matrix's `repacked` at a repacked copy when `kt` decodes a
  // repacked form of its type (and leaves the others alone). All copies
  // share one allocation in the weights' own memory
  // (platform/weight_memory.h, 2 MiB pages), which decode streams instead
  // of the originals.
  void Repack(const kernels::KernelTable& kt, const std::vector<Matrix*>& matrices);

 private:
  std::shared_ptr<void> memory_;
};

// Returns the matrix a 2-D tensor holds. Throws std::invalid_argument
// naming `what` when the tensor is absent or not (rows, cols).
Matrix MatrixOf(const TensorView& t, int64_t rows, int64_t cols, const char* what);

// Returns expert `e`'s (rows, cols) matrix from a stack (n, rows, cols).
// Throws std::invalid_argument naming `what` when the stack is too small.
Matrix ExpertMatrix(const TensorView& t, int e, int64_t rows, int64_t cols, const char* what);

// One unit: y[i * ldy + r] = dot(x + i * w.cols, W[r, :]) for i in [0, m) and
// r in [r0, r1). With `w2`, also y2 from W2, then
// h[i * ldy + r] = act(y[...]) * y2[...] (C3).
struct MatTask {
  const float* x = nullptr;
  int64_t m = 1;
  Matrix w;
  int64_t r0 = 0, r1 = 0;
  float* y = nullptr;
  int64_t ldy = 0;
  Matrix w2;  // data null: not fused
  float* y2 = nullptr;
  float* h = nullptr;
  // x's rows quantized for w's (w2's) type, where the flush prepared them
  // (QuantizedInputs, cpu_quantized_inputs.h); else null, and the kernel
  // quantizes them itself.
  const numerics::Int8Activations* qx = nullptr;
  const numerics::Int8Activations* qx2 = nullptr;
};

// Runs one unit with the kernel table's GEMV (m = 1) or GEMM; a fused unit's
// h = act(y) * y2 uses `act` (SiLU for SwiGLU, GELU-tanh for GeGLU).
void RunMatTask(const kernels::KernelTable& kt, const numerics::MathLibrary& math, Activation act,
                const MatTask& task);

// How matrix work is cut into units (from CpuOptions).
struct Cutting {
  int64_t gemv_chunk_bytes = int64_t{256} * 1024;
  int gemm_tile_m = 64;
  int gemm_tile_n = 64;
};

// Appends the units that compute `m` rows of x (row stride w.cols) times
// `w` into `y` (row stride `ldy`): row chunks of ~gemv_chunk_bytes (whole
// rows) when m = 1, else tiles of gemm_tile_m x gemm_tile_n. With `w2`,
// fused as in MatTask.
void AppendMatTasks(const Cutting& cut, const float* x, int64_t m, const Matrix& w, float* y,
                    int64_t ldy, std::vector<MatTask>& tasks, const Matrix* w2 = nullptr,
                    float* y2 = nullptr, float* h = nullptr);

}  // namespace samebits::model::cpu
