// Numeric profiles (numeric_profile.h).
#include "harness/analysis/numeric_profile.h"

#include <algorithm>

namespace samebits::harness {

const std::vector<std::string>& MathProfiles() {
  static const std::vector<std::string> kProfiles = {kPortableMath, "libm"};
  return kProfiles;
}

const std::vector<std::string>& QuantDotProfiles() {
  static const std::vector<std::string> kProfiles = {kExactQuantDot, "int8"};
  return kProfiles;
}

NumericProfile ProfileOf(const Configuration& c) {
  return {c.math, c.quant_dot};
}

std::string ProfileName(const NumericProfile& p) {
  return p.quant_dot == kExactQuantDot ? p.math : p.math + "-" + p.quant_dot;
}

std::string ProfileSuffix(const NumericProfile& p) {
  std::string suffix = p.math == kPortableMath ? "" : "-" + p.math;
  if (p.quant_dot != kExactQuantDot) suffix += "-" + p.quant_dot;
  return suffix;
}

std::string ProfileFlags(const NumericProfile& p) {
  std::string flags = p.math == kPortableMath ? "" : " --math " + p.math;
  if (p.quant_dot != kExactQuantDot) flags += " --quant-dot " + p.quant_dot;
  return flags;
}

std::optional<NumericProfile> ParseProfileName(std::string_view text, std::string* rest) {
  if (text.empty()) return std::nullopt;
  NumericProfile p;
  const size_t dash = text.find('-');
  p.math = std::string(text.substr(0, dash));
  std::string_view after = dash == std::string_view::npos ? "" : text.substr(dash + 1);
  const std::string_view token = after.substr(0, after.find('-'));
  const std::vector<std::string>& dots = QuantDotProfiles();
  if (token != kExactQuantDot && std::find(dots.begin(), dots.end(), token) != dots.end()) {
    p.quant_dot = std::string(token);
    after = token.size() < after.size() ? after.substr(token.size() + 1) : "";
  }
  if (rest != nullptr) *rest = std::string(after);
  return p;
}

}  // namespace samebits::harness
