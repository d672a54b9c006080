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

SyntheticCache::SyntheticCache() {
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "samebits-synthetic-XXXXXX").string();
  if (!ec && ::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

SyntheticCache::~SyntheticCache() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

harness::RunResult RunMatrix(const MatrixRunOptions& options, const std::vector<Cell>& cells,
                             bool trace, bool quiet) {
  RunnerOptions runner;
  runner.engine = EnginePath(options);
  runner.profile = options.selection.profile.get();
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
  run.cells = RunCells(cells, options.jobs, quiet ? nullptr : &progress, [&](const Cell& cell) {
    harness::MachineInfo platform;
    harness::CellResult result = RunCell(cell, runner, &platform);
    result.dump_path = store::StoredDumpPath(result.dump_path, options.selection.root);
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
    text += (text.empty() ? "" : "; ") + checkpoint + ": " + message;
  }
  if (!text.empty()) {
    throw RunError("the engine refused every cell of the selection (nothing was run or stored): " +
                   text);
  }
}

}  // namespace samebits::runner
