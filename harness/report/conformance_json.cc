// The JSON conformance report, for tools: every pair and every measured
// step. `schema_version` changes whenever a field is renamed or removed
// (added fields keep it: the statistics with their standard errors, Δp,
// margins and stability joined schema 1).
// Non-finite measurements are the strings "inf", "-inf" and "nan" (JSON
// numbers cannot hold them).
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/analysis/ulp.h"
#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kSchemaVersion = 1;

Json Number(double x) {
  if (std::isfinite(x)) return x;
  return FormatMetric(x);
}

// A ULP distance; a NaN against a number (harness::kUlpNaNMismatch) has
// none, written as the string harness::FormatUlp gives.
Json Ulp(uint64_t ulp) {
  if (ulp == kUlpNaNMismatch) return FormatUlp(ulp);
  return ulp;
}

Json UlpJson(const UlpPercentiles& u) {
  return Json{{"p50", Ulp(u.p50)}, {"p99", Ulp(u.p99)}, {"max", Ulp(u.max)}};
}

Json StepJson(const StepConformance& s) {
  Json j{{"step", s.step_index},
         {"nmse", Number(s.nmse)},
         {"kl_divergence", Number(s.kl_divergence)},
         {"top1_a", s.top1_a},
         {"top1_b", s.top1_b},
         {"top1_agrees", s.top1_agrees},
         {"p_a_top1", Number(s.p_a_top1)},
         {"p_b_top1", Number(s.p_b_top1)},
         {"delta_p", Number(s.delta_p)},
         {"top2_a", s.top2_a},
         {"margin", Number(s.margin)},
         {"top_disagreement", Number(s.top_disagreement)},
         {"stability", StabilityName(s.stability)},
         {"top_count", s.top_count},
         {"top_overlap", s.top_overlap},
         {"max_abs_diff", Number(s.max_abs_diff)},
         {"ulp", UlpJson(s.ulp)},
         {"nonfinite_mismatches", s.nonfinite_mismatches},
         {"deviates", s.deviates}};
  if (s.deviates) j["why"] = SanitizeUtf8(s.why);
  if (s.worst_token >= 0) {
    j["worst_token"] = s.worst_token;
    j["worst_a"] = Number(s.worst_a);
    j["worst_b"] = Number(s.worst_b);
  }
  return j;
}

Json PairJson(const PairConformance& p) {
  Json j{{"checkpoint", SanitizeUtf8(p.checkpoint)},
         {"scenario", SanitizeUtf8(p.scenario)},
         {"config_a", SanitizeUtf8(p.config_a)},
         {"config_b", SanitizeUtf8(p.config_b)},
         {"engine_a", SanitizeUtf8(p.engine_a)},
         {"engine_b", SanitizeUtf8(p.engine_b)},
         {"verdict", PairVerdictName(p)},
         {"verdict_line", SanitizeUtf8(PairVerdictLine(p))}};
  if (!p.compared) {
    j["reason"] = SanitizeUtf8(p.reason);
    return j;
  }
  const ConformanceSummary& s = p.summary;
  j["steps_a"] = p.steps_a;
  j["steps_b"] = p.steps_b;
  j["steps_measured"] = s.steps;
  if (s.first_deviating_step) j["first_deviating_step"] = *s.first_deviating_step;
  if (s.first_deviating_token) j["first_deviating_token"] = *s.first_deviating_token;
  j["stability"] = StabilityName(s.stability);
  if (p.forced) {
    j["b_rerun_with_a_tokens_from"] =
        Json{{"step", p.forced->step_index}, {"detail", SanitizeUtf8(p.forced->detail)}};
  }
  if (p.divergence) {
    j["context_divergence"] =
        Json{{"step", p.divergence->step_index}, {"detail", SanitizeUtf8(p.divergence->detail)}};
  }
  // The keys of schema 1 first; then the statistics added to it, each
  // `*_se` the standard error of the figure before it (conformance.h), Δp
  // in units of probability and top-1 agreement in percent.
  j["summary"] = Json{{"nmse_max", Number(s.max_nmse)},
                      {"nmse_mean", Number(s.mean_nmse)},
                      {"kld_steps", s.kld_steps},
                      {"kld_mean", Number(s.kld_mean)},
                      {"kld_p99", Number(s.kld_p99)},
                      {"kld_max", Number(s.kld_max)},
                      {"top1_agreements", s.top1_agreements},
                      {"top_overlap_mean", Number(s.top_overlap_mean)},
                      {"max_abs_diff", Number(s.max_abs_diff)},
                      {"ulp", UlpJson(s.ulp)},
                      {"nmse_mean_se", Number(s.mean_nmse_se)},
                      {"kld_mean_se", Number(s.kld_mean_se)},
                      {"kld_median", Number(s.kld_median)},
                      {"kld_p99_9", Number(s.kld_p999)},
                      {"delta_p_steps", s.delta_p_steps},
                      {"delta_p_mean", Number(s.delta_p_mean.value)},
                      {"delta_p_mean_se", Number(s.delta_p_mean.se)},
                      {"delta_p_rms", Number(s.delta_p_rms.value)},
                      {"delta_p_rms_se", Number(s.delta_p_rms.se)},
                      {"top1_percent", Number(s.top1_percent.value)},
                      {"top1_percent_se", Number(s.top1_percent.se)},
                      {"top_overlap_mean_se", Number(s.top_overlap_mean_se)},
                      {"fragile_steps", s.fragile_steps},
                      {"unstable_steps", s.unstable_steps},
                      {"stability", StabilityName(s.stability)}};
  Json notes = Json::array();
  for (const std::string& n : p.notes) notes.push_back(SanitizeUtf8(n));
  j["notes"] = notes;
  Json steps = Json::array();
  for (const StepConformance& st : p.steps) steps.push_back(StepJson(st));
  j["steps"] = steps;
  return j;
}

class JsonWriter final : public ConformanceExporter {
 public:
  void Write(const RunConformance& c, std::ostream& out) const override {
    Json pairs = Json::array();
    for (const PairConformance& p : c.pairs) pairs.push_back(PairJson(p));
    const Json j{
        {"schema_version", kSchemaVersion},
        {"kind", "conformance"},
        {"a", SanitizeUtf8(c.label_a)},
        {"b", SanitizeUtf8(c.label_b)},
        {"threshold", Json{{"max_nmse", Number(c.threshold.max_nmse)}}},
        {"headline", SanitizeUtf8(c.headline)},
        {"counts",
         Json{{"conform", c.conform}, {"deviate", c.deviate}, {"not_compared", c.not_compared}}},
        {"pairs", pairs}};
    out << j.dump(2) << "\n";
  }
};

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceJsonExporter() {
  return std::make_unique<JsonWriter>();
}

}  // namespace samebits::harness::report
