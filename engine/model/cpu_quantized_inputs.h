// The integer profile's activation rows (C12.1) for one flush's matrix
// units, each distinct input quantized once for all the units that read
// it. The matrix repacking (RepackedMatrices, cpu_work.h) says which
// units: several rows against a repacked matrix.
//
// Why: the kernels' own entry (gemm_quant_repacked) quantizes its input in
// every unit, and each unit first compares its rows byte for byte with the
// last rows its thread quantized (kernels/int8_rows.h) and copies them on
// a miss: on this project's Zen 3 that compare and copy were 8.4 % of an
// int8 Q4_K prefill's samples (`perf record -e cpu-clock`), and with two
// threads each quantized every input again. Within one flush no unit
// writes another's input, so an input is known by its address: quantized
// at the flush's start, its bytes are the ones every unit reads.
//
// Quantizing is a pure function of a row, so the bits are the kernels'
// own (the table's gemm_quant_repacked_rows gives gemm_quant_repacked's).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/cpu_work.h"
#include "engine/numerics/int8_dot.h"
#include "engine/threads/thread_pool.h"

namespace samebits::model::cpu {

class QuantizedInputs {
 public:
  // Sets qx (and qx2) of every unit of `tasks` that `kt`'s
  // gemm_quant_repacked_rows takes (several rows, a repacked matrix) to
  // its input quantized for its matrix's type; does nothing for a table
  // without that entry. The rows are quantized on `pool`, and stay valid
  // until the next call.
  void Prepare(const kernels::KernelTable& kt, std::span<MatTask> tasks, threads::ThreadPool& pool);

 private:
  // One distinct input: rows [first, first + m) of rows_.
  struct Input {
    const float* x = nullptr;
    int64_t m = 0;
    int64_t k = 0;
    numerics::QuantType type = numerics::QuantType::kQ8_0;
    int64_t first = 0;
  };
  // Returns the first row in rows_ of input (x, m, matrix w's cols and
  // type), adding the input when it is new.
  int64_t FirstRowOf(const float* x, int64_t m, const Matrix& w);

  std::vector<Input> inputs_;
  std::vector<numerics::Int8ActivationRow> rows_;  // never shrinks: its storage is reused
  std::vector<numerics::Int8Activations> views_;
};

}  // namespace samebits::model::cpu
