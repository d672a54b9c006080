// Facts about this machine and this build for the `hello` record, so that a
// stored hash can always be traced to where and how it was produced.
#pragma once

#include "engine/numerics/math.h"
#include "engine/protocol/records.h"

namespace samebits::protocol {

// Returns the engine's name ("samebits-engine") and version.
EngineInfo ThisEngine();

// Returns the build's revision and dirty flag (recorded at build time), the
// compiler and the flags every engine source was compiled with.
BuildInfo ThisBuild();

// Returns the architecture, OS and kernel (uname), the C library, the CPU
// model (/proc/cpuinfo, else "unknown") and the ISA features the CPU reports.
PlatformInfo ThisPlatform();

// Returns the identity of the math library `profile` selects.
MathInfo DescribeMath(numerics::MathProfile profile);

}  // namespace samebits::protocol
