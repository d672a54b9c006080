// `bench`'s output: the preflight line and warnings, the decode and prefill
// tables, the ratios of medians and the identity lines, printed on stdout
// from values the other steps computed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/cli/bench_statistics.h"
#include "engine/platform/preflight.h"

namespace samebits::cli {

// What was timed, for the tables' headings.
struct BenchShape {
  int context = 0;
  int decode_steps = 0;            // per cpu run
  int warmup_steps = 0;            // untimed, once per cpu configuration
  int reference_decode_steps = 0;  // per reference run
  int prompt = 0;
  int repeats = 0;
  int reference_repeats = 0;  // runs the reference really made
  int64_t weight_bytes_per_token = 0;
  int top_k = 0;
};

// Prints the preflight line and each warning (also on stderr).
void PrintPreflight(const platform::PreflightVerdict& preflight);

// Prints the decode table, the prefill table and the ratios of medians
// against the first record.
void PrintTimings(const std::vector<BenchRecord>& records, const BenchShape& shape);

// Prints one identity line per record (run against run) and per record
// against the first.
void PrintIdentity(const std::vector<BenchRecord>& records, const IdentityVerdict& verdict);

}  // namespace samebits::cli
