// `samebits-engine run`: runs one scenario on one checkpoint in one
// configuration and prints the protocol's JSON Lines (PROTOCOL.md) on
// stdout. Every switch is read once here, before the first record.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/kernels/kernels.h"
#include "engine/model/forward.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/math.h"
#include "engine/protocol/platform.h"
#include "engine/protocol/records.h"
#include "engine/run/batch_driver.h"
#include "engine/run/logit_dump.h"
#include "engine/run/scenario.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

// Returns the names of the ISAs this machine can run, for messages.
std::string AvailableIsaList() {
  std::string list;
  for (const kernels::Isa isa : kernels::AvailableIsas()) {
    list += std::string(list.empty() ? "" : ", ") + kernels::IsaName(isa);
  }
  return list;
}

struct RunOptions {
  std::string checkpoint;
  std::string scenario_file;
  std::string kernels = "cpu";
  std::optional<int> threads;
  std::string isa = "auto";
  std::optional<int64_t> gemv_chunk_bytes;
  std::string math = "portable";
  std::string dump_path;
  bool trace = false;
  bool profile = false;
  int batch = 1;
  uint64_t batch_seed = 1;
  std::string batch_schedule = "together";
};

int RunScenarioCommand(RunOptions options) {
  // Resolve every switch before loading anything, so that a bad argument
  // fails fast.
  if (ProfileRequestedByEnvironment()) options.profile = true;
  numerics::MathProfile math_profile;
  if (!numerics::ParseMathProfile(options.math, &math_profile)) {
    throw UsageError("unknown math profile '" + options.math + "' (use portable or libm)");
  }
  const numerics::MathLibrary& math = numerics::GetMathLibrary(math_profile);
  model::KernelPath path;
  if (!model::ParseKernelPath(options.kernels, &path)) {
    throw UsageError("unknown kernel path '" + options.kernels + "' (use reference or cpu)");
  }
  kernels::Isa isa = kernels::BestIsa();
  if (options.isa != "auto") {
    if (!kernels::ParseIsa(options.isa, &isa)) {
      throw UsageError("unknown ISA '" + options.isa +
                       "' (use auto, scalar, avx2, avx512 or neon)");
    }
    if (!kernels::IsaAvailable(isa)) {
      throw UnsupportedError("ISA " + options.isa +
                             " is not available on this machine or in this build "
                             "(available: " +
                             AvailableIsaList() + ")");
    }
  }
  run::BatchOptions batch;
  batch.batch = options.batch;
  batch.seed = options.batch_seed;
  if (batch.batch < 1 || batch.batch > run::kMaxBatch) {
    throw UsageError("--batch " + std::to_string(batch.batch) + " is outside [1, " +
                     std::to_string(run::kMaxBatch) + "]");
  }
  if (!run::ParseBatchSchedule(options.batch_schedule, &batch.schedule)) {
    throw UsageError("unknown batch schedule '" + options.batch_schedule +
                     "' (use together or staggered)");
  }
  const int threads = options.threads.value_or(threads::DefaultThreadCount());
  const unsigned cores = std::thread::hardware_concurrency();
  if (path == model::KernelPath::kCpu && cores > 0 && static_cast<unsigned>(threads) > cores) {
    std::fprintf(stderr,
                 "samebits-engine: warning: %d threads requested on %u cores: the results are "
                 "unaffected, but timings will be noisy\n",
                 threads, cores);
  }

  run::Scenario scenario;
  try {
    scenario = run::LoadScenario(options.scenario_file);
  } catch (const run::ScenarioError& e) {
    throw UsageError(e.what());
  }
  const model::ModelWeights weights = LoadCheckpointForCommand(options.checkpoint);
  run::PreparedScenario prepared;
  try {
    prepared = run::PrepareScenario(scenario, weights.config, weights.vocabulary.get());
  } catch (const run::ScenarioError& e) {
    throw UsageError(e.what());
  }

  // The forward pass and the configuration it really uses.
  protocol::RunConfig config;
  config.checkpoint = options.checkpoint;
  config.scenario = scenario.name;
  config.kernels = model::KernelPathName(path);
  config.math = std::string(numerics::MathProfileName(math_profile));
  config.batch = batch.batch;
  config.batch_seed = batch.seed;
  config.batch_schedule = run::BatchScheduleName(batch.schedule);
  std::unique_ptr<threads::ThreadPool> pool;
  std::unique_ptr<model::Forward> forward;
  if (path == model::KernelPath::kReference) {
    // The reference is single-threaded plain code with no chunking; its
    // dot products run on the kernel table --isa chose, recorded here.
    config.threads = 1;
    config.isa = kernels::IsaName(isa);
    config.gemv_chunk_bytes = 0;
    forward = model::MakeReferenceForward(weights, math, isa);
  } else {
    model::CpuOptions cpu_options;
    cpu_options.isa = isa;
    if (options.gemv_chunk_bytes) cpu_options.gemv_chunk_bytes = *options.gemv_chunk_bytes;
    cpu_options.profile = options.profile;
    config.threads = threads;
    config.isa = kernels::IsaName(isa);
    config.gemv_chunk_bytes = cpu_options.gemv_chunk_bytes;
    pool = std::make_unique<threads::ThreadPool>(threads);
    const kernels::KernelTable& kt = CpuPassKernelTable(isa);
    forward = model::MakeCpuForward(weights, math, *pool, cpu_options, kt,
                                    CpuPassMultiSequenceKernelTable(isa, kt));
  }
  std::optional<run::LogitDumpWriter> dump;
  if (!options.dump_path.empty()) {
    try {
      dump.emplace(options.dump_path);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }

  protocol::Hello hello;
  hello.engine = protocol::ThisEngine();
  hello.build = protocol::ThisBuild();
  hello.platform = protocol::ThisPlatform();
  hello.math = protocol::DescribeMath(math_profile);
  hello.config = config;
  hello.checkpoint.spec = options.checkpoint;
  hello.checkpoint.weights_xxh3 = model::HashWeights(weights);
  hello.checkpoint.vocab_size = weights.config.vocab_size;
  protocol::RecordWriter writer(stdout);
  writer.Write(hello);

  // Phase timing for `done`: the time from the end of the previous row's
  // record to this row is its forward pass (zero for the later rows of one
  // chunk), credited to decode for decode rows and to prefill for prefill
  // and extend rows; writing the records is left out of both.
  protocol::PhaseTimes phases;
  auto phase_mark = std::chrono::steady_clock::now();
  run::DriverSinks sinks;
  sinks.on_step = [&](const run::StepResult& s) {
    const double forward_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - phase_mark)
            .count();
    if (s.kind == run::ScenarioStep::Kind::kDecode) {
      phases.decode_ms += forward_ms;
      ++phases.decode_tokens;
    } else {
      phases.prefill_ms += forward_ms;
    }
    protocol::Step step{s.index,
                        run::StepKindName(s.kind),
                        s.position,
                        s.input_token,
                        s.token,
                        s.fnv1a64,
                        s.xxh3_64,
                        s.argmax,
                        s.nan_count,
                        s.inf_count,
                        /*text=*/std::nullopt,
                        /*batch=*/std::nullopt};
    // The text of the chosen token, decoded after the token fed before it.
    if (weights.vocabulary) step.text = weights.vocabulary->DecodeToken(s.input_token, s.token);
    if (s.batch)
      step.batch =
          protocol::BatchPlace{s.batch->sequences, s.batch->rows, s.batch->slot, s.batch->row};
    writer.Write(step);
    if (dump) dump->WriteRow(s.logits);
    phase_mark = std::chrono::steady_clock::now();
  };
  if (options.trace) {
    sinks.on_trace = [&](const run::TraceResult& t) {
      writer.Write(protocol::Trace{t.position, t.layer, t.op, t.xxh3_64});
    };
  }
  const auto start = std::chrono::steady_clock::now();
  phase_mark = start;
  const run::RunSummary summary =
      run::RunBatchedScenario(prepared, weights.config, *forward, math, batch, sinks);
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (dump) dump->Close();
  phases.prefill_tokens = summary.positions - phases.decode_tokens;
  writer.Write(protocol::Done{summary.steps, elapsed_ms, phases});
  if (options.profile) {
    const std::string report = forward->ProfileReport();
    std::fprintf(
        stderr, "%s",
        report.empty() ? "no profile: the reference path is not profiled\n" : report.c_str());
  }
  return 0;
}

CommandSpec SetupRun(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "run", "Runs a scenario on a checkpoint and prints the protocol's JSON Lines on stdout.");
  auto options = std::make_shared<RunOptions>();
  sub->add_option("--checkpoint", options->checkpoint,
                  "The checkpoint to run: synthetic:NAME[-DTYPE], gguf:PATH, safetensors:DIR, "
                  "llama2c:PATH or a path.")
      ->option_text("SPEC")
      ->required();
  sub->add_option("--scenario", options->scenario_file,
                  "The scenario file to run (scenarios/*.json; see scenarios/README.md).")
      ->option_text("FILE")
      ->required();
  sub->add_option("--kernels", options->kernels,
                  "The implementation of the forward pass: the plain reference or the fast cpu "
                  "path (default: cpu).")
      ->option_text("reference|cpu")
      ->check(CLI::IsMember({"reference", "cpu"}));
  sub->add_option("--threads", options->threads,
                  "Threads for the cpu path, the calling thread included (default: "
                  "SAMEBITS_THREADS, else one per core).")
      ->option_text("N")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--isa", options->isa,
                  "The instruction set of the kernel table both paths compute with (the "
                  "reference uses its dot products); an ISA this machine lacks is refused "
                  "(default: auto, the fastest available).")
      ->option_text("auto|scalar|avx2|avx512|neon")
      ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512", "neon"}));
  sub->add_option("--gemv-chunk-bytes", options->gemv_chunk_bytes,
                  "Bytes of weights per GEMV work unit on the cpu path; any value gives the same "
                  "bits (default: 262144).")
      ->option_text("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub->add_option("--math", options->math,
                  "Where transcendentals come from: the engine's portable implementations or the "
                  "platform's libm (default: portable).")
      ->option_text("portable|libm")
      ->check(CLI::IsMember({"portable", "libm"}));
  sub->add_option("--dump-logits", options->dump_path,
                  "Also write every output row's logits to this file as float32 little-endian, "
                  "rows in step order.")
      ->option_text("FILE");
  sub->add_flag("--trace", options->trace,
                "Print a `trace` record with the XXH3-64 of every op's output for every "
                "position.");
  sub->add_option("--batch", options->batch,
                  "Run the scenario's sequence beside N - 1 companion sequences (seeded random "
                  "prompts, greedy decoding) in the same forward calls; the records report the "
                  "scenario's sequence only, and its hashes must equal those of --batch 1 "
                  "(default: 1, alone).")
      ->option_text("N")
      ->check(CLI::Range(1, run::kMaxBatch));
  sub->add_option("--batch-seed", options->batch_seed,
                  "Seed of the companions' prompts, lengths, joining calls and row orders "
                  "(default: 1).")
      ->option_text("S");
  sub->add_option("--batch-schedule", options->batch_schedule,
                  "together: every companion prefills with the scenario's prefill and decodes to "
                  "its end; staggered: companions join and leave at different calls, as "
                  "continuous batching does, and the row order is reshuffled every call "
                  "(default: together).")
      ->option_text("together|staggered")
      ->check(CLI::IsMember({"together", "staggered"}));
  sub->add_flag("--profile", options->profile,
                "Time every op of the cpu path and print the report on stderr at the end "
                "(SAMEBITS_PROFILE=1 does the same).");
  return {sub, [options] { return RunScenarioCommand(*options); }, /*speaks_protocol=*/true};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(run, 10, SetupRun);
}  // namespace samebits::cli
