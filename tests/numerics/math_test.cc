// Clause C8: math profiles, the libm routing, and the library identity.
#include "engine/numerics/math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/numerics/hash.h"
#include "engine/numerics/libm_functions.h"
#include "engine/numerics/math_fingerprint.h"
#include "engine/numerics/portable_math.h"
#include "tests/numerics/float_bits.h"

namespace samebits::numerics {
namespace {

using test_support::Bits;

TEST(Math, ProfileNamesRoundTrip) {
  for (MathProfile p : {MathProfile::kPortable, MathProfile::kLibm}) {
    MathProfile parsed = p == MathProfile::kLibm ? MathProfile::kPortable : MathProfile::kLibm;
    ASSERT_TRUE(ParseMathProfile(MathProfileName(p), &parsed));
    EXPECT_EQ(parsed, p);
  }
  EXPECT_EQ(MathProfileName(MathProfile::kPortable), "portable");
  EXPECT_EQ(MathProfileName(MathProfile::kLibm), "libm");
  MathProfile out = MathProfile::kLibm;
  EXPECT_FALSE(ParseMathProfile("Portable", &out));
  EXPECT_FALSE(ParseMathProfile("", &out));
  EXPECT_FALSE(ParseMathProfile("glibc", &out));
  EXPECT_EQ(out, MathProfile::kLibm);
}

TEST(Math, PortableProfileUsesPortableFunctions) {
  const MathLibrary& m = GetMathLibrary(MathProfile::kPortable);
  EXPECT_EQ(m.profile, MathProfile::kPortable);
  EXPECT_EQ(m.exp, &PortableExp);
  EXPECT_EQ(m.log, &PortableLog);
  EXPECT_EQ(m.sin, &PortableSin);
  EXPECT_EQ(m.cos, &PortableCos);
  EXPECT_EQ(m.tanh, &PortableTanh);
}

TEST(Math, LibmProfileRoutesToCmath) {
  const MathLibrary& m = GetMathLibrary(MathProfile::kLibm);
  EXPECT_EQ(m.profile, MathProfile::kLibm);
  // `volatile` keeps the compiler from folding the direct calls at compile
  // time, so both sides run the C library's code.
  for (volatile float x : {0.5f, -3.25f, 1e4f, 88.0f, 1e-30f}) {
    const float v = x;
    EXPECT_EQ(Bits(m.exp(v)), Bits(::expf(v))) << v;
    EXPECT_EQ(Bits(m.sin(v)), Bits(::sinf(v))) << v;
    EXPECT_EQ(Bits(m.cos(v)), Bits(::cosf(v))) << v;
    EXPECT_EQ(Bits(m.tanh(v)), Bits(::tanhf(v))) << v;
    if (v > 0) {
      EXPECT_EQ(Bits(m.log(v)), Bits(::logf(v))) << v;
    }
  }
}

TEST(Math, SiluFollowsTheContract) {
  // C3: x / (1 + exp(-x)), with the profile's exp.
  const MathLibrary& m = GetMathLibrary(MathProfile::kPortable);
  for (float x : {-20.0f, -1.0f, 0.0f, 0.5f, 3.0f, 90.0f}) {
    EXPECT_EQ(Bits(Silu(m, x)), Bits(x / (1.0f + PortableExp(-x)))) << x;
  }
  EXPECT_EQ(Silu(m, -200.0f), -0.0f);  // exp(200) = inf: -200 / inf = -0
}

bool IsHex16(const std::string& s) {
  uint64_t v;
  return s.size() == 16 && ParseHex16(s, &v) && Hex16(v) == s;
}

TEST(Math, IdentityFieldsAreFilledAndStable) {
  for (MathProfile p : {MathProfile::kPortable, MathProfile::kLibm}) {
    const MathLibraryIdentity a = IdentifyMathLibrary(p);
    const MathLibraryIdentity b = IdentifyMathLibrary(p);
    EXPECT_EQ(a.profile, MathProfileName(p));
    EXPECT_FALSE(a.name.empty());
    EXPECT_FALSE(a.version.empty());
    EXPECT_TRUE(IsHex16(a.fingerprint)) << a.fingerprint;
    EXPECT_EQ(a.fingerprint, b.fingerprint);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.version, b.version);
    std::cout << "[math identity] " << a.profile << ": " << a.name << " " << a.version << " "
              << a.fingerprint << "\n";
  }
  EXPECT_EQ(IdentifyMathLibrary(MathProfile::kPortable).name, "samebits-portable");
  EXPECT_EQ(IdentifyMathLibrary(MathProfile::kPortable).version, kPortableMathVersion);
}

// The portable fingerprint pins the portable functions' output on the
// fingerprint inputs (this value was recorded from this implementation, not
// computed independently). If it changes, the portable math returns
// different bits: bump kPortableMathVersion and record the new value here.
TEST(Math, PortableFingerprintIsPinned) {
  EXPECT_EQ(IdentifyMathLibrary(MathProfile::kPortable).fingerprint, "34b38592ff7352f1");
}

TEST(Math, FingerprintInputsCoverEveryFunction) {
  const FingerprintInputs& in = GetFingerprintInputs();
  EXPECT_GE(in.exp.size(), 1000u);
  EXPECT_GE(in.log.size(), 1000u);
  EXPECT_GE(in.sin_cos.size(), 1000u);
  EXPECT_GE(in.tanh.size(), 700u);
  EXPECT_EQ(in.pow_x.size(), in.pow_y.size());
  EXPECT_GE(in.pow_x.size(), 500u);
  EXPECT_EQ(&in, &GetFingerprintInputs());
}

// Test doubles for the fingerprint: portable functions, one of which is
// perturbed by one ulp on exactly one input.
float g_target = 0.0f;
float Pow(float x, float y) {
  return PortableExp(y * PortableLog(x));
}
float ExpOff(float x) {
  const float r = PortableExp(x);
  return Bits(x) == Bits(g_target) ? std::nextafter(r, INFINITY) : r;
}
float TanhOff(float x) {
  const float r = PortableTanh(x);
  return Bits(x) == Bits(g_target) ? std::nextafter(r, -INFINITY) : r;
}
float PowOff(float x, float y) {
  const float r = Pow(x, y);
  return Bits(x) == Bits(g_target) ? std::nextafter(r, INFINITY) : r;
}

TEST(Math, FingerprintSeesASingleChangedResult) {
  const FingerprintFunctions base{&PortableExp, &PortableLog,  &PortableSin,
                                  &PortableCos, &PortableTanh, &Pow};
  const uint64_t reference = MathFingerprint(base);
  EXPECT_EQ(MathFingerprint(base), reference);
  const FingerprintInputs& in = GetFingerprintInputs();

  FingerprintFunctions f = base;
  f.exp = &ExpOff;
  g_target = in.exp[in.exp.size() / 2];
  EXPECT_NE(MathFingerprint(f), reference);

  f = base;
  f.tanh = &TanhOff;
  g_target = in.tanh.back();
  EXPECT_NE(MathFingerprint(f), reference);

  f = base;
  f.pow = &PowOff;
  g_target = in.pow_x[7];
  EXPECT_NE(MathFingerprint(f), reference);

  // A function that differs only on a value not in the input set leaves the
  // fingerprint alone (the perturbation really is that narrow).
  f = base;
  f.exp = &ExpOff;
  g_target = 1234.5678f;
  EXPECT_EQ(MathFingerprint(f), reference);
}

TEST(Math, FingerprintTreatsAllNansAlike) {
  // NaN sign and payload vary by CPU; the fingerprint must not.
  const FingerprintFunctions base{&PortableExp, &PortableLog,  &PortableSin,
                                  &PortableCos, &PortableTanh, &Pow};
  FingerprintFunctions f = base;
  f.log = [](float x) {
    const float r = PortableLog(x);
    return r != r ? std::bit_cast<float>(0xffc01234u) : r;
  };
  EXPECT_EQ(MathFingerprint(f), MathFingerprint(base));
}

}  // namespace
}  // namespace samebits::numerics
