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

// Returns the integer `text` means with `units` ("8k" -> 8192), or nothing.
std::optional<int64_t> ParseInteger(const std::string& text,
                                    const std::map<std::string, int64_t>& units) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) return std::nullopt;
  if (digits > 1 && text[0] == '0') return std::nullopt;  // one spelling per number
  errno = 0;
  const int64_t n = std::strtoll(text.substr(0, digits).c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  const std::string suffix = text.substr(digits);
  if (suffix.empty()) return n;
  const auto unit = units.find(suffix);
  if (unit == units.end() || n == 0) return std::nullopt;
  if (n > INT64_MAX / unit->second) return std::nullopt;
  return n * unit->second;
}

// Returns the canonical value of `text` on `axis` (a range's integer
// without units), or nothing when the axis does not take it.
std::optional<std::string> AxisValue(const EngineAxis& axis, const std::string& text) {
  if (!axis.is_range) {
    if (std::find(axis.values.begin(), axis.values.end(), text) == axis.values.end())
      return std::nullopt;
    return text;
  }
  const std::optional<int64_t> n = ParseInteger(text, axis.units);
  if (!n || *n < axis.min || *n > axis.max) return std::nullopt;
  return std::to_string(*n);
}

// Returns how a name spells `value` (canonical) of a range axis: with the
// largest unit that divides it exactly ("8192" -> "8k").
std::string SpellValue(const EngineAxis& axis, const std::string& value) {
  if (!axis.is_range || axis.units.empty()) return value;
  const int64_t n = std::strtoll(value.c_str(), nullptr, 10);
  std::string best = value;
  int64_t best_unit = 1;
  for (const auto& [suffix, unit] : axis.units) {
    if (n != 0 && n % unit == 0 && unit > best_unit) {
      best_unit = unit;
      best = std::to_string(n / unit) + suffix;
    }
  }
  return best;
}

std::string DescribeValues(const EngineAxis& axis) {
  if (axis.is_range) {
    return "a whole number from " + std::to_string(axis.min) + " to " + std::to_string(axis.max);
  }
  std::string list;
  for (const std::string& v : axis.values) list += (list.empty() ? "" : ", ") + v;
  return "one of " + list;
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

// Returns `text` with every {NAME} replaced by `values`' entry.
std::string Substitute(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const size_t open = text.find('{', at);
    if (open == std::string::npos) {
      out += text.substr(at);
      break;
    }
    const size_t close = text.find('}', open);
    out += text.substr(at, open - at);
    out += values.at(text.substr(open + 1, close - open - 1));
    at = close + 1;
  }
  return out;
}

// Returns the token `axis` gives `value`, or "" when it gives none (its
// default, unnamed).
std::string TokenOf(const EngineAxis& axis, const std::string& value) {
  if (axis.default_value && value == *axis.default_value) return "";
  return Substitute(axis.token, {{"value", SpellValue(axis, value)}});
}

// Returns the value `token` gives `axis`, or nothing when it is no token of it.
std::optional<std::string> MatchToken(const EngineAxis& axis, const std::string& token) {
  const size_t at = axis.token.find("{value}");
  const std::string prefix = axis.token.substr(0, at), suffix = axis.token.substr(at + 7);
  if (token.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (token.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (token.compare(token.size() - suffix.size(), suffix.size(), suffix) != 0) return std::nullopt;
  return AxisValue(axis, token.substr(prefix.size(), token.size() - prefix.size() - suffix.size()));
}

// Returns the value `token` spells for `axis` when it has the axis's shape
// (its token's prefix and suffix around a plain number) but a value the
// axis does not take ('b65' for a batch of 1 to 64); nothing otherwise.
std::optional<std::string> OutOfRangeValue(const EngineAxis& axis, const std::string& token) {
  if (!axis.is_range) return std::nullopt;
  const size_t at = axis.token.find("{value}");
  const std::string prefix = axis.token.substr(0, at), suffix = axis.token.substr(at + 7);
  if (token.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (token.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (token.compare(token.size() - suffix.size(), suffix.size(), suffix) != 0) return std::nullopt;
  const std::string digits =
      token.substr(prefix.size(), token.size() - prefix.size() - suffix.size());
  const bool plain =
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      (digits.size() == 1 || digits[0] != '0');
  if (!plain || AxisValue(axis, digits)) return std::nullopt;
  return digits;
}

std::vector<std::string> Split(const std::string& name) {
  std::vector<std::string> tokens;
  std::stringstream in(name);
  for (std::string t; std::getline(in, t, '-');) tokens.push_back(t);
  if (!name.empty() && name.back() == '-') tokens.emplace_back();
  return tokens;
}

// Returns the hello's value at the dotted `key` as text, or nothing.
std::optional<std::string> HelloValue(const Json& hello, const std::string& key) {
  const Json* at = &hello;
  std::stringstream in(key);
  for (std::string part; std::getline(in, part, '.');) {
    if (!at->is_object()) return std::nullopt;
    const auto it = at->find(part);
    if (it == at->end()) return std::nullopt;
    at = &*it;
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_number_integer()) return std::to_string(at->get<int64_t>());
  if (at->is_boolean()) return at->get<bool>() ? "true" : "false";
  return at->dump();
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
                              "on samebits-engine's --threads, --math and ISA table, so only "
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

namespace {

// A name that spells out an axis's default: each configuration has one name.
[[noreturn]] void RefuseNamedDefault(const std::string& name, const std::string& token,
                                     const EngineAxis& axis) {
  throw ConfigurationNameError("configuration '" + name + "': '" + token + "' names " + axis.name +
                               "'s default (" + *axis.default_value +
                               "); leave it out, so that each configuration has one name");
}

// A token no axis left takes; `expected` lists what could come here.
[[noreturn]] void RefuseUnknownToken(const std::string& name, const std::string& token,
                                     const std::string& expected) {
  throw ConfigurationNameError("configuration '" + name + "': '" + token +
                               "' is not a part this engine's names take" +
                               (expected.empty() ? " (nothing may follow the last axis)"
                                                 : " here; expected, in this order: " + expected));
}

}  // namespace

EngineConfiguration ParseConfigurationName(const EngineProfile& profile, const std::string& name) {
  EngineConfiguration config;
  config.name = name;
  if (name.empty()) throw ConfigurationNameError("an empty configuration name");
  const std::vector<std::string> tokens = Split(name);
  size_t next_axis = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const std::string& token = tokens[t];
    if (token.empty()) {
      throw ConfigurationNameError("configuration '" + name +
                                   "': an empty part (two '-' together, or one at an end)");
    }
    bool matched = false;
    for (size_t a = next_axis; a < profile.axes.size() && !matched; ++a) {
      const EngineAxis& axis = profile.axes[a];
      const std::optional<std::string> value = MatchToken(axis, token);
      if (!value) continue;
      if (axis.default_value && *value == *axis.default_value && !axis.name_default)
        RefuseNamedDefault(name, token, axis);
      config.values[axis.name] = *value;
      next_axis = a + 1;
      matched = true;
    }
    if (!matched) {
      for (size_t a = next_axis; a < profile.axes.size(); ++a) {
        const EngineAxis& axis = profile.axes[a];
        if (const std::optional<std::string> value = OutOfRangeValue(axis, token)) {
          throw ConfigurationNameError("configuration '" + name + "': '" + token + "' asks for " +
                                       axis.name + " " + *value + ", which is not " +
                                       DescribeValues(axis));
        }
      }
      std::string expected;
      for (size_t a = next_axis; a < profile.axes.size(); ++a) {
        const EngineAxis& axis = profile.axes[a];
        expected += expected.empty() ? "" : "; ";
        expected += axis.name;
        expected += " as ";
        expected += axis.token;
        expected += " (";
        expected += DescribeValues(axis);
        expected += ")";
      }
      RefuseUnknownToken(name, token, expected);
    }
  }
  for (const EngineAxis& axis : profile.axes) {
    if (config.values.count(axis.name) > 0) continue;
    if (!axis.default_value) {
      throw ConfigurationNameError("configuration '" + name + "': gives no " + axis.name + " (" +
                                   axis.token + ", " + DescribeValues(axis) +
                                   "), which has no default");
    }
    config.values[axis.name] = *axis.default_value;
  }
  return config;
}

std::string FormatConfigurationName(const EngineProfile& profile,
                                    const std::map<std::string, std::string>& values) {
  for (const auto& [axis_name, unused] : values) {
    if (profile.Axis(axis_name) == nullptr)
      throw ConfigurationNameError("no axis named '" + axis_name + "'");
  }
  std::string name;
  for (const EngineAxis& axis : profile.axes) {
    const auto it = values.find(axis.name);
    std::optional<std::string> value;
    if (it != values.end()) {
      value = AxisValue(axis, it->second);
      if (!value) {
        throw ConfigurationNameError(axis.name + " '" + it->second + "' is not " +
                                     DescribeValues(axis));
      }
    } else if (axis.default_value) {
      value = axis.default_value;
    } else {
      throw ConfigurationNameError("no value for " + axis.name + ", which has no default");
    }
    const std::string token = TokenOf(axis, *value);
    if (!token.empty()) name += (name.empty() ? "" : "-") + token;
  }
  return name;
}

std::string ResolveProgram(const EngineProfile& profile) {
  const std::string& program = profile.command[0];
  std::error_code ec;
  if (program.find('/') != std::string::npos) {
    fs::path path = program;
    if (path.is_relative()) path = fs::path(profile.folder) / path;
    path = path.lexically_normal();
    if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0) {
      throw ProfileError(
          profile.file, "command[0]",
          "expected an executable program; " + path.string() +
              " is none (relative paths are relative to the profile's folder)" +
              (profile.build.empty() ? "" : "; build it with its 'build' command (--build)"));
    }
    return path.string();
  }
  const char* env = std::getenv("PATH");
  std::stringstream dirs(env != nullptr ? env : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path path = fs::path(dir.empty() ? "." : dir) / program;
    if (fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0) return path.string();
  }
  throw ProfileError(profile.file, "command[0]",
                     "expected a program on PATH; no '" + program + "' was found there");
}

namespace {

// Returns the argv the axes of `config` add, in the profile's argv order.
std::vector<std::string> AxisArguments(const EngineProfile& profile,
                                       const EngineConfiguration& config) {
  std::vector<std::string> args;
  for (const std::string& name : profile.argv_order) {
    const EngineAxis& axis = *profile.Axis(name);
    const std::string& value = config.values.at(axis.name);
    if (!axis.argv_at_default && axis.default_value && value == *axis.default_value) continue;
    std::map<std::string, std::string> with_value = config.values;
    with_value["value"] = value;
    for (const std::string& a : axis.argv) args.push_back(Substitute(a, with_value));
  }
  return args;
}

// Returns the argv of the profile's `dump_logits` for `dump_file`; none
// when it is "".
std::vector<std::string> DumpArguments(const EngineProfile& profile, const std::string& dump_file) {
  std::vector<std::string> args;
  if (dump_file.empty()) return args;
  for (const std::string& a : profile.dump_logits) {
    args.push_back(Substitute(a, {{"file", dump_file}}));
  }
  return args;
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

std::vector<std::string> BuildConfigurationArguments(const EngineProfile& profile,
                                                     const EngineConfiguration& config,
                                                     bool trace) {
  std::vector<std::string> args(profile.command.begin() + 1, profile.command.end());
  Append(args, AxisArguments(profile, config));
  if (trace) Append(args, profile.trace);
  return args;
}

std::vector<std::string> BuildCellArguments(const EngineProfile& profile,
                                            const EngineConfiguration& config,
                                            const std::string& checkpoint,
                                            const std::string& scenario_file,
                                            const std::string& dump_file) {
  std::map<std::string, std::string> values = config.values;
  values["checkpoint"] = checkpoint;
  values["scenario"] = scenario_file;
  std::vector<std::string> args;
  for (const std::string& a : profile.arguments) args.push_back(Substitute(a, values));
  Append(args, DumpArguments(profile, dump_file));
  return args;
}

std::vector<std::string> BuildArguments(const EngineProfile& profile,
                                        const EngineConfiguration& config,
                                        const std::string& checkpoint,
                                        const std::string& scenario_file, bool trace,
                                        const std::string& dump_file) {
  // The command's own arguments, the cell's checkpoint and scenario, the
  // configuration, then the dump: the order every child has been given.
  std::vector<std::string> args(profile.command.begin() + 1, profile.command.end());
  Append(args, BuildCellArguments(profile, config, checkpoint, scenario_file, ""));
  Append(args, AxisArguments(profile, config));
  if (trace) Append(args, profile.trace);
  Append(args, DumpArguments(profile, dump_file));
  return args;
}

std::string HelloMismatch(const EngineProfile& profile, const EngineConfiguration& config,
                          const Json& hello) {
  std::string why;
  for (const HelloEcho& e : profile.hello) {
    const bool skipped =
        !e.unless.empty() && std::all_of(e.unless.begin(), e.unless.end(), [&](const auto& u) {
          return config.values.at(u.first) == u.second;
        });
    if (skipped) continue;
    const std::string expected = Substitute(e.value, config.values);
    const std::optional<std::string> got = HelloValue(hello, e.key);
    if (got && *got == expected) continue;
    why += (why.empty() ? "" : "; ") + e.key + " is " + (got ? *got : "missing") + ", expected " +
           expected;
  }
  return why;
}

bool MatchesAnyPattern(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
    return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
  });
}

const KnownDifference* FindKnownDifference(const EngineProfile& profile,
                                           const EngineConfiguration& baseline,
                                           const EngineConfiguration& config,
                                           const std::string& checkpoint,
                                           const std::string& scenario) {
  for (const KnownDifference& k : profile.known_differences) {
    // The card's feed table is no axis of a configuration.
    if (config.values.count(k.axis) == 0) continue;
    const std::string& value = config.values.at(k.axis);
    const auto base = baseline.values.find(k.axis);
    if (base != baseline.values.end() && base->second == value) continue;
    const bool value_matches =
        k.values.empty() || std::find(k.values.begin(), k.values.end(), value) != k.values.end();
    if (!value_matches) continue;
    if (!k.checkpoints.empty() && !MatchesAnyPattern(k.checkpoints, checkpoint)) continue;
    if (!k.scenarios.empty() && !MatchesAnyPattern(k.scenarios, scenario)) continue;
    return &k;
  }
  return nullptr;
}

}  // namespace samebits::runner
