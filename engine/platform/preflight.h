// Is this machine quiet enough to time anything? The one preflight of both
// programs' benches: `samebits bench` reads the machine once before its runs
// and refuses (exit 2, unless --force) when other work would make the
// figures meaningless, `samebits-engine bench` prints the same reasons as
// warnings. The reasons: a high load average, other processes using the
// CPU, swap in use, little free memory, a CPU frequency governor that scales
// the clock with the load, or more threads than cores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace samebits::platform {

// What the machine was doing, as read from /proc and /sys (or injected by a
// test). An optional reading is absent when its file was unreadable.
struct MachineReadings {
  int cores = 1;
  std::optional<double> load1;         // /proc/loadavg
  std::optional<double> busy_percent;  // all cores, over half a second (/proc/stat)
  std::optional<int64_t> swap_used_mib;
  std::optional<int64_t> mem_available_mib;  // /proc/meminfo MemAvailable
  std::optional<int64_t> mem_total_mib;
  std::optional<std::string> governor;  // cpu0's cpufreq scaling_governor
};

struct PreflightLimits {
  double max_load_per_core = 0.5;
  double max_busy_percent = 25;
  int64_t max_swap_used_mib = 64;
  double min_available_fraction = 0.10;  // of total memory
  int threads = 1;                       // the most threads a run uses
};

struct PreflightVerdict {
  bool busy = false;
  // One sentence per reason, each saying what to do.
  std::vector<std::string> reasons;
  // The readings in one line, for the report ("load 0.12 on 2 cores, ...").
  std::string summary;
};

// Returns the machine's readings now (this takes half a second: the CPU
// use is measured over that time).
MachineReadings ReadMachine();

// Returns whether the readings show a busy machine, and why (pure).
PreflightVerdict AssessMachine(const MachineReadings& readings, const PreflightLimits& limits);

}  // namespace samebits::platform
