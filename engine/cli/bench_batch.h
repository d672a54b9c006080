// `samebits-engine bench --batch-list`: aggregate decode throughput of the
// cpu pass with several sequences decoded in each forward call
// (model::Forward::RunBatch), batch sizes interleaved (1 4 8, 8 4 1, ...),
// with the weight bytes the matrix units read per step and the bandwidth
// that makes. The first sequence's hashes must be the same at every batch
// size (batch invariance, checked in the same runs).
#pragma once

#include <vector>

#include "engine/model/forward.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::cli {

struct BatchBenchShape {
  std::vector<int> batches;  // batch sizes to compare, e.g. 1, 4, 8
  int threads = 1;
  int context = 128;  // each sequence's own random context before decoding
  int decode_steps = 16;
  int repeats = 5;
};

// Times `shape`'s batch sizes on the cpu pass built from `options`, `kt`
// and `multi_sequence_kt` (model::MakeCpuForward), prints the table on
// stdout, and returns 0, or 1 when the first sequence's logits differ
// between batch sizes (said on stderr).
int RunBatchBench(const model::ModelWeights& weights, const numerics::MathLibrary& math,
                  const model::CpuOptions& options, const kernels::KernelTable& kt,
                  const kernels::KernelTable& multi_sequence_kt, const BatchBenchShape& shape);

}  // namespace samebits::cli
