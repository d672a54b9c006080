// The shared matrix flags (matrix_flags.h).
#include "harness/cli/matrix_flags.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "harness/analysis/judge.h"
#include "harness/cli/commands.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/machine.h"
#include "harness/runner/scheduler.h"
#include "harness/runner/suite.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ScenarioFiles(const MatrixFlags& flags) {
  const std::string dir = flags.scenarios_dir.empty() ? GetPaths().scenarios : flags.scenarios_dir;
  std::vector<std::string> all;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".json" && e.path().filename() != runner::kSuiteFileName) {
        all.push_back(e.path().string());
      }
    }
  }
  std::sort(all.begin(), all.end());
  if (flags.scenarios.empty()) {
    if (all.empty()) {
      throw UsageError("no scenarios: " + dir +
                       " holds no *.json files (pass --scenarios-dir or --scenario FILE)");
    }
    return all;
  }
  std::vector<std::string> chosen;
  for (const std::string& s : flags.scenarios) {
    if (s.find('/') != std::string::npos || (s.size() > 5 && s.ends_with(".json"))) {
      if (!fs::is_regular_file(s, ec)) throw UsageError("--scenario: no such file " + s);
      chosen.push_back(s);
      continue;
    }
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const std::string& f) { return runner::ScenarioName(f) == s; });
    if (it == all.end()) {
      std::string known;
      for (const std::string& f : all)
        known += (known.empty() ? "" : ", ") + runner::ScenarioName(f);
      throw UsageError(
          "--scenario: no scenario named '" + s + "' in " + dir +
          (known.empty() ? std::string(" (it holds none)") : " (known: " + known + ")"));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

}  // namespace

void AddMatrixFlags(CLI::App* sub, MatrixFlags* flags) {
  sub->add_option("--engine", flags->engine,
                  "Drives this program instead of the samebits-engine next to samebits; any "
                  "program that speaks engine/protocol/PROTOCOL.md will do.")
      ->type_name("PATH");
  sub->add_option("--checkpoint", flags->checkpoints,
                  "Runs these checkpoints (comma-separated specs such as synthetic:tiny or a "
                  "file path) instead of synthetic:tiny, synthetic:medium and synthetic:wide.")
      ->type_name("SPEC,...")
      ->delimiter(',');
  sub->add_option("--scenario", flags->scenarios,
                  "Runs these scenarios (names from the scenarios folder, or paths to JSON "
                  "files) instead of every scenario in the folder.")
      ->type_name("NAME,...")
      ->delimiter(',');
  sub->add_option("--suite", flags->suite,
                  "Runs the pairs of checkpoints and scenarios this suite file lists (such as "
                  "scenarios/real/suite.json) instead of the synthetic matrix; --checkpoint and "
                  "--scenario then narrow the suite. Without any selection flag the synthetic "
                  "matrix and scenarios/real/suite.json both run.")
      ->type_name("FILE");
  sub->add_option("--scenarios-dir", flags->scenarios_dir,
                  "Takes scenarios from this folder instead of the project's scenarios/.")
      ->type_name("DIR");
  sub->add_option("--config", flags->configs,
                  "Runs only these configurations (comma-separated names such as reference, "
                  "cpu-t2, cpu-t3-chunk8k, cpu-avx2; `samebits run --list` shows them).")
      ->type_name("NAME,...")
      ->delimiter(',');
  sub->add_option("--threads", flags->threads,
                  "Makes one cpu-tN configuration per thread count given (default 1,2,3); the "
                  "small-chunk configuration uses the largest.")
      ->type_name("N,...")
      ->delimiter(',');
  sub->add_option("--math", flags->math,
                  "Runs every configuration under each of these math profiles (portable, libm); "
                  "default portable. Profiles are compared only within themselves.")
      ->type_name("PROFILE,...")
      ->delimiter(',');
  sub->add_option("-j,--jobs", flags->jobs,
                  "Runs up to N children at once (default: the number of cores).")
      ->type_name("N");
  sub->add_option("--timeout", flags->timeout_seconds,
                  "Kills a child (and its process group) that runs longer than this; it counts "
                  "as TIMEOUT (default 120).")
      ->type_name("SECONDS");
  sub->add_option("--db", flags->db,
                  "Stores runs in this SQLite database instead of .samebits/samebits.db under "
                  "the project root (created on first use).")
      ->type_name("PATH");
  sub->add_option("--references-dir", flags->references_dir,
                  "Reads references from this folder instead of the project's references/.")
      ->type_name("DIR");
}

void AddDumpFlag(CLI::App* sub, MatrixFlags* flags) {
  sub->add_flag("--dump-logits", flags->dump_logits,
                "Asks every child for its raw logits (float32, one row per step) and keeps them "
                "in .samebits/dumps/run-<time>-<pid>/ next to the database, one file per cell "
                "(<checkpoint>.<scenario>.<configuration>.f32); reports then give ULP distances "
                "and whether the argmax changed where outputs differ.");
}

std::string NewDumpDirectory(const MatrixFlags& flags) {
  const std::string db = flags.db.empty() ? GetPaths().db : flags.db;
  const fs::path parent = fs::absolute(fs::path(db)).parent_path();
  std::string stamp = NowUtc();  // "2026-11-29T23:10:28Z" -> "20261129T231028Z"
  stamp.erase(
      std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }),
      stamp.end());
  const fs::path dir = parent / "dumps" / ("run-" + stamp + "-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw UsageError("cannot create the logit dump folder " + dir.string() + ": " + ec.message());
  }
  return dir.string();
}

std::string StoredDumpPath(const std::string& path) {
  if (path.empty()) return path;
  const fs::path absolute = fs::absolute(path).lexically_normal();
  const fs::path root = fs::absolute(GetPaths().root).lexically_normal();
  const fs::path relative = absolute.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return absolute.string();
  return relative.string();
}

std::string DefaultSuitePath() {
  return (fs::path(GetPaths().scenarios) / "real" / runner::kSuiteFileName).string();
}

std::vector<runner::Cell> SelectCells(const MatrixFlags& flags) {
  const bool default_selection = flags.suite.empty() && flags.checkpoints.empty() &&
                                 flags.scenarios.empty() && flags.scenarios_dir.empty();
  runner::MatrixOptions options;
  options.configs = flags.configs;
  options.threads = flags.threads;
  options.math = flags.math;
  const std::vector<std::string> isas = runner::MachineIsas();
  const std::string arch = runner::LocalMachine().arch;
  try {
    std::optional<runner::Suite> suite;
    std::error_code ec;
    if (!flags.suite.empty()) {
      suite = runner::LoadSuite(flags.suite);
    } else if (flags.scenarios_dir.empty() && fs::is_regular_file(DefaultSuitePath(), ec)) {
      suite = runner::LoadSuite(DefaultSuitePath());
    }
    // A --checkpoint file is relative to the working folder, as for every
    // command-line tool; cells are keyed by the file relative to the root
    // (runner::ResolveCheckpoint). Without --suite, a --checkpoint naming a
    // file the default suite lists selects its pairs there (its scenarios
    // live in scenarios/real), so the commands the gate prints for one pair
    // work.
    std::vector<std::string> matrix_checkpoints, suite_checkpoints;
    std::map<std::string, std::string> engine_specs;  // key -> the spec the engine gets
    for (const std::string& c : flags.checkpoints) {
      const runner::ResolvedCheckpoint r =
          runner::ResolveCheckpoint(c, fs::current_path(ec).string(), GetPaths().root);
      engine_specs[r.key] = r.engine_spec;
      const bool in_suite =
          !flags.suite.empty() ||
          (suite && std::any_of(suite->pairs.begin(), suite->pairs.end(),
                                [&](const runner::SuitePair& p) {
                                  return runner::ResolveSuiteCheckpoint(*suite, p, GetPaths().root)
                                             .key == r.key;
                                }));
      (in_suite ? suite_checkpoints : matrix_checkpoints).push_back(r.key);
    }
    std::vector<runner::Cell> cells;
    const bool run_matrix =
        flags.suite.empty() && (flags.checkpoints.empty() || !matrix_checkpoints.empty());
    if (run_matrix) {
      options.checkpoints = matrix_checkpoints;
      options.scenario_files = ScenarioFiles(flags);
      cells = runner::ExpandMatrix(options, isas, arch);
      for (runner::Cell& cell : cells) {
        const auto it = engine_specs.find(cell.checkpoint);
        if (it != engine_specs.end() && it->second != cell.checkpoint) {
          cell.engine_checkpoint = it->second;
        }
      }
    }
    const bool run_suite =
        suite && (!flags.suite.empty() || default_selection || !suite_checkpoints.empty());
    if (run_suite) {
      std::vector<runner::Cell> more =
          runner::ExpandSuite(*suite, options, suite_checkpoints,
                              default_selection ? std::vector<std::string>{} : flags.scenarios,
                              GetPaths().root, isas, arch);
      for (runner::Cell& c : more) cells.push_back(std::move(c));
    }
    return cells;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::string EnginePath(const MatrixFlags& flags) {
  const std::string path = flags.engine.empty() ? GetPaths().engine : flags.engine;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0) {
    throw UsageError(
        "no engine program at " + path +
        (flags.engine.empty()
             ? " (build it: cmake --build build --target samebits-engine; or pass --engine PATH)"
             : " (--engine must name an executable file)"));
  }
  return fs::absolute(path).string();
}

harness::RunResult RunMatrix(const MatrixFlags& flags, const std::vector<runner::Cell>& cells,
                             bool trace, bool quiet) {
  runner::RunnerOptions options;
  options.engine = EnginePath(flags);
  options.timeout_seconds = flags.timeout_seconds;
  options.trace = trace;
  if (flags.timeout_seconds <= 0) throw UsageError("--timeout must be positive");
  if (flags.dump_logits) options.dump_dir = NewDumpDirectory(flags);
  const int jobs = flags.jobs > 0 ? flags.jobs : std::max(1u, std::thread::hardware_concurrency());
  harness::RunResult run;
  run.started_at = NowUtc();
  run.command = CommandLine();
  run.machine = runner::LocalMachine();
  std::mutex machine_mutex;
  bool have_hello = false;
  const auto start = std::chrono::steady_clock::now();
  runner::ConsoleProgress progress(stderr, !quiet && ::isatty(2) != 0);
  run.cells =
      runner::RunCells(cells, jobs, quiet ? nullptr : &progress, [&](const runner::Cell& cell) {
        harness::MachineInfo platform;
        harness::CellResult result = runner::RunCell(cell, options, &platform);
        result.dump_path = StoredDumpPath(result.dump_path);
        if (!platform.arch.empty()) {
          std::lock_guard<std::mutex> lock(machine_mutex);
          if (!have_hello) {
            // The machine as the engine describes it (the libc it runs on, its
            // view of the CPU), which is what the outputs depend on.
            run.machine = platform;
            have_hello = true;
          }
        }
        return result;
      });
  progress.Finish();
  // A dump folder in which no cell kept a whole dump does not outlive the
  // run (remove() takes only an empty folder).
  std::error_code ec;
  if (!options.dump_dir.empty()) fs::remove(options.dump_dir, ec);
  run.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return run;
}

void RefuseUnrunnableSelection(const harness::RunResult& run) {
  // Per checkpoint: the message of its first refused cell, and whether
  // every cell that was run was refused.
  std::vector<std::string> order;
  std::map<std::string, std::pair<bool, std::string>> refused;
  for (const harness::CellResult& c : run.cells) {
    if (c.code == harness::ResultCode::kUnsupported) continue;
    const bool was_refused =
        !c.build && c.signal == 0 && c.exit_code == 2 && c.code == harness::ResultCode::kUnresolved;
    auto [it, fresh] = refused.try_emplace(c.checkpoint, true, c.message);
    if (fresh) order.push_back(c.checkpoint);
    it->second.first = it->second.first && was_refused;
  }
  std::string text;
  for (const std::string& checkpoint : order) {
    const auto& [all, message] = refused[checkpoint];
    if (!all) continue;
    text += (text.empty() ? "" : "; ") + checkpoint + ": " + message;
  }
  if (!text.empty()) {
    throw UsageError(
        "the engine refused every cell of the selection (nothing was run or stored): " + text);
  }
}

std::string ReferencesDir(const MatrixFlags& flags) {
  return flags.references_dir.empty() ? GetPaths().references : flags.references_dir;
}

harness::JudgeOptions JudgeOptionsFor(const harness::RunResult& run, const MatrixFlags& flags) {
  const std::string dir = ReferencesDir(flags);
  harness::JudgeOptions options;
  for (const std::string& key : harness::NeededReferenceKeys(run)) {
    try {
      if (auto group = harness::LoadReferenceGroup(dir, key)) {
        options.references[key] = std::move(*group);
      }
    } catch (const harness::ReferenceError& e) {
      throw UsageError(e.what());
    }
  }
  options.references_dir = DisplayPath(dir);
  options.samebits = GetPaths().program_display;
  return options;
}

}  // namespace samebits::cli
