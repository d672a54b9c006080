// samebits-store-bench: fills a store with synthetic runs totalling a given
// number of step rows, timing how fast they are written, for the store's
// benchmark (ci/bench-store.sh, which then times `samebits compare` and
// `samebits verdict` over the store it made).
//
//   samebits-store-bench --db DB [--steps N] [--steps-per-cell S]
//
// The store gets, in this order: a sharded gate of 4 shards (group
// `bench`; shards 1 and 2 on machine bench-a, 3 and 4 on bench-b) holding
// half of the N step rows, then one whole run on bench-a and one on bench-b
// holding a quarter each (what `compare machine:bench-a machine:bench-b`
// reads). Every cell has S steps (default 64, a scenario's order of
// magnitude); the two machines' outputs are identical. Prints one line per
// run written and a last line "wrote R step rows in T s: X step rows/s"
// (the steps only; cells, identities and the run rows come with them).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/shard_records.h"
#include "harness/store/store.h"

namespace {

using samebits::harness::CellResult;
using samebits::harness::RunResult;

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "samebits-store-bench: %s\n"
               "usage: samebits-store-bench --db DB [--steps N] [--steps-per-cell S]\n",
               why.c_str());
  std::exit(2);
}

long long Number(const char* flag, const char* text, long long max) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > max)
    Usage(std::string(flag) + " takes a whole number from 1 to " + std::to_string(max));
  return value;
}

// Returns cell `i` of a run: one of 8 configurations of one of 3 scenarios
// of checkpoint synthetic:bench-<i / 24>, with `steps` steps whose hashes
// depend on the cell's checkpoint and scenario only (the configurations
// agree, as they must).
CellResult Cell(long long i, int steps) {
  static const char* const kConfigs[] = {"reference", "cpu-t1",         "cpu-t2",    "cpu-t3",
                                         "cpu-avx2",  "cpu-t3-chunk8k", "cpu-t2-b4", "cpu-scalar"};
  static const char* const kScenarios[] = {"classic", "long", "extend"};
  CellResult c;
  c.checkpoint = "synthetic:bench-" + std::to_string(i / 24);
  c.scenario = kScenarios[(i / 8) % 3];
  c.config.name = kConfigs[i % 8];
  c.config.kernels = i % 8 == 0 ? "reference" : "cpu";
  c.code = samebits::harness::ResultCode::kPass;
  c.math =
      samebits::harness::MathLibraryInfo{"portable", "samebits-portable", "1", "00000000000000aa"};
  c.build = samebits::harness::BuildInfo{"samebits-engine", "0.1.0", "0123456789abcdef",
                                         "GNU 12.2.0",      "-O3",   false};
  c.weights_xxh3 = "00000000deadbeef";
  c.vocab_size = 256;
  c.isa_used = "avx2";
  const unsigned long long seed = static_cast<unsigned long long>(i / 8) * 7919ULL + 1;
  for (int k = 0; k < steps; ++k) {
    samebits::harness::StepRecord s;
    s.index = k;
    s.kind = k == 0 ? "prefill" : "decode";
    s.position = 10 + k;
    s.input_token = 40 + k;
    s.token = static_cast<int>((seed + static_cast<unsigned long long>(k)) % 256);
    s.argmax = s.token;
    s.xxh3_64 = seed * 1000003ULL + static_cast<unsigned long long>(k);
    s.fnv1a64 = ~s.xxh3_64;
    c.steps.push_back(s);
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db;
  long long total = 1000000;
  long long per_cell = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::printf("usage: samebits-store-bench --db DB [--steps N] [--steps-per-cell S]\n");
      return 0;
    }
    if (i + 1 >= argc) Usage(flag + " needs a value");
    if (flag == "--db") {
      db = argv[++i];
    } else if (flag == "--steps") {
      total = Number("--steps", argv[++i], 100000000);
    } else if (flag == "--steps-per-cell") {
      per_cell = Number("--steps-per-cell", argv[++i], 100000);
    } else {
      Usage("unknown argument '" + flag + "'");
    }
  }
  if (db.empty()) Usage("--db is required");
  try {
    samebits::store::Store store(db);
    struct Plan {
      std::string machine;
      int shard;  // 0: a whole run
      long long steps;
    };
    const std::vector<Plan> plans = {{"bench-a", 1, total / 8}, {"bench-a", 2, total / 8},
                                     {"bench-b", 3, total / 8}, {"bench-b", 4, total / 8},
                                     {"bench-a", 0, total / 4}, {"bench-b", 0, total / 4}};
    long long written = 0;
    double seconds = 0;
    for (const Plan& plan : plans) {
      RunResult run;
      run.started_at = "2026-12-02T00:00:00Z";
      run.machine = {"x86_64", "Bench CPU", "Linux", "6.1", "glibc 2.36", {"avx2", "fma"}};
      run.machine_name = plan.machine;
      run.command = "samebits-store-bench";
      const long long cells = std::max(1LL, plan.steps / per_cell);
      // A shard holds every 4th cell of the whole matrix, as a gate's
      // shards split it; a whole run holds them all.
      for (long long c = 0; c < cells; ++c) {
        const long long index = plan.shard > 0 ? c * 4 + (plan.shard - 1) : c;
        run.cells.push_back(Cell(index, static_cast<int>(per_cell)));
      }
      if (plan.shard > 0) run.shard = samebits::harness::ShardInfo{"bench", plan.shard, 4};
      const auto start = std::chrono::steady_clock::now();
      const int64_t id = store.SaveRun(run);
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const long long rows = cells * per_cell;
      written += rows;
      seconds += s;
      std::printf("run %lld (%s%s): %lld cells, %lld step rows in %.2f s: %.0f step rows/s\n",
                  static_cast<long long>(id), plan.machine.c_str(),
                  plan.shard > 0 ? (", shard " + std::to_string(plan.shard) + "/4").c_str() : "",
                  cells, rows, s, static_cast<double>(rows) / s);
    }
    std::printf("wrote %lld step rows in %.2f s: %.0f step rows/s\n", written, seconds,
                static_cast<double>(written) / seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "samebits-store-bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
