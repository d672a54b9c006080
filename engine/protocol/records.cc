#include "engine/protocol/records.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/numerics/hash.h"

namespace samebits::protocol {
namespace {

using nlohmann::json;
// Records are written with `ordered_json` so that fields appear in the
// documented order, which keeps the lines readable for a person.
using ojson = nlohmann::ordered_json;

// Serialises compactly; invalid UTF-8 (a path or message from outside) is
// replaced rather than thrown on, because a record must always get out.
std::string Dump(const ojson& j) {
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

[[noreturn]] void Fail(const std::string& where, const std::string& problem) {
  throw ProtocolError(where + ": " + problem);
}

const json& Field(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) Fail(where, std::string("missing field '") + key + "'");
  return *it;
}

std::string GetString(const json& object, const char* key, const std::string& where) {
  const json& v = Field(object, key, where);
  if (!v.is_string()) Fail(where, std::string("field '") + key + "' must be a string");
  return v.get<std::string>();
}

// Returns the string field `key`, or `fallback` when it is absent (fields a
// minimal engine may leave out; PROTOCOL.md lists them).
std::string GetOptionalString(const json& object, const char* key, const std::string& where,
                              const std::string& fallback) {
  return object.contains(key) ? GetString(object, key, where) : fallback;
}

bool GetBool(const json& object, const char* key, const std::string& where) {
  const json& v = Field(object, key, where);
  if (!v.is_boolean()) Fail(where, std::string("field '") + key + "' must be true or false");
  return v.get<bool>();
}

int64_t GetInt(const json& object, const char* key, const std::string& where, int64_t lo,
               int64_t hi) {
  const json& v = Field(object, key, where);
  if (!v.is_number_integer()) Fail(where, std::string("field '") + key + "' must be an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
    Fail(where, std::string("field '") + key + "' is out of range");
  }
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) Fail(where, std::string("field '") + key + "' is out of range");
  return x;
}

int GetInt32(const json& object, const char* key, const std::string& where, int lo) {
  return static_cast<int>(GetInt(object, key, where, lo, std::numeric_limits<int32_t>::max()));
}

uint64_t GetHash(const json& object, const char* key, const std::string& where) {
  const std::string text = GetString(object, key, where);
  uint64_t value = 0;
  if (!ParseHashHex(text, &value)) {
    Fail(where,
         std::string("field '") + key + "' must be 16 lower-case hex digits, not '" + text + "'");
  }
  return value;
}

const json& GetObject(const json& object, const char* key, const std::string& where) {
  const json& v = Field(object, key, where);
  if (!v.is_object()) Fail(where, std::string("field '") + key + "' must be an object");
  return v;
}

// The optional `device` object of a hello: `kind` is required and names
// the accelerator; the rest say which one, each optional.
DeviceInfo ParseDevice(const json& j) {
  const std::string where = "hello.device";
  DeviceInfo d;
  d.kind = GetString(j, "kind", where);
  if (d.kind.empty()) Fail(where, "field 'kind' must name the device, not be empty");
  d.name = GetOptionalString(j, "name", where, "");
  d.capability = GetOptionalString(j, "capability", where, "");
  if (j.contains("multiprocessors")) d.multiprocessors = GetInt32(j, "multiprocessors", where, 0);
  d.driver = GetOptionalString(j, "driver", where, "");
  d.libraries = GetOptionalString(j, "libraries", where, "");
  return d;
}

// The optional `readback` object of a hello: a kind the harness knows (it
// must never take a partial read-back for whole rows), with `k` for "topk".
Readback ParseReadback(const json& j) {
  const std::string where = "hello.readback";
  Readback r;
  r.kind = GetString(j, "kind", where);
  if (r.kind == "topk") {
    r.k = GetInt32(j, "k", where, 1);
  } else if (r.kind != "full" && r.kind != "tokens") {
    Fail(where, "field 'kind' must be \"full\", \"topk\" or \"tokens\", not '" + r.kind + "'");
  }
  return r;
}

// The optional `repeats` object of a done record: its counts must be
// consistent (at least one repeat, no more distinct outputs than repeats,
// and a first differing repeat and step exactly when there were several).
Repeats ParseRepeats(const json& j) {
  const std::string where = "done.repeats";
  Repeats r;
  r.count = GetInt32(j, "count", where, 1);
  r.distinct = GetInt32(j, "distinct", where, 1);
  if (r.distinct > r.count) Fail(where, "'distinct' must not exceed 'count'");
  if (r.distinct == 1) {
    if (j.contains("first_repeat") || j.contains("first_step"))
      Fail(where, "'first_repeat' and 'first_step' come only with more than one distinct output");
    return r;
  }
  r.first_repeat = GetInt32(j, "first_repeat", where, 2);
  r.first_step = GetInt32(j, "first_step", where, 0);
  if (r.first_repeat > r.count) Fail(where, "'first_repeat' must not exceed 'count'");
  return r;
}

// The optional `sampling` object of a done record: at least two seeds (one
// cannot show that seeds differ), a finite temperature above 0, and counts
// that fit the seeds.
Sampling ParseSampling(const json& j) {
  const std::string where = "done.sampling";
  Sampling s;
  s.seeds = GetInt32(j, "seeds", where, 2);
  const json& temperature = Field(j, "temperature", where);
  if (!temperature.is_number() || !std::isfinite(temperature.get<double>()) ||
      !(temperature.get<double>() > 0.0)) {
    Fail(where, "field 'temperature' must be a finite number above 0");
  }
  s.temperature = temperature.get<double>();
  s.tokens = GetInt32(j, "tokens", where, 1);
  s.distinct = GetInt32(j, "distinct", where, 1);
  if (s.distinct > s.seeds) Fail(where, "'distinct' must not exceed 'seeds'");
  s.unstable_seed = GetInt32(j, "unstable_seed", where, 0);
  if (s.unstable_seed > s.seeds) Fail(where, "'unstable_seed' must not exceed 'seeds'");
  return s;
}

Hello ParseHello(const json& j) {
  Hello h;
  const int64_t version = GetInt(j, "protocol", "hello", 0, std::numeric_limits<int32_t>::max());
  if (version != kProtocolVersion) {
    Fail("hello", "protocol version " + std::to_string(version) +
                      " is not supported (this reader speaks version " +
                      std::to_string(kProtocolVersion) + ")");
  }
  h.protocol = static_cast<int>(version);
  const json& engine = GetObject(j, "engine", "hello");
  h.engine.name = GetString(engine, "name", "hello.engine");
  h.engine.version = GetString(engine, "version", "hello.engine");
  const json& build = GetObject(j, "build", "hello");
  h.build.revision = GetString(build, "revision", "hello.build");
  h.build.dirty = GetBool(build, "dirty", "hello.build");
  h.build.compiler = GetString(build, "compiler", "hello.build");
  h.build.flags = GetString(build, "flags", "hello.build");
  const json& platform = GetObject(j, "platform", "hello");
  h.platform.arch = GetString(platform, "arch", "hello.platform");
  const json& features = Field(platform, "isa_features", "hello.platform");
  if (!features.is_array()) Fail("hello.platform", "field 'isa_features' must be an array");
  for (const json& f : features) {
    if (!f.is_string()) Fail("hello.platform", "field 'isa_features' must hold strings");
    h.platform.isa_features.push_back(f.get<std::string>());
  }
  h.platform.os = GetString(platform, "os", "hello.platform");
  h.platform.kernel = GetOptionalString(platform, "kernel", "hello.platform", "");
  h.platform.libc = GetString(platform, "libc", "hello.platform");
  h.platform.cpu = GetString(platform, "cpu", "hello.platform");
  const json& math = GetObject(j, "math", "hello");
  h.math.profile = GetString(math, "profile", "hello.math");
  h.math.library = GetString(math, "library", "hello.math");
  h.math.version = GetString(math, "version", "hello.math");
  h.math.fingerprint = GetString(math, "fingerprint", "hello.math");
  const json& config = GetObject(j, "config", "hello");
  h.config.checkpoint = GetString(config, "checkpoint", "hello.config");
  h.config.scenario = GetString(config, "scenario", "hello.config");
  // samebits-engine's switches: another engine may have none of them (its
  // own are checked by its profile's echo), and samebits-engine's cells
  // check these against what was asked, so a missing one never passes there.
  h.config.kernels = GetOptionalString(config, "kernels", "hello.config", "");
  h.config.threads = config.contains("threads") ? GetInt32(config, "threads", "hello.config", 1)
                                                : 0;  // 0: not given
  h.config.isa = GetOptionalString(config, "isa", "hello.config", "");
  if (config.contains("gemv_chunk_bytes")) {
    h.config.gemv_chunk_bytes =
        GetInt(config, "gemv_chunk_bytes", "hello.config", 0, std::numeric_limits<int64_t>::max());
  }
  h.config.math = GetOptionalString(config, "math", "hello.config", h.math.profile);
  h.config.quant_dot = GetOptionalString(config, "quant_dot", "hello.config", "exact");
  if (h.config.quant_dot != "exact" && h.config.quant_dot != "int8") {
    Fail("hello.config",
         "field 'quant_dot' must be \"exact\" or \"int8\", not '" + h.config.quant_dot + "'");
  }
  if (config.contains("batch")) {
    h.config.batch = GetInt32(config, "batch", "hello.config", 1);
    h.config.batch_seed = static_cast<uint64_t>(
        GetInt(config, "batch_seed", "hello.config", 0, std::numeric_limits<int64_t>::max()));
    h.config.batch_schedule = GetString(config, "batch_schedule", "hello.config");
    if (h.config.batch_schedule != "together" && h.config.batch_schedule != "staggered") {
      Fail("hello.config", "field 'batch_schedule' must be \"together\" or \"staggered\", not '" +
                               h.config.batch_schedule + "'");
    }
  }
  const json& checkpoint = GetObject(j, "checkpoint", "hello");
  h.checkpoint.spec = GetString(checkpoint, "spec", "hello.checkpoint");
  h.checkpoint.weights_xxh3 = GetString(checkpoint, "weights_xxh3", "hello.checkpoint");
  h.checkpoint.vocab_size = GetInt32(checkpoint, "vocab_size", "hello.checkpoint", 1);
  if (j.contains("device")) h.device = ParseDevice(GetObject(j, "device", "hello"));
  if (j.contains("readback")) h.readback = ParseReadback(GetObject(j, "readback", "hello"));
  if (j.contains("server")) h.server = GetObject(j, "server", "hello").dump();
  if (j.contains("tuning")) h.tuning = GetObject(j, "tuning", "hello").dump();
  return h;
}

Step ParseStep(const json& j) {
  Step s;
  s.index = GetInt32(j, "index", "step", 0);
  s.kind = GetString(j, "kind", "step");
  if (s.kind != "prefill" && s.kind != "decode" && s.kind != "extend") {
    Fail("step",
         "field 'kind' must be \"prefill\", \"decode\" or \"extend\", not '" + s.kind + "'");
  }
  s.position = GetInt32(j, "position", "step", 0);
  s.input_token = GetInt32(j, "input_token", "step", 0);
  s.token = GetInt32(j, "token", "step", 0);
  s.fnv1a64 = GetHash(j, "fnv1a64", "step");
  s.xxh3_64 = GetHash(j, "xxh3_64", "step");
  s.argmax = GetInt32(j, "argmax", "step", 0);
  s.nan_count = GetInt32(j, "nan", "step", 0);
  s.inf_count = GetInt32(j, "inf", "step", 0);
  if (j.contains("text")) s.text = GetString(j, "text", "step");
  if (j.contains("batch")) {
    const json& batch = GetObject(j, "batch", "step");
    BatchPlace place;
    place.sequences = GetInt32(batch, "sequences", "step.batch", 1);
    place.rows = GetInt32(batch, "rows", "step.batch", place.sequences);
    place.slot = GetInt32(batch, "slot", "step.batch", 0);
    place.row = GetInt32(batch, "row", "step.batch", 0);
    if (place.slot >= place.sequences || place.row >= place.rows) {
      Fail("step.batch", "'slot' must be below 'sequences' and 'row' below 'rows'");
    }
    s.batch = place;
  }
  return s;
}

Trace ParseTrace(const json& j) {
  Trace t;
  t.position = GetInt32(j, "position", "trace", 0);
  t.layer = GetInt32(j, "layer", "trace", -1);
  t.op = GetString(j, "op", "trace");
  if (t.op.empty()) Fail("trace", "field 'op' must not be empty");
  t.xxh3_64 = GetHash(j, "xxh3_64", "trace");
  return t;
}

Done ParseDone(const json& j) {
  Done d;
  d.steps = GetInt(j, "steps", "done", 0, std::numeric_limits<int64_t>::max());
  const json& elapsed = Field(j, "elapsed_ms", "done");
  if (!elapsed.is_number()) Fail("done", "field 'elapsed_ms' must be a number");
  d.elapsed_ms = elapsed.get<double>();
  if (!(d.elapsed_ms >= 0.0) || !std::isfinite(d.elapsed_ms)) {
    Fail("done", "field 'elapsed_ms' must be a finite non-negative number");
  }
  if (j.contains("load_ms")) {
    const json& load = j["load_ms"];
    if (!load.is_number() || !(load.get<double>() >= 0.0) || !std::isfinite(load.get<double>())) {
      Fail("done", "field 'load_ms' must be a finite non-negative number");
    }
    d.load_ms = load.get<double>();
  }
  if (j.contains("repeats")) d.repeats = ParseRepeats(GetObject(j, "repeats", "done"));
  if (j.contains("sampling")) d.sampling = ParseSampling(GetObject(j, "sampling", "done"));
  // The phase split is optional, but all four fields or none.
  const char* phase_fields[] = {"prefill_ms", "prefill_tokens", "decode_ms", "decode_tokens"};
  int present = 0;
  for (const char* f : phase_fields) present += j.contains(f) ? 1 : 0;
  if (present == 0) return d;
  if (present != 4) {
    Fail("done",
         "fields 'prefill_ms', 'prefill_tokens', 'decode_ms' and 'decode_tokens' come "
         "together or not at all");
  }
  PhaseTimes p;
  for (const auto& [name, value] :
       {std::pair{"prefill_ms", &p.prefill_ms}, std::pair{"decode_ms", &p.decode_ms}}) {
    const json& ms = j[name];
    if (!ms.is_number() || !(ms.get<double>() >= 0.0) || !std::isfinite(ms.get<double>())) {
      Fail("done", std::string("field '") + name + "' must be a finite non-negative number");
    }
    *value = ms.get<double>();
  }
  p.prefill_tokens = GetInt(j, "prefill_tokens", "done", 0, std::numeric_limits<int64_t>::max());
  p.decode_tokens = GetInt(j, "decode_tokens", "done", 0, std::numeric_limits<int64_t>::max());
  d.phases = p;
  return d;
}

Error ParseError(const json& j) {
  return Error{GetString(j, "message", "error")};
}

Unsupported ParseUnsupported(const json& j) {
  Unsupported u{GetString(j, "reason", "unsupported")};
  if (u.reason.empty()) Fail("unsupported", "field 'reason' must say why, not be empty");
  return u;
}

ojson DeviceObject(const DeviceInfo& d) {
  ojson j = ojson::object();
  j["kind"] = d.kind;
  j["name"] = d.name;
  j["capability"] = d.capability;
  j["multiprocessors"] = d.multiprocessors;
  j["driver"] = d.driver;
  j["libraries"] = d.libraries;
  return j;
}

ojson RepeatsObject(const Repeats& r) {
  ojson j = ojson::object();
  j["count"] = r.count;
  j["distinct"] = r.distinct;
  if (r.distinct > 1) {
    j["first_repeat"] = r.first_repeat;
    j["first_step"] = r.first_step;
  }
  return j;
}

ojson SamplingObject(const Sampling& s) {
  ojson j = ojson::object();
  j["seeds"] = s.seeds;
  j["temperature"] = s.temperature;
  j["tokens"] = s.tokens;
  j["distinct"] = s.distinct;
  j["unstable_seed"] = s.unstable_seed;
  return j;
}

ojson ReadbackObject(const Readback& r) {
  ojson j = {{"kind", r.kind}};
  if (r.kind == "topk") j["k"] = r.k;
  return j;
}

// Parses `text` as one JSON object for `what`. Throws ProtocolError.
json ParseObjectText(std::string_view text, const std::string& what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) Fail(what, "not a JSON object: " + std::string(text));
  return j;
}

}  // namespace

std::string DescribeReadback(const Readback& r) {
  if (r.kind == "topk") {
    return "the chosen token and the top " + std::to_string(r.k) +
           " (token, log-probability) pairs of each step, as returned";
  }
  if (r.kind == "tokens") return "the chosen token of each step";
  return "every step's whole logit row";
}

Readback NarrowerReadback(const std::optional<Readback>& so_far, const Readback& next) {
  const auto rank = [](const Readback& r) -> long long {
    if (r.kind == "tokens") return 0;
    if (r.kind == "topk") return 1 + r.k;
    return std::numeric_limits<long long>::max();
  };
  return so_far && rank(*so_far) <= rank(next) ? *so_far : next;
}

std::string ToJsonText(const DeviceInfo& device) {
  return Dump(DeviceObject(device));
}

DeviceInfo ParseDeviceText(std::string_view text) {
  return ParseDevice(ParseObjectText(text, "device"));
}

std::string ToJsonText(const Repeats& repeats) {
  return Dump(RepeatsObject(repeats));
}

Repeats ParseRepeatsText(std::string_view text) {
  return ParseRepeats(ParseObjectText(text, "repeats"));
}

std::string ToJsonText(const Sampling& sampling) {
  return Dump(SamplingObject(sampling));
}

Sampling ParseSamplingText(std::string_view text) {
  return ParseSampling(ParseObjectText(text, "sampling"));
}

std::string ToJsonText(const Readback& readback) {
  return Dump(ReadbackObject(readback));
}

Readback ParseReadbackText(std::string_view text) {
  return ParseReadback(ParseObjectText(text, "readback"));
}

std::string CompactObjectText(std::string_view text, const std::string& where) {
  return ParseObjectText(text, where).dump();
}

std::string HashToHex(uint64_t value) {
  return numerics::Hex16(value);
}

bool ParseHashHex(std::string_view text, uint64_t* out) {
  return numerics::ParseHex16(text, out);
}

std::string ToJsonLine(const Hello& h) {
  ojson j;
  j["type"] = "hello";
  j["protocol"] = h.protocol;
  j["engine"] = {{"name", h.engine.name}, {"version", h.engine.version}};
  j["build"] = {{"revision", h.build.revision},
                {"dirty", h.build.dirty},
                {"compiler", h.build.compiler},
                {"flags", h.build.flags}};
  j["platform"] = {{"arch", h.platform.arch}, {"isa_features", h.platform.isa_features},
                   {"os", h.platform.os},     {"kernel", h.platform.kernel},
                   {"libc", h.platform.libc}, {"cpu", h.platform.cpu}};
  j["math"] = {{"profile", h.math.profile},
               {"library", h.math.library},
               {"version", h.math.version},
               {"fingerprint", h.math.fingerprint}};
  j["config"] = {{"checkpoint", h.config.checkpoint},
                 {"scenario", h.config.scenario},
                 {"kernels", h.config.kernels},
                 {"threads", h.config.threads},
                 {"isa", h.config.isa},
                 {"gemv_chunk_bytes", h.config.gemv_chunk_bytes},
                 {"math", h.config.math}};
  if (h.config.quant_dot != "exact") j["config"]["quant_dot"] = h.config.quant_dot;
  if (h.config.batch > 1) {
    j["config"]["batch"] = h.config.batch;
    j["config"]["batch_seed"] = h.config.batch_seed;
    j["config"]["batch_schedule"] = h.config.batch_schedule;
  }
  j["checkpoint"] = {{"spec", h.checkpoint.spec},
                     {"weights_xxh3", h.checkpoint.weights_xxh3},
                     {"vocab_size", h.checkpoint.vocab_size}};
  if (h.device) j["device"] = DeviceObject(*h.device);
  if (h.readback) j["readback"] = ReadbackObject(*h.readback);
  if (!h.server.empty()) j["server"] = ojson::parse(h.server);
  if (!h.tuning.empty()) j["tuning"] = ojson::parse(h.tuning);
  return Dump(j);
}

std::string ToJsonLine(const Step& s) {
  ojson j = ojson::object();
  j["type"] = "step";
  j["index"] = s.index;
  j["kind"] = s.kind;
  j["position"] = s.position;
  j["input_token"] = s.input_token;
  j["token"] = s.token;
  j["fnv1a64"] = HashToHex(s.fnv1a64);
  j["xxh3_64"] = HashToHex(s.xxh3_64);
  j["argmax"] = s.argmax;
  j["nan"] = s.nan_count;
  j["inf"] = s.inf_count;
  if (s.text) j["text"] = *s.text;
  if (s.batch) {
    j["batch"] = {{"sequences", s.batch->sequences},
                  {"rows", s.batch->rows},
                  {"slot", s.batch->slot},
                  {"row", s.batch->row}};
  }
  return Dump(j);
}

std::string ToJsonLine(const Trace& t) {
  ojson j = ojson::object();
  j["type"] = "trace";
  j["position"] = t.position;
  j["layer"] = t.layer;
  j["op"] = t.op;
  j["xxh3_64"] = HashToHex(t.xxh3_64);
  return Dump(j);
}

std::string ToJsonLine(const Done& d) {
  ojson j = ojson::object();
  j["type"] = "done";
  j["steps"] = d.steps;
  j["elapsed_ms"] = d.elapsed_ms;
  if (d.phases) {
    j["prefill_ms"] = d.phases->prefill_ms;
    j["prefill_tokens"] = d.phases->prefill_tokens;
    j["decode_ms"] = d.phases->decode_ms;
    j["decode_tokens"] = d.phases->decode_tokens;
  }
  if (d.load_ms) j["load_ms"] = *d.load_ms;
  if (d.repeats) j["repeats"] = RepeatsObject(*d.repeats);
  if (d.sampling) j["sampling"] = SamplingObject(*d.sampling);
  return Dump(j);
}

std::string ToJsonLine(const Error& e) {
  ojson j = ojson::object();
  j["type"] = "error";
  j["message"] = e.message;
  return Dump(j);
}

std::string ToJsonLine(const Unsupported& u) {
  ojson j = ojson::object();
  j["type"] = "unsupported";
  j["reason"] = u.reason;
  return Dump(j);
}

std::string ToJsonLine(const Capabilities& c) {
  ojson j = ojson::object();
  j["type"] = "capabilities";
  j["protocol"] = kProtocolVersion;
  ojson unavailable = ojson::array();
  for (const Unavailable& u : c.unavailable) {
    ojson entry = ojson::object();
    entry["axis"] = u.axis;
    entry["value"] = u.value;
    entry["reason"] = u.reason;
    unavailable.push_back(entry);
  }
  j["unavailable"] = unavailable;
  if (c.synthetic) {
    ojson synthetic = ojson::object();
    synthetic["names"] = c.synthetic->names;
    synthetic["types"] = c.synthetic->types;
    j["synthetic"] = synthetic;
  }
  if (c.serve) j["serve"] = true;
  return Dump(j);
}

namespace {

// Returns `line` parsed, refusing a key that appears twice in one object:
// nlohmann keeps the last, so a step with two `fnv1a64` keys would be judged
// on one while a reader of the transcript sees the other. Throws
// json::parse_error for text that is not JSON, ProtocolError for a repeat.
json ParseOnce(std::string_view line) {
  std::vector<std::set<std::string>> open;  // the keys of each open object
  std::string repeated;
  json j = json::parse(line, [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == json::parse_event_t::key && !open.empty() && repeated.empty() &&
        !open.back().insert(parsed.get<std::string>()).second) {
      repeated = parsed.get<std::string>();
    }
    return true;
  });
  if (!repeated.empty()) {
    throw ProtocolError("the key '" + repeated +
                        "' appears twice in one object (write each key once)");
  }
  return j;
}

// Returns the `synthetic` object of a capabilities record: two arrays of
// non-empty strings.
SyntheticCheckpoints ParseSyntheticCheckpoints(const json& object) {
  const char* where = "capabilities.synthetic";
  if (!object.is_object()) Fail("capabilities", "field 'synthetic' must be an object");
  const auto strings = [&](const char* key) {
    const json& list = Field(object, key, where);
    if (!list.is_array()) Fail(where, std::string("field '") + key + "' must be an array");
    std::vector<std::string> out;
    for (const json& item : list) {
      if (!item.is_string() || item.get<std::string>().empty()) {
        Fail(where, std::string("each of '") + key + "' must be a non-empty string");
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  };
  return {strings("names"), strings("types")};
}

}  // namespace

Capabilities ParseCapabilities(std::string_view line) {
  json j;
  try {
    j = ParseOnce(line);
  } catch (const json::parse_error&) {
    throw ProtocolError("capabilities: not a JSON line");
  }
  if (!j.is_object() || j.value("type", "") != "capabilities") {
    throw ProtocolError("capabilities: the line is not a `capabilities` record");
  }
  const json& list = Field(j, "unavailable", "capabilities");
  if (!list.is_array()) Fail("capabilities", "field 'unavailable' must be an array");
  Capabilities c;
  for (const json& entry : list) {
    if (!entry.is_object()) Fail("capabilities", "each of 'unavailable' must be an object");
    Unavailable u{GetString(entry, "axis", "capabilities.unavailable"),
                  GetString(entry, "value", "capabilities.unavailable"),
                  GetString(entry, "reason", "capabilities.unavailable")};
    if (u.axis.empty() || u.value.empty() || u.reason.empty()) {
      Fail("capabilities.unavailable", "'axis', 'value' and 'reason' must not be empty");
    }
    c.unavailable.push_back(std::move(u));
  }
  if (const auto serve = j.find("serve"); serve != j.end()) {
    if (!serve->is_boolean()) Fail("capabilities", "field 'serve' must be true or false");
    c.serve = serve->get<bool>();
  }
  if (const auto synthetic = j.find("synthetic"); synthetic != j.end()) {
    c.synthetic = ParseSyntheticCheckpoints(*synthetic);
  }
  return c;
}

Record ParseRecord(std::string_view line) {
  json j;
  try {
    j = ParseOnce(line);
  } catch (const json::parse_error&) {
    std::string shown(line.substr(0, 80));
    throw ProtocolError("not a JSON line: '" + shown + (line.size() > 80 ? "...'" : "'"));
  }
  if (!j.is_object()) throw ProtocolError("a record must be a JSON object");
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    throw ProtocolError("a record must have a string field 'type'");
  }
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "hello") return ParseHello(j);
  if (t == "step") return ParseStep(j);
  if (t == "trace") return ParseTrace(j);
  if (t == "done") return ParseDone(j);
  if (t == "error") return ParseError(j);
  if (t == "unsupported") return ParseUnsupported(j);
  throw ProtocolError("unknown record type '" + t + "'");
}

void RecordWriter::Write(const Record& record) {
  const std::string line = std::visit([](const auto& r) { return ToJsonLine(r); }, record) + "\n";
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

void TranscriptReader::Fail(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  transcript_.failure = why;
}

void TranscriptReader::FeedLine(std::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (failed_) return;
  const std::string at = "line " + std::to_string(line_number_) + ": ";
  if (line.empty()) return Fail(at + "an empty line is not a record");
  if (transcript_.done) return Fail(at + "output after the `done` record");
  Record record;
  try {
    record = ParseRecord(line);
  } catch (const ProtocolError& e) {
    return Fail(at + e.what());
  }
  if (auto* error = std::get_if<Error>(&record)) {
    transcript_.error = *error;
    return Fail("the engine reported an error: " + error->message);
  }
  if (auto* unsupported = std::get_if<Unsupported>(&record)) {
    transcript_.unsupported = *unsupported;
    return Fail("the engine cannot run this here: " + unsupported->reason);
  }
  if (auto* hello = std::get_if<Hello>(&record)) {
    if (transcript_.hello) return Fail(at + "a second `hello` record");
    transcript_.hello = std::move(*hello);
    return;
  }
  if (!transcript_.hello) return Fail(at + "the first record must be `hello`");
  if (auto* step = std::get_if<Step>(&record)) {
    if (step->index != static_cast<int>(transcript_.steps.size())) {
      return Fail(at + "step index " + std::to_string(step->index) + " where " +
                  std::to_string(transcript_.steps.size()) + " was expected");
    }
    transcript_.steps.push_back(std::move(*step));
  } else if (auto* trace = std::get_if<Trace>(&record)) {
    transcript_.traces.push_back(std::move(*trace));
  } else if (auto* done = std::get_if<Done>(&record)) {
    if (done->steps != static_cast<int64_t>(transcript_.steps.size())) {
      return Fail(at + "`done` counts " + std::to_string(done->steps) + " steps, but " +
                  std::to_string(transcript_.steps.size()) + " were printed");
    }
    transcript_.done = *done;
  }
}

void TranscriptReader::Feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t start = 0;
  for (size_t nl = pending_.find('\n', start); nl != std::string::npos;
       nl = pending_.find('\n', start)) {
    FeedLine(std::string_view(pending_).substr(start, nl - start));
    start = nl + 1;
  }
  pending_.erase(0, start);
}

Transcript TranscriptReader::Finish() {
  if (!pending_.empty()) {
    // A last line without its newline still counts; a child killed mid-line
    // leaves garbage here, which the parser rejects.
    FeedLine(pending_);
    pending_.clear();
  }
  if (!failed_ && !transcript_.hello) Fail("the engine printed no `hello` record");
  if (!failed_ && !transcript_.done) Fail("the engine exited without a `done` record");
  transcript_.ok = !failed_;
  return std::move(transcript_);
}

Transcript ReadTranscript(std::string_view text) {
  TranscriptReader reader;
  reader.Feed(text);
  return reader.Finish();
}

}  // namespace samebits::protocol
