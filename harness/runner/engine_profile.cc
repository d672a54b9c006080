// Engine profiles (engine_profile.h).
#include "harness/runner/engine_profile.h"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/analysis/bounded_json.h"
#include "harness/runner/matrix_template.h"
#include "harness/runner/profile_values.h"

namespace samebits::runner {

namespace fs = std::filesystem;
using Json = nlohmann::json;

ProfileError::ProfileError(const std::string& file, const std::string& key,
                           const std::string& expected)
    : std::runtime_error(file + (key.empty() ? "" : ": " + key) + ": " + expected),
      file(file),
      key(key) {}

const EngineAxis* EngineProfile::Axis(const std::string& axis_name) const {
  for (const EngineAxis& a : axes) {
    if (a.name == axis_name) return &a;
  }
  return nullptr;
}

namespace {

// The placeholders a template may use besides the axes' names.
const std::set<std::string> kReservedNames = {"checkpoint", "scenario", "file", "value"};

bool AllOf(const std::string& s, bool (*ok)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}

bool IsLowerIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// A value may stand alone as an argument and inside a name token: no '-'
// (the names' separator, and an option's start), no space, no '{'.
bool IsValueChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '+';
}

// Reads one profile, remembering its file for every error.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& expected) const {
    throw ProfileError(file_, key, expected);
  }

  const Json& Member(const Json& object, const std::string& parent, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end()) Fail(Join(parent, key), "is missing (required)");
    return *it;
  }

  std::string String(const Json& j, const std::string& key) const {
    if (!j.is_string()) Fail(key, "expected a string");
    return j.get<std::string>();
  }

  std::string NonEmptyString(const Json& j, const std::string& key) const {
    std::string s = String(j, key);
    if (s.empty()) Fail(key, "expected a non-empty string");
    return s;
  }

  std::vector<std::string> Strings(const Json& j, const std::string& key, bool non_empty) const {
    if (!j.is_array()) Fail(key, "expected an array of strings");
    if (non_empty && j.empty()) Fail(key, "expected at least one string");
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(String(j[i], Index(key, i)));
    return out;
  }

  bool Bool(const Json& j, const std::string& key) const {
    if (!j.is_boolean()) Fail(key, "expected true or false");
    return j.get<bool>();
  }

  int64_t Integer(const Json& j, const std::string& key) const {
    if (!j.is_number_integer() ||
        (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{INT64_MAX})) {
      Fail(key, "expected a whole number (at most 9223372036854775807)");
    }
    return j.get<int64_t>();
  }

  // Refuses keys other than `known`: a misspelt key must not be ignored.
  void OnlyKeys(const Json& object, const std::string& key,
                std::initializer_list<const char*> known) const {
    if (!object.is_object()) Fail(key, "expected an object");
    for (const auto& item : object.items()) {
      const std::string& k = item.key();
      if (std::none_of(known.begin(), known.end(), [&](const char* n) { return k == n; })) {
        std::string list;
        for (const char* n : known) list += std::string(list.empty() ? "" : ", ") + n;
        Fail(Join(key, k), "is not a key of a profile here (known: " + list + ")");
      }
    }
  }

  static std::string Join(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
  }
  static std::string Index(const std::string& key, size_t i) {
    return key + "[" + std::to_string(i) + "]";
  }

 private:
  std::string file_;
};

// Returns the placeholders `{NAME}` in `text`; false when a brace is unpaired.
bool Placeholders(const std::string& text, std::vector<std::string>* names) {
  for (size_t at = 0; at < text.size();) {
    const size_t open = text.find_first_of("{}", at);
    if (open == std::string::npos) break;
    if (text[open] == '}') return false;
    const size_t close = text.find('}', open);
    if (close == std::string::npos) return false;
    const std::string name = text.substr(open + 1, close - open - 1);
    if (name.empty() || name.find('{') != std::string::npos) return false;
    names->push_back(name);
    at = close + 1;
  }
  return true;
}

// Checks that every placeholder of the template `text` (at `key`) is in
// `allowed`.
void CheckTemplate(const Reader& r, const std::string& text, const std::string& key,
                   const std::set<std::string>& allowed) {
  std::vector<std::string> names;
  if (!Placeholders(text, &names)) r.Fail(key, "expected {NAME} placeholders with paired braces");
  for (const std::string& n : names) {
    if (allowed.count(n) > 0) continue;
    std::string known;
    for (const std::string& a : allowed) known += (known.empty() ? "{" : ", {") + a + "}";
    r.Fail(key, "uses {" + n +
                    "}, which is not known here (known: " + (known.empty() ? "none" : known) + ")");
  }
}

void CheckTemplates(const Reader& r, const std::vector<std::string>& list, const std::string& key,
                    const std::set<std::string>& allowed) {
  for (size_t i = 0; i < list.size(); ++i)
    CheckTemplate(r, list[i], Reader::Index(key, i), allowed);
}

bool Contains(const std::vector<std::string>& list, const std::string& text) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& s) { return s.find(text) != std::string::npos; });
}

EngineAxis ParseAxis(const Reader& r, const Json& j, const std::string& key,
                     const std::set<std::string>& earlier) {
  r.OnlyKeys(j, key,
             {"name", "values", "range", "default", "token", "units", "name_default", "argv",
              "argv_at_default"});
  EngineAxis a;
  a.name = r.String(r.Member(j, key, "name"), key + ".name");
  if (!AllOf(a.name, IsLowerIdentifierChar) || !(a.name[0] >= 'a' && a.name[0] <= 'z')) {
    r.Fail(key + ".name", "expected a name of lower-case letters, digits and '_', from a letter");
  }
  if (kReservedNames.count(a.name) > 0) {
    r.Fail(key + ".name", "'" + a.name + "' is reserved for a placeholder; choose another name");
  }
  if (earlier.count(a.name) > 0) r.Fail(key + ".name", "'" + a.name + "' names two axes");
  const bool has_values = j.contains("values"), has_range = j.contains("range");
  if (has_values == has_range) r.Fail(key, "expected exactly one of 'values' and 'range'");
  if (has_values) {
    a.values = r.Strings(j["values"], key + ".values", /*non_empty=*/true);
    std::set<std::string> seen;
    for (size_t i = 0; i < a.values.size(); ++i) {
      if (!AllOf(a.values[i], IsValueChar)) {
        r.Fail(Reader::Index(key + ".values", i),
               "expected letters, digits, '_', '.' or '+' only (a value is one argument and one "
               "name token)");
      }
      if (!seen.insert(a.values[i]).second) {
        r.Fail(Reader::Index(key + ".values", i), "'" + a.values[i] + "' is listed twice");
      }
    }
  } else {
    const Json& range = j["range"];
    if (!range.is_array() || range.size() != 2) {
      r.Fail(key + ".range", "expected [MIN, MAX], two whole numbers");
    }
    a.is_range = true;
    a.min = r.Integer(range[0], key + ".range[0]");
    a.max = r.Integer(range[1], key + ".range[1]");
    if (a.min < 0 || a.min > a.max) {
      r.Fail(key + ".range", "expected 0 <= MIN <= MAX");
    }
  }
  if (j.contains("units")) {
    if (!a.is_range) r.Fail(key + ".units", "only a 'range' axis takes units");
    const Json& units = j["units"];
    if (!units.is_object()) r.Fail(key + ".units", "expected an object like {\"k\": 1024}");
    for (const auto& [suffix, factor] : units.items()) {
      const std::string ukey = Reader::Join(key + ".units", suffix);
      if (!AllOf(suffix, [](char c) { return c >= 'a' && c <= 'z'; })) {
        r.Fail(ukey, "expected a suffix of lower-case letters");
      }
      const int64_t f = r.Integer(factor, ukey);
      if (f < 2) r.Fail(ukey, "expected a factor of at least 2");
      a.units[suffix] = f;
    }
  }
  if (j.contains("default")) {
    const std::string d = r.String(j["default"], key + ".default");
    const std::optional<std::string> v = AxisValue(a, d);
    if (!v || (a.is_range && *v != d)) {
      r.Fail(key + ".default", "'" + d + "' is not a value of the axis (expected " +
                                   DescribeValues(a) + ", as a string)");
    }
    a.default_value = *v;
  }
  a.token = r.String(r.Member(j, key, "token"), key + ".token");
  {
    const size_t at = a.token.find("{value}");
    std::string rest = a.token;
    if (at != std::string::npos) rest.erase(at, 7);
    if (at == std::string::npos || rest.find("{value}") != std::string::npos ||
        (!rest.empty() && !AllOf(rest, IsLowerIdentifierChar))) {
      r.Fail(
          key + ".token",
          "expected {value} once, with lower-case letters, digits or '_' around it (\"t{value}\")");
    }
  }
  if (j.contains("name_default")) a.name_default = r.Bool(j["name_default"], key + ".name_default");
  if (a.name_default && !a.default_value) {
    r.Fail(key + ".name_default", "an axis without a default has no default to name");
  }
  a.argv = r.Strings(r.Member(j, key, "argv"), key + ".argv", /*non_empty=*/false);
  if (j.contains("argv_at_default")) {
    a.argv_at_default = r.Bool(j["argv_at_default"], key + ".argv_at_default");
    if (!a.default_value) r.Fail(key + ".argv_at_default", "the axis has no default");
  }
  return a;
}

// Reads `hello`: what the engine's hello must echo.
void ParseHello(const Reader& r, const Json& j, EngineProfile& p) {
  std::set<std::string> names;
  for (const EngineAxis& a : p.axes) names.insert(a.name);
  if (j.contains("hello")) {
    const Json& hello = j["hello"];
    if (!hello.is_array()) r.Fail("hello", "expected an array of {\"key\", \"value\"} objects");
    for (size_t i = 0; i < hello.size(); ++i) {
      const std::string key = Reader::Index("hello", i);
      r.OnlyKeys(hello[i], key, {"key", "value", "unless"});
      HelloEcho e;
      e.key = r.NonEmptyString(r.Member(hello[i], key, "key"), key + ".key");
      e.value = r.String(r.Member(hello[i], key, "value"), key + ".value");
      CheckTemplate(r, e.value, key + ".value", names);
      if (hello[i].contains("unless")) {
        const Json& unless = hello[i]["unless"];
        if (!unless.is_object()) r.Fail(key + ".unless", "expected {\"AXIS\": \"VALUE\"}");
        for (const auto& [axis_name, value] : unless.items()) {
          const EngineAxis* axis = p.Axis(axis_name);
          const std::string where = Reader::Join(key + ".unless", axis_name);
          if (axis == nullptr) r.Fail(where, "expected an axis's name");
          const std::string v = r.String(value, where);
          if (!AxisValue(*axis, v)) r.Fail(where, "expected " + DescribeValues(*axis));
          e.unless[axis_name] = *AxisValue(*axis, v);
        }
      }
      p.hello.push_back(std::move(e));
    }
  }
}

// The card's feed table (card_run.h) as an axis a known difference may
// name when the profile has no axis of that name.
const EngineAxis& FeedTableAxis() {
  static const EngineAxis axis = [] {
    EngineAxis a;
    a.name = kFeedTableAxis;
    a.values = {kFeedExtend, kFeedToken};
    a.token = "{value}";
    return a;
  }();
  return axis;
}

// Reads `known_differences`: the configurations that differ from the
// baseline by design, and why.
void ParseKnownDifferences(const Reader& r, const Json& j, EngineProfile& p) {
  if (j.contains("known_differences")) {
    const Json& known = j["known_differences"];
    if (!known.is_array()) r.Fail("known_differences", "expected an array");
    for (size_t i = 0; i < known.size(); ++i) {
      const std::string key = Reader::Index("known_differences", i);
      r.OnlyKeys(known[i], key, {"axis", "values", "checkpoints", "scenarios", "reason"});
      KnownDifference k;
      k.axis = r.String(r.Member(known[i], key, "axis"), key + ".axis");
      const EngineAxis* axis = p.Axis(k.axis);
      if (axis == nullptr && k.axis == kFeedTableAxis) axis = &FeedTableAxis();
      if (axis == nullptr) {
        r.Fail(key + ".axis", "expected an axis's name (or '" + std::string(kFeedTableAxis) +
                                  "', the card's feed table), not '" + k.axis + "'");
      }
      if (known[i].contains("values")) {
        k.values = r.Strings(known[i]["values"], key + ".values", /*non_empty=*/true);
        for (size_t v = 0; v < k.values.size(); ++v) {
          const std::optional<std::string> value = AxisValue(*axis, k.values[v]);
          if (!value)
            r.Fail(Reader::Index(key + ".values", v), "expected " + DescribeValues(*axis));
          k.values[v] = *value;
        }
      }
      if (known[i].contains("checkpoints")) {
        k.checkpoints = r.Strings(known[i]["checkpoints"], key + ".checkpoints", true);
      }
      if (known[i].contains("scenarios")) {
        k.scenarios = r.Strings(known[i]["scenarios"], key + ".scenarios", true);
      }
      k.reason = r.NonEmptyString(r.Member(known[i], key, "reason"), key + ".reason");
      p.known_differences.push_back(std::move(k));
    }
  }
}

// Reads `conformance`: the tolerance across engines.
void ParseConformance(const Reader& r, const Json& j, EngineProfile& p) {
  if (j.contains("conformance")) {
    r.OnlyKeys(j["conformance"], "conformance", {"max_nmse"});
    const Json& nmse = r.Member(j["conformance"], "conformance", "max_nmse");
    if (!nmse.is_number() || !(nmse.get<double>() >= 0)) {
      r.Fail("conformance.max_nmse", "expected a number of at least 0");
    }
    p.max_nmse = nmse.get<double>();
  }
}

// Reads `card.control`: the configuration every card runs as its negative
// control, which must differ from the card's baseline.
void ParseCardControl(const Reader& r, const Json& control, EngineProfile& p) {
  r.OnlyKeys(control, "card.control", {"configuration", "reason"});
  if (!control.contains("configuration") || !control.contains("reason")) {
    r.Fail("card.control", "expected {\"configuration\": NAME, \"reason\": TEXT}");
  }
  const std::string name = r.String(control["configuration"], "card.control.configuration");
  try {
    p.card_control = ParseConfigurationName(p, name);
  } catch (const ConfigurationNameError& e) {
    r.Fail("card.control.configuration", std::string("expected a configuration name: ") + e.what());
  }
  if (p.card_control->name == p.card_baseline.name) {
    r.Fail("card.control.configuration",
           "expected a configuration other than the card's baseline (a control must differ)");
  }
  p.card_control_reason = r.String(control["reason"], "card.control.reason");
}

// Reads `card`: what `samebits card` varies, from which baseline.
void ParseCard(const Reader& r, const Json& j, EngineProfile& p) {
  p.card_baseline = p.baseline;
  if (j.contains("card")) {
    const Json& card = j["card"];
    r.OnlyKeys(card, "card", {"baseline", "values", "control"});
    if (card.contains("baseline")) {
      const std::string name = r.String(card["baseline"], "card.baseline");
      try {
        p.card_baseline = ParseConfigurationName(p, name);
      } catch (const ConfigurationNameError& e) {
        r.Fail("card.baseline", std::string("expected a configuration name: ") + e.what());
      }
    }
    if (card.contains("values")) {
      const Json& values = card["values"];
      if (!values.is_object()) r.Fail("card.values", "expected {\"AXIS\": [\"VALUE\", ...]}");
      for (const auto& [axis_name, list] : values.items()) {
        const std::string key = "card.values." + axis_name;
        const EngineAxis* axis = p.Axis(axis_name);
        if (axis == nullptr) r.Fail(key, "expected an axis's name");
        std::vector<std::string> tried = r.Strings(list, key, /*non_empty=*/false);
        for (size_t i = 0; i < tried.size(); ++i) {
          const std::optional<std::string> v = AxisValue(*axis, tried[i]);
          if (!v) r.Fail(Reader::Index(key, i), "expected " + DescribeValues(*axis));
          tried[i] = *v;
        }
        p.card_values[axis_name] = std::move(tried);
      }
    }
    if (card.contains("control")) ParseCardControl(r, card["control"], p);
  }
}

// Reads `matrix.configurations`: names, or for samebits-engine's own
// profile templates (matrix_template.h), whose placeholders are checked now
// and whose names are read by the grammar when the matrix is expanded (it
// depends on the command line), before any child runs.
void ParseMatrixConfigurations(const Reader& r, const Json& list, EngineProfile& p) {
  const std::vector<std::string> names = r.Strings(list, "matrix.configurations", true);
  const bool templates = std::any_of(names.begin(), names.end(), IsTemplate);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string key = Reader::Index("matrix.configurations", i);
    if (!IsTemplate(names[i])) {
      try {
        const EngineConfiguration config = ParseConfigurationName(p, names[i]);
        if (!templates) p.matrix_configurations.push_back(config);
      } catch (const ConfigurationNameError& e) {
        r.Fail(key, std::string("expected a configuration name: ") + e.what());
      }
    } else if (p.name != kOwnEngineName) {
      r.Fail(key, std::string("expected a configuration name without placeholders: they draw "
                              "on the harness's --threads and --math and on samebits-engine's "
                              "isa axis, so only "
                              "its profile (name ") +
                      kOwnEngineName + ") may use them");
    } else if (const std::string error = TemplateError(names[i]); !error.empty()) {
      r.Fail(key, error);
    }
  }
  p.matrix_configuration_templates = names;
}

// Reads `matrix`: what `run` and `gate` select for this engine when the
// command line does not say (checkpoints as the engine takes them, scenario
// files relative to the profile, configuration names).
void ParseMatrix(const Reader& r, const Json& j, EngineProfile& p) {
  if (!j.contains("matrix")) return;
  const Json& m = j["matrix"];
  r.OnlyKeys(m, "matrix", {"checkpoints", "scenarios", "configurations"});
  if (m.contains("checkpoints")) {
    p.matrix_checkpoints = r.Strings(m["checkpoints"], "matrix.checkpoints", /*non_empty=*/true);
  }
  if (m.contains("scenarios")) {
    for (const std::string& f : r.Strings(m["scenarios"], "matrix.scenarios", true)) {
      p.matrix_scenarios.push_back(fs::path(f).is_absolute() ? f
                                                             : (fs::path(p.folder) / f).string());
    }
  }
  if (m.contains("configurations")) ParseMatrixConfigurations(r, m["configurations"], p);
}

// Returns whether `name` is an engine's name: lower-case letters, digits,
// '_', '-' and '.' (`llama.cpp`), from a letter or digit, so that it is one
// file name under engines/ and never `.`, `..` or an option.
bool IsEngineName(const std::string& name) {
  return !name.empty() && name[0] != '-' && name[0] != '_' && name[0] != '.' &&
         AllOf(name, [](char c) { return IsLowerIdentifierChar(c) || c == '-' || c == '.'; });
}

// Reads what the profile is: its format, name, command, build and the
// checkpoint kinds it loads.
void ParseIdentity(const Reader& r, const Json& j, EngineProfile& p) {
  const Json& version = r.Member(j, "", "profile");
  if (!version.is_number_integer() || version.get<int64_t>() != kEngineProfileFormat) {
    r.Fail("profile", "expected " + std::to_string(kEngineProfileFormat) +
                          " (the profile format this harness reads)");
  }
  p.name = r.String(r.Member(j, "", "name"), "name");
  if (!IsEngineName(p.name)) {
    r.Fail("name", "expected lower-case letters, digits, '_', '-' and '.', from a letter or digit");
  }
  if (j.contains("description")) p.description = r.String(j["description"], "description");
  p.command = r.Strings(r.Member(j, "", "command"), "command", /*non_empty=*/true);
  if (p.command[0].empty()) r.Fail("command[0]", "expected the program's path or name");
  CheckTemplates(r, p.command, "command", {});
  if (j.contains("build")) {
    p.build = r.Strings(j["build"], "build", /*non_empty=*/true);
    CheckTemplates(r, p.build, "build", {});
  }
  p.checkpoints = r.Strings(r.Member(j, "", "checkpoints"), "checkpoints", /*non_empty=*/true);
  for (size_t i = 0; i < p.checkpoints.size(); ++i) {
    if (!AllOf(p.checkpoints[i], IsLowerIdentifierChar)) {
      r.Fail(Reader::Index("checkpoints", i),
             "expected a checkpoint kind (synthetic, gguf, safetensors, llama2c, ...)");
    }
  }
}

// Reads `axes`: each axis, then the argv templates that may name them all.
void ParseAxes(const Reader& r, const Json& j, EngineProfile& p) {
  const Json& axes = r.Member(j, "", "axes");
  if (!axes.is_array() || axes.empty()) r.Fail("axes", "expected an array of at least one axis");
  std::set<std::string> names;
  for (size_t i = 0; i < axes.size(); ++i) {
    p.axes.push_back(ParseAxis(r, axes[i], Reader::Index("axes", i), names));
    names.insert(p.axes.back().name);
  }
  if (std::all_of(p.axes.begin(), p.axes.end(),
                  [](const EngineAxis& a) { return a.default_value.has_value(); })) {
    r.Fail("axes",
           "expected an axis without a default (its token starts every configuration "
           "name; with every axis at its default a name would be empty)");
  }
  for (size_t i = 0; i < p.axes.size(); ++i) {
    std::set<std::string> allowed = names;
    allowed.insert("value");
    CheckTemplates(r, p.axes[i].argv, Reader::Index("axes", i) + ".argv", allowed);
  }
}

// Reads `argv_order` (absent: axis order) into the order in which every
// axis adds its argv: the axes it names, then the others in axis order.
// An engine reads its flags in any order, but a command line the harness
// has always written keeps its order, byte for byte, when a profile
// writes it instead.
void ParseArgvOrder(const Reader& r, const Json& j, EngineProfile& p) {
  std::vector<std::string> named;
  if (j.contains("argv_order")) {
    named = r.Strings(j["argv_order"], "argv_order", /*non_empty=*/true);
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < named.size(); ++i) {
    const std::string key = Reader::Index("argv_order", i);
    if (p.Axis(named[i]) == nullptr)
      r.Fail(key, "expected the name of an axis, not '" + named[i] + "'");
    if (!seen.insert(named[i]).second)
      r.Fail(key, "expected each axis once ('" + named[i] + "' again)");
  }
  p.argv_order = named;
  for (const EngineAxis& axis : p.axes) {
    if (seen.count(axis.name) == 0) p.argv_order.push_back(axis.name);
  }
}

// Reads the argv templates around the axes: `arguments`, `dump_logits`, `trace`.
void ParseArguments(const Reader& r, const Json& j, EngineProfile& p) {
  std::set<std::string> fixed;
  for (const EngineAxis& a : p.axes) fixed.insert(a.name);
  p.arguments = r.Strings(r.Member(j, "", "arguments"), "arguments", /*non_empty=*/true);
  fixed.insert({"checkpoint", "scenario"});
  CheckTemplates(r, p.arguments, "arguments", fixed);
  for (const char* needed : {"{checkpoint}", "{scenario}"}) {
    if (!Contains(p.arguments, needed)) {
      r.Fail("arguments", std::string("expected ") + needed + " in one of the arguments");
    }
  }
  if (j.contains("dump_logits")) {
    p.dump_logits = r.Strings(j["dump_logits"], "dump_logits", /*non_empty=*/true);
    CheckTemplates(r, p.dump_logits, "dump_logits", {"file"});
    if (!Contains(p.dump_logits, "{file}")) r.Fail("dump_logits", "expected {file} in one");
  }
  if (j.contains("probe")) {
    p.probe = r.Strings(j["probe"], "probe", /*non_empty=*/true);
    CheckTemplates(r, p.probe, "probe", {});
  }
  if (j.contains("trace")) {
    p.trace = r.Strings(j["trace"], "trace", /*non_empty=*/true);
    CheckTemplates(r, p.trace, "trace", {});
  }
}

}  // namespace

EngineProfile ParseEngineProfile(const std::string& text, const std::string& file) {
  const Reader r(file);
  Json j;
  try {
    // The harness's one reader of untrusted JSON: limits, no repeated key.
    j = harness::ParseBoundedJson(text, harness::LimitsForSize(text.size()));
  } catch (const std::runtime_error& e) {
    r.Fail("", std::string("expected a JSON document with each key once (") + e.what() + ")");
  }
  r.OnlyKeys(j, "",
             {"profile", "name", "description", "command", "build", "checkpoints", "arguments",
              "dump_logits", "trace", "probe", "axes", "argv_order", "baseline", "hello",
              "known_differences", "conformance", "card", "matrix"});
  EngineProfile p;
  p.file = file;
  p.folder = fs::path(file).parent_path().string();
  if (p.folder.empty()) p.folder = ".";
  ParseIdentity(r, j, p);
  ParseAxes(r, j, p);
  ParseArgvOrder(r, j, p);
  ParseArguments(r, j, p);
  const std::string baseline = r.String(r.Member(j, "", "baseline"), "baseline");
  try {
    p.baseline = ParseConfigurationName(p, baseline);
  } catch (const ConfigurationNameError& e) {
    r.Fail("baseline", std::string("expected a configuration name: ") + e.what());
  }

  ParseHello(r, j, p);
  ParseKnownDifferences(r, j, p);
  ParseConformance(r, j, p);
  ParseCard(r, j, p);
  ParseMatrix(r, j, p);
  return p;
}

EngineProfile LoadEngineProfile(const std::string& path) {
  std::string text;
  try {
    text = harness::ReadBoundedFile(path, harness::kMaxProfileBytes);
  } catch (const std::runtime_error& e) {
    throw ProfileError(path, "",
                       std::string("cannot be read: ") + e.what() + " (a profile is at most " +
                           std::to_string(harness::kMaxProfileBytes) + " bytes)");
  }
  return ParseEngineProfile(text, path);
}

std::string FindEngineProfile(const std::string& engines_dir, const std::string& name) {
  if (!IsEngineName(name)) return "";
  const fs::path path = fs::path(engines_dir) / (name + ".json");
  std::error_code ec;
  return fs::is_regular_file(path, ec) ? path.string() : "";
}

}  // namespace samebits::runner
