#include "engine/cli/bench_timing.h"

#include <algorithm>
#include <chrono>
#include <span>

#include "engine/model/sampler.h"
#include "engine/numerics/hash.h"
#include "engine/run/scenario.h"

namespace samebits::cli {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint64_t HashLogits(const std::vector<float>& logits) {
  return numerics::HashFloatsFnv1a(std::span<const float>(logits.data(), logits.size()));
}

// Runs `steps` greedy decode steps of `forward` from a copy of the
// context; after each, calls after_step(ms, logits) with the time of that
// step's forward call alone and its logits. The copy has room for the
// steps before the first is timed, as the context's own caches have (and
// llama.cpp's, allocated for its whole context): a copy holds no spare room,
// and the first step would otherwise time reallocating every cache.
template <class AfterStep>
void DecodeGreedily(model::Forward& forward, const DecodeContext& context, int steps,
                    AfterStep after_step) {
  model::InferenceState state = context.state;
  model::ReserveCachePositions(context.config, state, int64_t{state.n_past} + steps);
  std::vector<float> logits;
  int32_t token = context.first_token;
  for (int s = 0; s < steps; ++s) {
    const auto start = Clock::now();
    forward.Run(state, std::span<const int32_t>(&token, 1), false, logits, nullptr);
    after_step(MsSince(start), logits);
    token = model::Argmax(logits);
  }
}

}  // namespace

DecodeContext MakeDecodeContext(const model::ModelConfig& mc, int context_tokens, int prompt,
                                model::Forward& forward) {
  run::RandomTokenSpec spec;
  spec.length = std::max(context_tokens, prompt);
  spec.seed = 0xbe9c4;
  spec.first_token = std::min(3, mc.vocab_size - 1);
  DecodeContext context{run::RandomTokens(spec, mc.vocab_size), model::MakeState(mc), 0, mc};
  std::vector<float> logits;
  forward.Run(context.state, std::span<const int32_t>(context.tokens.data(), context_tokens), false,
              logits, nullptr);
  context.first_token = model::Argmax(logits);
  return context;
}

// Runs `steps` decode steps from the context and discards them.
void DecodeUntimed(model::Forward& forward, const DecodeContext& context, int steps) {
  DecodeGreedily(forward, context, steps, [](double, const std::vector<float>&) {});
}

// Times `steps` greedy decode steps from the context; records the mean time
// per token and every step's hash.
void TimeDecode(BenchConfig& c, const DecodeContext& context, int steps) {
  std::vector<uint64_t> hashes;
  double ms = 0;
  DecodeGreedily(*c.forward, context, steps, [&](double step_ms, const std::vector<float>& logits) {
    ms += step_ms;
    hashes.push_back(HashLogits(logits));
  });
  c.record.decode_ms.push_back(ms / steps);
  c.record.decode_hashes.push_back(hashes);
}

// Times one prefill of the first `prompt` tokens; records its time and hash.
void TimePrefill(BenchConfig& c, const model::ModelConfig& mc, const DecodeContext& context,
                 int prompt) {
  model::InferenceState state = model::MakeState(mc);
  std::vector<float> logits;
  const auto start = Clock::now();
  c.forward->Run(state, std::span<const int32_t>(context.tokens.data(), prompt), false, logits,
                 nullptr);
  c.record.prefill_ms.push_back(MsSince(start));
  c.record.prefill_hashes.push_back(HashLogits(logits));
}

}  // namespace samebits::cli
