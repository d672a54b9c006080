#include "engine/cli/bench_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cli/bench_batch.h"
#include "engine/cli/bench_output.h"
#include "engine/cli/bench_schedule.h"
#include "engine/cli/bench_statistics.h"
#include "engine/kernels/bandwidth.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"
#include "engine/model/sampler.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/hash.h"
#include "engine/platform/huge_page_share.h"
#include "engine/protocol/platform.h"
#include "engine/run/batch_companions.h"
#include "engine/run/scenario.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint64_t HashLogits(const std::vector<float>& logits) {
  return numerics::HashFloatsFnv1a(std::span<const float>(logits.data(), logits.size()));
}

// One configuration under test: its forward pass and what its runs recorded.
struct Config {
  int threads = 1;
  std::unique_ptr<threads::ThreadPool> pool;
  std::unique_ptr<model::Forward> forward;
  BenchRecord record;
};

void PrintBandwidth(int mib, const std::vector<int>& thread_counts) {
  std::printf("memory read bandwidth (probe, %d MiB buffer, median of 5):", mib);
  for (int n : thread_counts) {
    threads::ThreadPool pool(n);
    const double gbs = kernels::MeasureReadBandwidthGBs(pool, static_cast<size_t>(mib) << 20, 5);
    std::printf(" %d thread%s %.1f GB/s;", n, n == 1 ? "" : "s", gbs);
  }
  std::printf("\n");
}

// Prints how much of the resident memory, after the timed runs touched
// every weight, lies in 2 MiB pages: weights in 4 KiB pages stream several
// percent slower (platform/huge_page_share.h), which explains a slow run
// that the kernels do not.
void PrintHugePageShare() {
  const std::optional<platform::HugePageShare> share = platform::ReadHugePageShare();
  if (!share) return;
  std::printf(
      "resident memory in 2 MiB pages: %lld of %lld MiB (/proc/self/smaps_rollup; weights in "
      "4 KiB pages stream slower)\n",
      static_cast<long long>(share->huge_kib / 1024),
      static_cast<long long>(share->resident_kib / 1024));
}

// Builds the configurations once: the reference pass (when it runs), then
// the cpu pass at each thread count.
std::vector<Config> MakeConfigs(const model::ModelWeights& weights,
                                const numerics::MathLibrary& math, const BenchSettings& plan,
                                const model::CpuOptions& options) {
  std::vector<Config> configs;
  if (plan.reference_repeats > 0) {
    Config c;
    c.record.label = "reference";
    c.record.reference = true;
    c.forward = model::MakeReferenceForward(weights, math, plan.isa, plan.quant_dot);
    configs.push_back(std::move(c));
  }
  for (int n : plan.thread_counts) {
    Config c;
    c.record.label = "cpu " + std::to_string(n) + (n == 1 ? " thread" : " threads");
    c.threads = n;
    c.pool = std::make_unique<threads::ThreadPool>(n);
    c.forward = model::MakeCpuForward(weights, math, *c.pool, options, *plan.cpu_table);
    configs.push_back(std::move(c));
  }
  return configs;
}

// The decode context, built once: every configuration decodes from a copy
// of its KV cache, which holds the same bits whichever configuration built
// it (the contract).
struct DecodeContext {
  std::vector<int32_t> tokens;  // max(context, prompt) random tokens
  model::InferenceState state;  // after the first `context` tokens
  int32_t first_token = 0;      // the argmax after them
};

DecodeContext MakeDecodeContext(const model::ModelConfig& mc, const BenchSettings& options,
                                model::Forward& forward) {
  run::RandomTokenSpec spec;
  spec.length = std::max(options.context, options.prompt);
  spec.seed = 0xbe9c4;
  spec.first_token = std::min(3, mc.vocab_size - 1);
  DecodeContext context{run::RandomTokens(spec, mc.vocab_size), model::MakeState(mc), 0};
  std::vector<float> logits;
  forward.Run(context.state, std::span<const int32_t>(context.tokens.data(), options.context),
              false, logits, nullptr);
  context.first_token = model::Argmax(logits);
  return context;
}

// Runs `steps` greedy decode steps of `forward` from a copy of the
// context; after each, calls after_step(ms, logits) with the time of that
// step's forward call alone and its logits.
template <class AfterStep>
void DecodeGreedily(model::Forward& forward, const DecodeContext& context, int steps,
                    AfterStep after_step) {
  model::InferenceState state = context.state;
  std::vector<float> logits;
  int32_t token = context.first_token;
  for (int s = 0; s < steps; ++s) {
    const auto start = Clock::now();
    forward.Run(state, std::span<const int32_t>(&token, 1), false, logits, nullptr);
    after_step(MsSince(start), logits);
    token = model::Argmax(logits);
  }
}

// Runs `steps` decode steps from the context and discards them.
void DecodeUntimed(model::Forward& forward, const DecodeContext& context, int steps) {
  DecodeGreedily(forward, context, steps, [](double, const std::vector<float>&) {});
}

// Times `steps` greedy decode steps from the context; records the mean time
// per token and every step's hash.
void TimeDecode(Config& c, const DecodeContext& context, int steps) {
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
void TimePrefill(Config& c, const model::ModelConfig& mc, const DecodeContext& context,
                 int prompt) {
  model::InferenceState state = model::MakeState(mc);
  std::vector<float> logits;
  const auto start = Clock::now();
  c.forward->Run(state, std::span<const int32_t>(context.tokens.data(), prompt), false, logits,
                 nullptr);
  c.record.prefill_ms.push_back(MsSince(start));
  c.record.prefill_hashes.push_back(HashLogits(logits));
}

// Runs the cpu pass once more with the op profiler and prints its table.
void PrintProfile(const model::ModelWeights& weights, const numerics::MathLibrary& math,
                  const Config& fastest, model::CpuOptions options, const DecodeContext& context,
                  const BenchSettings& bench) {
  options.profile = true;
  auto forward = model::MakeCpuForward(weights, math, *fastest.pool, options, *bench.cpu_table);
  DecodeUntimed(*forward, context, bench.decode_steps);
  std::vector<float> logits;
  model::InferenceState fresh = model::MakeState(weights.config);
  forward->Run(fresh, std::span<const int32_t>(context.tokens.data(), bench.prompt), false, logits,
               nullptr);
  std::printf(
      "\nprofile (%s, one extra run: %d decode steps at context %d, one prefill of "
      "%d tokens):\n%s",
      fastest.record.label.c_str(), bench.decode_steps, bench.context, bench.prompt,
      forward->ProfileReport().c_str());
}

// Prints the heading: the checkpoint, the build, the machine and the
// switches every configuration shares.
void PrintHeading(const BenchSettings& settings, const model::ModelWeights& weights) {
  const protocol::BuildInfo build = protocol::ThisBuild();
  const protocol::PlatformInfo platform = protocol::ThisPlatform();
  std::printf("samebits-engine bench: %s, %.1fM parameters, revision %s%s\n",
              settings.checkpoint.c_str(), model::CountParameters(weights) / 1e6,
              build.revision.c_str(), build.dirty ? " (dirty)" : "");
  std::printf("machine: %s, %s, %u cores online; isa %s, math %s, quant-dot %s\n",
              platform.cpu.c_str(), platform.arch.c_str(),
              static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)), kernels::IsaName(settings.isa),
              std::string(numerics::MathProfileName(settings.math)).c_str(),
              std::string(numerics::QuantDotName(settings.quant_dot)).c_str());
}

// Measures the machine's load (warning when it is busy) and its read
// bandwidth.
void RunPreflight(const BenchSettings& settings) {
  const int max_threads =
      *std::max_element(settings.thread_counts.begin(), settings.thread_counts.end());
  PrintPreflight(platform::AssessMachine(platform::ReadMachine(), {.threads = max_threads}));
  if (settings.bandwidth_mib > 0) PrintBandwidth(settings.bandwidth_mib, settings.thread_counts);
  std::fflush(stdout);
}

// Times `--batch-list`'s batch sizes on the cpu pass at the most threads.
int RunBatched(const BenchSettings& settings, const model::ModelWeights& weights,
               const numerics::MathLibrary& math, const model::CpuOptions& cpu_options) {
  BatchBenchShape shape;
  shape.batches = settings.batches;
  shape.threads = *std::max_element(settings.thread_counts.begin(), settings.thread_counts.end());
  shape.context = settings.context;
  shape.decode_steps = settings.decode_steps;
  shape.repeats = settings.repeats;
  return RunBatchBench(weights, math, cpu_options, *settings.cpu_table,
                       *settings.cpu_multi_sequence_table, shape);
}

// Times every configuration, interleaved: the warm-up, then decode, then
// prefill.
void TimeInterleaved(std::vector<Config>& configs, const DecodeContext& context,
                     const BenchSettings& settings, const model::ModelConfig& mc) {
  std::vector<bool> is_reference;
  is_reference.reserve(configs.size());
  for (const Config& c : configs) is_reference.push_back(c.record.reference);
  const std::vector<size_t> order =
      InterleavedOrder(is_reference, settings.repeats, settings.reference_repeats);
  // Warm-up, as llama-bench's before it times: a configuration's first
  // steps after loading pay once for what later steps find ready (scratch
  // buffers' first touch, the threads' first wake-up, expert weights the
  // context's prefill left out of the caches). Measured on synthetic:bench
  // exported as Q4_K, one thread, 16-step runs: 160-234 tokens/s without a
  // warm-up step, 203-234 with one (BENCHMARKS.md run 10). The slow
  // reference pass is not warmed: its figure is a baseline, and one step of
  // it costs as much as many of the cpu pass.
  for (Config& c : configs) {
    if (!c.record.reference) DecodeUntimed(*c.forward, context, settings.warmup_steps);
  }
  for (size_t i : order) {
    TimeDecode(
        configs[i], context,
        configs[i].record.reference ? settings.reference_decode_steps : settings.decode_steps);
  }
  for (size_t i : order) TimePrefill(configs[i], mc, context, settings.prompt);
}

// Prints the timing tables and the identity lines; returns whether every
// configuration produced the same logits.
bool ReportResults(const std::vector<Config>& configs, const BenchSettings& settings,
                   const model::ModelWeights& weights) {
  std::vector<BenchRecord> records;
  records.reserve(configs.size());
  for (const Config& c : configs) records.push_back(c.record);
  BenchShape shape;
  shape.context = settings.context;
  shape.decode_steps = settings.decode_steps;
  shape.warmup_steps = settings.warmup_steps;
  shape.reference_decode_steps = settings.reference_decode_steps;
  shape.prompt = settings.prompt;
  shape.repeats = settings.repeats;
  shape.reference_repeats = settings.reference_repeats;
  shape.weight_bytes_per_token = model::WeightBytesPerDecodedToken(weights);
  shape.top_k = weights.config.top_k;
  PrintTimings(records, shape);
  const IdentityVerdict verdict = JudgeIdentity(records);
  PrintIdentity(records, verdict);
  return verdict.all_identical;
}

}  // namespace

int RunBench(const BenchSettings& settings, const model::ModelWeights& weights) {
  const numerics::MathLibrary& math = numerics::GetMathLibrary(settings.math);
  PrintHeading(settings, weights);
  RunPreflight(settings);
  model::CpuOptions cpu_options;
  cpu_options.isa = settings.isa;
  cpu_options.quant_dot = settings.quant_dot;
  if (settings.gemv_chunk_bytes > 0) cpu_options.gemv_chunk_bytes = settings.gemv_chunk_bytes;
  if (!settings.batches.empty()) return RunBatched(settings, weights, math, cpu_options);

  std::vector<Config> configs = MakeConfigs(weights, math, settings, cpu_options);
  const Config& fastest = configs.back();
  const DecodeContext context = MakeDecodeContext(weights.config, settings, *fastest.forward);
  TimeInterleaved(configs, context, settings, weights.config);
  const bool identical = ReportResults(configs, settings, weights);
  PrintHugePageShare();
  if (settings.profile) PrintProfile(weights, math, fastest, cpu_options, context, settings);
  std::fflush(stdout);
  if (!identical) {
    std::fprintf(stderr, "samebits-engine bench: configurations produced different logits\n");
    return 1;
  }
  return 0;
}

}  // namespace samebits::cli
