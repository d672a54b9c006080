// `bench`'s output (bench_output.h).
#include "engine/cli/bench_output.h"

#include <cstdio>

namespace samebits::cli {

void PrintPreflight(const platform::PreflightVerdict& preflight) {
  std::printf("preflight: %s: %s\n", preflight.summary.c_str(), preflight.busy ? "BUSY" : "quiet");
  for (const std::string& w : preflight.reasons) {
    std::printf("WARNING: %s\n", w.c_str());
    std::fprintf(stderr, "samebits-engine bench: warning: %s\n", w.c_str());
  }
}

namespace {

// Prints, per configuration the probe followed, each decode run's GB/s over
// the probe's pass right after it: side by side in time, so a host that
// changes speed between the first probe and a run does not skew it.
void PrintProbeShares(const std::vector<BenchRecord>& records, double bytes_per_token) {
  bool any = false;
  for (const BenchRecord& c : records) any = any || !c.probe_gbs.empty();
  if (!any) return;
  std::printf("decode GB/s over the probe's pass right after each run (median, min, max):\n");
  for (const BenchRecord& c : records) {
    if (c.probe_gbs.empty() || c.probe_gbs.size() != c.decode_ms.size()) continue;
    std::vector<double> shares;
    for (size_t r = 0; r < c.decode_ms.size(); ++r) {
      shares.push_back(100.0 * bytes_per_token / (c.decode_ms[r] * 1e6) / c.probe_gbs[r]);
    }
    const Spread s = SpreadOf(shares);
    std::printf("  %-18s %11.1f%% %9.1f%% %9.1f%%\n", c.label.c_str(), s.median, s.min, s.max);
  }
}

}  // namespace

void PrintTimings(const std::vector<BenchRecord>& records, const BenchShape& shape) {
  const bool has_reference = records.front().reference;
  const int ref_repeats = shape.reference_repeats;
  std::printf("\ndecode at context %d: %d steps per cpu run", shape.context, shape.decode_steps);
  if (shape.warmup_steps > 0) {
    std::printf(" (after %d untimed warm-up step%s)", shape.warmup_steps,
                shape.warmup_steps == 1 ? "" : "s");
  }
  std::printf(", %d runs interleaved", shape.repeats);
  if (!has_reference) {
    std::printf("\n");
  } else {
    std::printf("; reference: %d step%s per run, %d run%s (it is slow)\n",
                shape.reference_decode_steps, shape.reference_decode_steps == 1 ? "" : "s",
                ref_repeats, ref_repeats == 1 ? "" : "s");
  }
  const double bytes = static_cast<double>(shape.weight_bytes_per_token);
  std::printf(
      "weights streamed per token: %.1f MB (embedding row, every layer's matrices, the "
      "top-%d experts, output)\n",
      bytes / 1e6, shape.top_k);
  std::printf("  %-18s %12s %10s %10s %10s %10s\n", "configuration", "median ms", "min", "max",
              "tokens/s", "GB/s");
  for (const BenchRecord& c : records) {
    const Spread s = SpreadOf(c.decode_ms);
    std::printf("  %-18s %12.2f %10.2f %10.2f %10.1f %10.1f\n", c.label.c_str(), s.median, s.min,
                s.max, 1000.0 / s.median, bytes / (s.median * 1e6));
  }
  PrintProbeShares(records, bytes);
  std::printf(
      "\nprefill of %d tokens: %d runs interleaved%s\n", shape.prompt, shape.repeats,
      has_reference ? (", reference: " + std::to_string(ref_repeats) + " run(s)").c_str() : "");
  std::printf("  %-18s %12s %10s %10s %10s\n", "configuration", "median ms", "min", "max",
              "tokens/s");
  for (const BenchRecord& c : records) {
    const Spread s = SpreadOf(c.prefill_ms);
    std::printf("  %-18s %12.1f %10.1f %10.1f %10.1f\n", c.label.c_str(), s.median, s.min, s.max,
                shape.prompt * 1000.0 / s.median);
  }

  std::printf("\nratios of medians:\n");
  const BenchRecord& base = records.front();
  for (size_t i = 1; i < records.size(); ++i) {
    const BenchRecord& c = records[i];
    std::printf("  %s vs %s: decode %.2fx, prefill %.2fx\n", c.label.c_str(), base.label.c_str(),
                SpreadOf(base.decode_ms).median / SpreadOf(c.decode_ms).median,
                SpreadOf(base.prefill_ms).median / SpreadOf(c.prefill_ms).median);
  }
}

void PrintIdentity(const std::vector<BenchRecord>& records, const IdentityVerdict& verdict) {
  std::printf("\nidentity (FNV-1a of every output's logit bits):\n");
  for (size_t i = 0; i < records.size(); ++i) {
    std::printf("  %s, run against run: identical: %s\n", records[i].label.c_str(),
                verdict.runs_identical[i] ? "yes" : "no");
  }
  const BenchRecord& base = records.front();
  for (const IdentityVerdict::Pair& pair : verdict.against_base) {
    std::printf("  %s vs %s: decode (%zu steps) identical: %s; prefill identical: %s\n",
                records[pair.record].label.c_str(), base.label.c_str(), pair.decode_steps,
                pair.decode_identical ? "yes" : "no", pair.prefill_identical ? "yes" : "no");
  }
}

}  // namespace samebits::cli
