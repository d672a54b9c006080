// The JSON report: everything in the `RunResult`, plus the verdict, counts
// and ULP statistics, for tools. `schema_version` changes whenever a field
// is renamed or removed (fields may be added within a version). Hashes are
// 16 lower-case hex digits, as in the protocol, because JSON numbers cannot
// carry 64 bits faithfully in most readers.
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/analysis/bounded_json.h"
#include "harness/analysis/numeric_profile.h"
#include "harness/analysis/time_split.h"
#include "harness/report/escape.h"
#include "harness/report/exporter.h"

namespace samebits::harness::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kSchemaVersion = 1;

// Child output is bytes; JSON strings must be UTF-8.
// The batch fields appear only on batched configurations (batch > 1), and
// `quant_dot` only when it is not exact, as in the protocol's hello, so
// other reports read as before.
Json ToJson(const Configuration& c) {
  Json j{{"name", SanitizeUtf8(c.name)},
         {"kernels", SanitizeUtf8(c.kernels)},
         {"threads", c.threads},
         {"isa", SanitizeUtf8(c.isa)},
         {"gemv_chunk_bytes", c.gemv_chunk_bytes},
         {"math", SanitizeUtf8(c.math)}};
  if (c.quant_dot != kExactQuantDot) j["quant_dot"] = SanitizeUtf8(c.quant_dot);
  if (c.batch > 1) {
    j["batch"] = c.batch;
    j["batch_seed"] = c.batch_seed;
    j["batch_schedule"] = SanitizeUtf8(c.batch_schedule);
  }
  return j;
}

Json ToJson(const MathLibraryInfo& m) {
  return Json{{"profile", SanitizeUtf8(m.profile)},
              {"name", SanitizeUtf8(m.name)},
              {"version", SanitizeUtf8(m.version)},
              {"fingerprint", SanitizeUtf8(m.fingerprint)}};
}

Json ToJson(const BuildInfo& b) {
  return Json{{"engine", SanitizeUtf8(b.engine)},     {"version", SanitizeUtf8(b.version)},
              {"revision", SanitizeUtf8(b.revision)}, {"compiler", SanitizeUtf8(b.compiler)},
              {"flags", SanitizeUtf8(b.flags)},       {"dirty", b.dirty}};
}

Json ToJson(const StepRecord& s) {
  Json j{{"index", s.index},
         {"kind", SanitizeUtf8(s.kind)},
         {"position", s.position},
         {"input_token", s.input_token},
         {"token", s.token},
         {"fnv1a64", Hex16(s.fnv1a64)},
         {"xxh3_64", Hex16(s.xxh3_64)},
         {"argmax", s.argmax},
         {"nan", s.nan_count},
         {"inf", s.inf_count}};
  if (s.text && !s.text->empty())
    j["text"] = SanitizeUtf8(*s.text);  // only when the engine decoded it
  if (s.batch) {                        // only in batched runs
    j["batch"] = Json{{"sequences", s.batch->sequences},
                      {"rows", s.batch->rows},
                      {"slot", s.batch->slot},
                      {"row", s.batch->row}};
  }
  return j;
}

Json ToJson(const TraceRecord& t) {
  return Json{{"position", t.position},
              {"layer", t.layer},
              {"op", SanitizeUtf8(t.op)},
              {"xxh3_64", Hex16(t.xxh3_64)}};
}

Json ToJson(const Divergence& d) {
  Json j{{"checkpoint", SanitizeUtf8(d.checkpoint)},
         {"scenario", SanitizeUtf8(d.scenario)},
         {"config_a", SanitizeUtf8(d.config_a)},
         {"config_b", SanitizeUtf8(d.config_b)},
         {"step_index", d.step_index},
         {"kind", SanitizeUtf8(d.kind)},
         {"position", d.position}};
  j["layer"] = d.layer ? Json(*d.layer) : Json(nullptr);
  j["op"] = SanitizeUtf8(d.op);
  j["detail"] = SanitizeUtf8(d.detail);
  if (!d.batch_place.empty()) j["batch_place"] = SanitizeUtf8(d.batch_place);  // a batched side
  return j;
}

// Returns the measured parts of a time split as {"start_ms": ...}; parts
// not measured are left out.
Json ToJson(const CellTiming& t) {
  Json j = Json::object();
  for (const TimingPart& part : TimingParts()) {
    if (t.*part.field >= 0) j[std::string(part.name) + "_ms"] = t.*part.field;
  }
  return j;
}

// The device, repeats and read-back with the protocol's keys (PROTOCOL.md).
Json ToJson(const DeviceInfo& d) {
  return Json{{"kind", SanitizeUtf8(d.kind)},
              {"name", SanitizeUtf8(d.name)},
              {"capability", SanitizeUtf8(d.capability)},
              {"multiprocessors", d.multiprocessors},
              {"driver", SanitizeUtf8(d.driver)},
              {"libraries", SanitizeUtf8(d.libraries)}};
}

Json ToJson(const RepeatInfo& r) {
  Json j{{"count", r.count}, {"distinct", r.distinct}};
  if (r.distinct > 1) {
    j["first_repeat"] = r.first_repeat;
    j["first_step"] = r.first_step;
  }
  return j;
}

Json ToJson(const SamplingInfo& s) {
  return Json{{"seeds", s.seeds},
              {"temperature", s.temperature},
              {"tokens", s.tokens},
              {"distinct", s.distinct},
              {"unstable_seed", s.unstable_seed}};
}

Json ToJson(const protocol::Readback& r) {
  Json j{{"kind", SanitizeUtf8(r.kind)}};
  if (r.kind == "topk") j["k"] = r.k;
  return j;
}

Json ToJson(const CellResult& c) {
  Json j{{"checkpoint", SanitizeUtf8(c.checkpoint)},
         {"scenario", SanitizeUtf8(c.scenario)},
         {"config", ToJson(c.config)},
         {"code", ResultCodeName(c.code)},
         {"exit_code", c.exit_code},
         {"signal", c.signal},
         {"message", SanitizeUtf8(c.message)},
         {"stderr_tail", SanitizeUtf8(c.stderr_tail)},
         {"elapsed_ms", c.elapsed_ms}};
  j["math"] = c.math ? ToJson(*c.math) : Json(nullptr);
  j["build"] = c.build ? ToJson(*c.build) : Json(nullptr);
  j["dump_path"] = SanitizeUtf8(c.dump_path);
  j["weights_xxh3"] = SanitizeUtf8(c.weights_xxh3);
  j["vocab_size"] = c.vocab_size;
  j["isa_used"] = SanitizeUtf8(c.isa_used);
  // The protocol's objects as the engine wrote them (PROTOCOL.md), or null.
  j["device"] = c.device ? ToJson(*c.device) : Json(nullptr);
  j["repeats"] = c.repeats ? ToJson(*c.repeats) : Json(nullptr);
  // What the hashes cover (null: whole logit rows) and a served engine's
  // identity (null: no server), as its hello said them.
  j["readback"] = c.readback ? ToJson(*c.readback) : Json(nullptr);
  // (The protocol's own text, read back through the harness's one reader.)
  j["sampling"] = c.sampling ? ToJson(*c.sampling) : Json(nullptr);
  j["server"] = c.server.empty() ? Json(nullptr) : Json(ParseBoundedJson(c.server, JsonLimits{}));
  // Where the cell's time went, when this process ran it (a stored run has
  // no split).
  if (Json timing = ToJson(c.timing); !timing.empty()) j["timing"] = std::move(timing);
  Json steps = Json::array();
  for (const StepRecord& s : c.steps) steps.push_back(ToJson(s));
  j["steps"] = std::move(steps);
  Json traces = Json::array();
  for (const TraceRecord& t : c.traces) traces.push_back(ToJson(t));
  j["traces"] = std::move(traces);
  return j;
}

Json ToJson(const DumpComparison& d) {
  Json j{{"checkpoint", SanitizeUtf8(d.checkpoint)},
         {"scenario", SanitizeUtf8(d.scenario)},
         {"config_a", SanitizeUtf8(d.config_a)},
         {"config_b", SanitizeUtf8(d.config_b)}};
  j["error"] = d.error.empty() ? Json(nullptr) : Json(SanitizeUtf8(d.error));
  j["vocab_size"] = d.vocab_size;
  Json steps = Json::array();
  for (const StepLogitDiff& s : d.steps) {
    const RowComparison& c = s.comparison;
    // A NaN on one side has no distance: null rather than a huge number.
    steps.push_back(
        Json{{"step_index", s.step_index},
             {"differing", c.differing},
             {"max_ulp", c.max_ulp == kUlpNaNMismatch ? Json(nullptr) : Json(c.max_ulp)},
             {"nan_mismatch", c.nan_mismatch},
             {"max_abs_diff", c.max_abs_diff},
             {"max_rel_diff", c.max_rel_diff},
             {"max_rel_diff_denominator", "row_max_abs"},
             {"row_max_abs", c.row_max_abs},
             {"argmax_a", c.argmax_a},
             {"argmax_b", c.argmax_b},
             {"argmax_changed", c.argmax_a != c.argmax_b}});
  }
  j["steps"] = std::move(steps);
  return j;
}

class JsonExporter final : public Exporter {
 public:
  void Write(const ReportModel& m, std::ostream& out) const override {
    const RunResult& run = *m.run;
    Json j;
    j["schema_version"] = kSchemaVersion;
    j["run_id"] = run.run_id;
    j["started_at"] = SanitizeUtf8(run.started_at);
    j["elapsed_ms"] = run.elapsed_ms;
    j["command"] = SanitizeUtf8(run.command);
    if (const TimeTotals totals = SumTiming(run); totals.cells > 0) {
      Json timing = ToJson(totals.sum);
      timing["cells"] = totals.cells;
      timing["children_ms"] = totals.child_ms;
      j["timing"] = std::move(timing);
    }
    j["verdict"] = m.passed ? "PASS" : "FAIL";
    Json counts = Json::object();
    for (size_t i = 0; i < kAllResultCodes.size(); ++i) {
      counts[ResultCodeName(kAllResultCodes[i])] = m.counts[i];
    }
    j["counts"] = std::move(counts);
    Json isa = Json::array();
    for (const std::string& f : run.machine.isa_features) isa.push_back(SanitizeUtf8(f));
    j["machine"] =
        Json{{"arch", SanitizeUtf8(run.machine.arch)}, {"cpu", SanitizeUtf8(run.machine.cpu)},
             {"os", SanitizeUtf8(run.machine.os)},     {"kernel", SanitizeUtf8(run.machine.kernel)},
             {"libc", SanitizeUtf8(run.machine.libc)}, {"isa_features", std::move(isa)}};
    const Diagnosis& d = run.diagnosis;
    Json details = Json::array();
    for (const std::string& s : d.details) details.push_back(SanitizeUtf8(s));
    Json divergences = Json::array();
    for (const Divergence& v : d.divergences) divergences.push_back(ToJson(v));
    j["diagnosis"] = Json{{"kind", DiagnosisKindName(d.kind)},
                          {"headline", SanitizeUtf8(d.headline)},
                          {"details", std::move(details)},
                          {"divergences", std::move(divergences)}};
    Json cells = Json::array();
    for (const CellResult& c : run.cells) cells.push_back(ToJson(c));
    j["cells"] = std::move(cells);
    Json dumps = Json::array();
    for (const DumpComparison& c : m.dumps) dumps.push_back(ToJson(c));
    j["logit_comparisons"] = std::move(dumps);
    // Strings were sanitized above; `replace` is a second line of defence.
    out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeJsonExporter() {
  return std::make_unique<JsonExporter>();
}

}  // namespace samebits::harness::report
