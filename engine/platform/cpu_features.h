// The CPU probe: which instruction-set features this CPU and OS offer. The
// engine's kernel dispatch (engine/kernels) decides from it which tables may
// run, and the `hello` record and the harness's machine description list its
// names, so every part of samebits sees the same answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace samebits::platform {

struct CpuFeatures {
  // x86-64 (CPUID and XGETBV).
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;  // vpdpbusd (the int8 profile's AVX-512 kernels use it when present)
  bool os_ymm = false;      // XCR0 has SSE and AVX state: the OS saves YMM registers.
  bool os_zmm = false;      // XCR0 also has opmask, ZMM_Hi256 and Hi16_ZMM state.
  // aarch64: Advanced SIMD (AT_HWCAP's asimd bit; mandatory on Linux).
  bool neon = false;
  // The auxiliary vector's hardware capability words on aarch64 and s390x
  // (0 elsewhere), from which the names below are read.
  uint64_t hwcap = 0;
  uint64_t hwcap2 = 0;
};

// Returns this CPU's features, probed once on first use (thread-safe).
const CpuFeatures& ThisCpu();

// Returns the feature names of this CPU: on x86-64 "avx", "avx2", "fma",
// "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq", "os-ymm", "os-zmm"
// (those present, in that order); on aarch64 "neon" then the AT_HWCAP and
// AT_HWCAP2 names the kernel prints in /proc/cpuinfo ("asimd", "asimddp",
// "sve", ...); on s390x the vector facility names ("vx", "vxe", ...).
std::vector<std::string> CpuFeatureNames();

// The names for given aarch64 AT_HWCAP / AT_HWCAP2 words, in bit order.
std::vector<std::string> Aarch64FeatureNames(uint64_t hwcap, uint64_t hwcap2);
// The names for a given s390x AT_HWCAP word, in bit order.
std::vector<std::string> S390xFeatureNames(uint64_t hwcap);

}  // namespace samebits::platform
