// cpu::QuantizedInputs: each distinct input of a flush's units that read
// repacked matrices with several rows is quantized once, by the
// definition (C12.1), for each weight type that reads it; every other unit
// is left to its kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/cpu_quantized_inputs.h"
#include "engine/threads/thread_pool.h"

namespace samebits::model::cpu {
namespace {

using numerics::QuantType;

constexpr int64_t kInputCols = 256;  // one K-quant block, eight Q8_0 blocks

// A GEMM over quantized rows that is never run: Prepare only looks at
// whether a table has one.
void NeverCalledGemm(const numerics::Int8Activations*, int64_t, const std::byte*, QuantType,
                     int64_t, int64_t, int64_t, float*, int64_t) {
  ADD_FAILURE() << "Prepare ran a product";
}

kernels::KernelTable TableWithQuantizedRowsEntry() {
  kernels::KernelTable t =
      kernels::GetKernelTable(kernels::Isa::kScalar, numerics::QuantDot::kInt8);
  t.gemm_quant_repacked_rows = NeverCalledGemm;
  return t;
}

// A matrix of `type` whose bytes Prepare never reads; `repacked` says
// whether it has a repacked form.
Matrix UnreadMatrix(QuantType type, bool repacked) {
  static const std::byte kBytes[1] = {};
  Matrix w;
  w.data = kBytes;
  w.rows = 16;
  w.cols = kInputCols;
  w.quantized = true;
  w.quant = type;
  w.repacked = repacked ? kBytes : nullptr;
  return w;
}

MatTask UnitOf(const float* x, int64_t m, const Matrix& w) {
  MatTask t;
  t.x = x;
  t.m = m;
  t.w = w;
  return t;
}

std::vector<float> InputRows(int64_t m, float scale) {
  std::vector<float> x(static_cast<size_t>(m * kInputCols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = scale * static_cast<float>(int(i % 97) - 48);
  return x;
}

// Expects `got` to be rows x[0, m) quantized for `type` by the definition.
void ExpectQuantizedAsDefined(const numerics::Int8Activations* got, const float* x, int64_t m,
                              QuantType type) {
  ASSERT_NE(got, nullptr);
  const int64_t block = numerics::ActivationBlockElements(type);
  for (int64_t i = 0; i < m; ++i) {
    numerics::Int8ActivationRow want;
    want.Quantize(type, x + i * kInputCols, kInputCols);
    const numerics::Int8Activations w = want.View();
    EXPECT_EQ(std::memcmp(got[i].q, w.q, kInputCols), 0) << "row " << i;
    EXPECT_EQ(std::memcmp(got[i].d, w.d, sizeof(float) * (kInputCols / block)), 0) << "row " << i;
    EXPECT_EQ(std::memcmp(got[i].sums, w.sums, sizeof(int16_t) * (kInputCols / 16)), 0)
        << "row " << i;
  }
}

TEST(QuantizedInputs, EachInputIsQuantizedOncePerWeightTypeThatReadsIt) {
  threads::ThreadPool pool(2);
  const std::vector<float> a = InputRows(5, 0.25f), b = InputRows(3, -1.5f);
  const Matrix q8 = UnreadMatrix(QuantType::kQ8_0, true),
               q4k = UnreadMatrix(QuantType::kQ4_K, true);
  std::vector<MatTask> tasks = {UnitOf(a.data(), 5, q8), UnitOf(a.data(), 5, q8),
                                UnitOf(a.data(), 5, q4k), UnitOf(b.data(), 3, q8)};
  tasks[2].w2 = q8;  // a fused unit whose second matrix reads a as Q8_0 too
  QuantizedInputs inputs;
  inputs.Prepare(TableWithQuantizedRowsEntry(), tasks, pool);
  // One set of rows per (input, type): units 0, 1 and unit 2's second
  // matrix share a's Q8_0 rows.
  EXPECT_EQ(tasks[0].qx, tasks[1].qx);
  EXPECT_EQ(tasks[0].qx, tasks[2].qx2);
  EXPECT_NE(tasks[0].qx, tasks[2].qx);
  EXPECT_NE(tasks[0].qx, tasks[3].qx);
  EXPECT_EQ(tasks[0].qx2, nullptr);  // not fused
  ExpectQuantizedAsDefined(tasks[0].qx, a.data(), 5, QuantType::kQ8_0);
  ExpectQuantizedAsDefined(tasks[2].qx, a.data(), 5, QuantType::kQ4_K);
  ExpectQuantizedAsDefined(tasks[3].qx, b.data(), 3, QuantType::kQ8_0);
}

TEST(QuantizedInputs, LeavesDecodeUnitsPlainMatricesAndTablesWithoutTheEntryToTheKernels) {
  threads::ThreadPool pool(2);
  const std::vector<float> a = InputRows(4, 0.5f);
  std::vector<MatTask> tasks = {UnitOf(a.data(), 1, UnreadMatrix(QuantType::kQ8_0, true)),
                                UnitOf(a.data(), 4, UnreadMatrix(QuantType::kQ6_K, false))};
  QuantizedInputs inputs;
  inputs.Prepare(TableWithQuantizedRowsEntry(), tasks, pool);
  EXPECT_EQ(tasks[0].qx, nullptr);  // one row: decode's GEMV quantizes it
  EXPECT_EQ(tasks[1].qx, nullptr);  // no repacked form
  std::vector<MatTask> more = {UnitOf(a.data(), 4, UnreadMatrix(QuantType::kQ8_0, true))};
  inputs.Prepare(kernels::GetKernelTable(kernels::Isa::kScalar, numerics::QuantDot::kInt8), more,
                 pool);
  EXPECT_EQ(more[0].qx, nullptr);  // the scalar table has no such GEMM
}

}  // namespace
}  // namespace samebits::model::cpu
