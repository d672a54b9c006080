// `samebits-engine bench`: times decode (ms per token at a given context)
// and prefill (tokens per second for a prompt) for the reference pass and
// the cpu pass at several thread counts, runs interleaved (A B C, C B A,
// ...) so that a change in the machine's load touches every configuration
// alike, and checks in the same runs that every configuration produced the
// same logits (hashes of every step's bits). It sets the decode figure
// against the machine's memory read bandwidth (the kernels' probe), since
// decode streams every weight it uses once per token.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/kernels/bandwidth.h"
#include "engine/kernels/kernels.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"
#include "engine/model/sampler.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/hash.h"
#include "engine/numerics/math.h"
#include "engine/protocol/platform.h"
#include "engine/run/scenario.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What the machine is doing besides us, read before the timed runs.
struct Preflight {
  int cores = 1;
  double load1 = 0.0;
  double busy_percent = 0.0;  // of all cores, over half a second
  int64_t swap_used_mib = 0;
  std::vector<std::string> warnings;
};

// Returns the busy and total jiffies of the "cpu" line of /proc/stat.
bool ReadCpuTimes(uint64_t* busy, uint64_t* total) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t v[10] = {};
  if (!(in >> cpu) || cpu != "cpu") return false;
  for (uint64_t& x : v) in >> x;
  *total = 0;
  for (uint64_t x : v) *total += x;
  *busy = *total - v[3] - v[4];  // idle and iowait
  return true;
}

Preflight RunPreflight(int max_threads) {
  Preflight p;
  p.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::ifstream("/proc/loadavg") >> p.load1;
  uint64_t b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (ReadCpuTimes(&b0, &t0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (ReadCpuTimes(&b1, &t1) && t1 > t0) p.busy_percent = 100.0 * (b1 - b0) / (t1 - t0);
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

  char line[400];
  if (p.load1 > 0.5 * p.cores) {
    std::snprintf(line, sizeof line,
                  "load average %.2f on %d cores: other work is running, so these timings will "
                  "be slow and noisy. Wait until `uptime` shows a load below %.1f (or stop the "
                  "other jobs) and run bench again.",
                  p.load1, p.cores, 0.5 * p.cores);
    p.warnings.push_back(line);
  }
  if (p.busy_percent > 25.0) {
    std::snprintf(line, sizeof line,
                  "other processes used %.0f%% of the CPU just before the runs: find them with "
                  "`top` and stop them, or expect slower, noisier figures.",
                  p.busy_percent);
    p.warnings.push_back(line);
  }
  if (p.swap_used_mib > 64) {
    std::snprintf(line, sizeof line,
                  "%lld MiB of swap in use: weights may be paged out between runs. Free memory "
                  "(close programs) so that the checkpoint stays resident.",
                  static_cast<long long>(p.swap_used_mib));
    p.warnings.push_back(line);
  }
  if (max_threads > p.cores) {
    std::snprintf(line, sizeof line,
                  "%d threads requested on %d cores: threads will wait for each other and "
                  "timings will be noisy; use at most --threads %d.",
                  max_threads, p.cores, p.cores);
    p.warnings.push_back(line);
  }
  return p;
}

// One configuration under test.
struct Config {
  std::string label;
  bool reference = false;
  int threads = 1;
  std::unique_ptr<threads::ThreadPool> pool;
  std::unique_ptr<model::Forward> forward;
  std::vector<double> decode_ms;                     // per token, one entry per run
  std::vector<double> prefill_ms;                    // per prompt, one entry per run
  std::vector<std::vector<uint64_t>> decode_hashes;  // per run, per step
  std::vector<uint64_t> prefill_hashes;              // per run
};

struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread SpreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

uint64_t HashLogits(const std::vector<float>& logits) {
  return numerics::HashFloatsFnv1a(std::span<const float>(logits.data(), logits.size()));
}

// Returns the common prefix of two hash sequences' length and whether they
// agree over it.
bool SameHashes(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, size_t* compared) {
  const size_t n = std::min(a.size(), b.size());
  *compared = n;
  return n > 0 && std::equal(a.begin(), a.begin() + n, b.begin());
}

std::vector<int> ParseThreadList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(item, &used);
      if (used != item.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1 || n > 1024) {
      throw UsageError("--threads-list: '" + item + "' is not a thread count in 1..1024");
    }
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  if (out.empty()) throw UsageError("--threads-list: give at least one thread count, e.g. 1,2");
  return out;
}

class BenchCommand : public Command {
 public:
  void Define(CLI::App& sub) override {
    sub.add_option("--checkpoint", checkpoint_,
                   "The checkpoint to time (default: synthetic:bench, BF16, ~288M parameters).")
        ->option_text("SPEC");
    sub.add_option("--context", context_,
                   "Decode is timed after a context of this many tokens (default: 128).")
        ->option_text("N")
        ->check(CLI::Range(1, 1 << 20));
    sub.add_option("--decode-steps", decode_steps_,
                   "Decode steps timed per run of the cpu pass (default: 16).")
        ->option_text("N")
        ->check(CLI::Range(1, 1 << 20));
    sub.add_option("--prompt", prompt_,
                   "Prefill is timed on a prompt of this many tokens (default: 128).")
        ->option_text("N")
        ->check(CLI::Range(1, 1 << 20));
    sub.add_option("--repeats", repeats_,
                   "Runs of each configuration, interleaved A B C, C B A, ... (default: 5).")
        ->option_text("N")
        ->check(CLI::Range(1, 1000));
    sub.add_option("--threads-list", threads_list_,
                   "Thread counts of the cpu pass to compare, comma-separated (default: 1 and "
                   "one per core).")
        ->option_text("N,N,...");
    sub.add_option("--reference-decode-steps", reference_decode_steps_,
                   "Decode steps per run of the slow reference pass (default: 2).")
        ->option_text("N")
        ->check(CLI::Range(1, 1 << 20));
    sub.add_option("--reference-repeats", reference_repeats_,
                   "Runs of the reference pass, at most --repeats (default: 1; it is slow).")
        ->option_text("N")
        ->check(CLI::Range(0, 1000));
    sub.add_flag("--no-reference", no_reference_,
                 "Time the cpu pass only (no reference runs, no reference identity check).");
    sub.add_option("--isa", isa_,
                   "The cpu kernels' instruction set (default: auto, the fastest available).")
        ->option_text("auto|scalar|avx2|avx512|neon")
        ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512", "neon"}));
    sub.add_option("--gemv-chunk-bytes", gemv_chunk_bytes_,
                   "Bytes of weights per GEMV work unit on the cpu path (default: 262144).")
        ->option_text("N")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    sub.add_option("--math", math_, "The math profile (default: portable).")
        ->option_text("portable|libm")
        ->check(CLI::IsMember({"portable", "libm"}));
    sub.add_option("--bandwidth-mib", bandwidth_mib_,
                   "Size of the memory read-bandwidth probe's buffer; 0 skips the probe "
                   "(default: 256).")
        ->option_text("MIB")
        ->check(CLI::Range(0, 1 << 20));
    sub.add_flag("--profile", profile_,
                 "After the timed runs, run the cpu pass once more with the op profiler and "
                 "print its table (SAMEBITS_PROFILE=1 does the same).");
  }

  int Execute() override {
    numerics::MathProfile math_profile;
    if (!numerics::ParseMathProfile(math_, &math_profile)) {
      throw UsageError("unknown math profile '" + math_ + "' (use portable or libm)");
    }
    const numerics::MathLibrary& math = numerics::GetMathLibrary(math_profile);
    kernels::Isa isa = kernels::BestIsa();
    if (isa_ != "auto") {
      if (!kernels::ParseIsa(isa_, &isa) || !kernels::IsaAvailable(isa)) {
        throw UsageError("ISA " + isa_ + " is not available on this machine or in this build");
      }
    }
    std::vector<int> thread_counts;
    if (threads_list_.empty()) {
      thread_counts = {1};
      const int all = threads::DefaultThreadCount();
      if (all != 1) thread_counts.push_back(all);
    } else {
      thread_counts = ParseThreadList(threads_list_);
    }
    if (ProfileRequestedByEnvironment()) profile_ = true;
    const int max_threads = *std::max_element(thread_counts.begin(), thread_counts.end());

    const model::ModelWeights weights = LoadCheckpointForCommand(checkpoint_);
    const model::ModelConfig& mc = weights.config;
    if (context_ + std::max(decode_steps_, reference_decode_steps_) > mc.max_seq_len ||
        prompt_ > mc.max_seq_len) {
      throw UsageError(
          "--context + --decode-steps and --prompt must fit in the checkpoint's "
          "max_seq_len of " +
          std::to_string(mc.max_seq_len));
    }

    const protocol::BuildInfo build = protocol::ThisBuild();
    const protocol::PlatformInfo platform = protocol::ThisPlatform();
    std::printf("samebits-engine bench: %s, %.1fM parameters, revision %s%s\n", checkpoint_.c_str(),
                model::CountParameters(weights) / 1e6, build.revision.c_str(),
                build.dirty ? " (dirty)" : "");
    std::printf("machine: %s, %s, %u cores online; isa %s, math %s\n", platform.cpu.c_str(),
                platform.arch.c_str(), static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)),
                kernels::IsaName(isa), math_.c_str());

    const Preflight pre = RunPreflight(max_threads);
    std::printf(
        "preflight: load average %.2f on %d cores, other processes %.0f%% CPU, swap in "
        "use %lld MiB: %s\n",
        pre.load1, pre.cores, pre.busy_percent, static_cast<long long>(pre.swap_used_mib),
        pre.warnings.empty() ? "quiet" : "BUSY");
    for (const std::string& w : pre.warnings) {
      std::printf("WARNING: %s\n", w.c_str());
      std::fprintf(stderr, "samebits-engine bench: warning: %s\n", w.c_str());
    }

    if (bandwidth_mib_ > 0) {
      std::printf("memory read bandwidth (probe, %d MiB buffer, median of 5):", bandwidth_mib_);
      for (int n : thread_counts) {
        threads::ThreadPool pool(n);
        const double gbs =
            kernels::MeasureReadBandwidthGBs(pool, static_cast<size_t>(bandwidth_mib_) << 20, 5);
        std::printf(" %d thread%s %.1f GB/s;", n, n == 1 ? "" : "s", gbs);
      }
      std::printf("\n");
    }
    std::fflush(stdout);

    // The configurations, built once.
    model::CpuOptions options;
    options.isa = isa;
    if (gemv_chunk_bytes_ > 0) options.gemv_chunk_bytes = gemv_chunk_bytes_;
    std::vector<Config> configs;
    if (!no_reference_ && reference_repeats_ > 0) {
      Config c;
      c.label = "reference";
      c.reference = true;
      c.forward = model::MakeReferenceForward(weights, math, isa);
      configs.push_back(std::move(c));
    }
    for (int n : thread_counts) {
      Config c;
      c.label = "cpu " + std::to_string(n) + (n == 1 ? " thread" : " threads");
      c.threads = n;
      c.pool = std::make_unique<threads::ThreadPool>(n);
      c.forward = model::MakeCpuForward(weights, math, *c.pool, options, CpuPassKernelTable(isa));
      configs.push_back(std::move(c));
    }
    Config& fastest = configs.back();

    // The context for decode, built once with the fastest cpu configuration:
    // its KV cache holds the same bits as the reference's would (the
    // contract), so every configuration decodes from a copy of it.
    run::RandomTokenSpec spec;
    spec.length = std::max(context_, prompt_);
    spec.seed = 0xbe9c4;
    spec.first_token = std::min(3, mc.vocab_size - 1);
    const std::vector<int32_t> tokens = run::RandomTokens(spec, mc.vocab_size);
    model::InferenceState context = model::MakeState(mc);
    std::vector<float> context_logits;
    fastest.forward->Run(context, std::span<const int32_t>(tokens.data(), context_), false,
                         context_logits, nullptr);
    const int32_t first_token = model::Argmax(context_logits);

    const auto run_decode = [&](Config& c) {
      model::InferenceState state = context;
      std::vector<float> logits;
      std::vector<uint64_t> hashes;
      int32_t token = first_token;
      const int steps = c.reference ? reference_decode_steps_ : decode_steps_;
      double ms = 0;
      for (int s = 0; s < steps; ++s) {
        const auto start = Clock::now();
        c.forward->Run(state, std::span<const int32_t>(&token, 1), false, logits, nullptr);
        ms += MsSince(start);
        hashes.push_back(HashLogits(logits));
        token = model::Argmax(logits);
      }
      c.decode_ms.push_back(ms / steps);
      c.decode_hashes.push_back(hashes);
    };
    const auto run_prefill = [&](Config& c) {
      model::InferenceState state = model::MakeState(mc);
      std::vector<float> logits;
      const auto start = Clock::now();
      c.forward->Run(state, std::span<const int32_t>(tokens.data(), prompt_), false, logits,
                     nullptr);
      c.prefill_ms.push_back(MsSince(start));
      c.prefill_hashes.push_back(HashLogits(logits));
    };
    const int ref_repeats = std::min(repeats_, reference_repeats_);
    // Interleaved: even rounds in order, odd rounds reversed (A B C, C B A).
    const auto interleave = [&](const auto& run_one) {
      for (int r = 0; r < repeats_; ++r) {
        for (size_t i = 0; i < configs.size(); ++i) {
          Config& c = configs[r % 2 == 0 ? i : configs.size() - 1 - i];
          if (c.reference && r >= ref_repeats) continue;
          run_one(c);
        }
      }
    };
    interleave(run_decode);
    interleave(run_prefill);

    const int64_t bytes = model::WeightBytesPerDecodedToken(weights);
    std::printf("\ndecode at context %d: %d steps per cpu run, %d runs interleaved", context_,
                decode_steps_, repeats_);
    if (!configs.front().reference) {
      std::printf("\n");
    } else {
      std::printf("; reference: %d step%s per run, %d run%s (it is slow)\n",
                  reference_decode_steps_, reference_decode_steps_ == 1 ? "" : "s", ref_repeats,
                  ref_repeats == 1 ? "" : "s");
    }
    std::printf(
        "weights streamed per token: %.1f MB (embedding row, every layer's matrices, the "
        "top-%d experts, output)\n",
        bytes / 1e6, mc.top_k);
    std::printf("  %-18s %12s %10s %10s %10s %10s\n", "configuration", "median ms", "min", "max",
                "tokens/s", "GB/s");
    for (const Config& c : configs) {
      const Spread s = SpreadOf(c.decode_ms);
      std::printf("  %-18s %12.2f %10.2f %10.2f %10.1f %10.1f\n", c.label.c_str(), s.median, s.min,
                  s.max, 1000.0 / s.median, bytes / (s.median * 1e6));
    }
    std::printf("\nprefill of %d tokens: %d runs interleaved%s\n", prompt_, repeats_,
                configs.front().reference
                    ? (", reference: " + std::to_string(ref_repeats) + " run(s)").c_str()
                    : "");
    std::printf("  %-18s %12s %10s %10s %10s\n", "configuration", "median ms", "min", "max",
                "tokens/s");
    for (const Config& c : configs) {
      const Spread s = SpreadOf(c.prefill_ms);
      std::printf("  %-18s %12.1f %10.1f %10.1f %10.1f\n", c.label.c_str(), s.median, s.min, s.max,
                  prompt_ * 1000.0 / s.median);
    }

    std::printf("\nratios of medians:\n");
    const Config& base = configs.front();
    for (size_t i = 1; i < configs.size(); ++i) {
      const Config& c = configs[i];
      std::printf("  %s vs %s: decode %.2fx, prefill %.2fx\n", c.label.c_str(), base.label.c_str(),
                  SpreadOf(base.decode_ms).median / SpreadOf(c.decode_ms).median,
                  SpreadOf(base.prefill_ms).median / SpreadOf(c.prefill_ms).median);
    }

    // Identity: every run of a configuration, and every configuration
    // against the first, over the steps both decoded.
    std::printf("\nidentity (FNV-1a of every output's logit bits):\n");
    bool all_same = true;
    for (const Config& c : configs) {
      bool same = true;
      for (size_t r = 1; r < c.decode_hashes.size(); ++r) {
        same = same && c.decode_hashes[r] == c.decode_hashes[0];
      }
      for (size_t r = 1; r < c.prefill_hashes.size(); ++r) {
        same = same && c.prefill_hashes[r] == c.prefill_hashes[0];
      }
      std::printf("  %s, run against run: identical: %s\n", c.label.c_str(), same ? "yes" : "no");
      all_same = all_same && same;
    }
    for (size_t i = 1; i < configs.size(); ++i) {
      const Config& c = configs[i];
      size_t steps = 0;
      const bool decode_same = SameHashes(base.decode_hashes[0], c.decode_hashes[0], &steps);
      const bool prefill_same = base.prefill_hashes[0] == c.prefill_hashes[0];
      std::printf("  %s vs %s: decode (%zu steps) identical: %s; prefill identical: %s\n",
                  c.label.c_str(), base.label.c_str(), steps, decode_same ? "yes" : "no",
                  prefill_same ? "yes" : "no");
      all_same = all_same && decode_same && prefill_same;
    }

    if (profile_) {
      model::CpuOptions profiled = options;
      profiled.profile = true;
      auto forward =
          model::MakeCpuForward(weights, math, *fastest.pool, profiled, CpuPassKernelTable(isa));
      model::InferenceState state = context;
      std::vector<float> logits;
      int32_t token = first_token;
      for (int s = 0; s < decode_steps_; ++s) {
        forward->Run(state, std::span<const int32_t>(&token, 1), false, logits, nullptr);
        token = model::Argmax(logits);
      }
      model::InferenceState fresh = model::MakeState(mc);
      forward->Run(fresh, std::span<const int32_t>(tokens.data(), prompt_), false, logits, nullptr);
      std::printf(
          "\nprofile (%s, one extra run: %d decode steps at context %d, one prefill of "
          "%d tokens):\n%s",
          fastest.label.c_str(), decode_steps_, context_, prompt_,
          forward->ProfileReport().c_str());
    }
    std::fflush(stdout);
    if (!all_same) {
      std::fprintf(stderr, "samebits-engine bench: configurations produced different logits\n");
      return 1;
    }
    return 0;
  }

 private:
  std::string checkpoint_ = "synthetic:bench";
  int context_ = 128;
  int decode_steps_ = 16;
  int prompt_ = 128;
  int repeats_ = 5;
  std::string threads_list_;
  int reference_decode_steps_ = 2;
  int reference_repeats_ = 1;
  bool no_reference_ = false;
  std::string isa_ = "auto";
  int64_t gemv_chunk_bytes_ = 0;
  std::string math_ = "portable";
  int bandwidth_mib_ = 256;
  bool profile_ = false;
};

const bool kRegistered = RegisterCommand(
    {"bench",
     "Times decode and prefill of the reference and cpu passes, interleaved, and checks that "
     "they produce the same logits.",
     40, [] { return MakeCommand<BenchCommand>(); }});

}  // namespace
}  // namespace samebits::cli
