#include "engine/model/cpu_quantized_inputs.h"

namespace samebits::model::cpu {

namespace {

// Whether `kt` takes unit `t`'s product by `w` from quantized rows.
bool TakesQuantizedRows(const kernels::KernelTable& kt, const MatTask& t, const Matrix& w) {
  return kt.gemm_quant_repacked_rows != nullptr && t.m > 1 && w.data != nullptr &&
         w.repacked != nullptr;
}

}  // namespace

int64_t QuantizedInputs::FirstRowOf(const float* x, int64_t m, const Matrix& w) {
  for (const Input& in : inputs_) {
    if (in.x == x && in.m == m && in.k == w.cols && in.type == w.quant) return in.first;
  }
  const int64_t first = inputs_.empty() ? 0 : inputs_.back().first + inputs_.back().m;
  inputs_.push_back({x, m, w.cols, w.quant, first});
  return first;
}

void QuantizedInputs::Prepare(const kernels::KernelTable& kt, std::span<MatTask> tasks,
                              threads::ThreadPool& pool) {
  inputs_.clear();
  if (kt.gemm_quant_repacked_rows == nullptr) return;
  // First the distinct inputs, then their rows quantized, then the units
  // pointed at them (views_ is sized before, so the pointers stay put).
  for (const MatTask& t : tasks) {
    if (TakesQuantizedRows(kt, t, t.w)) FirstRowOf(t.x, t.m, t.w);
    if (TakesQuantizedRows(kt, t, t.w2)) FirstRowOf(t.x, t.m, t.w2);
  }
  if (inputs_.empty()) return;
  const int64_t rows = inputs_.back().first + inputs_.back().m;
  if (static_cast<int64_t>(rows_.size()) < rows) rows_.resize(static_cast<size_t>(rows));
  views_.resize(static_cast<size_t>(rows));
  std::vector<const Input*> input_of(static_cast<size_t>(rows));
  for (const Input& in : inputs_) {
    for (int64_t i = 0; i < in.m; ++i) input_of[static_cast<size_t>(in.first + i)] = &in;
  }
  pool.ParallelFor(rows, [&](int64_t r, int /*thread*/) {
    const Input& in = *input_of[static_cast<size_t>(r)];
    const auto row = static_cast<size_t>(r);
    rows_[row].Quantize(in.type, in.x + (r - in.first) * in.k, in.k);
    views_[row] = rows_[row].View();
  });
  for (MatTask& t : tasks) {
    if (TakesQuantizedRows(kt, t, t.w)) t.qx = views_.data() + FirstRowOf(t.x, t.m, t.w);
    if (TakesQuantizedRows(kt, t, t.w2)) t.qx2 = views_.data() + FirstRowOf(t.x, t.m, t.w2);
  }
}

}  // namespace samebits::model::cpu
