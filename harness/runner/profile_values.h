// Values on an engine profile's axes and in its argv templates, shared by
// the profile's reader (engine_profile.cc), its name grammar
// (profile_names.cc) and its argv (profile_argv.cc): the canonical value of
// a name's text, how a name spells a value, what an axis takes (for
// errors), and a template's placeholders filled in.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "harness/runner/engine_profile.h"

namespace samebits::runner {

// Returns the canonical value of `text` on `axis` (a range's integer
// without units), or nothing when the axis does not take it.
std::optional<std::string> AxisValue(const EngineAxis& axis, const std::string& text);

// Returns how a name spells `value` (canonical) of a range axis: with the
// largest unit that divides it exactly ("8192" -> "8k").
std::string SpellValue(const EngineAxis& axis, const std::string& value);

// Returns what `axis` takes, for an error: "one of a, b" or "a whole number
// from 1 to 64".
std::string DescribeValues(const EngineAxis& axis);

// Returns `text` with every {NAME} replaced by `values`' entry.
std::string Substitute(const std::string& text, const std::map<std::string, std::string>& values);

}  // namespace samebits::runner
