// samebits-engine's profile (engines/samebits.json) of this source tree,
// loaded once: the default matrix the tests expand.
#pragma once

#include <memory>
#include <string>

#include "harness/runner/engine_profile.h"

namespace samebits::harness::testing {

inline std::string OwnProfilePath() {
  return std::string(SAMEBITS_SOURCE_DIR) + "/engines/samebits.json";
}

inline std::shared_ptr<const runner::EngineProfile> OwnProfile() {
  static const std::shared_ptr<const runner::EngineProfile> profile =
      std::make_shared<const runner::EngineProfile>(runner::LoadEngineProfile(OwnProfilePath()));
  return profile;
}

}  // namespace samebits::harness::testing
