// Values on a profile's axes and in its templates (profile_values.h).
#include "harness/runner/profile_values.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace samebits::runner {
namespace {

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

}  // namespace

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

}  // namespace samebits::runner
