// `samebits-engine bench`'s work once bench_command.cc has resolved its
// flags and loaded the checkpoint: prints the heading and the preflight,
// builds the configurations (the reference pass, then the cpu pass at each
// thread count), times them interleaved, prints the tables and the
// identity verdict (or, with batch sizes, runs bench_batch.h instead).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/cli/tuning_options.h"
#include "engine/kernels/kernels.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::cli {

struct BenchSettings {
  std::string checkpoint;  // the spec as given, for the heading
  numerics::MathProfile math = numerics::MathProfile::kPortable;
  numerics::QuantDot quant_dot = numerics::QuantDot::kExact;
  kernels::Isa isa = kernels::Isa::kScalar;
  // The cpu pass's table (GetKernelTable(isa) unless a test-only control
  // swaps it: commands.h), and, for batch sizes, the one of calls holding
  // several sequences.
  const kernels::KernelTable* cpu_table = nullptr;
  const kernels::KernelTable* cpu_multi_sequence_table = nullptr;
  std::vector<int> thread_counts;  // the cpu pass's, at least one
  std::vector<int> batches;        // --batch-list (empty: the usual decode and prefill timing)
  int context = 128;
  int decode_steps = 16;
  int warmup_steps = 1;
  int prompt = 128;
  int repeats = 5;
  int reference_decode_steps = 2;
  int reference_repeats = 0;  // runs the reference makes (0: no reference)
  TuningFlags tuning;         // the knobs' flags and --wisdom, resolved per thread count
  int bandwidth_mib = 256;    // 0: no bandwidth probe
  bool profile = false;       // one extra profiled run of the fastest configuration
};

// Runs the benchmark on stdout. Returns 0, or 1 when the configurations'
// logits differed (said on stderr).
int RunBench(const BenchSettings& settings, const model::ModelWeights& weights);

}  // namespace samebits::cli
