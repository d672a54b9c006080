// Batched configuration names (batched_name.h).
#include "harness/runner/batched_name.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "harness/analysis/batch.h"
#include "harness/analysis/numeric_profile.h"

namespace samebits::runner {

harness::Configuration Batched(harness::Configuration base, int batch, uint64_t seed,
                               const std::string& schedule) {
  const std::string suffix = harness::ProfileSuffix(harness::ProfileOf(base));
  std::string stem = base.name;
  if (!suffix.empty() && stem.ends_with(suffix)) stem.resize(stem.size() - suffix.size());
  stem += "-b" + std::to_string(batch);
  if (schedule != "together") stem += "-" + schedule;
  if (seed != 1) stem += "-seed" + std::to_string(seed);
  base.name = stem + suffix;
  base.batch = batch;
  base.batch_seed = seed;
  base.batch_schedule = schedule;
  return base;
}

std::optional<harness::Configuration> ParseBatchedName(
    const std::string& name, const std::vector<harness::Configuration>& unbatched) {
  // The batch part starts at the last "-b<digits>" followed by the end or
  // another part; every later part must be a schedule, a seed or the
  // numeric profile's suffix ("-libm", "-int8", "-libm-int8").
  static const std::regex kBatched(
      R"(^(.+)-b([0-9]+)(-(together|staggered))?(-seed([0-9]+))?((?:-[a-z][a-z0-9]*)*)$)");
  std::smatch m;
  if (!std::regex_match(name, m, kBatched)) {
    if (std::regex_search(name, std::regex(R"(-b[0-9])"))) {
      throw std::invalid_argument("--config: '" + name +
                                  "' has a batch part that is not "
                                  "<base>-b<N>[-staggered][-seed<S>][-<math>][-<quant-dot>] "
                                  "(such as cpu-t2-b4 or cpu-t3-b8-staggered)");
    }
    return std::nullopt;
  }
  const std::string base_name = m[1].str() + m[7].str();
  const auto base =
      std::find_if(unbatched.begin(), unbatched.end(), [&](const harness::Configuration& c) {
        return c.name == base_name && !harness::IsBatched(c);
      });
  if (base == unbatched.end()) {
    throw std::invalid_argument("--config: '" + name + "' batches " + base_name +
                                ", which is not a configuration with these --threads, --math and "
                                "--quant-dot");
  }
  if (base->kernels != "cpu") {
    throw std::invalid_argument("--config: '" + name + "' batches " + base_name +
                                ", but only the cpu kernels run batched (the " + base->kernels +
                                " kernels run one sequence)");
  }
  // Out-of-range digits are refused before they are converted.
  const std::string batch_digits = m[2].str(), seed_digits = m[6].str();
  const int batch = batch_digits.size() > 3 ? kMaxBatch + 1 : std::stoi(batch_digits);
  if (batch == 1) {
    throw std::invalid_argument("--config: '" + name +
                                "' asks for batch 1, which is the unbatched configuration: write " +
                                base_name);
  }
  if (batch < 2 || batch > kMaxBatch) {
    throw std::invalid_argument("--config: '" + name + "' asks for batch " + batch_digits +
                                "; a batch is 2 to " + std::to_string(kMaxBatch));
  }
  if (seed_digits.size() > 18) {
    throw std::invalid_argument("--config: '" + name + "' has a seed of more than 18 digits");
  }
  const uint64_t seed = seed_digits.empty() ? 1 : std::stoull(seed_digits);
  const std::string schedule = m[4].matched ? m[4].str() : "together";
  harness::Configuration batched = Batched(*base, batch, seed, schedule);
  if (batched.name != name) {
    // One name per configuration: results and references are keyed by it.
    throw std::invalid_argument("--config: write '" + name + "' as " + batched.name +
                                " (together and seed 1 are the defaults and are not written)");
  }
  return batched;
}

}  // namespace samebits::runner
