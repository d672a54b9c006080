// `bench`'s preflight (bench_preflight.h).
#include "engine/cli/bench_preflight.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "engine/platform/machine.h"

namespace samebits::cli {
namespace {}  // namespace

MachineLoad MeasureMachineLoad() {
  MachineLoad p;
  p.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::ifstream("/proc/loadavg") >> p.load1;
  uint64_t b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (platform::ReadCpuTimes(&b0, &t0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (platform::ReadCpuTimes(&b1, &t1) && t1 > t0) p.busy_percent = 100.0 * (b1 - b0) / (t1 - t0);
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t value = 0, swap_total = 0, swap_free = 0;
  std::string unit;
  while (meminfo >> key >> value) {
    std::getline(meminfo, unit);
    if (key == "SwapTotal:") swap_total = value;
    if (key == "SwapFree:") swap_free = value;
  }
  p.swap_used_mib = (swap_total - swap_free) / 1024;
  return p;
}

std::vector<std::string> PreflightWarnings(const MachineLoad& p, int max_threads) {
  std::vector<std::string> warnings;
  char line[400];
  if (p.load1 > 0.5 * p.cores) {
    std::snprintf(line, sizeof line,
                  "load average %.2f on %d cores: other work is running, so these timings will "
                  "be slow and noisy. Wait until `uptime` shows a load below %.1f (or stop the "
                  "other jobs) and run bench again.",
                  p.load1, p.cores, 0.5 * p.cores);
    warnings.push_back(line);
  }
  if (p.busy_percent > 25.0) {
    std::snprintf(line, sizeof line,
                  "other processes used %.0f%% of the CPU just before the runs: find them with "
                  "`top` and stop them, or expect slower, noisier figures.",
                  p.busy_percent);
    warnings.push_back(line);
  }
  if (p.swap_used_mib > 64) {
    std::snprintf(line, sizeof line,
                  "%lld MiB of swap in use: weights may be paged out between runs. Free memory "
                  "(close programs) so that the checkpoint stays resident.",
                  static_cast<long long>(p.swap_used_mib));
    warnings.push_back(line);
  }
  if (max_threads > p.cores) {
    std::snprintf(line, sizeof line,
                  "%d threads requested on %d cores: threads will wait for each other and "
                  "timings will be noisy; use at most --threads %d.",
                  max_threads, p.cores, p.cores);
    warnings.push_back(line);
  }
  return warnings;
}

}  // namespace samebits::cli
