// `bench`'s statistics: the spread of timings and the identity verdict over
// the hashes every run recorded. Pure functions of the recorded values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace samebits::cli {

// What one configuration recorded over its runs.
struct BenchRecord {
  std::string label;  // "reference", "cpu 2 threads"
  bool reference = false;
  std::vector<double> decode_ms;                     // per token, one entry per run
  std::vector<double> prefill_ms;                    // per prompt, one entry per run
  std::vector<std::vector<uint64_t>> decode_hashes;  // per run, per step
  std::vector<uint64_t> prefill_hashes;              // per run
  // The bandwidth probe's GB/s in one pass right after each decode run, on
  // the run's threads (cpu configurations, when the probe is on).
  std::vector<double> probe_gbs;
};

struct Spread {
  double median = 0, min = 0, max = 0;
};

// Returns the median, minimum and maximum of `v` (zeros when empty).
Spread SpreadOf(std::vector<double> v);

// Every configuration's runs against each other, and every configuration
// against the first (the base) over the decode steps both ran.
struct IdentityVerdict {
  std::vector<bool> runs_identical;  // per record
  struct Pair {
    size_t record = 0;        // compared with record 0
    size_t decode_steps = 0;  // steps compared
    bool decode_identical = false;
    bool prefill_identical = false;
  };
  std::vector<Pair> against_base;  // records 1..n-1
  bool all_identical = true;
};

// Returns the verdict over `records`, each with at least one run.
IdentityVerdict JudgeIdentity(const std::vector<BenchRecord>& records);

}  // namespace samebits::cli
