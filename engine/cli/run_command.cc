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
#include "engine/run/driver.h"
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

class RunCommand : public Command {
 public:
  void Define(CLI::App& sub) override {
    sub.add_option("--checkpoint", checkpoint_,
                   "The checkpoint to run: synthetic:NAME[-DTYPE], gguf:PATH, safetensors:DIR, "
                   "llama2c:PATH or a path.")
        ->option_text("SPEC")
        ->required();
    sub.add_option("--scenario", scenario_file_,
                   "The scenario file to run (scenarios/*.json; see scenarios/README.md).")
        ->option_text("FILE")
        ->required();
    sub.add_option("--kernels", kernels_,
                   "The implementation of the forward pass: the plain reference or the fast cpu "
                   "path (default: cpu).")
        ->option_text("reference|cpu")
        ->check(CLI::IsMember({"reference", "cpu"}));
    sub.add_option("--threads", threads_,
                   "Threads for the cpu path, the calling thread included (default: "
                   "SAMEBITS_THREADS, else one per core).")
        ->option_text("N")
        ->check(CLI::Range(1, 1024));
    sub.add_option("--isa", isa_,
                   "The instruction set of the kernel table both paths compute with (the "
                   "reference uses its dot products); an ISA this machine lacks is refused "
                   "(default: auto, the fastest available).")
        ->option_text("auto|scalar|avx2|avx512|neon")
        ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512", "neon"}));
    sub.add_option("--gemv-chunk-bytes", gemv_chunk_bytes_,
                   "Bytes of weights per GEMV work unit on the cpu path; any value gives the same "
                   "bits (default: 262144).")
        ->option_text("N")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    sub.add_option("--math", math_,
                   "Where transcendentals come from: the engine's portable implementations or the "
                   "platform's libm (default: portable).")
        ->option_text("portable|libm")
        ->check(CLI::IsMember({"portable", "libm"}));
    sub.add_option("--dump-logits", dump_path_,
                   "Also write every output row's logits to this file as float32 little-endian, "
                   "rows in step order.")
        ->option_text("FILE");
    sub.add_flag("--trace", trace_,
                 "Print a `trace` record with the XXH3-64 of every op's output for every "
                 "position.");
    sub.add_flag("--profile", profile_,
                 "Time every op of the cpu path and print the report on stderr at the end "
                 "(SAMEBITS_PROFILE=1 does the same).");
  }

  bool SpeaksProtocol() const override { return true; }

  int Execute() override {
    // Resolve every switch before loading anything, so that a bad argument
    // fails fast.
    if (ProfileRequestedByEnvironment()) profile_ = true;
    numerics::MathProfile math_profile;
    if (!numerics::ParseMathProfile(math_, &math_profile)) {
      throw UsageError("unknown math profile '" + math_ + "' (use portable or libm)");
    }
    const numerics::MathLibrary& math = numerics::GetMathLibrary(math_profile);
    model::KernelPath path;
    if (!model::ParseKernelPath(kernels_, &path)) {
      throw UsageError("unknown kernel path '" + kernels_ + "' (use reference or cpu)");
    }
    kernels::Isa isa = kernels::BestIsa();
    if (isa_ != "auto") {
      if (!kernels::ParseIsa(isa_, &isa)) {
        throw UsageError("unknown ISA '" + isa_ + "' (use auto, scalar, avx2, avx512 or neon)");
      }
      if (!kernels::IsaAvailable(isa)) {
        throw UsageError("ISA " + isa_ +
                         " is not available on this machine or in this build "
                         "(available: " +
                         AvailableIsaList() + ")");
      }
    }
    const int threads = threads_.value_or(threads::DefaultThreadCount());
    const unsigned cores = std::thread::hardware_concurrency();
    if (path == model::KernelPath::kCpu && cores > 0 && static_cast<unsigned>(threads) > cores) {
      std::fprintf(stderr,
                   "samebits-engine: warning: %d threads requested on %u cores: the results are "
                   "unaffected, but timings will be noisy\n",
                   threads, cores);
    }

    run::Scenario scenario;
    try {
      scenario = run::LoadScenario(scenario_file_);
    } catch (const run::ScenarioError& e) {
      throw UsageError(e.what());
    }
    const model::ModelWeights weights = LoadCheckpointForCommand(checkpoint_);
    run::PreparedScenario prepared;
    try {
      prepared = run::PrepareScenario(scenario, weights.config, weights.vocabulary.get());
    } catch (const run::ScenarioError& e) {
      throw UsageError(e.what());
    }

    // The forward pass and the configuration it really uses.
    protocol::RunConfig config;
    config.checkpoint = checkpoint_;
    config.scenario = scenario.name;
    config.kernels = model::KernelPathName(path);
    config.math = std::string(numerics::MathProfileName(math_profile));
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
      model::CpuOptions options;
      options.isa = isa;
      if (gemv_chunk_bytes_) options.gemv_chunk_bytes = *gemv_chunk_bytes_;
      options.profile = profile_;
      config.threads = threads;
      config.isa = kernels::IsaName(isa);
      config.gemv_chunk_bytes = options.gemv_chunk_bytes;
      pool = std::make_unique<threads::ThreadPool>(threads);
      forward = model::MakeCpuForward(weights, math, *pool, options, CpuPassKernelTable(isa));
    }
    std::optional<run::LogitDumpWriter> dump;
    if (!dump_path_.empty()) {
      try {
        dump.emplace(dump_path_);
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
    hello.checkpoint.spec = checkpoint_;
    hello.checkpoint.weights_xxh3 = model::HashWeights(weights);
    hello.checkpoint.vocab_size = weights.config.vocab_size;
    protocol::RecordWriter writer(stdout);
    writer.Write(hello);

    run::DriverSinks sinks;
    sinks.on_step = [&](const run::StepResult& s) {
      writer.Write(protocol::Step{s.index, run::StepKindName(s.kind), s.position, s.input_token,
                                  s.token, s.fnv1a64, s.xxh3_64, s.argmax, s.nan_count,
                                  s.inf_count});
      if (dump) dump->WriteRow(s.logits);
    };
    if (trace_) {
      sinks.on_trace = [&](const run::TraceResult& t) {
        writer.Write(protocol::Trace{t.position, t.layer, t.op, t.xxh3_64});
      };
    }
    const auto start = std::chrono::steady_clock::now();
    const run::RunSummary summary =
        run::RunScenario(prepared, weights.config, *forward, math, sinks);
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (dump) dump->Close();
    writer.Write(protocol::Done{summary.steps, elapsed_ms});
    if (profile_) {
      const std::string report = forward->ProfileReport();
      std::fprintf(
          stderr, "%s",
          report.empty() ? "no profile: the reference path is not profiled\n" : report.c_str());
    }
    return 0;
  }

 private:
  std::string checkpoint_;
  std::string scenario_file_;
  std::string kernels_ = "cpu";
  std::optional<int> threads_;
  std::string isa_ = "auto";
  std::optional<int64_t> gemv_chunk_bytes_;
  std::string math_ = "portable";
  std::string dump_path_;
  bool trace_ = false;
  bool profile_ = false;
};

const bool kRegistered = RegisterCommand(
    {"run", "Runs a scenario on a checkpoint and prints the protocol's JSON Lines on stdout.", 10,
     [] { return MakeCommand<RunCommand>(); }});

}  // namespace
}  // namespace samebits::cli
