// Numeric profiles (numeric_profile.h).
#include "harness/analysis/numeric_profile.h"

namespace samebits::harness {

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
  const std::string_view after = dash == std::string_view::npos ? "" : text.substr(dash + 1);
  // The grammar ReferenceGroupKey writes, with no list of profile names:
  // portable[-QUANT], or MATH-[QUANT-]ARCH (an architecture names no '-').
  std::string_view quant_dot = after, arch;
  if (p.math != kPortableMath) {
    const size_t last = after.rfind('-');
    quant_dot = last == std::string_view::npos ? "" : after.substr(0, last);
    arch = last == std::string_view::npos ? after : after.substr(last + 1);
  }
  if (!quant_dot.empty()) p.quant_dot = std::string(quant_dot);
  if (rest != nullptr) *rest = std::string(arch);
  return p;
}

}  // namespace samebits::harness
