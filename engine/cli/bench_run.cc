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
#include "engine/cli/bench_timing.h"
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

// Prints the probe's read bandwidth at each thread count and returns the
// probe, which the timed runs read again after each decode run.
std::unique_ptr<kernels::ReadBandwidthProbe> MeasureBandwidth(
    int mib, const std::vector<int>& thread_counts) {
  std::printf("memory read bandwidth (probe, %d MiB buffer, median of 5):", mib);
  threads::ThreadPool widest(*std::max_element(thread_counts.begin(), thread_counts.end()));
  auto probe =
      std::make_unique<kernels::ReadBandwidthProbe>(widest, static_cast<size_t>(mib) << 20);
  for (int n : thread_counts) {
    threads::ThreadPool pool(n);
    std::printf(" %d thread%s %.1f GB/s;", n, n == 1 ? "" : "s", probe->Measure(pool, 5));
  }
  std::printf("\n");
  return probe;
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

// Prints the knobs a configuration runs with and the wisdom that chose
// them, so that a figure says what it measured.
void PrintTuning(const std::string& label, const ResolvedTuning& tuning) {
  std::string source = "defaults and flags, no wisdom file";
  if (!tuning.wisdom.file.empty()) {
    source = "wisdom " + tuning.wisdom.file +
             (tuning.wisdom.entry ? std::string(" (its entry for this machine and work)")
                                  : std::string(" (no entry for this machine and work)"));
  }
  std::printf("tuning, %s: %s; from %s\n", label.c_str(), model::KnobsText(tuning.knobs).c_str(),
              source.c_str());
}

// Builds the configurations once: the reference pass (when it runs), then
// the cpu pass at each thread count, each with the knobs its flags and
// wisdom give it.
std::vector<BenchConfig> MakeConfigs(const model::ModelWeights& weights,
                                     const numerics::MathLibrary& math, const BenchSettings& plan,
                                     const model::CpuOptions& base) {
  std::vector<BenchConfig> configs;
  if (plan.reference_repeats > 0) {
    BenchConfig c;
    c.record.label = "reference";
    c.record.reference = true;
    c.forward = model::MakeReferenceForward(weights, math, plan.isa, plan.quant_dot);
    configs.push_back(std::move(c));
  }
  for (int n : plan.thread_counts) {
    BenchConfig c;
    c.record.label = "cpu " + std::to_string(n) + (n == 1 ? " thread" : " threads");
    c.threads = n;
    c.pool = std::make_unique<threads::ThreadPool>(n);
    model::CpuOptions options = base;
    const ResolvedTuning tuning =
        ResolveTuning(plan.tuning, ThisWisdomKey(weights, plan.isa, plan.quant_dot, n));
    model::ApplyKnobs(tuning.knobs, options);
    PrintTuning(c.record.label, tuning);
    c.options = options;
    c.forward = model::MakeCpuForward(weights, math, *c.pool, options, *plan.cpu_table);
    configs.push_back(std::move(c));
  }
  return configs;
}

// Runs the cpu pass once more with the op profiler and prints its table.
void PrintProfile(const model::ModelWeights& weights, const numerics::MathLibrary& math,
                  const BenchConfig& fastest, const DecodeContext& context,
                  const BenchSettings& bench) {
  model::CpuOptions options = fastest.options;
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
// bandwidth; returns the probe, or null when --bandwidth-mib is 0.
std::unique_ptr<kernels::ReadBandwidthProbe> RunPreflight(const BenchSettings& settings) {
  const int max_threads =
      *std::max_element(settings.thread_counts.begin(), settings.thread_counts.end());
  PrintPreflight(platform::AssessMachine(platform::ReadMachine(), {.threads = max_threads}));
  std::unique_ptr<kernels::ReadBandwidthProbe> probe;
  if (settings.bandwidth_mib > 0) {
    probe = MeasureBandwidth(settings.bandwidth_mib, settings.thread_counts);
  }
  std::fflush(stdout);
  return probe;
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
// prefill. With a probe, each cpu decode run is followed by one pass of it
// on the run's threads.
void TimeInterleaved(std::vector<BenchConfig>& configs, const DecodeContext& context,
                     const BenchSettings& settings, const model::ModelConfig& mc,
                     kernels::ReadBandwidthProbe* probe) {
  std::vector<bool> is_reference;
  is_reference.reserve(configs.size());
  for (const BenchConfig& c : configs) is_reference.push_back(c.record.reference);
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
  for (BenchConfig& c : configs) {
    if (!c.record.reference) DecodeUntimed(*c.forward, context, settings.warmup_steps);
  }
  for (size_t i : order) {
    BenchConfig& c = configs[i];
    TimeDecode(c, context,
               c.record.reference ? settings.reference_decode_steps : settings.decode_steps);
    if (probe != nullptr && !c.record.reference) {
      c.record.probe_gbs.push_back(probe->Measure(*c.pool, 1));
    }
  }
  for (size_t i : order) TimePrefill(configs[i], mc, context, settings.prompt);
}

// Prints the timing tables and the identity lines; returns whether every
// configuration produced the same logits.
bool ReportResults(const std::vector<BenchConfig>& configs, const BenchSettings& settings,
                   const model::ModelWeights& weights) {
  std::vector<BenchRecord> records;
  records.reserve(configs.size());
  for (const BenchConfig& c : configs) records.push_back(c.record);
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
  std::unique_ptr<kernels::ReadBandwidthProbe> probe = RunPreflight(settings);
  model::CpuOptions cpu_options;
  cpu_options.isa = settings.isa;
  cpu_options.quant_dot = settings.quant_dot;
  if (!settings.batches.empty()) {
    const int most =
        *std::max_element(settings.thread_counts.begin(), settings.thread_counts.end());
    const ResolvedTuning tuning = ResolveTuning(
        settings.tuning, ThisWisdomKey(weights, settings.isa, settings.quant_dot, most));
    model::ApplyKnobs(tuning.knobs, cpu_options);
    PrintTuning("batched", tuning);
    return RunBatched(settings, weights, math, cpu_options);
  }

  std::vector<BenchConfig> configs = MakeConfigs(weights, math, settings, cpu_options);
  const BenchConfig& fastest = configs.back();
  const DecodeContext context =
      MakeDecodeContext(weights.config, settings.context, settings.prompt, *fastest.forward);
  TimeInterleaved(configs, context, settings, weights.config, probe.get());
  const bool identical = ReportResults(configs, settings, weights);
  PrintHugePageShare();
  if (settings.profile) PrintProfile(weights, math, fastest, context, settings);
  std::fflush(stdout);
  if (!identical) {
    std::fprintf(stderr, "samebits-engine bench: configurations produced different logits\n");
    return 1;
  }
  return 0;
}

}  // namespace samebits::cli
