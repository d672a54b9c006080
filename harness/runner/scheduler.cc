// The parallel scheduler and the console progress display (scheduler.h).
#include "harness/runner/scheduler.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "harness/analysis/terminal_text.h"

namespace samebits::runner {

using Clock = std::chrono::steady_clock;

std::string CellLabel(const Cell& cell) {
  return cell.checkpoint + " " + cell.scenario + " " + cell.config.name;
}

std::string CellLabel(const harness::CellResult& cell) {
  return cell.checkpoint + " " + cell.scenario + " " + cell.config.name;
}

std::vector<harness::CellResult> RunCells(
    const std::vector<Cell>& cells, int jobs, ProgressSink* progress,
    const std::function<harness::CellResult(const Cell&)>& run_one) {
  std::vector<std::vector<size_t>> groups;
  for (size_t i : StartOrder(cells)) groups.push_back({i});
  return RunCellGroups(cells, groups, jobs, progress,
                       [&](const std::vector<size_t>& group, const GroupProgress& report) {
                         report.started(group.front());
                         report.finished(group.front(), run_one(cells[group.front()]));
                       });
}

std::vector<harness::CellResult> RunCellGroups(
    const std::vector<Cell>& cells, const std::vector<std::vector<size_t>>& groups, int jobs,
    ProgressSink* progress,
    const std::function<void(const std::vector<size_t>& group, const GroupProgress& progress)>&
        run_group) {
  std::vector<harness::CellResult> results(cells.size());
  std::vector<bool> final(cells.size(), false);
  const int workers = std::max(1, std::min<int>(jobs, static_cast<int>(groups.size())));
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable all_done;
  int finished = 0;
  const int total = static_cast<int>(cells.size());
  // Start times of running cells, for the "slowest child" display.
  std::map<size_t, Clock::time_point> running;

  GroupProgress report;
  report.started = [&](size_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    running[i] = Clock::now();
  };
  report.finished = [&](size_t i, harness::CellResult result) {
    std::lock_guard<std::mutex> lock(mutex);
    if (final[i]) return;
    running.erase(i);
    results[i] = std::move(result);
    final[i] = true;
    ++finished;
    if (progress != nullptr) progress->CellFinished(results[i], finished, total);
    if (finished == total) all_done.notify_all();
  };
  auto worker = [&] {
    for (;;) {
      const size_t n = next.fetch_add(1);
      if (n >= groups.size()) return;
      std::string failure = "the harness lost this cell's result";
      try {
        run_group(groups[n], report);
      } catch (const std::exception& e) {
        // A harness-side failure for one group must not lose the others.
        failure = std::string("the harness could not run this cell: ") + e.what();
      }
      for (size_t i : groups[n]) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (final[i]) continue;
        }
        harness::CellResult result;
        result.checkpoint = cells[i].checkpoint;
        result.scenario = cells[i].scenario;
        result.config = cells[i].config;
        result.code = harness::ResultCode::kUnresolved;
        result.message = failure;
        report.finished(i, std::move(result));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(worker);
  {
    std::unique_lock<std::mutex> lock(mutex);
    while (finished < total) {
      all_done.wait_for(lock, std::chrono::milliseconds(200));
      if (progress != nullptr && !running.empty()) {
        auto oldest = running.begin();
        for (auto it = running.begin(); it != running.end(); ++it) {
          if (it->second < oldest->second) oldest = it;
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - oldest->second).count();
        progress->Tick(CellLabel(cells[oldest->first]), seconds);
      }
    }
  }
  for (std::thread& t : threads) t.join();
  return results;
}

ConsoleProgress::ConsoleProgress(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

ConsoleProgress::~ConsoleProgress() {
  Finish();
}

void ConsoleProgress::CellFinished(const harness::CellResult& result, int done, int total) {
  done_ = done;
  total_ = total;
  ++counts_[static_cast<int>(result.code)];
  if (terminal_) {
    // Failures are worth a line of their own even on a terminal.
    if (harness::IsFailure(result.code)) {
      // On a terminal `out_` is the unguarded stream (terminal_guard.h):
      // names and messages are escaped here.
      std::fprintf(out_, "\r\033[K%s: %s (%s)\n", harness::ResultCodeName(result.code),
                   harness::TerminalSafe(CellLabel(result)).c_str(),
                   harness::TerminalSafe(result.message).c_str());
    }
    Draw();
  } else {
    std::fprintf(out_, "%s: %s (%d of %d, %.0f ms)%s%s\n", harness::ResultCodeName(result.code),
                 CellLabel(result).c_str(), done, total, result.elapsed_ms,
                 result.message.empty() ? "" : ": ", result.message.c_str());
  }
  std::fflush(out_);
}

void ConsoleProgress::Tick(const std::string& slowest, double slowest_seconds) {
  slowest_ = slowest;
  slowest_seconds_ = slowest_seconds;
  if (terminal_) {
    Draw();
    std::fflush(out_);
  }
}

void ConsoleProgress::Draw() {
  std::string counts;
  for (const harness::ResultCodeInfo& info : harness::kResultCodes) {
    const int n = counts_[static_cast<int>(info.code)];
    if (n == 0) continue;
    counts.append(" ").append(info.name).append(" ").append(std::to_string(n));
  }
  std::fprintf(out_, "\r\033[K[%d/%d]%s", done_, total_, counts.c_str());
  if (!slowest_.empty() && done_ < total_) {
    std::fprintf(out_, "  slowest running: %s %.1f s", harness::TerminalSafe(slowest_).c_str(),
                 slowest_seconds_);
  }
  drawn_ = true;
}

void ConsoleProgress::Finish() {
  if (terminal_ && drawn_) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
    drawn_ = false;
  }
}

}  // namespace samebits::runner
