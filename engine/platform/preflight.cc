// The busy-machine preflight (preflight.h).
#include "engine/platform/preflight.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "engine/platform/machine.h"

namespace samebits::platform {
namespace {

std::string Format(const char* format, double a, double b = 0, double c = 0) {
  char line[512];
  std::snprintf(line, sizeof line, format, a, b, c);
  return line;
}

}  // namespace

MachineReadings ReadMachine() {
  MachineReadings r;
  r.cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  double load = 0;
  if (std::ifstream("/proc/loadavg") >> load) r.load1 = load;
  uint64_t b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (ReadCpuTimes(&b0, &t0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (ReadCpuTimes(&b1, &t1) && t1 > t0) {
      r.busy_percent = 100.0 * static_cast<double>(b1 - b0) / static_cast<double>(t1 - t0);
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t value = 0;
  std::optional<int64_t> swap_total, swap_free;
  while (meminfo >> key >> value) {
    std::getline(meminfo, unit);
    if (key == "SwapTotal:") swap_total = value;
    if (key == "SwapFree:") swap_free = value;
    if (key == "MemAvailable:") r.mem_available_mib = value / 1024;
    if (key == "MemTotal:") r.mem_total_mib = value / 1024;
  }
  if (swap_total && swap_free) r.swap_used_mib = (*swap_total - *swap_free) / 1024;
  std::string governor;
  if (std::ifstream("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") >> governor) {
    r.governor = governor;
  }
  return r;
}

PreflightVerdict AssessMachine(const MachineReadings& r, const PreflightLimits& limits) {
  PreflightVerdict v;
  std::ostringstream summary;
  summary << r.cores << " cores";
  if (r.load1) {
    summary << ", load average " << *r.load1;
    const double limit = limits.max_load_per_core * r.cores;
    if (*r.load1 > limit) {
      v.reasons.push_back(Format(
          "load average %.2f on %.0f cores: other work is running. Wait until `uptime` shows "
          "a load below %.1f (or stop the other jobs).",
          *r.load1, r.cores, limit));
    }
  }
  if (r.busy_percent) {
    summary << ", other processes " << static_cast<int>(*r.busy_percent + 0.5) << "% CPU";
    if (*r.busy_percent > limits.max_busy_percent) {
      v.reasons.push_back(Format(
          "other processes used %.0f%% of the CPU just before the runs: find them with `top` "
          "and stop them.",
          *r.busy_percent));
    }
  }
  if (r.swap_used_mib) {
    summary << ", swap in use " << *r.swap_used_mib << " MiB";
    if (*r.swap_used_mib > limits.max_swap_used_mib) {
      v.reasons.push_back(Format(
          "%.0f MiB of swap in use: the engine's weights may be paged out between runs. Free "
          "memory (close programs) or run `swapoff -a && swapon -a` as root.",
          static_cast<double>(*r.swap_used_mib)));
    }
  }
  if (r.mem_available_mib && r.mem_total_mib && *r.mem_total_mib > 0) {
    summary << ", " << *r.mem_available_mib << " of " << *r.mem_total_mib << " MiB free";
    const double fraction =
        static_cast<double>(*r.mem_available_mib) / static_cast<double>(*r.mem_total_mib);
    if (fraction < limits.min_available_fraction) {
      v.reasons.push_back(
          Format("only %.0f MiB of %.0f MiB memory available: the page cache cannot hold the "
                 "checkpoint. Close programs first.",
                 static_cast<double>(*r.mem_available_mib), static_cast<double>(*r.mem_total_mib)));
    }
  }
  if (r.governor) {
    summary << ", governor " << *r.governor;
    if (*r.governor != "performance") {
      v.reasons.push_back("the CPU frequency governor is `" + *r.governor +
                          "`: the clock follows the load, so the first runs are slower. Set "
                          "`performance` (cpupower frequency-set -g performance) while timing.");
    }
  }
  if (limits.threads > r.cores) {
    v.reasons.push_back(Format(
        "%.0f threads requested on %.0f cores: threads will wait for each other. Use at most "
        "%.0f threads.",
        limits.threads, r.cores, r.cores));
  }
  v.busy = !v.reasons.empty();
  v.summary = summary.str();
  return v;
}

}  // namespace samebits::platform
