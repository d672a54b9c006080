// Matrix expansion and selection (matrix.h).
#include "harness/runner/matrix.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "engine/numerics/hash.h"
#include "harness/analysis/batch.h"
#include "harness/analysis/numeric_profile.h"
#include "harness/runner/matrix_flag_names.h"
#include "harness/runner/matrix_template.h"
#include "harness/store/dump_paths.h"

namespace samebits::runner {

std::vector<std::string> EnumeratedAxisValues(const EngineProfile& profile, const std::string& name,
                                              const std::string& why) {
  const EngineAxis* axis = profile.Axis(name);
  if (axis == nullptr || axis->is_range) {
    throw ProfileError(profile.file, "axes",
                       "expected an axis `" + name + "` listing its values: " + why);
  }
  return axis->values;
}

std::vector<std::string> ProfileIsas(const EngineProfile& profile) {
  const EngineAxis* axis = profile.Axis("isa");
  const std::vector<std::string> values =
      EnumeratedAxisValues(profile, "isa", "{each:isa} names a configuration per value");
  std::vector<std::string> isas;
  for (const std::string& value : values) {
    if (value != axis->default_value) isas.push_back(value);
  }
  return isas;
}

namespace {

const char* const kConfigurationsKey = "matrix.configurations";

// Returns the value of samebits-engine's axis `axis` in `config`, which the
// profile's grammar read. Throws ProfileError when the profile has no such
// axis: the harness's fields need every one.
const std::string& OwnAxisValue(const EngineProfile& profile, const EngineConfiguration& config,
                                const std::string& axis) {
  const auto it = config.values.find(axis);
  if (it == config.values.end()) {
    throw ProfileError(profile.file, "axes",
                       "expected an axis `" + axis + "` (samebits-engine's configurations " +
                           "set kernels, threads, isa, gemv_chunk_bytes, math, quant_dot, " +
                           "batch, batch_seed and batch_schedule), to read '" + config.name + "'");
  }
  return it->second;
}

// Returns the configuration `name` (expanded from the template at `key`)
// means to samebits-engine, read by its profile's grammar.
harness::Configuration OwnConfiguration(const EngineProfile& profile, const std::string& name,
                                        const std::string& key) {
  try {
    return OwnEngineConfiguration(profile, name);
  } catch (const ConfigurationNameError& e) {
    throw ProfileError(
        profile.file, key,
        "expected a template of configuration names; it gave '" + name + "': " + e.what());
  }
}

}  // namespace

harness::Configuration OwnEngineConfiguration(const EngineProfile& profile,
                                              const std::string& name) {
  const EngineConfiguration parsed = ParseConfigurationName(profile, name);
  auto value = [&](const char* axis) -> const std::string& {
    return OwnAxisValue(profile, parsed, axis);
  };
  // The grammar has checked every value against its axis's range, so each
  // number converts.
  harness::Configuration c;
  c.name = name;
  c.kernels = value("kernels");
  c.threads = std::stoi(value("threads"));
  c.isa = value("isa");
  c.gemv_chunk_bytes = std::stoll(value("gemv_chunk_bytes"));
  c.math = value("math");
  c.quant_dot = value("quant_dot");
  c.batch = std::stoi(value("batch"));
  c.batch_seed = std::stoull(value("batch_seed"));
  c.batch_schedule = value("batch_schedule");
  return c;
}

std::vector<harness::Configuration> DefaultConfigurations(
    const EngineProfile& profile, const std::vector<int>& threads,
    const std::vector<std::string>& math, int64_t small_chunk_bytes,
    const std::vector<std::string>& quant_dot) {
  const std::vector<std::string>& templates = profile.matrix_configuration_templates;
  if (templates.empty()) {
    throw ProfileError(profile.file, kConfigurationsKey,
                       "is missing: samebits-engine's default configurations are read from it");
  }
  // The command line's fault, not the profile's (ExpandMatrix says so first).
  if (threads.empty()) {
    throw std::invalid_argument(std::string(kThreadsFlag) + ": no thread count given");
  }
  const TemplateInputs inputs{threads, ProfileIsas(profile), small_chunk_bytes};
  std::vector<harness::Configuration> out;
  for (const std::string& math_profile : math) {
    for (const std::string& dot_profile : quant_dot) {
      // Numeric profiles are compared only within themselves: each gets the
      // whole list, named apart by its suffix ("-libm", "-int8", "-libm-int8").
      const std::string suffix = harness::ProfileSuffix({math_profile, dot_profile});
      for (size_t i = 0; i < templates.size(); ++i) {
        const std::string key = std::string(kConfigurationsKey) + "[" + std::to_string(i) + "]";
        std::vector<std::string> names;
        try {
          names = ExpandTemplate(templates[i], inputs);
        } catch (const std::invalid_argument& e) {
          throw ProfileError(profile.file, key, e.what());
        }
        for (const std::string& name : names) {
          out.push_back(OwnConfiguration(profile, name + suffix, key));
        }
      }
    }
  }
  return out;
}

std::string ScenarioName(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

namespace {

// The steps of ExpandMatrix, in order.

// Returns the checkpoints the profile's matrix runs by default.
const std::vector<std::string>& DefaultCheckpoints(const EngineProfile& profile) {
  if (profile.matrix_checkpoints.empty()) {
    throw ProfileError(profile.file, "matrix.checkpoints",
                       "is missing: samebits-engine's default checkpoints are read from it");
  }
  return profile.matrix_checkpoints;
}

// Refuses `values` of the numeric profile axis `flag` (--math, --quant-dot)
// that are none of `known`, and an empty list.
void CheckProfiles(const std::string& flag, const std::vector<std::string>& values,
                   const std::vector<std::string>& known) {
  std::string listed;
  for (size_t i = 0; i < known.size(); ++i) {
    listed += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
  }
  if (values.empty()) throw std::invalid_argument(flag + ": no profile given (" + listed + ")");
  const auto unknown = std::find_if(values.begin(), values.end(), [&](const std::string& v) {
    return std::find(known.begin(), known.end(), v) == known.end();
  });
  if (unknown != values.end()) {
    throw std::invalid_argument(flag + ": unknown profile '" + *unknown + "' (" + listed + ")");
  }
}

// Refuses thread counts and numeric profiles the engine would refuse, and a
// matrix without samebits-engine's profile.
void CheckAxes(const MatrixOptions& options) {
  if (!options.profile) {
    throw std::invalid_argument(
        "no samebits-engine profile (engines/samebits.json) to read the matrix from");
  }
  // The thread counts the profile's threads axis takes (its range, which a
  // test holds equal to the engine's own limit), so no second list of them.
  const EngineAxis* axis = options.profile->Axis("threads");
  if (axis == nullptr || !axis->is_range) {
    throw std::invalid_argument("samebits-engine's profile has no threads range");
  }
  for (int n : options.threads) {
    if (n < axis->min || n > axis->max) {
      throw std::invalid_argument(std::string(kThreadsFlag) + ": " + std::to_string(n) +
                                  " is not a thread count (" + std::to_string(axis->min) + " to " +
                                  std::to_string(axis->max) + ")");
    }
  }
  if (options.threads.empty()) {
    throw std::invalid_argument(std::string(kThreadsFlag) + ": no thread count given");
  }
  // The numeric profiles samebits-engine runs are its profile's axes.
  CheckProfiles(kMathFlag, options.math,
                EnumeratedAxisValues(*options.profile, "math", "--math selects among them"));
  CheckProfiles(
      kQuantDotFlag, options.quant_dot,
      EnumeratedAxisValues(*options.profile, "quant_dot", "--quant-dot selects among them"));
}

// Returns the configuration `name` means to samebits-engine's profile's
// grammar when it reads it and the configuration can run in this selection
// (its numeric profile is among --math and --quant-dot, and only the cpu
// kernels run batched); nothing otherwise, with `why` saying why.
std::optional<harness::Configuration> ReadConfiguration(const std::string& name,
                                                        const MatrixOptions& options,
                                                        std::string& why) {
  harness::Configuration c;
  try {
    c = OwnEngineConfiguration(*options.profile, name);
  } catch (const ConfigurationNameError& e) {
    why = e.what();
    return std::nullopt;
  }
  const auto selected = [](const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
  };
  if (!selected(options.math, c.math) || !selected(options.quant_dot, c.quant_dot)) {
    why = "its numeric profile, --math " + c.math + " and --quant-dot " + c.quant_dot +
          ", is not among those given";
    return std::nullopt;
  }
  if (harness::IsBatched(c) && c.kernels != "cpu") {
    why = "only the cpu kernels run batched (the " + c.kernels + " kernels run one sequence)";
    return std::nullopt;
  }
  return c;
}

// Returns the configuration `name` among `all` (in matrix order), or as
// the profile's one grammar reads it (any thread count, chunk size or
// batch: `cpu-t4` whatever --threads says); nothing when it is neither,
// with `why`.
std::optional<harness::Configuration> ResolveConfiguration(
    const std::string& name, const MatrixOptions& options,
    const std::vector<harness::Configuration>& all, std::string& why) {
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const harness::Configuration& c) { return c.name == name; });
  if (it != all.end()) return *it;
  return ReadConfiguration(name, options, why);
}

// Refuses an unknown configuration name (`why`: what the grammar said),
// listing the ones there are.
[[noreturn]] void RefuseUnknownConfiguration(const std::string& name, const std::string& why,
                                             const std::vector<harness::Configuration>& all) {
  std::string message = "--config: unknown configuration '" + name + "'" +
                        (why.empty() ? "" : " (" + why + ")") +
                        "; with these --threads, --math and --quant-dot the configurations are: ";
  for (size_t i = 0; i < all.size(); ++i) message += (i > 0 ? ", " : "") + all[i].name;
  message +=
      "; and any other thread count or chunk size (cpu-t4, cpu-t2-chunk16k), and any cpu one "
      "batched, as <base>-b<N>[-staggered][-seed<S>][-<math>][-<quant-dot>] "
      "(cpu-t2-b4, cpu-t3-b8-staggered)";
  throw std::invalid_argument(message);
}

// Refuses `--config name` under the profile `profile`, whose twin `twin` is
// not a configuration.
[[noreturn]] void RefuseMissingTwin(const std::string& name, const harness::NumericProfile& profile,
                                    const std::string& twin) {
  throw std::invalid_argument("--config " + name + " with --math " + profile.math +
                              " and --quant-dot " + profile.quant_dot +
                              ": there is no configuration '" + twin +
                              "'; name each configuration to run, and leave its profile out of "
                              "--math and --quant-dot");
}

// Adds `chosen` (named `name`) and its twins under every --math and
// --quant-dot profile to `configs`, each once (`--config reference --math
// portable,libm` ran no libm cell at all before twins were added).
void AddWithTwins(const std::string& name, const harness::Configuration& chosen,
                  const MatrixOptions& options, const std::vector<harness::Configuration>& all,
                  std::vector<harness::Configuration>& configs) {
  const std::string own_suffix = harness::ProfileSuffix(harness::ProfileOf(chosen));
  const std::string base = name.substr(0, name.size() - own_suffix.size());
  for (const std::string& math : options.math) {
    for (const std::string& quant_dot : options.quant_dot) {
      const std::string twin = base + harness::ProfileSuffix({math, quant_dot});
      std::string why;
      const std::optional<harness::Configuration> resolved =
          twin == name ? chosen : ResolveConfiguration(twin, options, all, why);
      if (!resolved) RefuseMissingTwin(name, {math, quant_dot}, twin);
      if (std::none_of(configs.begin(), configs.end(),
                       [&](const harness::Configuration& c) { return c.name == twin; })) {
        configs.push_back(*resolved);
      }
    }
  }
}

// Returns the configurations --config names (with their twins), or all.
std::vector<harness::Configuration> SelectConfigurations(const MatrixOptions& options) {
  std::vector<harness::Configuration> all =
      DefaultConfigurations(*options.profile, options.threads, options.math,
                            options.small_chunk_bytes, options.quant_dot);
  if (options.configs.empty()) return all;
  std::vector<harness::Configuration> configs;
  for (const std::string& name : options.configs) {
    std::string why;
    const std::optional<harness::Configuration> chosen =
        ResolveConfiguration(name, options, all, why);
    if (!chosen) RefuseUnknownConfiguration(name, why, all);
    AddWithTwins(name, *chosen, options, all, configs);
  }
  return configs;
}

// Refuses an empty scenario list and two scenarios of one name.
void CheckScenarioNames(const std::vector<std::string>& files) {
  if (files.empty()) {
    throw std::invalid_argument("no scenario selected (the scenarios folder has no *.json files?)");
  }
  std::map<std::string, std::string> names;  // name -> the first file of that name
  for (const std::string& file : files) {
    const auto [it, fresh] = names.emplace(ScenarioName(file), file);
    if (!fresh) {
      throw std::invalid_argument("two scenarios are named '" + it->first + "' (" + it->second +
                                  " and " + file +
                                  "); scenario names (file stems) must be unique, since "
                                  "results and references are keyed by them");
    }
  }
}

}  // namespace

std::vector<Cell> ExpandMatrix(const MatrixOptions& options) {
  CheckAxes(options);
  const std::vector<harness::Configuration> configs = SelectConfigurations(options);
  const std::vector<std::string>& checkpoints =
      options.checkpoints.empty() ? DefaultCheckpoints(*options.profile) : options.checkpoints;
  CheckScenarioNames(options.scenario_files);
  std::vector<Cell> cells;
  for (const std::string& checkpoint : checkpoints) {
    for (const std::string& file : options.scenario_files) {
      for (const harness::Configuration& config : configs) {
        Cell cell;
        cell.checkpoint = checkpoint;
        cell.scenario = ScenarioName(file);
        cell.scenario_file = file;
        cell.config = config;
        cells.push_back(std::move(cell));
      }
    }
  }
  if (cells.empty()) throw std::invalid_argument("the selection leaves nothing to run");
  return cells;
}

std::vector<size_t> StartOrder(const std::vector<Cell>& cells) {
  auto cost = [](const Cell& c) {
    double size = 4;
    if (c.checkpoint.find("tiny") != std::string::npos) size = 1;
    if (c.checkpoint.find("wide") != std::string::npos) size = 16;
    double speed = 1;
    if (c.config.kernels == "reference" || c.config.isa == "scalar") speed = 6;
    // A batched child also decodes its companions (each step reads the
    // weights once, so it costs less than a child per sequence).
    if (c.config.batch > 1) speed *= 1 + c.config.batch / 4.0;
    return c.supported ? size * speed : 0.0;
  };
  std::vector<size_t> order(cells.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost(cells[a]) > cost(cells[b]); });
  return order;
}

const std::string& EngineCheckpoint(const Cell& cell) {
  return cell.engine_checkpoint.empty() ? cell.checkpoint : cell.engine_checkpoint;
}

std::string DumpFileName(const Cell& cell) {
  return store::DumpFileName(cell.checkpoint, cell.scenario, cell.config.name);
}

}  // namespace samebits::runner
