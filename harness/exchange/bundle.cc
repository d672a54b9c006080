// Bundles (bundle.h).
#include "harness/exchange/bundle.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/numerics/hash.h"
#include "harness/analysis/batch.h"
#include "harness/analysis/bounded_json.h"
#include "harness/analysis/machine_name.h"
#include "harness/analysis/numeric_profile.h"
#include "harness/analysis/shard.h"
#include "harness/exchange/bundle_dumps.h"
#include "harness/exchange/bundle_signature.h"
#include "harness/store/output_file.h"

namespace samebits::exchange {
namespace {

namespace fs = std::filesystem;
using harness::CellResult;
using harness::RunResult;
using nlohmann::json;

// The longest string a bundle may hold in one field (a stderr tail is the
// longest the harness writes).
constexpr size_t kMaxStringBytes = 1 << 20;

json MathJson(const harness::MathLibraryInfo& m) {
  return {{"profile", m.profile},
          {"name", m.name},
          {"version", m.version},
          {"fingerprint", m.fingerprint}};
}

json BuildJson(const harness::BuildInfo& b) {
  return {{"engine", b.engine},     {"version", b.version}, {"revision", b.revision},
          {"compiler", b.compiler}, {"flags", b.flags},     {"dirty", b.dirty}};
}

// The protocol's own JSON text of an object (records.h) as a JSON value,
// through the harness's one reader: the bundle keeps the protocol's format.
json ProtocolObject(const std::string& text) {
  return harness::ParseBoundedJson(text, harness::JsonLimits{});
}

json CellJson(const CellResult& c) {
  json steps = json::array();
  for (const harness::StepRecord& s : c.steps) {
    json step = {{"index", s.index},
                 {"kind", s.kind},
                 {"position", s.position},
                 {"input_token", s.input_token},
                 {"token", s.token},
                 {"fnv1a64", numerics::Hex16(s.fnv1a64)},
                 {"xxh3_64", numerics::Hex16(s.xxh3_64)},
                 {"argmax", s.argmax},
                 {"nan", s.nan_count},
                 {"inf", s.inf_count}};
    if (s.batch) {
      step["batch"] = {{"sequences", s.batch->sequences},
                       {"rows", s.batch->rows},
                       {"slot", s.batch->slot},
                       {"row", s.batch->row}};
    }
    steps.push_back(std::move(step));
  }
  json traces = json::array();
  for (const harness::TraceRecord& t : c.traces) {
    traces.push_back({{"position", t.position},
                      {"layer", t.layer},
                      {"op", t.op},
                      {"xxh3_64", numerics::Hex16(t.xxh3_64)}});
  }
  json config = {{"name", c.config.name},
                 {"kernels", c.config.kernels},
                 {"threads", c.config.threads},
                 {"isa", c.config.isa},
                 {"gemv_chunk_bytes", c.config.gemv_chunk_bytes},
                 {"math", c.config.math}};
  // Only the int8 profile names its dot product, so an exact cell's bundle
  // (and its content id) is as before.
  if (c.config.quant_dot != harness::kExactQuantDot) config["quant_dot"] = c.config.quant_dot;
  if (harness::IsBatched(c.config)) {
    config["batch"] = c.config.batch;
    config["batch_seed"] = c.config.batch_seed;
    config["batch_schedule"] = c.config.batch_schedule;
  }
  // An engine described by a profile: only then, so samebits-engine's
  // bundles (and their content ids) are as before.
  if (!c.config.engine.empty()) {
    config["engine"] = c.config.engine;
    config["params"] = c.config.params;
    config["baseline"] = c.config.baseline;
    if (!c.config.known_difference.empty()) {
      config["known_difference"] = c.config.known_difference;
    }
  }
  json cell = {{"checkpoint", c.checkpoint},
               {"scenario", c.scenario},
               {"config", std::move(config)},
               {"code", harness::ResultCodeName(c.code)},
               {"exit_code", c.exit_code},
               {"signal", c.signal},
               {"message", c.message},
               {"stderr_tail", c.stderr_tail},
               {"elapsed_ms", c.elapsed_ms},
               {"math", c.math ? MathJson(*c.math) : json(nullptr)},
               {"build", c.build ? BuildJson(*c.build) : json(nullptr)},
               {"weights_xxh3", c.weights_xxh3},
               {"vocab_size", c.vocab_size},
               {"isa_used", c.isa_used},
               {"scenario_xxh3", c.scenario_xxh3},
               {"steps", std::move(steps)},
               {"traces", std::move(traces)}};
  // Only the statistics: the content id does not depend on whether the rows
  // travel (bundle_dumps.h).
  if (c.dump) cell["dump"] = DumpStatisticsJson(*c.dump);
  // The protocol's own objects, only when there is one, so a CPU cell run
  // once has the bundle (and content id) it had before.
  if (c.device) cell["device"] = ProtocolObject(protocol::ToJsonText(*c.device));
  if (c.repeats) cell["repeats"] = ProtocolObject(protocol::ToJsonText(*c.repeats));
  if (c.sampling) cell["sampling"] = ProtocolObject(protocol::ToJsonText(*c.sampling));
  if (c.readback) cell["readback"] = ProtocolObject(protocol::ToJsonText(*c.readback));
  if (!c.server.empty()) cell["server"] = ProtocolObject(c.server);
  return cell;
}

json DivergenceJson(const harness::Divergence& d) {
  json j = {{"checkpoint", d.checkpoint},
            {"scenario", d.scenario},
            {"config_a", d.config_a},
            {"config_b", d.config_b},
            {"step_index", d.step_index},
            {"kind", d.kind},
            {"position", d.position},
            {"layer", d.layer ? json(*d.layer) : json(nullptr)},
            {"op", d.op},
            {"detail", d.detail}};
  if (!d.batch_place.empty()) j["batch_place"] = d.batch_place;
  return j;
}

// Returns whether `run` holds anything only version 2 carries (batch.h).
bool HasBatchFields(const RunResult& run) {
  for (const CellResult& c : run.cells) {
    if (harness::IsBatched(c.config)) return true;
    for (const harness::StepRecord& s : c.steps) {
      if (s.batch) return true;
    }
  }
  for (const harness::Divergence& d : run.diagnosis.divergences) {
    if (!d.batch_place.empty()) return true;
  }
  return false;
}

// Returns whether `run` holds a cell of a dot-product profile other than
// exact, which only version 6 carries.
bool HasQuantDot(const RunResult& run) {
  return std::any_of(run.cells.begin(), run.cells.end(), [](const CellResult& c) {
    return c.config.quant_dot != harness::kExactQuantDot;
  });
}

// Returns whether `run` holds a dump, which only version 3 carries.
bool HasDumps(const RunResult& run) {
  for (const CellResult& c : run.cells) {
    if (c.dump) return true;
  }
  return false;
}

// Returns whether `run` carries a machine name of its own, which only
// version 4 holds: one that is not the name its machine's description
// gives (DescribedMachineName), which a reader derives by itself.
bool HasOwnMachineName(const RunResult& run) {
  return harness::MachineNameOf(run) != harness::DescribedMachineName(run.machine);
}

// The run's canonical JSON, without its content id. nlohmann's objects keep
// their keys sorted, so equal runs give equal text. The machine's `name`
// is written only when it is the run's own (HasOwnMachineName): a run named
// after its description has the same content id as before names existed,
// so a store that named an old run, or an old bundle's, still finds it.
json RunJson(const RunResult& run) {
  json cells = json::array();
  for (const CellResult& c : run.cells) cells.push_back(CellJson(c));
  json divergences = json::array();
  for (const harness::Divergence& d : run.diagnosis.divergences)
    divergences.push_back(DivergenceJson(d));
  const harness::MachineInfo& m = run.machine;
  json machine = {{"arch", m.arch},     {"cpu", m.cpu},   {"os", m.os},
                  {"kernel", m.kernel}, {"libc", m.libc}, {"isa_features", m.isa_features}};
  if (HasOwnMachineName(run)) machine["name"] = run.machine_name;
  json out = {{"started_at", run.started_at},
              {"elapsed_ms", run.elapsed_ms},
              {"command", run.command},
              {"machine", std::move(machine)},
              {"diagnosis",
               {{"kind", harness::DiagnosisKindName(run.diagnosis.kind)},
                {"headline", run.diagnosis.headline},
                {"details", run.diagnosis.details},
                {"divergences", std::move(divergences)}}},
              {"cells", std::move(cells)}};
  // Only a shard has one: an ordinary run's content id is as before.
  if (run.shard) {
    out["shard"] = {
        {"group", run.shard->group}, {"index", run.shard->index}, {"count", run.shard->count}};
  }
  return out;
}

std::string ContentIdOf(const json& run_json) {
  const std::string text = run_json.dump();
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return numerics::Hex16(h.high64) + numerics::Hex16(h.low64);
}

// Reads one bundle's fields, checking each; errors name the file and the
// field's path ("runs[0].cells[2].threads").
class Reader {
 public:
  Reader(std::string file, int64_t version) : file_(std::move(file)), version_(version) {}

  [[noreturn]] void Fail(const std::string& where, const std::string& what) const {
    throw BundleError(file_ + ": " + where + ": " + what);
  }

  const json& Field(const json& object, const std::string& where, const char* key) const {
    if (!object.is_object()) Fail(where, "expected an object");
    auto it = object.find(key);
    if (it == object.end()) Fail(where, std::string("missing field \"") + key + "\"");
    return *it;
  }

  std::string String(const json& object, const std::string& where, const char* key) const {
    const json& v = Field(object, where, key);
    if (!v.is_string()) Fail(Join(where, key), "expected a string");
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > kMaxStringBytes) Fail(Join(where, key), "string longer than 1 MiB");
    return s;
  }

  int64_t Integer(const json& object, const std::string& where, const char* key, int64_t lo,
                  int64_t hi) const {
    const json& v = Field(object, where, key);
    if (!v.is_number_integer()) Fail(Join(where, key), "expected an integer");
    // An unsigned value above INT64_MAX would wrap: check it as unsigned first.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
      Fail(Join(where, key),
           "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi)
      Fail(Join(where, key), std::to_string(x) + " out of range [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "]");
    return x;
  }

  int Int(const json& object, const std::string& where, const char* key, int64_t lo) const {
    return static_cast<int>(Integer(object, where, key, lo, std::numeric_limits<int>::max()));
  }

  double Milliseconds(const json& object, const std::string& where, const char* key) const {
    const json& v = Field(object, where, key);
    if (!v.is_number()) Fail(Join(where, key), "expected a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0) Fail(Join(where, key), "expected a finite number >= 0");
    return x;
  }

  bool Bool(const json& object, const std::string& where, const char* key) const {
    const json& v = Field(object, where, key);
    if (!v.is_boolean()) Fail(Join(where, key), "expected true or false");
    return v.get<bool>();
  }

  uint64_t Hash(const json& object, const std::string& where, const char* key) const {
    const std::string s = String(object, where, key);
    uint64_t value = 0;
    if (s.size() != 16 || !numerics::ParseHex16(s, &value) || numerics::Hex16(value) != s)
      Fail(Join(where, key), "expected 16 lower-case hex digits");
    return value;
  }

  const json& Array(const json& object, const std::string& where, const char* key) const {
    const json& v = Field(object, where, key);
    if (!v.is_array()) Fail(Join(where, key), "expected an array");
    return v;
  }

  std::vector<std::string> Strings(const json& object, const std::string& where,
                                   const char* key) const {
    std::vector<std::string> out;
    const json& a = Array(object, where, key);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) Fail(Join(where, key) + Index(i), "expected a string");
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }

  static std::string Join(const std::string& where, const char* key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string Index(size_t i) {
    std::string out = std::to_string(i);  // built in place: GCC 12 warns falsely on "[" + s
    out.insert(out.begin(), '[');
    out += ']';
    return out;
  }

  harness::MathLibraryInfo Math(const json& m, const std::string& where) const {
    return {String(m, where, "profile"), String(m, where, "name"), String(m, where, "version"),
            String(m, where, "fingerprint")};
  }

  harness::BuildInfo Build(const json& b, const std::string& where) const {
    harness::BuildInfo out;
    out.engine = String(b, where, "engine");
    out.version = String(b, where, "version");
    out.revision = String(b, where, "revision");
    out.compiler = String(b, where, "compiler");
    out.flags = String(b, where, "flags");
    out.dirty = Bool(b, where, "dirty");
    return out;
  }

  // The configuration a cell ran under ("config").
  void Config(const json& j, const std::string& where, CellResult& c) const {
    const json& config = Field(j, where, "config");
    const std::string cw = Join(where, "config");
    c.config.name = String(config, cw, "name");
    c.config.kernels = String(config, cw, "kernels");
    c.config.threads = static_cast<int>(Integer(config, cw, "threads", 0, 1 << 16));
    c.config.isa = String(config, cw, "isa");
    c.config.gemv_chunk_bytes =
        Integer(config, cw, "gemv_chunk_bytes", 0, std::numeric_limits<int64_t>::max());
    c.config.math = String(config, cw, "math");
    // Absent before version 6, and for an exact cell since: exact.
    if (config.contains("quant_dot")) {
      if (version_ < kQuantDotBundleVersion)
        Fail(Join(cw, "quant_dot"), "a dot-product profile needs bundle version " +
                                        std::to_string(kQuantDotBundleVersion));
      c.config.quant_dot = String(config, cw, "quant_dot");
      if (c.config.quant_dot.empty() || c.config.quant_dot == harness::kExactQuantDot)
        Fail(Join(cw, "quant_dot"), "expected a profile other than exact (exact is not written)");
    }
    if (config.contains("batch")) {
      c.config.batch = Int(config, cw, "batch", 2);
      c.config.batch_seed = static_cast<uint64_t>(
          Integer(config, cw, "batch_seed", 0, std::numeric_limits<int64_t>::max()));
      c.config.batch_schedule = String(config, cw, "batch_schedule");
      if (c.config.batch_schedule != "together" && c.config.batch_schedule != "staggered")
        Fail(Join(cw, "batch_schedule"), "expected together or staggered");
    }
    if (config.contains("engine")) Profiled(config, cw, c.config);
  }

  // The fields of a configuration of an engine described by a profile.
  void Profiled(const json& config, const std::string& cw, harness::Configuration& c) const {
    c.engine = String(config, cw, "engine");
    if (c.engine.empty()) Fail(Join(cw, "engine"), "expected an engine's name");
    const json& params = Field(config, cw, "params");
    if (!params.is_object()) Fail(Join(cw, "params"), "expected an object of axis values");
    for (const auto& [axis, value] : params.items()) {
      c.params[axis] = String(params, Join(cw, "params"), axis.c_str());
    }
    c.baseline = Bool(config, cw, "baseline");
    if (config.contains("known_difference")) {
      c.known_difference = String(config, cw, "known_difference");
    }
  }

  // How the cell ended, and what built and ran it.
  void Outcome(const json& j, const std::string& where, CellResult& c) const {
    const std::string code = String(j, where, "code");
    if (!harness::ParseResultCode(code, &c.code))
      Fail(Join(where, "code"), "unknown result code \"" + code + "\"");
    c.exit_code = static_cast<int>(Integer(j, where, "exit_code", -1000, 1000));
    c.signal = static_cast<int>(Integer(j, where, "signal", 0, 128));
    c.message = String(j, where, "message");
    c.stderr_tail = String(j, where, "stderr_tail");
    c.elapsed_ms = Milliseconds(j, where, "elapsed_ms");
    const json& math = Field(j, where, "math");
    if (!math.is_null()) c.math = Math(math, Join(where, "math"));
    const json& build = Field(j, where, "build");
    if (!build.is_null()) c.build = Build(build, Join(where, "build"));
    c.weights_xxh3 = String(j, where, "weights_xxh3");
    if (!c.weights_xxh3.empty()) Hash(j, where, "weights_xxh3");
    c.vocab_size = Int(j, where, "vocab_size", 0);
    // The store keeps the vocabulary size with the weights' hash.
    if (c.weights_xxh3.empty() && c.vocab_size != 0)
      Fail(Join(where, "vocab_size"), "must be 0 when weights_xxh3 is empty");
    c.isa_used = String(j, where, "isa_used");
    // Absent from bundles written before it was recorded: unknown.
    if (j.contains("scenario_xxh3")) {
      c.scenario_xxh3 = String(j, where, "scenario_xxh3");
      if (!c.scenario_xxh3.empty()) Hash(j, where, "scenario_xxh3");
    }
    ProtocolObjects(j, where, c);
  }

  // The cell's device, repeats, sampling, read-back and server
  // (PROTOCOL.md's `hello.device`, `done.repeats`, `done.sampling`,
  // `hello.readback`, `hello.server`), each
  // absent when there is none, and checked as a child's records are.
  void ProtocolObjects(const json& j, const std::string& where, CellResult& c) const {
    for (const char* key : {"device", "repeats", "sampling", "readback", "server"}) {
      if (!j.contains(key)) continue;
      const json& object = j[key];
      if (!object.is_object()) Fail(Join(where, key), "expected an object");
      try {
        const std::string text = object.dump();
        const std::string_view name = key;
        if (name == "device") {
          c.device = protocol::ParseDeviceText(text);
        } else if (name == "repeats") {
          c.repeats = protocol::ParseRepeatsText(text);
        } else if (name == "sampling") {
          c.sampling = protocol::ParseSamplingText(text);
        } else if (name == "readback") {
          c.readback = protocol::ParseReadbackText(text);
        } else {
          c.server = protocol::CompactObjectText(text, "server");
        }
      } catch (const protocol::ProtocolError& e) {
        Fail(Join(where, key), e.what());
      }
    }
  }

  // Step `i` of a cell, at `sw` ("runs[0].cells[1].steps[2]").
  harness::StepRecord Step(const json& s, const std::string& sw, size_t i) const {
    harness::StepRecord st;
    st.index = Int(s, sw, "index", 0);
    if (st.index != static_cast<int>(i))
      Fail(Join(sw, "index"), "steps must be numbered 0, 1, 2, ...");
    st.kind = String(s, sw, "kind");
    if (st.kind != "prefill" && st.kind != "decode" && st.kind != "extend")
      Fail(Join(sw, "kind"), "expected prefill, decode or extend");
    st.position = Int(s, sw, "position", 0);
    st.input_token = Int(s, sw, "input_token", 0);
    st.token = Int(s, sw, "token", 0);
    st.fnv1a64 = Hash(s, sw, "fnv1a64");
    st.xxh3_64 = Hash(s, sw, "xxh3_64");
    st.argmax = Int(s, sw, "argmax", 0);
    st.nan_count = Int(s, sw, "nan", 0);
    st.inf_count = Int(s, sw, "inf", 0);
    if (s.contains("batch")) {
      const json& b = Field(s, sw, "batch");
      const std::string bw = Join(sw, "batch");
      harness::BatchPlace place;
      place.sequences = Int(b, bw, "sequences", 1);
      place.rows = Int(b, bw, "rows", 1);
      place.slot = Int(b, bw, "slot", 0);
      place.row = Int(b, bw, "row", 0);
      if (place.slot >= place.sequences || place.row >= place.rows)
        Fail(bw, "slot must be below sequences and row below rows");
      st.batch = place;
    }
    return st;
  }

  CellResult Cell(const json& j, const std::string& where) const {
    CellResult c;
    c.checkpoint = String(j, where, "checkpoint");
    c.scenario = String(j, where, "scenario");
    Config(j, where, c);
    Outcome(j, where, c);
    const json& steps = Array(j, where, "steps");
    for (size_t i = 0; i < steps.size(); ++i)
      c.steps.push_back(Step(steps[i], Join(where, "steps") + Index(i), i));
    if (j.contains("dump")) {
      const std::string dw = Join(where, "dump");
      if (version_ < kDumpBundleVersion) Fail(dw, "a dump needs bundle version 3");
      try {
        c.dump = ParseDumpJson(j.at("dump"), c);
      } catch (const DumpFieldError& e) {
        Fail(e.field.empty() ? dw : dw + "." + e.field, e.what());
      }
    }
    const json& traces = Array(j, where, "traces");
    for (size_t i = 0; i < traces.size(); ++i) {
      const std::string tw = Join(where, "traces") + Index(i);
      harness::TraceRecord t;
      t.position = Int(traces[i], tw, "position", 0);
      t.layer = Int(traces[i], tw, "layer", -1);
      t.op = String(traces[i], tw, "op");
      t.xxh3_64 = Hash(traces[i], tw, "xxh3_64");
      c.traces.push_back(std::move(t));
    }
    return c;
  }

  harness::Divergence Divergence(const json& j, const std::string& where) const {
    harness::Divergence d;
    d.checkpoint = String(j, where, "checkpoint");
    d.scenario = String(j, where, "scenario");
    d.config_a = String(j, where, "config_a");
    d.config_b = String(j, where, "config_b");
    d.step_index = Int(j, where, "step_index", -1);
    d.kind = String(j, where, "kind");
    d.position = Int(j, where, "position", 0);
    if (!Field(j, where, "layer").is_null()) d.layer = Int(j, where, "layer", -1);
    d.op = String(j, where, "op");
    d.detail = String(j, where, "detail");
    if (j.contains("batch_place")) d.batch_place = String(j, where, "batch_place");
    return d;
  }

  RunResult Run(const json& j, const std::string& where) const {
    RunResult run;
    run.started_at = String(j, where, "started_at");
    run.elapsed_ms = Milliseconds(j, where, "elapsed_ms");
    run.command = String(j, where, "command");
    const json& m = Field(j, where, "machine");
    const std::string mw = Join(where, "machine");
    run.machine.arch = String(m, mw, "arch");
    run.machine.cpu = String(m, mw, "cpu");
    run.machine.os = String(m, mw, "os");
    run.machine.kernel = String(m, mw, "kernel");
    run.machine.libc = String(m, mw, "libc");
    run.machine.isa_features = Strings(m, mw, "isa_features");
    if (m.contains("name")) {
      if (version_ < kMachineNameBundleVersion)
        Fail(Join(mw, "name"),
             "a machine name needs bundle version " + std::to_string(kMachineNameBundleVersion));
      run.machine_name = String(m, mw, "name");
      if (const std::string problem = harness::MachineNameProblem(run.machine_name);
          !problem.empty())
        Fail(Join(mw, "name"), problem);
    }
    run.machine_name = harness::MachineNameOf(run);
    if (j.contains("shard")) run.shard = Shard(j, where);
    const json& d = Field(j, where, "diagnosis");
    const std::string dw = Join(where, "diagnosis");
    const std::string kind = String(d, dw, "kind");
    if (!harness::ParseDiagnosisKind(kind, &run.diagnosis.kind))
      Fail(Join(dw, "kind"), "unknown diagnosis kind \"" + kind + "\"");
    run.diagnosis.headline = String(d, dw, "headline");
    run.diagnosis.details = Strings(d, dw, "details");
    const json& divergences = Array(d, dw, "divergences");
    for (size_t i = 0; i < divergences.size(); ++i)
      run.diagnosis.divergences.push_back(
          Divergence(divergences[i], Join(dw, "divergences") + Index(i)));
    const json& cells = Array(j, where, "cells");
    for (size_t i = 0; i < cells.size(); ++i)
      run.cells.push_back(Cell(cells[i], Join(where, "cells") + Index(i)));
    return run;
  }

 private:
  // A run's `shard` (bundle version 5): a group id as `gate --group` takes
  // and 1 <= index <= count <= kMaxShards.
  harness::ShardInfo Shard(const json& run, const std::string& where) const {
    const std::string sw = Join(where, "shard");
    if (version_ < kShardBundleVersion)
      Fail(sw, "a shard needs bundle version " + std::to_string(kShardBundleVersion));
    const json& s = Field(run, where, "shard");
    harness::ShardInfo shard;
    shard.group = String(s, sw, "group");
    if (const std::string problem = harness::ShardGroupProblem(shard.group); !problem.empty())
      Fail(Join(sw, "group"), problem);
    shard.count = static_cast<int>(Integer(s, sw, "count", 1, harness::kMaxShards));
    shard.index = static_cast<int>(Integer(s, sw, "index", 1, shard.count));
    return shard;
  }

  std::string file_;
  int64_t version_;
};

}  // namespace

std::string ContentId(const RunResult& run) {
  return ContentIdOf(RunJson(run));
}

std::string FormatBundle(const std::vector<RunResult>& runs, const BundleKey* sign) {
  json bundle_runs = json::array();
  int version = kOldestBundleVersion;
  for (const RunResult& run : runs) {
    json j = RunJson(run);
    j["content_id"] = ContentIdOf(j);
    for (size_t i = 0; i < run.cells.size(); ++i) {
      if (run.cells[i].dump) AddDumpRows(*run.cells[i].dump, j["cells"][i]["dump"]);
    }
    bundle_runs.push_back(std::move(j));
    if (HasBatchFields(run)) version = std::max(version, kBatchBundleVersion);
    if (HasDumps(run)) version = std::max(version, kDumpBundleVersion);
    if (HasOwnMachineName(run)) version = std::max(version, kMachineNameBundleVersion);
    if (run.shard) version = std::max(version, kShardBundleVersion);
    if (HasQuantDot(run)) version = std::max(version, kQuantDotBundleVersion);
  }
  json bundle = {{"format", kBundleFormat}, {"version", version}, {"runs", std::move(bundle_runs)}};
  if (sign != nullptr) SignBundle(bundle, *sign);
  return bundle.dump(1) + "\n";
}

void WriteBundle(const std::vector<RunResult>& runs, const std::string& path,
                 const BundleKey* sign) {
  store::WriteOutputFile(path, FormatBundle(runs, sign));
}

std::vector<RunResult> ParseBundle(const std::string& text, const std::string& file,
                                   const BundleKey* verify) {
  json doc;
  try {
    // Within limits of depth, count and memory: a bundle is untrusted.
    doc = harness::ParseBoundedJson(text, harness::LimitsForSize(text.size()));
  } catch (const std::runtime_error& e) {
    throw BundleError(file + ": not a samebits bundle: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kBundleFormat)
    throw BundleError(file + ": not a samebits bundle (\"format\" is not \"" +
                      std::string(kBundleFormat) + "\")");
  // Before any field is read: an edited signed bundle is refused for its
  // signature, whatever else its edit broke.
  CheckBundleSignature(doc, file, verify);
  const int64_t version =
      Reader(file, 0).Integer(doc, "", "version", 0, std::numeric_limits<int>::max());
  const Reader r(file, version);
  if (version < kOldestBundleVersion || version > kBundleVersion) {
    throw BundleError(file + ": bundle version " + std::to_string(version) +
                      " is not supported (this samebits reads versions " +
                      std::to_string(kOldestBundleVersion) + " to " +
                      std::to_string(kBundleVersion) +
                      (version > kBundleVersion ? "; it comes from a newer samebits)" : ")"));
  }
  const json& runs = r.Array(doc, "", "runs");
  std::vector<RunResult> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where = "runs" + Reader::Index(i);
    const std::string claimed = r.String(runs[i], where, "content_id");
    RunResult run = r.Run(runs[i], where);
    // The id must be that of the content as read back, so a bundle edited
    // by hand (or damaged) is refused rather than imported under a false id.
    const std::string actual = ContentId(run);
    if (claimed != actual)
      r.Fail(where + ".content_id",
             "does not match the run's content (" + actual +
                 "): the bundle was modified or damaged after it was written");
    out.push_back(std::move(run));
  }
  return out;
}

std::vector<RunResult> ReadBundle(const std::string& path, uint64_t max_bytes,
                                  const BundleKey* verify) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw BundleError(path + ": no such bundle file");
  std::string text;
  try {
    // Up to the limit and no further, whatever the file is (import /dev/stdin).
    text = harness::ReadBoundedFile(path, max_bytes);
  } catch (const std::runtime_error& e) {
    throw BundleError(path + ": " + e.what() + " (a bundle)");
  }
  return ParseBundle(text, path, verify);
}

}  // namespace samebits::exchange
