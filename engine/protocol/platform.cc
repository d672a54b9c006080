#include "engine/protocol/platform.h"

#include <string>
#include <utility>

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
  platform::Machine m = platform::ThisMachine();
  PlatformInfo info;
  info.arch = std::move(m.arch);
  info.isa_features = std::move(m.isa_features);
  info.os = std::move(m.os);
  info.kernel = std::move(m.kernel);
  info.libc = std::move(m.libc);
  info.cpu = std::move(m.cpu);
  return info;
}

MathInfo DescribeMath(numerics::MathProfile profile) {
  const numerics::MathLibraryIdentity id = numerics::IdentifyMathLibrary(profile);
  return MathInfo{id.profile, id.name, id.version, id.fingerprint};
}

}  // namespace samebits::protocol
