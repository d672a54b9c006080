// Matrix expansion and selection (matrix.h).
#include "harness/runner/matrix.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "engine/kernels/kernels.h"
#include "engine/numerics/hash.h"
#include "harness/runner/batched_name.h"
#include "harness/store/dump_paths.h"

namespace samebits::runner {

const std::vector<std::string>& DefaultCheckpoints() {
  // `gemma` covers the Gemma 2/3 and Llama 3.1 operations (soft-caps,
  // post-norms, GeGLU, local/global RoPE bases, RoPE factors). The quantized variants cover every
  // 32-weight block type on `tiny`, Q8_0 on `medium` (MoE, parallel blocks), and every k-quant on
  // `medium`, the smallest synthetic model whose rows hold whole 256-weight super-blocks (ggml's
  // k-quant quantizers run at every engine start: about half a second each for `medium`).
  static const std::vector<std::string> kCheckpoints = {
      "synthetic:tiny",        "synthetic:gemma",       "synthetic:medium",
      "synthetic:wide",        "synthetic:tiny-q4_0",   "synthetic:tiny-q4_1",
      "synthetic:tiny-q5_0",   "synthetic:tiny-q5_1",   "synthetic:medium-q8_0",
      "synthetic:medium-q4_k", "synthetic:medium-q5_k", "synthetic:medium-q6_k"};
  return kCheckpoints;
}

const std::vector<std::string>& AllIsas() {
  // The engine's ISA table: a new ISA gets its cpu-<isa> cell by itself.
  static const std::vector<std::string> kIsas = kernels::IsaNames();
  return kIsas;
}

std::vector<harness::Configuration> DefaultConfigurations(const std::vector<int>& threads,
                                                          const std::vector<std::string>& math,
                                                          int64_t small_chunk_bytes) {
  std::vector<harness::Configuration> out;
  for (const std::string& profile : math) {
    const std::string suffix = profile == "portable" ? "" : "-" + profile;
    auto add = [&](harness::Configuration c) {
      c.name += suffix;
      c.math = profile;
      out.push_back(std::move(c));
    };
    harness::Configuration reference;
    reference.name = "reference";
    reference.kernels = "reference";
    reference.threads = 1;
    add(reference);
    int max_threads = 1;
    for (int n : threads) {
      harness::Configuration c;
      c.name = "cpu-t" + std::to_string(n);
      c.threads = n;
      max_threads = std::max(max_threads, n);
      add(c);
    }
    // Small GEMV chunks change how rows are shared among threads, never a
    // reduction, so they are run at the most threads, where sharing is most
    // varied.
    harness::Configuration chunked;
    chunked.name = "cpu-t" + std::to_string(max_threads) + "-chunk" +
                   (small_chunk_bytes % 1024 == 0 ? std::to_string(small_chunk_bytes / 1024) + "k"
                                                  : std::to_string(small_chunk_bytes));
    chunked.threads = max_threads;
    chunked.gemv_chunk_bytes = small_chunk_bytes;
    add(chunked);
    for (const std::string& isa : AllIsas()) {
      harness::Configuration c;
      c.name = "cpu-" + isa;
      c.threads = 1;
      c.isa = isa;
      add(c);
    }
    // Batch invariance: the scenario's sequence beside 3 companions that
    // start together, at the second thread count, and beside 7 that join
    // and leave, at the most threads, so batching meets varied row sharing.
    std::vector<int> counts = threads;
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    harness::Configuration together;
    together.name = "cpu-t" + std::to_string(counts.size() > 1 ? counts[1] : counts[0]);
    together.threads = counts.size() > 1 ? counts[1] : counts[0];
    add(Batched(together, 4, 1, "together"));
    harness::Configuration staggered;
    staggered.name = "cpu-t" + std::to_string(max_threads);
    staggered.threads = max_threads;
    add(Batched(staggered, 8, 1, "staggered"));
  }
  return out;
}

std::string ScenarioName(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

namespace {

// The steps of ExpandMatrix, in order.

// Refuses thread counts and math profiles the engine would refuse.
void CheckAxes(const MatrixOptions& options) {
  for (int n : options.threads) {
    if (n < 1 || n > 1024) {
      throw std::invalid_argument("--threads: " + std::to_string(n) +
                                  " is not a thread count (1 to 1024)");
    }
  }
  if (options.threads.empty()) throw std::invalid_argument("--threads: no thread count given");
  if (options.math.empty()) throw std::invalid_argument("--math: no math profile given");
  for (const std::string& m : options.math) {
    if (m != "portable" && m != "libm") {
      throw std::invalid_argument("--math: unknown profile '" + m + "' (portable or libm)");
    }
  }
}

// Returns the configuration `name` among `all`, or a batched form of one of
// them; nothing when it is neither.
std::optional<harness::Configuration> ResolveConfiguration(
    const std::string& name, const std::vector<harness::Configuration>& all) {
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const harness::Configuration& c) { return c.name == name; });
  if (it != all.end()) return *it;
  return ParseBatchedName(name, all);
}

// Refuses an unknown configuration name, listing the ones there are.
[[noreturn]] void RefuseUnknownConfiguration(const std::string& name,
                                             const std::vector<harness::Configuration>& all) {
  std::string message = "--config: unknown configuration '" + name +
                        "'; with these --threads and --math the configurations are: ";
  for (size_t i = 0; i < all.size(); ++i) message += (i > 0 ? ", " : "") + all[i].name;
  message +=
      "; and any cpu one batched, as <base>-b<N>[-staggered][-seed<S>][-<math>] "
      "(cpu-t2-b4, cpu-t3-b8-staggered)";
  throw std::invalid_argument(message);
}

// Adds `chosen` (named `name`) and its twins under every --math profile to
// `configs`, each once (`--config reference --math portable,libm` ran no
// libm cell at all before twins were added).
void AddWithTwins(const std::string& name, const harness::Configuration& chosen,
                  const MatrixOptions& options, const std::vector<harness::Configuration>& all,
                  std::vector<harness::Configuration>& configs) {
  const std::string own_suffix = chosen.math == "portable" ? "" : "-" + chosen.math;
  const std::string base = name.substr(0, name.size() - own_suffix.size());
  for (const std::string& profile : options.math) {
    const std::string twin = base + (profile == "portable" ? "" : "-" + profile);
    const std::optional<harness::Configuration> resolved =
        twin == name ? chosen : ResolveConfiguration(twin, all);
    if (!resolved) {
      throw std::invalid_argument(
          "--config " + name + " with --math " + profile + ": there is no configuration '" + twin +
          "'; name each configuration to run, and leave " + profile + " out of --math");
    }
    if (std::none_of(configs.begin(), configs.end(),
                     [&](const harness::Configuration& c) { return c.name == twin; })) {
      configs.push_back(*resolved);
    }
  }
}

// Returns the configurations --config names (with their twins), or all.
std::vector<harness::Configuration> SelectConfigurations(const MatrixOptions& options) {
  const std::vector<harness::Configuration> all =
      DefaultConfigurations(options.threads, options.math, options.small_chunk_bytes);
  if (options.configs.empty()) return all;
  std::vector<harness::Configuration> configs;
  for (const std::string& name : options.configs) {
    const std::optional<harness::Configuration> chosen = ResolveConfiguration(name, all);
    if (!chosen) RefuseUnknownConfiguration(name, all);
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

std::vector<Cell> ExpandMatrix(const MatrixOptions& options,
                               const std::vector<std::string>& available_isas,
                               const std::string& arch) {
  CheckAxes(options);
  const std::vector<harness::Configuration> configs = SelectConfigurations(options);
  const std::vector<std::string>& checkpoints =
      options.checkpoints.empty() ? DefaultCheckpoints() : options.checkpoints;
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
        if (config.isa != "auto" && std::find(available_isas.begin(), available_isas.end(),
                                              config.isa) == available_isas.end()) {
          cell.supported = false;
          cell.unsupported_reason = "this machine (" + arch + ") or this build lacks " + config.isa;
        }
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

std::vector<std::string> ConfigurationArguments(const harness::Configuration& c, bool trace) {
  std::vector<std::string> args = {
      "run",   "--kernels", c.kernels, "--threads", std::to_string(c.threads),
      "--isa", c.isa,       "--math",  c.math};
  if (c.gemv_chunk_bytes > 0) {
    args.push_back("--gemv-chunk-bytes");
    args.push_back(std::to_string(c.gemv_chunk_bytes));
  }
  // Only a batched configuration names a batch, so an unbatched command
  // line is what it always was (and an engine without --batch still runs it).
  if (c.batch > 1) {
    args.insert(args.end(), {"--batch", std::to_string(c.batch), "--batch-seed",
                             std::to_string(c.batch_seed), "--batch-schedule", c.batch_schedule});
  }
  if (trace) args.push_back("--trace");
  return args;
}

std::vector<std::string> CellOwnArguments(const Cell& cell, const std::string& dump_file) {
  std::vector<std::string> args = {"--checkpoint", EngineCheckpoint(cell), "--scenario",
                                   cell.scenario_file};
  if (!dump_file.empty()) {
    args.push_back("--dump-logits");
    args.push_back(dump_file);
  }
  return args;
}

std::vector<std::string> EngineArguments(const Cell& cell, bool trace,
                                         const std::string& dump_file) {
  // "run", the cell's checkpoint and scenario, the configuration, then the
  // dump: the order every child has been given.
  const std::vector<std::string> config = ConfigurationArguments(cell.config, trace);
  const std::vector<std::string> own = CellOwnArguments(cell);
  std::vector<std::string> args = {config.front()};
  args.insert(args.end(), own.begin(), own.end());
  args.insert(args.end(), config.begin() + 1, config.end());
  if (!dump_file.empty()) {
    args.push_back("--dump-logits");
    args.push_back(dump_file);
  }
  return args;
}

std::string DumpFileName(const Cell& cell) {
  return store::DumpFileName(cell.checkpoint, cell.scenario, cell.config.name);
}

}  // namespace samebits::runner
