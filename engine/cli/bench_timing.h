// What `bench` and `tune` time, and how: one configuration of the cpu pass
// (or the reference), a decode context built once and shared, greedy
// decode steps timed one forward call at a time, and a prefill timed
// whole. Each timing also records the FNV-1a of its logits' bits, so that
// every configuration compared is also proved to give the same bits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/cli/bench_statistics.h"
#include "engine/model/forward.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {

// One configuration under test: its forward pass and what its runs recorded.
struct BenchConfig {
  int threads = 1;
  model::CpuOptions options;  // the cpu pass's, its knobs resolved
  std::unique_ptr<threads::ThreadPool> pool;
  std::unique_ptr<model::Forward> forward;
  BenchRecord record;
};

// The decode context, built once: every configuration decodes from a copy
// of its KV cache, which holds the same bits whichever configuration built
// it (the contract).
struct DecodeContext {
  std::vector<int32_t> tokens;  // max(context, prompt) random tokens
  model::InferenceState state;  // after the first `context` tokens
  int32_t first_token = 0;      // the argmax after them
  model::ModelConfig config;    // the model's (each run's copy reserves room with it)
};

// Returns the context: `context` seeded random tokens run through
// `forward`, and max(context, prompt) tokens for the prefills.
DecodeContext MakeDecodeContext(const model::ModelConfig& mc, int context, int prompt,
                                model::Forward& forward);

// Runs `steps` decode steps from the context and discards them.
void DecodeUntimed(model::Forward& forward, const DecodeContext& context, int steps);

// Times `steps` greedy decode steps from the context; records the mean time
// per token and every step's hash.
void TimeDecode(BenchConfig& c, const DecodeContext& context, int steps);

// Times one prefill of the first `prompt` tokens; records its time and hash.
void TimePrefill(BenchConfig& c, const model::ModelConfig& mc, const DecodeContext& context,
                 int prompt);

}  // namespace samebits::cli
