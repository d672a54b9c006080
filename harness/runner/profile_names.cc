// Configuration names: the one grammar of a profile's names, parsed and
// formatted (engine_profile.h, ParseConfigurationName).
#include <algorithm>
#include <optional>
#include <sstream>

#include "harness/runner/engine_profile.h"
#include "harness/runner/profile_values.h"

namespace samebits::runner {
namespace {

// Returns the token `axis` gives `value`, or "" when it gives none (its
// default, unnamed).
std::string TokenOf(const EngineAxis& axis, const std::string& value) {
  if (axis.default_value && value == *axis.default_value) return "";
  return Substitute(axis.token, {{"value", SpellValue(axis, value)}});
}

// Returns the text `token` holds where `axis`'s token has {value} (what is
// between its prefix and suffix), or nothing when `token` is not of that
// shape.
std::optional<std::string> ValueText(const EngineAxis& axis, const std::string& token) {
  const size_t at = axis.token.find("{value}");
  const std::string prefix = axis.token.substr(0, at), suffix = axis.token.substr(at + 7);
  if (token.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (token.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (token.compare(token.size() - suffix.size(), suffix.size(), suffix) != 0) return std::nullopt;
  return token.substr(prefix.size(), token.size() - prefix.size() - suffix.size());
}

// Returns the value `token` gives `axis`, or nothing when it is no token of it.
std::optional<std::string> MatchToken(const EngineAxis& axis, const std::string& token) {
  const std::optional<std::string> text = ValueText(axis, token);
  if (!text) return std::nullopt;
  return AxisValue(axis, *text);
}

// Returns the value `token` spells for `axis` when it has the axis's shape
// (its token's prefix and suffix around a plain number) but a value the
// axis does not take ('b65' for a batch of 1 to 64); nothing otherwise.
std::optional<std::string> OutOfRangeValue(const EngineAxis& axis, const std::string& token) {
  if (!axis.is_range) return std::nullopt;
  std::optional<std::string> digits = ValueText(axis, token);
  if (!digits) return std::nullopt;
  const bool plain =
      std::all_of(digits->begin(), digits->end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      (digits->size() == 1 || (*digits)[0] != '0');
  if (!plain || AxisValue(axis, *digits)) return std::nullopt;
  return digits;
}

std::vector<std::string> Split(const std::string& name) {
  std::vector<std::string> tokens;
  std::stringstream in(name);
  for (std::string t; std::getline(in, t, '-');) tokens.push_back(t);
  if (!name.empty() && name.back() == '-') tokens.emplace_back();
  return tokens;
}

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
          std::string why = "configuration '" + name + "': '";
          why.append(token).append("' asks for ").append(axis.name).append(" ").append(*value);
          why.append(", which is not ").append(DescribeValues(axis));
          throw ConfigurationNameError(why);
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

}  // namespace samebits::runner
