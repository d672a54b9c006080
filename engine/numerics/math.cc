#include "engine/numerics/math.h"

#include <dlfcn.h>

#include "engine/numerics/hash.h"
#include "engine/numerics/libm_functions.h"
#include "engine/numerics/math_fingerprint.h"
#include "engine/numerics/portable_math.h"

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace samebits::numerics {
namespace {

// pow for the portable fingerprint only (the engine itself never calls
// pow): exp(y * log(x)) of the portable functions. It is not an accurate
// pow, but it is the same on every platform, which is all a fingerprint
// needs.
float PortablePowForFingerprint(float x, float y) {
  return PortableExp(y * PortableLog(x));
}

// Returns the path of the shared object that defines the libm `expf` this
// process calls, or "unknown".
[[maybe_unused]] std::string LibmPath() {
  Dl_info info{};
  const void* address = reinterpret_cast<const void*>(GetLibmFunctions().exp);
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "unknown";
}

}  // namespace

std::string_view MathProfileName(MathProfile profile) {
  return profile == MathProfile::kLibm ? "libm" : "portable";
}

bool ParseMathProfile(std::string_view name, MathProfile* out) {
  if (name == "portable")
    *out = MathProfile::kPortable;
  else if (name == "libm")
    *out = MathProfile::kLibm;
  else
    return false;
  return true;
}

const MathLibrary& GetMathLibrary(MathProfile profile) {
  static const MathLibrary portable = {MathProfile::kPortable, &PortableExp, &PortableLog,
                                       &PortableSin,           &PortableCos, &PortableTanh};
  static const MathLibrary libm = [] {
    const LibmFunctions& f = GetLibmFunctions();
    return MathLibrary{MathProfile::kLibm, f.exp, f.log, f.sin, f.cos, f.tanh};
  }();
  return profile == MathProfile::kLibm ? libm : portable;
}

MathLibraryIdentity IdentifyMathLibrary(MathProfile profile) {
  // Built by constructors rather than string assignments, which also keeps
  // GCC 12 from a false -Wrestrict warning on std::string::operator=.
  const std::string profile_name(MathProfileName(profile));
  if (profile == MathProfile::kPortable) {
    const FingerprintFunctions portable{&PortableExp, &PortableLog,  &PortableSin,
                                        &PortableCos, &PortableTanh, &PortablePowForFingerprint};
    return MathLibraryIdentity{profile_name, std::string("samebits-portable"),
                               std::string(kPortableMathVersion), Hex16(MathFingerprint(portable))};
  }
  const LibmFunctions& f = GetLibmFunctions();
  const std::string fingerprint =
      Hex16(MathFingerprint({f.exp, f.log, f.sin, f.cos, f.tanh, f.pow}));
#if defined(__GLIBC__)
  return MathLibraryIdentity{profile_name, std::string("glibc"),
                             std::string(gnu_get_libc_version()), fingerprint};
#else
  return MathLibraryIdentity{profile_name, std::string("unknown"), LibmPath(), fingerprint};
#endif
}

}  // namespace samebits::numerics
