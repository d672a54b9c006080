// Running a selection as one run (matrix_run.h).
#include "harness/runner/matrix_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>

#include "harness/analysis/terminal_guard.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/machine.h"
#include "harness/runner/run_error.h"
#include "harness/runner/scheduler.h"
#include "harness/runner/shared_child.h"
#include "harness/runner/unavailable.h"
#include "harness/store/dump_paths.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string EnginePath(const MatrixRunOptions& options) {
  const std::string& path = options.engine;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0) {
    throw RunError(
        "no engine program at " + path +
        (options.engine_given
             ? " (--engine must name an executable file)"
             : " (build it: cmake --build build --target samebits-engine; or pass --engine PATH)"));
  }
  return fs::absolute(path).string();
}

std::string NowUtc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string NewDumpDirectory(const std::string& parent) {
  std::string stamp = NowUtc();  // "2026-11-29T23:10:28Z" -> "20261129T231028Z"
  stamp.erase(
      std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }),
      stamp.end());
  const fs::path dir =
      fs::absolute(parent) / "dumps" / ("run-" + stamp + "-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw RunError("cannot create the logit dump folder " + dir.string() + ": " + ec.message());
  }
  return dir.string();
}

std::vector<std::vector<size_t>> CellGroups(const std::vector<Cell>& cells, int cells_per_child) {
  std::vector<std::vector<size_t>> groups;
  if (cells_per_child <= 1) {
    for (size_t i : StartOrder(cells)) groups.push_back({i});
    return groups;
  }
  // Per configuration (in the order first met), its supported cells.
  std::vector<std::string> names;
  std::map<std::string, std::vector<size_t>> by_config;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].supported) {
      groups.push_back({i});
      continue;
    }
    auto [it, fresh] = by_config.try_emplace(cells[i].config.name);
    if (fresh) names.push_back(cells[i].config.name);
    it->second.push_back(i);
  }
  for (const std::string& name : names) {
    const std::vector<size_t>& all = by_config[name];
    for (size_t begin = 0; begin < all.size(); begin += static_cast<size_t>(cells_per_child)) {
      const size_t end = std::min(all.size(), begin + static_cast<size_t>(cells_per_child));
      groups.emplace_back(all.begin() + begin, all.begin() + end);
    }
  }
  // The costliest first, by StartOrder's guess: its rank among the cells.
  const std::vector<size_t> order = StartOrder(cells);
  std::vector<double> weight(cells.size(), 0);
  for (size_t rank = 0; rank < order.size(); ++rank) {
    weight[order[rank]] = static_cast<double>(order.size() - rank);
  }
  std::vector<double> cost(groups.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i : groups[g]) cost[g] += weight[i];
  }
  std::vector<size_t> by_cost(groups.size());
  for (size_t g = 0; g < by_cost.size(); ++g) by_cost[g] = g;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<std::vector<size_t>> sorted;
  sorted.reserve(by_cost.size());
  for (size_t g : by_cost) sorted.push_back(std::move(groups[g]));
  return sorted;
}

namespace {

// Returns whether the engine says, in its probe's `capabilities` record,
// that it serves several cells per child (no probe: it does not).
bool EngineServes(const MatrixRunOptions& options, const std::string& engine) {
  if (options.probe.empty()) return false;
  std::string why;
  const std::optional<protocol::Capabilities> capabilities =
      ProbeEngine(engine, options.probe, &why);
  return capabilities && capabilities->serve;
}

}  // namespace

harness::RunResult RunMatrix(const MatrixRunOptions& options, const std::vector<Cell>& cells,
                             bool trace, bool quiet) {
  RunnerOptions runner;
  runner.engine = EnginePath(options);
  runner.profile = options.selection.profile.get();
  runner.own_profile = options.selection.own_profile.get();
  if (runner.profile == nullptr && options.cells_per_child > 1 &&
      EngineServes(options, runner.engine)) {
    runner.cells_per_child = options.cells_per_child;
  }
  runner.timeout_seconds = options.timeout_seconds;
  runner.trace = trace;
  if (options.dump_logits) runner.dump_dir = NewDumpDirectory(options.dump_parent);
  // Each synthetic checkpoint is synthesised once per run, not once per
  // cell; the folder (and its files, hundreds of MB) goes with the run.
  const SyntheticCache cache;
  runner.synthetic_cache_dir = cache.path();
  harness::RunResult run;
  run.started_at = NowUtc();
  run.command = options.command_line;
  run.machine = LocalMachine();
  run.machine_name = options.machine_name;
  std::mutex machine_mutex;
  bool have_hello = false;
  const auto start = std::chrono::steady_clock::now();
  // On a terminal the progress line moves the cursor: it writes to the
  // unguarded stream and escapes what it prints itself.
  const bool terminal = !quiet && ::isatty(2) != 0;
  ConsoleProgress progress(terminal ? harness::TerminalControlStream() : stderr, terminal);
  const auto keep_machine = [&](const harness::MachineInfo& platform) {
    if (platform.arch.empty()) return;
    std::lock_guard<std::mutex> lock(machine_mutex);
    if (!have_hello) {
      // The machine as the engine describes it (the libc it runs on, its
      // view of the CPU), which is what the outputs depend on.
      run.machine = platform;
      have_hello = true;
    }
  };
  const auto stored = [&](harness::CellResult result) {
    result.dump_path = store::StoredDumpPath(result.dump_path, options.selection.root);
    return result;
  };
  // A run that fails while its cells run leaves no dump behind.
  struct DumpFolder {
    const std::string& dir;
    bool done = false;
    ~DumpFolder() {
      std::error_code ec;
      if (!done && !dir.empty()) fs::remove_all(dir, ec);
    }
  } dump_folder{runner.dump_dir};
  run.cells = RunCellGroups(
      cells, CellGroups(cells, runner.cells_per_child), options.jobs, quiet ? nullptr : &progress,
      [&](const std::vector<size_t>& group, const GroupProgress& report) {
        harness::MachineInfo platform;
        if (group.size() == 1) {
          report.started(group.front());
          report.finished(group.front(), stored(RunCell(cells[group.front()], runner, &platform)));
        } else {
          GroupProgress storing = report;
          storing.finished = [&](size_t i, harness::CellResult result) {
            report.finished(i, stored(std::move(result)));
          };
          RunCellsShared(cells, group, runner, &platform, storing);
        }
        keep_machine(platform);
      });
  dump_folder.done = true;
  progress.Finish();
  // A dump folder in which no cell kept a whole dump does not outlive the
  // run (remove() takes only an empty folder).
  std::error_code ec;
  if (!runner.dump_dir.empty()) fs::remove(runner.dump_dir, ec);
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
    text += text.empty() ? "" : "; ";
    text += checkpoint;
    text += ": ";
    text += message;
  }
  if (!text.empty()) {
    throw RunError("the engine refused every cell of the selection (nothing was run or stored): " +
                   text);
  }
}

}  // namespace samebits::runner
