// `samebits-engine bench`: times decode (ms per token at a given context)
// and prefill (tokens per second for a prompt) for the reference pass and
// the cpu pass at several thread counts, runs interleaved (A B C, C B A,
// ...) so that a change in the machine's load touches every configuration
// alike, and checks in the same runs that every configuration produced the
// same logits (hashes of every step's bits). It sets the decode figure
// against the machine's memory read bandwidth (the kernels' probe), since
// decode streams every weight it uses once per token: once before the runs,
// and run by run against a pass of the probe right after each.
//
// This file parses the flags into BenchSettings and loads the checkpoint;
// bench_run.h does the work, its steps living apart: preflight
// (engine/platform/preflight.h), scheduling (bench_schedule.h), statistics
// (bench_statistics.h) and output (bench_output.h).
#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cli/bench_run.h"
#include "engine/cli/commands.h"
#include "engine/cli/count_list.h"
#include "engine/cli/isa_option.h"
#include "engine/cli/numeric_profile_options.h"
#include "engine/numerics/math.h"
#include "engine/run/batch_companions.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

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
  std::shared_ptr<TuningFlags> tuning = std::make_shared<TuningFlags>();
  std::string math = "portable";
  std::string quant_dot = "exact";
  int bandwidth_mib = 256;
  bool profile = false;
};

// Resolves every switch before anything is loaded, so that a bad one fails
// fast.
BenchSettings ResolveSettings(const BenchOptions& options) {
  BenchSettings settings;
  settings.checkpoint = options.checkpoint;
  settings.math = ResolveMathOption(options.math);
  settings.quant_dot = ResolveQuantDotOption(options.quant_dot);
  settings.isa = ResolveIsaOption(options.isa);
  settings.thread_counts = ParseThreadsList(options.threads_list);
  if (!options.batch_list.empty()) {
    settings.batches =
        ParseCountList(options.batch_list, "--batch-list", "batch size", run::kMaxBatch);
  }
  settings.profile = options.profile || ProfileRequestedByEnvironment();
  settings.reference_repeats =
      options.no_reference ? 0 : std::min(options.repeats, options.reference_repeats);
  settings.context = options.context;
  settings.decode_steps = options.decode_steps;
  settings.warmup_steps = options.warmup_steps;
  settings.prompt = options.prompt;
  settings.repeats = options.repeats;
  settings.reference_decode_steps = options.reference_decode_steps;
  settings.tuning = *options.tuning;
  settings.bandwidth_mib = options.bandwidth_mib;
  return settings;
}

// Refuses a context, decode or prompt length the checkpoint cannot hold.
void CheckFitsCheckpoint(const BenchSettings& s, const model::ModelConfig& mc) {
  if (s.context + std::max({s.decode_steps, s.reference_decode_steps, s.warmup_steps}) >
          mc.max_seq_len ||
      s.prompt > mc.max_seq_len) {
    throw UsageError(
        "--context + --decode-steps (and + --warmup-steps) and --prompt must fit in the "
        "checkpoint's "
        "max_seq_len of " +
        std::to_string(mc.max_seq_len));
  }
}

int BenchCommand(const BenchOptions& options) {
  BenchSettings settings = ResolveSettings(options);
  const model::ModelWeights weights = LoadCheckpointForCommand(options.checkpoint);
  CheckFitsCheckpoint(settings, weights.config);
  settings.cpu_table = &CpuPassKernelTable(settings.isa, settings.quant_dot);
  if (!settings.batches.empty()) {
    settings.cpu_multi_sequence_table =
        &CpuPassMultiSequenceKernelTable(settings.isa, *settings.cpu_table);
  }
  return RunBench(settings, weights);
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
  AddIsaOption(sub, &options->isa,
               "The cpu kernels' instruction set (default: auto, the fastest available).");
  AddTuningFlags(sub, options->tuning);
  AddMathOption(sub, &options->math);
  AddQuantDotOption(sub, &options->quant_dot);
  sub->add_option("--bandwidth-mib", options->bandwidth_mib,
                  "Size of the memory read-bandwidth probe's buffer; 0 skips the probe "
                  "(default: 256). Besides its figure before the runs, one pass of it follows "
                  "each cpu decode run, and each run's GB/s is set against that pass.")
      ->option_text("MIB")
      ->check(CLI::Range(0, 1 << 20));
  sub->add_flag("--profile", options->profile,
                "After the timed runs, run the cpu pass once more with the op profiler and "
                "print its table (SAMEBITS_PROFILE=1 does the same).");
  return {sub, [options] { return BenchCommand(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(bench, 40, SetupBench);
}  // namespace samebits::cli
