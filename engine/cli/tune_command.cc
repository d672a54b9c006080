// `samebits-engine tune`: measures, on this machine, which value of every
// tuning knob (model/tuning.h) runs fastest for each checkpoint's weight
// type and each thread count (tune_search.h), proves in the same runs that
// every value gives the same bits, and keeps the winners in a wisdom file
// (engine/run/wisdom.h) that `run` and `bench` read at start. Like FFTW's
// wisdom or ATLAS's install-time tuning, but safe by construction: no knob
// can change a result, and the gate proves it.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/cli/count_list.h"
#include "engine/cli/isa_option.h"
#include "engine/cli/numeric_profile_options.h"
#include "engine/cli/tune_search.h"
#include "engine/cli/tuning_options.h"
#include "engine/protocol/platform.h"
#include "engine/run/wisdom.h"

namespace samebits::cli {
namespace {

struct TuneOptions {
  std::vector<std::string> checkpoints = {"synthetic:bench"};
  std::string threads_list;
  std::string isa = "auto";
  std::string math = "portable";
  std::string quant_dot = "exact";
  int budget_seconds = 60;  // whole seconds: a fraction buys nothing here
  int rounds = 5;
  int context = 64;
  int decode_steps = 8;
  int prompt = 64;
  std::string wisdom;  // "": DefaultWisdomPath()
  bool dry_run = false;
};

// Returns the wisdom already at `path` (none when there is no file). A
// file that is there but unreadable is refused, so that tuning never
// overwrites what it cannot read.
run::Wisdom ExistingWisdom(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  try {
    return run::LoadWisdom(path);
  } catch (const run::WisdomError& e) {
    throw UsageError(std::string(e.what()) +
                     "; tune leaves it as it is: move it away or name another with --wisdom");
  }
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

nlohmann::json Measured(const std::string& checkpoint, const TuneShape& shape,
                        const TuneOutcome& o) {
  const protocol::BuildInfo build = protocol::ThisBuild();
  return {{"checkpoint", checkpoint},
          {"when", UtcNow()},
          {"revision", build.revision + (build.dirty ? " (dirty)" : "")},
          {"context", shape.context},
          {"decode_steps", shape.decode_steps},
          {"prompt", shape.prompt},
          {"rounds", o.final_rounds},
          {"decode_ms_per_token", {{"default", o.default_decode_ms}, {"tuned", o.tuned_decode_ms}}},
          {"prefill_ms", {{"default", o.default_prefill_ms}, {"tuned", o.tuned_prefill_ms}}}};
}

int RunTune(const TuneOptions& options) {
  TuneShape shape;
  shape.math = ResolveMathOption(options.math);
  shape.quant_dot = ResolveQuantDotOption(options.quant_dot);
  shape.isa = ResolveIsaOption(options.isa);
  shape.cpu_table = &CpuPassKernelTable(shape.isa, shape.quant_dot);
  shape.rounds = options.rounds;
  shape.context = options.context;
  shape.decode_steps = options.decode_steps;
  shape.prompt = options.prompt;
  const std::vector<int> thread_counts = ParseThreadsList(options.threads_list);
  const std::string path = options.wisdom.empty() ? run::DefaultWisdomPath() : options.wisdom;
  if (path.empty() && !options.dry_run) {
    throw UsageError("no wisdom file to write: HOME is not set; name one with --wisdom FILE");
  }
  run::Wisdom wisdom = options.dry_run ? run::Wisdom{} : ExistingWisdom(path);

  const auto start = std::chrono::steady_clock::now();
  const auto budget = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::seconds(options.budget_seconds));
  const size_t units = options.checkpoints.size() * thread_counts.size();
  size_t unit = 0;
  for (const std::string& spec : options.checkpoints) {
    const model::ModelWeights weights = LoadCheckpointForCommand(spec);
    const int longest = std::max(shape.context + shape.decode_steps + 1, shape.prompt);
    if (longest > weights.config.max_seq_len) {
      throw UsageError("--context + --decode-steps and --prompt must fit in " + spec +
                       "'s max_seq_len of " + std::to_string(weights.config.max_seq_len));
    }
    for (int threads : thread_counts) {
      shape.threads = threads;
      ++unit;
      shape.deadline = start + budget * static_cast<int64_t>(unit) / static_cast<int64_t>(units);
      const run::WisdomKey key = ThisWisdomKey(weights, shape.isa, shape.quant_dot, threads);
      std::printf("%s: %s weights, %d thread%s; %s, %s, %d cores, quant-dot %s\n", spec.c_str(),
                  key.weights.c_str(), threads, threads == 1 ? "" : "s", key.cpu.c_str(),
                  key.isa.c_str(), key.cores, key.quant_dot.c_str());
      std::fflush(stdout);
      const TuneOutcome outcome = TuneKnobs(weights, shape, stdout);
      std::fflush(stdout);
      if (!outcome.identical) {
        std::fprintf(stderr,
                     "samebits-engine tune: %s, %d threads: %s. A tuning knob changed a result, "
                     "which the numeric contract forbids (DESIGN.md): this is a bug of the "
                     "engine. Nothing was written.\n",
                     spec.c_str(), threads, outcome.difference.c_str());
        return 1;
      }
      wisdom.Put({key, outcome.knobs, Measured(spec, shape, outcome)});
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.dry_run) {
    std::printf("tuned in %.1f s (budget %d s); --dry-run: nothing written\n", seconds,
                options.budget_seconds);
    return 0;
  }
  try {
    run::SaveWisdom(wisdom, path);
  } catch (const run::WisdomError& e) {
    throw UsageError(e.what());
  }
  std::printf("tuned in %.1f s (budget %d s); wrote %zu entr%s to %s (%zu in all)\n", seconds,
              options.budget_seconds, units, units == 1 ? "y" : "ies", path.c_str(),
              wisdom.entries.size());
  return 0;
}

CommandSpec SetupTune(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "tune",
      "Measures which value of every tuning knob (work-unit sizes of decode and prefill) runs "
      "fastest here, for each checkpoint's weight type and thread count, checks that every value "
      "gives the same bits, and writes the winners to the wisdom file run and bench read.");
  auto options = std::make_shared<TuneOptions>();
  sub->add_option("--checkpoint", options->checkpoints,
                  "A checkpoint to tune on; repeat for several weight types, e.g. files "
                  "`export --type q8_0` wrote (default: synthetic:bench, BF16).")
      ->option_text("SPEC");
  sub->add_option("--threads-list", options->threads_list,
                  "Thread counts to tune for, comma-separated (default: 1 and one per core).")
      ->option_text("N,N,...");
  AddIsaOption(sub, &options->isa,
               "The kernels' instruction set (default: auto, the fastest available).");
  AddMathOption(sub, &options->math);
  AddQuantDotOption(sub, &options->quant_dot);
  sub->add_option("--budget", options->budget_seconds,
                  "Seconds the measurements may take in all, shared by the checkpoints and "
                  "thread counts; a comparison starts no round past its share (default: 60).")
      ->option_text("SECONDS")
      ->check(CLI::Range(1, 86400));
  sub->add_option("--rounds", options->rounds,
                  "The most interleaved rounds per comparison (default: 5).")
      ->option_text("N")
      ->check(CLI::Range(1, 100));
  sub->add_option("--context", options->context,
                  "Decode is timed after a context of this many tokens (default: 64).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--decode-steps", options->decode_steps,
                  "Decode steps per timed run (default: 8).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--prompt", options->prompt,
                  "Prefill is timed on a prompt of this many tokens (default: 64).")
      ->option_text("N")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--wisdom", options->wisdom,
                  "The wisdom file to update: entries for other machines or work are kept, "
                  "those tuned here replaced (default: $SAMEBITS_WISDOM, else "
                  "~/.cache/samebits/wisdom.json).")
      ->option_text("FILE")
      ->check([](const std::string& v) {
        return v == "none" ? std::string("tune writes a wisdom file; name one") : std::string();
      });
  sub->add_flag("--dry-run", options->dry_run, "Measure and print, but write nothing.");
  return {sub, [options] { return RunTune(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(tune, 45, SetupTune);
}  // namespace samebits::cli
