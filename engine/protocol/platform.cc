#include "engine/protocol/platform.h"

#include <sys/utsname.h>

#include <fstream>
#include <string>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "engine/kernels/kernels.h"
#include "samebits_build_info.h"

namespace samebits::protocol {
namespace {

// Returns the first "model name" (x86) or "Model"/"Hardware" (Arm) value of
// /proc/cpuinfo, trimmed; "unknown" when there is none.
std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string fallback;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = line.substr(colon + 1);
    const size_t first = value.find_first_not_of(" \t");
    value = first == std::string::npos ? "" : value.substr(first);
    if (value.empty()) continue;
    if (key == "model name") return value;
    if ((key == "Model" || key == "Hardware") && fallback.empty()) fallback = value;
  }
  return fallback.empty() ? "unknown" : fallback;
}

std::string LibcDescription() {
#if defined(__GLIBC__)
  return std::string("glibc ") + gnu_get_libc_version();
#else
  return "unknown";
#endif
}

}  // namespace

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
  PlatformInfo platform;
  struct utsname names {};
  if (uname(&names) == 0) {
    platform.arch = names.machine;
    platform.os = names.sysname;
    platform.kernel = names.release;
  } else {
    platform.arch = platform.os = platform.kernel = "unknown";
  }
  platform.libc = LibcDescription();
  platform.cpu = CpuModel();
  platform.isa_features = kernels::CpuFeatures();
  return platform;
}

MathInfo DescribeMath(numerics::MathProfile profile) {
  const numerics::MathLibraryIdentity id = numerics::IdentifyMathLibrary(profile);
  return MathInfo{id.profile, id.name, id.version, id.fingerprint};
}

}  // namespace samebits::protocol
