#include "engine/cli/tuning_options.h"

#include <unistd.h>

#include "engine/cli/commands.h"
#include "engine/protocol/platform.h"

namespace samebits::cli {

void AddTuningFlags(CLI::App* sub, const std::shared_ptr<TuningFlags>& flags) {
  const model::CpuOptions defaults;
  for (const model::TuningKnob& knob : model::TuningKnobs()) {
    const std::string name(knob.name);
    sub->add_option_function<int64_t>(
           std::string(knob.flag), [flags, name](const int64_t& v) { flags->given[name] = v; },
           std::string(knob.help) + " on the cpu path; any value gives the same bits (default: " +
               std::to_string(defaults.*knob.field) + ", or the wisdom file's).")
        ->option_text("N")
        ->check(CLI::Range(knob.min, knob.max));
  }
  sub->add_option("--wisdom", flags->wisdom,
                  "The wisdom file `samebits-engine tune` wrote, whose entry for this machine and "
                  "work sets the knobs no flag sets; none: read none (default: $SAMEBITS_WISDOM, "
                  "else ~/.cache/samebits/wisdom.json when it exists).")
      ->option_text("FILE|none");
}

run::WisdomKey ThisWisdomKey(const model::ModelWeights& weights, kernels::Isa isa,
                             numerics::QuantDot quant_dot, int threads) {
  run::WisdomKey key;
  key.cpu = protocol::ThisPlatform().cpu;
  key.isa = kernels::IsaName(isa);
  key.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  key.weights = model::DominantWeightType(weights);
  key.quant_dot = std::string(numerics::QuantDotName(quant_dot));
  key.threads = threads;
  return key;
}

ResolvedTuning ResolveTuning(const TuningFlags& flags, const run::WisdomKey& key) {
  ResolvedTuning resolved;
  try {
    resolved.wisdom = run::ChooseWisdom(flags.wisdom, key);
  } catch (const run::WisdomError& e) {
    throw UsageError(std::string(e.what()) + " (--wisdom none runs without it)");
  }
  model::CpuOptions options;
  if (resolved.wisdom.entry) model::ApplyKnobs(resolved.wisdom.entry->knobs, options);
  model::ApplyKnobs(flags.given, options);
  resolved.knobs = model::KnobsOf(options);
  return resolved;
}

}  // namespace samebits::cli
