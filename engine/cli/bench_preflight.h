// `bench`'s preflight: what the machine is doing besides us, measured
// before the timed runs, and the warnings it calls for, as values (the
// output step prints them), so the rules can be read and tested apart from
// /proc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace samebits::cli {

struct MachineLoad {
  int cores = 1;
  double load1 = 0.0;
  double busy_percent = 0.0;  // of all cores, over half a second
  int64_t swap_used_mib = 0;
};

// Reads the load average, the CPU time other processes used over half a
// second (/proc/stat) and the swap in use (/proc/meminfo).
MachineLoad MeasureMachineLoad();

// Returns one warning per reason the timings would be slow or noisy: a load
// above half the cores, other processes busy over 25%, more than 64 MiB of
// swap in use, or more threads asked for than there are cores. Empty: quiet.
std::vector<std::string> PreflightWarnings(const MachineLoad& load, int max_threads);

}  // namespace samebits::cli
