#include "engine/cli/bench_batch.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/cli/bench_schedule.h"
#include "engine/cli/bench_statistics.h"
#include "engine/model/sampler.h"
#include "engine/numerics/hash.h"
#include "engine/run/scenario.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

using Clock = std::chrono::steady_clock;

// One sequence ready to decode: its state after its own context, and the
// argmax that follows it.
struct Sequence {
  model::InferenceState state;
  int32_t next = 0;
};

// Returns `count` sequences, each after its own random context (a different
// seed each, so a MoE step routes the sequences to different experts).
std::vector<Sequence> MakeSequences(const model::ModelConfig& mc, model::Forward& forward,
                                    int count, int context) {
  std::vector<Sequence> out(static_cast<size_t>(count));
  std::vector<float> logits;
  for (int i = 0; i < count; ++i) {
    run::RandomTokenSpec spec;
    spec.length = context;
    spec.seed = 0xba7c4 + static_cast<uint64_t>(i);
    spec.first_token = std::min(3, mc.vocab_size - 1);
    const std::vector<int32_t> tokens = run::RandomTokens(spec, mc.vocab_size);
    out[i].state = model::MakeState(mc);
    forward.Run(out[i].state, tokens, false, logits, nullptr);
    out[i].next = model::Argmax(logits);
  }
  return out;
}

// What one batch size recorded over its runs.
struct BatchRecord {
  int batch = 1;
  std::vector<double> step_ms;         // mean ms per decode step, one per run
  std::vector<uint64_t> first_hashes;  // the first sequence's, per step (last run)
  double bytes_per_step = 0;           // matrix weight bytes read per step
};

// Times `steps` batched decode steps of the first `r.batch` sequences from
// their contexts (copies, so every run starts alike).
void TimeBatch(BatchRecord& r, model::Forward& forward, const std::vector<Sequence>& sequences,
               int steps) {
  std::vector<Sequence> live(sequences.begin(), sequences.begin() + r.batch);
  std::vector<std::vector<float>> logits(live.size());
  std::vector<model::SequenceCall> calls(live.size());
  r.first_hashes.clear();
  const int64_t bytes_before = forward.MatrixBytesRead();
  double ms = 0;
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < live.size(); ++i) {
      calls[i] = {&live[i].state, std::span<const int32_t>(&live[i].next, 1), false, &logits[i],
                  nullptr};
    }
    const auto start = Clock::now();
    forward.RunBatch(calls);
    ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    for (size_t i = 0; i < live.size(); ++i) live[i].next = model::Argmax(logits[i]);
    r.first_hashes.push_back(numerics::HashFloatsFnv1a(logits[0]));
  }
  r.step_ms.push_back(ms / steps);
  r.bytes_per_step = static_cast<double>(forward.MatrixBytesRead() - bytes_before) / steps;
}

}  // namespace

int RunBatchBench(const model::ModelWeights& weights, const numerics::MathLibrary& math,
                  const model::CpuOptions& options, const kernels::KernelTable& kt,
                  const kernels::KernelTable& multi_sequence_kt, const BatchBenchShape& shape) {
  threads::ThreadPool pool(shape.threads);
  auto forward = model::MakeCpuForward(weights, math, pool, options, kt, multi_sequence_kt);
  const int largest = *std::max_element(shape.batches.begin(), shape.batches.end());
  const std::vector<Sequence> sequences =
      MakeSequences(weights.config, *forward, largest, shape.context);

  std::vector<BatchRecord> records;
  for (const int b : shape.batches) records.push_back(BatchRecord{b, {}, {}, 0});
  const std::vector<size_t> order =
      InterleavedOrder(std::vector<bool>(records.size(), false), shape.repeats, 0);
  for (const size_t i : order) TimeBatch(records[i], *forward, sequences, shape.decode_steps);

  std::printf(
      "\nbatched decode (cpu %d thread%s, each sequence after its own context of %d tokens, "
      "%d steps per run, median of %d runs):\n",
      shape.threads, shape.threads == 1 ? "" : "s", shape.context, shape.decode_steps,
      shape.repeats);
  std::printf("  %5s  %10s  %12s  %8s  %15s  %8s\n", "batch", "ms/step", "tokens/s", "vs b1",
              "weights MB/step", "GB/s");
  const double base_tps = 1000.0 / SpreadOf(records.front().step_ms).median * records.front().batch;
  for (const BatchRecord& r : records) {
    const double ms = SpreadOf(r.step_ms).median;
    const double tps = 1000.0 / ms * r.batch;
    std::printf("  %5d  %10.2f  %12.1f  %7.2fx  %15.1f  %8.1f\n", r.batch, ms, tps, tps / base_tps,
                r.bytes_per_step / 1e6, r.bytes_per_step / ms / 1e6);
  }
  std::printf(
      "  weights MB/step: what the matrix units read (rows x row bytes per unit; attention and "
      "the KV cache excluded)\n");

  // Batch invariance in the same runs: the first sequence decodes the same
  // bits whatever decodes beside it.
  for (const BatchRecord& r : records) {
    if (r.first_hashes != records.front().first_hashes) {
      std::printf("identity: the first sequence's logits DIFFER at batch %d from batch %d\n",
                  r.batch, records.front().batch);
      std::fprintf(stderr,
                   "samebits-engine bench: the first sequence's logits differ between batch "
                   "%d and batch %d\n",
                   records.front().batch, r.batch);
      return 1;
    }
  }
  std::printf("identity: the first sequence's logits are identical at every batch size\n");
  return 0;
}

}  // namespace samebits::cli
