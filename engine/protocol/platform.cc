#include "engine/protocol/platform.h"

#include <string>

#include "engine/platform/machine.h"
#include "samebits_build_info.h"

namespace samebits::protocol {

EngineInfo ThisEngine() {
  return EngineInfo{"samebits-engine", SAMEBITS_VERSION};
}

BuildInfo ThisBuild() {
  BuildInfo build;
  build.revision = SAMEBITS_GIT_REVISION;
  build.dirty = SAMEBITS_GIT_DIRTY;
  build.compiler = SAMEBITS_COMPILER;
  build.flags = SAMEBITS_CXX_FLAGS;
  // CMake's flags variables may leave doubled or trailing spaces.
  std::string flags;
  for (const char c : build.flags) {
    if (c == ' ' && (flags.empty() || flags.back() == ' ')) continue;
    flags += c;
  }
  while (!flags.empty() && flags.back() == ' ') flags.pop_back();
  build.flags = flags;
  return build;
}

PlatformInfo ThisPlatform() {
  return platform::ThisMachine();
}

MathInfo DescribeMath(numerics::MathProfile profile) {
  const numerics::MathLibraryIdentity id = numerics::IdentifyMathLibrary(profile);
  return MathInfo{id.profile, id.name, id.version, id.fingerprint};
}

}  // namespace samebits::protocol
