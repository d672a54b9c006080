// libsamebits-libm-standin.so: a math library that rounds differently, for
// LD_PRELOAD. Its `expf` returns the C library's result moved by one ulp
// whenever the input's three lowest mantissa bits are 101 (about one input
// in eight), and the C library's result otherwise. That is exactly the kind
// of difference between two libms (glibc and musl, two glibc versions) that
// changes `--math libm` hashes and must not change `--math portable` ones.
//
// The real function is found with dlsym(RTLD_NEXT, "expf"): the next
// definition after this library in the lookup order, i.e. the system libm.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using ExpF = float (*)(float);

ExpF RealExpf() {
  static ExpF real = [] {
    auto f = reinterpret_cast<ExpF>(dlsym(RTLD_NEXT, "expf"));
    if (f == nullptr) {
      std::fprintf(stderr, "libsamebits-libm-standin: dlsym(RTLD_NEXT, \"expf\") failed\n");
      std::abort();
    }
    return f;
  }();
  return real;
}

}  // namespace

extern "C" float expf(float x) {
  const float y = RealExpf()(x);
  uint32_t in;
  std::memcpy(&in, &x, sizeof in);
  // Zero, subnormal-to-zero, infinite and NaN results are left alone: moving
  // them by one ulp would be a different kind of difference.
  if ((in & 0x7u) != 0x5u || !std::isnormal(y)) return y;
  uint32_t out;
  std::memcpy(&out, &y, sizeof out);
  out ^= 1u;  // one ulp up or down, depending on the last bit
  float z;
  std::memcpy(&z, &out, sizeof z);
  return z;
}
