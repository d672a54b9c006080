// `samebits-engine run`: runs one scenario on one checkpoint in one
// configuration and prints the protocol's JSON Lines (PROTOCOL.md) on
// stdout. Every switch is read once here, before the first record.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/cli/isa_option.h"
#include "engine/cli/numeric_profile_options.h"
#include "engine/cli/tuning_options.h"
#include "engine/model/forward.h"
#include "engine/numerics/math.h"
#include "engine/run/driver.h"
#include "engine/run/logit_dump.h"
#include "engine/run/scenario.h"
#include "engine/run/scenario_run.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

// The flags as given.
struct RunFlags {
  std::string checkpoint;
  std::string scenario_file;
  std::string kernels = "cpu";
  std::optional<int> threads;
  std::string isa = "auto";
  std::shared_ptr<TuningFlags> tuning = std::make_shared<TuningFlags>();
  std::string math = "portable";
  std::string quant_dot = "exact";
  std::string dump_path;
  bool trace = false;
  bool profile = false;
  bool serve = false;  // never seen here: main serves (serve.h)
  int batch = 1;
  uint64_t batch_seed = 1;
  std::string batch_schedule = "together";
};

// Resolves every switch before anything is loaded, so that a bad argument
// fails fast.
run::RunOptions ResolveOptions(const RunFlags& flags) {
  run::RunOptions options;
  options.checkpoint = flags.checkpoint;
  options.profile = flags.profile || ProfileRequestedByEnvironment();
  options.trace = flags.trace;
  options.math = ResolveMathOption(flags.math);
  options.quant_dot = ResolveQuantDotOption(flags.quant_dot);
  if (!model::ParseKernelPath(flags.kernels, &options.path)) {
    throw UsageError("unknown kernel path '" + flags.kernels + "' (use reference or cpu)");
  }
  options.isa = ResolveIsaOption(flags.isa);
  options.batch.batch = flags.batch;
  options.batch.seed = flags.batch_seed;
  if (flags.batch < 1 || flags.batch > run::kMaxBatch) {
    throw UsageError("--batch " + std::to_string(flags.batch) + " is outside [1, " +
                     std::to_string(run::kMaxBatch) + "]");
  }
  if (!run::ParseBatchSchedule(flags.batch_schedule, &options.batch.schedule)) {
    throw UsageError("unknown batch schedule '" + flags.batch_schedule +
                     "' (use together or staggered)");
  }
  options.threads = flags.threads.value_or(threads::DefaultThreadCount());
  const unsigned cores = std::thread::hardware_concurrency();
  if (options.path == model::KernelPath::kCpu && cores > 0 &&
      static_cast<unsigned>(options.threads) > cores) {
    std::fprintf(stderr,
                 "samebits-engine: warning: %d threads requested on %u cores: the results are "
                 "unaffected, but timings will be noisy\n",
                 options.threads, cores);
  }
  return options;
}

// Returns the scenario file's scenario; a bad one is a usage error.
run::Scenario LoadScenarioForCommand(const std::string& path) {
  try {
    return run::LoadScenario(path);
  } catch (const run::ScenarioError& e) {
    throw UsageError(e.what());
  }
}

// Returns the scenario fitted to the checkpoint; a misfit is a usage error.
run::PreparedScenario PrepareForCommand(const run::Scenario& scenario,
                                        const model::ModelWeights& weights) {
  try {
    return run::PrepareScenario(scenario, weights.config, weights.vocabulary.get());
  } catch (const run::ScenarioError& e) {
    throw UsageError(e.what());
  }
}

// Opens --dump-logits' file, when given; one that cannot be opened is a
// usage error.
void OpenDump(const std::string& path, std::optional<run::LogitDumpWriter>& dump) {
  if (path.empty()) return;
  try {
    dump.emplace(path);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

int RunScenarioCommand(const RunFlags& flags) {
  const auto started = std::chrono::steady_clock::now();
  run::RunOptions options = ResolveOptions(flags);
  const run::Scenario scenario = LoadScenarioForCommand(flags.scenario_file);
  const model::ModelWeights weights = LoadCheckpointForCommand(flags.checkpoint);
  const run::PreparedScenario prepared = PrepareForCommand(scenario, weights);
  if (options.path == model::KernelPath::kCpu) {
    const ResolvedTuning tuning = ResolveTuning(
        *flags.tuning, ThisWisdomKey(weights, options.isa, options.quant_dot, options.threads));
    options.knobs = tuning.knobs;
    options.tuning_record = run::TuningRecord(tuning.knobs, tuning.wisdom).dump();
    options.cpu_table = &CpuPassKernelTable(options.isa, options.quant_dot);
    options.cpu_multi_sequence_table =
        &CpuPassMultiSequenceKernelTable(options.isa, *options.cpu_table);
  }
  std::optional<run::LogitDumpWriter> dump;
  OpenDump(flags.dump_path, dump);
  run::RunScenarioWithRecords(options,
                              {weights, scenario, prepared, dump ? &*dump : nullptr, started,
                               WeightsHashForCommand(weights)},
                              stdout);
  return 0;
}

// How the pass computes: none of these may change a bit (DESIGN.md).
void AddComputeFlags(CLI::App* sub, RunFlags& options) {
  sub->add_option("--kernels", options.kernels,
                  "The implementation of the forward pass: the plain reference or the fast cpu "
                  "path (default: cpu).")
      ->option_text("reference|cpu")
      ->check(CLI::IsMember({"reference", "cpu"}));
  sub->add_option("--threads", options.threads,
                  "Threads for the cpu path, the calling thread included (default: "
                  "SAMEBITS_THREADS, else one per core).")
      ->option_text("N")
      ->check(CLI::Range(1, threads::kMaxThreads));
  AddIsaOption(sub, &options.isa,
               "The instruction set of the kernel table both paths compute with (the "
               "reference uses its dot products); an ISA this machine lacks is refused "
               "(default: auto, the fastest available).");
  AddTuningFlags(sub, options.tuning);
  AddMathOption(sub, &options.math);
  AddQuantDotOption(sub, &options.quant_dot);
}

// The companions that share the forward calls with the scenario's sequence.
void AddBatchFlags(CLI::App* sub, RunFlags& options) {
  sub->add_option("--batch", options.batch,
                  "Run the scenario's sequence beside N - 1 companion sequences (seeded random "
                  "prompts, greedy decoding) in the same forward calls; the records report the "
                  "scenario's sequence only, and its hashes must equal those of --batch 1 "
                  "(default: 1, alone).")
      ->option_text("N")
      ->check(CLI::Range(1, run::kMaxBatch));
  sub->add_option("--batch-seed", options.batch_seed,
                  "Seed of the companions' prompts, lengths, joining calls and row orders, 0 to "
                  "2^63 - 1 (default: 1).")
      ->option_text("S")
      // Decimal digits only, at most what the hello record carries (int64):
      // CLI11's own conversion wraps -1 and clamps values past 2^64.
      ->check([](const std::string& v) -> std::string {
        uint64_t seed = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() ||
            seed > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          return "expected a whole number from 0 to 9223372036854775807, got '" + v + "'";
        return "";
      });
  sub->add_option("--batch-schedule", options.batch_schedule,
                  "together: every companion prefills with the scenario's prefill and decodes to "
                  "its end; staggered: companions join and leave at different calls, as "
                  "continuous batching does, and the row order is reshuffled every call "
                  "(default: together).")
      ->option_text("together|staggered")
      ->check(CLI::IsMember({"together", "staggered"}));
}

CommandSpec SetupRun(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "run", "Runs a scenario on a checkpoint and prints the protocol's JSON Lines on stdout.");
  auto options = std::make_shared<RunFlags>();
  sub->add_option("--checkpoint", options->checkpoint,
                  "The checkpoint to run: synthetic:NAME[-DTYPE], gguf:PATH, safetensors:DIR, "
                  "llama2c:PATH or a path.")
      ->option_text("SPEC")
      ->required();
  sub->add_option("--scenario", options->scenario_file,
                  "The scenario file to run (scenarios/*.json; see scenarios/README.md).")
      ->option_text("FILE")
      ->required();
  AddComputeFlags(sub, *options);
  sub->add_option("--dump-logits", options->dump_path,
                  "Also write every output row's logits to this file as float32 little-endian, "
                  "rows in step order.")
      ->option_text("FILE");
  sub->add_flag("--trace", options->trace,
                "Print a `trace` record with the XXH3-64 of every op's output for every "
                "position.");
  AddBatchFlags(sub, *options);
  // Handled before parsing (engine_main.cc, serve.h); declared for --help.
  sub->add_flag("--serve", options->serve,
                "Serve many cells of this configuration in one process: read one cell per line "
                "of stdin, a JSON array of its --checkpoint, --scenario and --dump-logits "
                "arguments, and print each cell's records as `run` would (PROTOCOL.md, "
                "\"Serving several cells\").");
  sub->add_flag("--profile", options->profile,
                "Time every op of the cpu path and print the report on stderr at the end "
                "(SAMEBITS_PROFILE=1 does the same).");
  return {sub, [options] { return RunScenarioCommand(*options); }, /*speaks_protocol=*/true};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(run, 10, SetupRun);
}  // namespace samebits::cli
