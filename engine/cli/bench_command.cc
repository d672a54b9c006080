// `samebits-engine bench`: times decode (ms per token at a given context)
// and prefill (tokens per second for a prompt) for the reference pass and
// the cpu pass at several thread counts, runs interleaved (A B C, C B A,
// ...) so that a change in the machine's load touches every configuration
// alike, and checks in the same runs that every configuration produced the
// same logits (hashes of every step's bits). It sets the decode figure
// against the machine's memory read bandwidth (the kernels' probe), since
// decode streams every weight it uses once per token.
//
// The steps live apart: preflight (engine/platform/preflight.h), scheduling
// (bench_schedule.h), statistics (bench_statistics.h) and output
// (bench_output.h); this file resolves the options, builds the
// configurations, times them and calls each step in turn.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cli/bench_batch.h"
#include "engine/cli/bench_output.h"
#include "engine/cli/bench_schedule.h"
#include "engine/cli/bench_statistics.h"
#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/kernels/bandwidth.h"
#include "engine/kernels/kernels.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"
#include "engine/model/sampler.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/hash.h"
#include "engine/numerics/math.h"
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

// Returns the distinct counts of `text` ("1,2,4"), each in [1, max]; a bad
// one is a usage error naming `flag` and `what` a count is.
std::vector<int> ParseCountList(const std::string& text, const std::string& flag,
                                const std::string& what, int max) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(item, &used);
      if (used != item.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1 || n > max) {
      std::string message = flag;
      message += ": '";
      message += item;
      message += "' is not a ";
      message += what;
      message += " in 1..";
      message += std::to_string(max);
      throw UsageError(message);
    }
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  if (out.empty()) throw UsageError(flag + ": give at least one " + what + ", e.g. 1,2");
  return out;
}

struct BenchOptions {
  std::string checkpoint = "synthetic:bench";
  int context = 128;
  int decode_steps = 16;
  int warmup_steps = 1;
  int prompt = 128;
  int repeats = 5;
  std::string threads_list;
  std::string batch_list;
  int reference_decode_steps = 2;
  int reference_repeats = 1;
  bool no_reference = false;
  std::string isa = "auto";
  int64_t gemv_chunk_bytes = 0;
  std::string math = "portable";
  int bandwidth_mib = 256;
  bool profile = false;
};

// One configuration under test: its forward pass and what its runs recorded.
struct Config {
  int threads = 1;
  std::unique_ptr<threads::ThreadPool> pool;
  std::unique_ptr<model::Forward> forward;
  BenchRecord record;
};

// The switches resolved, before anything is loaded (a bad one fails fast).
struct BenchPlan {
  numerics::MathProfile math_profile = numerics::MathProfile::kPortable;
  kernels::Isa isa = kernels::Isa::kScalar;
  std::vector<int> thread_counts;
  std::vector<int> batches;   // --batch-list (empty: the usual decode and prefill timing)
  int reference_repeats = 0;  // runs the reference makes (0: no reference)
};

BenchPlan PlanBench(BenchOptions& options) {
  BenchPlan plan;
  if (!numerics::ParseMathProfile(options.math, &plan.math_profile)) {
    throw UsageError("unknown math profile '" + options.math + "' (use portable or libm)");
  }
  plan.isa = kernels::BestIsa();
  if (options.isa != "auto") {
    if (!kernels::ParseIsa(options.isa, &plan.isa) || !kernels::IsaAvailable(plan.isa)) {
      throw UsageError("ISA " + options.isa + " is not available on this machine or in this build");
    }
  }
  if (options.threads_list.empty()) {
    plan.thread_counts = {1};
    const int all = threads::DefaultThreadCount();
    if (all != 1) plan.thread_counts.push_back(all);
  } else {
    plan.thread_counts =
        ParseCountList(options.threads_list, "--threads-list", "thread count", 1024);
  }
  if (!options.batch_list.empty()) {
    plan.batches = ParseCountList(options.batch_list, "--batch-list", "batch size", run::kMaxBatch);
  }
  if (ProfileRequestedByEnvironment()) options.profile = true;
  plan.reference_repeats =
      options.no_reference ? 0 : std::min(options.repeats, options.reference_repeats);
  return plan;
}

void PrintBandwidth(int mib, const std::vector<int>& thread_counts) {
  std::printf("memory read bandwidth (probe, %d MiB buffer, median of 5):", mib);
  for (int n : thread_counts) {
    threads::ThreadPool pool(n);
    const double gbs = kernels::MeasureReadBandwidthGBs(pool, static_cast<size_t>(mib) << 20, 5);
    std::printf(" %d thread%s %.1f GB/s;", n, n == 1 ? "" : "s", gbs);
  }
  std::printf("\n");
}

// Builds the configurations once: the reference pass (when it runs), then
// the cpu pass at each thread count.
std::vector<Config> MakeConfigs(const model::ModelWeights& weights,
                                const numerics::MathLibrary& math, const BenchPlan& plan,
                                const model::CpuOptions& options) {
  std::vector<Config> configs;
  if (plan.reference_repeats > 0) {
    Config c;
    c.record.label = "reference";
    c.record.reference = true;
    c.forward = model::MakeReferenceForward(weights, math, plan.isa);
    configs.push_back(std::move(c));
  }
  for (int n : plan.thread_counts) {
    Config c;
    c.record.label = "cpu " + std::to_string(n) + (n == 1 ? " thread" : " threads");
    c.threads = n;
    c.pool = std::make_unique<threads::ThreadPool>(n);
    c.forward =
        model::MakeCpuForward(weights, math, *c.pool, options, CpuPassKernelTable(plan.isa));
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

DecodeContext MakeDecodeContext(const model::ModelConfig& mc, const BenchOptions& options,
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
                  const BenchOptions& bench) {
  options.profile = true;
  auto forward =
      model::MakeCpuForward(weights, math, *fastest.pool, options, CpuPassKernelTable(options.isa));
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

int RunBench(BenchOptions options) {
  const BenchPlan plan = PlanBench(options);
  const numerics::MathLibrary& math = numerics::GetMathLibrary(plan.math_profile);
  const int max_threads = *std::max_element(plan.thread_counts.begin(), plan.thread_counts.end());

  const model::ModelWeights weights = LoadCheckpointForCommand(options.checkpoint);
  const model::ModelConfig& mc = weights.config;
  if (options.context + std::max({options.decode_steps, options.reference_decode_steps,
                                  options.warmup_steps}) >
          mc.max_seq_len ||
      options.prompt > mc.max_seq_len) {
    throw UsageError(
        "--context + --decode-steps (and + --warmup-steps) and --prompt must fit in the "
        "checkpoint's "
        "max_seq_len of " +
        std::to_string(mc.max_seq_len));
  }

  const protocol::BuildInfo build = protocol::ThisBuild();
  const protocol::PlatformInfo platform = protocol::ThisPlatform();
  std::printf("samebits-engine bench: %s, %.1fM parameters, revision %s%s\n",
              options.checkpoint.c_str(), model::CountParameters(weights) / 1e6,
              build.revision.c_str(), build.dirty ? " (dirty)" : "");
  std::printf("machine: %s, %s, %u cores online; isa %s, math %s\n", platform.cpu.c_str(),
              platform.arch.c_str(), static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)),
              kernels::IsaName(plan.isa), options.math.c_str());

  // Preflight.
  PrintPreflight(platform::AssessMachine(platform::ReadMachine(), {.threads = max_threads}));
  if (options.bandwidth_mib > 0) PrintBandwidth(options.bandwidth_mib, plan.thread_counts);
  std::fflush(stdout);

  // Scheduling: every configuration, interleaved, decode then prefill.
  model::CpuOptions cpu_options;
  cpu_options.isa = plan.isa;
  if (options.gemv_chunk_bytes > 0) cpu_options.gemv_chunk_bytes = options.gemv_chunk_bytes;
  if (!plan.batches.empty()) {
    BatchBenchShape shape;
    shape.batches = plan.batches;
    shape.threads = max_threads;
    shape.context = options.context;
    shape.decode_steps = options.decode_steps;
    shape.repeats = options.repeats;
    const kernels::KernelTable& kt = CpuPassKernelTable(plan.isa);
    return RunBatchBench(weights, math, cpu_options, kt,
                         CpuPassMultiSequenceKernelTable(plan.isa, kt), shape);
  }
  std::vector<Config> configs = MakeConfigs(weights, math, plan, cpu_options);
  const Config& fastest = configs.back();
  const DecodeContext context = MakeDecodeContext(mc, options, *fastest.forward);
  std::vector<bool> is_reference;
  is_reference.reserve(configs.size());
  for (const Config& c : configs) is_reference.push_back(c.record.reference);
  const std::vector<size_t> order =
      InterleavedOrder(is_reference, options.repeats, plan.reference_repeats);
  // Warm-up, as llama-bench's before it times: a configuration's first
  // steps after loading pay once for what later steps find ready (scratch
  // buffers' first touch, the threads' first wake-up, expert weights the
  // context's prefill left out of the caches). Measured on synthetic:bench
  // exported as Q4_K, one thread, 16-step runs: 160-234 tokens/s without a
  // warm-up step, 203-234 with one (BENCHMARKS.md run 10). The slow
  // reference pass is not warmed: its figure is a baseline, and one step of
  // it costs as much as many of the cpu pass.
  for (Config& c : configs) {
    if (!c.record.reference) DecodeUntimed(*c.forward, context, options.warmup_steps);
  }
  for (size_t i : order) {
    TimeDecode(configs[i], context,
               configs[i].record.reference ? options.reference_decode_steps : options.decode_steps);
  }
  for (size_t i : order) TimePrefill(configs[i], mc, context, options.prompt);

  // Statistics and output.
  std::vector<BenchRecord> records;
  records.reserve(configs.size());
  for (const Config& c : configs) records.push_back(c.record);
  BenchShape shape;
  shape.context = options.context;
  shape.decode_steps = options.decode_steps;
  shape.warmup_steps = options.warmup_steps;
  shape.reference_decode_steps = options.reference_decode_steps;
  shape.prompt = options.prompt;
  shape.repeats = options.repeats;
  shape.reference_repeats = std::min(options.repeats, options.reference_repeats);
  shape.weight_bytes_per_token = model::WeightBytesPerDecodedToken(weights);
  shape.top_k = mc.top_k;
  PrintTimings(records, shape);
  const IdentityVerdict verdict = JudgeIdentity(records);
  PrintIdentity(records, verdict);

  if (options.profile) PrintProfile(weights, math, fastest, cpu_options, context, options);
  std::fflush(stdout);
  if (!verdict.all_identical) {
    std::fprintf(stderr, "samebits-engine bench: configurations produced different logits\n");
    return 1;
  }
  return 0;
}

CommandSpec SetupBench(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Times decode and prefill of the reference and cpu passes, interleaved, and checks that "
      "they produce the same logits.");
  auto options = std::make_shared<BenchOptions>();
  sub->add_option("--checkpoint", options->checkpoint,
                  "The checkpoint to time (default: synthetic:bench, BF16, ~288M parameters).")
      ->option_text("SPEC");
  sub->add_option("--context", options->context,
                  "Decode is timed after a context of this many tokens (default: 128).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--decode-steps", options->decode_steps,
                  "Decode steps timed per run of the cpu pass (default: 16).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--warmup-steps", options->warmup_steps,
                  "Untimed decode steps each cpu configuration runs once before the timed runs, "
                  "like llama-bench's warmup (default: 1; 0 for none).")
      ->option_text("N")
      ->check(CLI::Range(0, 1 << 20));
  sub->add_option("--prompt", options->prompt,
                  "Prefill is timed on a prompt of this many tokens (default: 128).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--repeats", options->repeats,
                  "Runs of each configuration, interleaved A B C, C B A, ... (default: 5).")
      ->option_text("N")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--threads-list", options->threads_list,
                  "Thread counts of the cpu pass to compare, comma-separated (default: 1 and "
                  "one per core).")
      ->option_text("N,N,...");
  sub->add_option("--batch-list", options->batch_list,
                  "Instead of the usual tables, time batched decoding on the cpu pass (the "
                  "largest --threads-list count): each batch size decodes that many sequences "
                  "per forward call, each after its own context; prints aggregate tokens/s, "
                  "the weight bytes read per step and GB/s per batch size, interleaved, and "
                  "checks that the first sequence's logits are the same at every size.")
      ->option_text("N,N,...");
  sub->add_option("--reference-decode-steps", options->reference_decode_steps,
                  "Decode steps per run of the slow reference pass (default: 2).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--reference-repeats", options->reference_repeats,
                  "Runs of the reference pass, at most --repeats (default: 1; it is slow).")
      ->option_text("N")
      ->check(CLI::Range(0, 1000));
  sub->add_flag("--no-reference", options->no_reference,
                "Time the cpu pass only (no reference runs, no reference identity check).");
  sub->add_option("--isa", options->isa,
                  "The cpu kernels' instruction set (default: auto, the fastest available).")
      ->option_text("auto|scalar|avx2|avx512|neon")
      ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512", "neon"}));
  sub->add_option("--gemv-chunk-bytes", options->gemv_chunk_bytes,
                  "Bytes of weights per GEMV work unit on the cpu path (default: 262144).")
      ->option_text("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub->add_option("--math", options->math, "The math profile (default: portable).")
      ->option_text("portable|libm")
      ->check(CLI::IsMember({"portable", "libm"}));
  sub->add_option("--bandwidth-mib", options->bandwidth_mib,
                  "Size of the memory read-bandwidth probe's buffer; 0 skips the probe "
                  "(default: 256).")
      ->option_text("MIB")
      ->check(CLI::Range(0, 1 << 20));
  sub->add_flag("--profile", options->profile,
                "After the timed runs, run the cpu pass once more with the op profiler and "
                "print its table (SAMEBITS_PROFILE=1 does the same).");
  return {sub, [options] { return RunBench(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(bench, 40, SetupBench);
}  // namespace samebits::cli
