// Helpers the run layer's tests share.
#pragma once

#include <string>

#include "engine/numerics/math.h"
#include "engine/run/scenario.h"

namespace samebits::run::test_support {

// The portable math library, which every configuration of the default
// matrix can run.
inline const numerics::MathLibrary& Math() {
  return numerics::GetMathLibrary(numerics::MathProfile::kPortable);
}

// Returns the shipped scenario scenarios/NAME.json.
inline Scenario LoadDefault(const std::string& name) {
  return LoadScenario(std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/" + name + ".json");
}

}  // namespace samebits::run::test_support
