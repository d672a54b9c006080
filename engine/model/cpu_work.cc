#include "engine/model/cpu_work.h"

#include <algorithm>
#include <string>

#include "engine/kernels/int8_repack.h"
#include "engine/model/cpu_ops.h"
#include "engine/platform/weight_memory.h"

namespace samebits::model::cpu {

namespace {

// Repacked rows are read sixteen at a time: units of whole groups.
int64_t RepackedGroups(int64_t rows) {
  return (rows + kernels::kRepackRows - 1) / kernels::kRepackRows * kernels::kRepackRows;
}

std::string ShapeText(const TensorView& t) {
  std::string s = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + ")";
}

}  // namespace

Matrix MatrixOf(const TensorView& t, int64_t rows, int64_t cols, const char* what) {
  if (!t.present() || t.elements() < rows * cols) {
    throw std::invalid_argument(std::string("cpu forward: tensor ") + what +
                                (t.present() ? " has shape " + ShapeText(t) : " is absent") +
                                ", expected (" + std::to_string(rows) + ", " +
                                std::to_string(cols) + ")");
  }
  Matrix m{t.data, t.dtype, rows, cols, t.quantized, t.quant_type};
  if (t.quantized && cols % numerics::LayoutOf(t.quant_type).block_elements != 0) {
    throw std::invalid_argument(std::string("cpu forward: tensor ") + what + " of " +
                                numerics::LayoutOf(t.quant_type).name + " blocks has rows of " +
                                std::to_string(cols) + " weights, not whole blocks");
  }
  return m;
}

Matrix ExpertMatrix(const TensorView& t, int e, int64_t rows, int64_t cols, const char* what) {
  if (!t.present() || t.elements() < (int64_t{e} + 1) * rows * cols) {
    throw std::invalid_argument(std::string("cpu forward: expert stack ") + what +
                                (t.present() ? " has shape " + ShapeText(t) : " is absent") +
                                ", too small for expert " + std::to_string(e));
  }
  Matrix m = MatrixOf(t, rows, cols, what);
  m.data += int64_t{e} * rows * m.row_bytes();
  return m;
}

void RepackedMatrices::Repack(const kernels::KernelTable& kt,
                              const std::vector<Matrix*>& matrices) {
  if (kt.gemv_quant_repacked == nullptr) return;
  const auto bytes_of = [](const Matrix& m) -> int64_t {
    if (!m.quantized || m.data == nullptr) return 0;
    return (kernels::RepackedBytes(m.quant, m.rows, m.cols) + 63) / 64 * 64;
  };
  int64_t total = 0;
  for (const Matrix* m : matrices) total += bytes_of(*m);
  if (total == 0) return;
  memory_ = platform::AllocateWeightMemory(static_cast<size_t>(total));
  auto* out = static_cast<std::byte*>(memory_.get());
  for (Matrix* m : matrices) {
    const int64_t bytes = bytes_of(*m);
    if (bytes == 0) continue;
    kernels::RepackRows(m->quant, m->data, m->rows, m->cols, out);
    m->repacked = out;
    out += bytes;
  }
}

void RunMatTask(const kernels::KernelTable& kt, const numerics::MathLibrary& math, Activation act,
                const MatTask& t) {
  const auto product = [&](const Matrix& w, const numerics::Int8Activations* qx, float* y) {
    if (w.repacked != nullptr && t.m == 1 && kt.gemv_quant_repacked != nullptr) {
      kt.gemv_quant_repacked(t.x, w.repacked, w.quant, w.cols, t.r0, t.r1, y + t.r0);
    } else if (w.repacked != nullptr && qx != nullptr && kt.gemm_quant_repacked_rows != nullptr) {
      kt.gemm_quant_repacked_rows(qx, t.m, w.repacked, w.quant, w.cols, t.r0, t.r1, y + t.r0,
                                  t.ldy);
    } else if (w.repacked != nullptr && kt.gemm_quant_repacked != nullptr) {
      kt.gemm_quant_repacked(t.x, t.m, w.repacked, w.quant, w.cols, t.r0, t.r1, y + t.r0, t.ldy);
    } else if (w.quantized) {
      kt.gemm_quant(t.x, t.m, w.data, w.quant, w.cols, t.r0, t.r1, y + t.r0, t.ldy);
    } else if (t.m == 1) {
      kt.gemv(t.x, w.data, w.dtype, w.cols, t.r0, t.r1, y + t.r0);
    } else {
      kt.gemm(t.x, t.m, w.data, w.dtype, w.cols, t.r0, t.r1, y + t.r0, t.ldy);
    }
  };
  product(t.w, t.qx, t.y);
  if (t.w2.data == nullptr) return;
  product(t.w2, t.qx2, t.y2);
  // SwiGLU or GeGLU over this unit's outputs only: each element is the
  // contract's act(g) * u, so doing it here rather than over the whole row
  // is the same.
  for (int64_t i = 0; i < t.m; ++i) {
    const float* g = t.y + i * t.ldy;
    const float* u = t.y2 + i * t.ldy;
    float* h = t.h + i * t.ldy;
    if (act == Activation::kGeluTanh) {
      for (int64_t r = t.r0; r < t.r1; ++r) h[r] = numerics::GeluTanh(math, g[r]) * u[r];
    } else {
      // numerics::Silu(g) * u, its operations in its order, with the exps
      // of the unit's outputs taken together (cpu::ExpInPlace): the same
      // bits.
      for (int64_t r = t.r0; r < t.r1; ++r) h[r] = -g[r];
      cpu::ExpInPlace(h + t.r0, t.r1 - t.r0, math, &kt);
      for (int64_t r = t.r0; r < t.r1; ++r) h[r] = g[r] / (1.0f + h[r]) * u[r];
    }
  }
}

void AppendMatTasks(const Cutting& cut, const float* x, int64_t m, const Matrix& w, float* y,
                    int64_t ldy, std::vector<MatTask>& tasks, const Matrix* w2, float* y2,
                    float* h) {
  if (m <= 0 || w.rows <= 0) return;
  MatTask base;
  base.w = w;
  base.ldy = ldy;
  if (w2 != nullptr) {
    base.w2 = *w2;
  }
  if (m == 1) {
    // Whole rows per chunk; a fused unit reads two matrices, so it takes half.
    const int64_t bytes_per_row = w.row_bytes() * (w2 != nullptr ? 2 : 1);
    int64_t rows = std::max<int64_t>(1, cut.gemv_chunk_bytes / std::max<int64_t>(1, bytes_per_row));
    if (w.repacked != nullptr) rows = RepackedGroups(rows);
    for (int64_t r0 = 0; r0 < w.rows; r0 += rows) {
      MatTask t = base;
      t.x = x;
      t.m = 1;
      t.r0 = r0;
      t.r1 = std::min(w.rows, r0 + rows);
      t.y = y;
      t.y2 = y2;
      t.h = h;
      tasks.push_back(t);
    }
    return;
  }
  const int64_t tm = std::max(1, cut.gemm_tile_m);
  int64_t tn = std::max(1, cut.gemm_tile_n);
  if (w.repacked != nullptr) tn = RepackedGroups(tn);
  for (int64_t i0 = 0; i0 < m; i0 += tm) {
    for (int64_t r0 = 0; r0 < w.rows; r0 += tn) {
      MatTask t = base;
      t.x = x + i0 * w.cols;
      t.m = std::min(tm, m - i0);
      t.r0 = r0;
      t.r1 = std::min(w.rows, r0 + tn);
      t.y = y + i0 * ldy;
      if (w2 != nullptr) {
        t.y2 = y2 + i0 * ldy;
        t.h = h + i0 * ldy;
      }
      tasks.push_back(t);
    }
  }
}

}  // namespace samebits::model::cpu
