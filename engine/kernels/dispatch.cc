// ISA names, CPU feature detection and the choice of kernel table. The CPU is
// probed once, on first use (a function-local static, thread-safe in C++11),
// and every answer afterwards comes from that one probe.
#include <cstring>
#include <stdexcept>

#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/kernels.h"

#if defined(SAMEBITS_KERNELS_HAVE_X86)
#include <cpuid.h>
#endif

namespace samebits::kernels {
namespace {

struct Features {
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool os_ymm = false;  // XCR0 has SSE and AVX state: the OS saves YMM registers.
  bool os_zmm = false;  // XCR0 also has opmask, ZMM_Hi256 and Hi16_ZMM state.
  bool neon = false;
};

#if defined(SAMEBITS_KERNELS_HAVE_X86)
// Returns XCR0. Written as inline assembly so this file needs no -mxsave;
// it is only called after CPUID has reported OSXSAVE.
uint64_t ReadXcr0() {
  uint32_t eax = 0;
  uint32_t edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}
#endif

Features Probe() {
  Features f;
#if defined(SAMEBITS_KERNELS_HAVE_X86)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return f;
  const unsigned max_leaf = eax;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = (ecx >> 27) & 1u;
  f.fma = (ecx >> 12) & 1u;
  f.avx = (ecx >> 28) & 1u;
  f.f16c = (ecx >> 29) & 1u;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    f.avx2 = (ebx >> 5) & 1u;
    f.avx512f = (ebx >> 16) & 1u;
    f.avx512dq = (ebx >> 17) & 1u;
    f.avx512bw = (ebx >> 30) & 1u;
    f.avx512vl = (ebx >> 31) & 1u;
  }
  // The CPU having the instructions is not enough: the OS must save the
  // wider registers on a context switch, which it announces in XCR0.
  if (osxsave) {
    const uint64_t xcr0 = ReadXcr0();
    f.os_ymm = (xcr0 & 0x6u) == 0x6u;
    f.os_zmm = f.os_ymm && (xcr0 & 0xe0u) == 0xe0u;
  }
#endif
#if defined(SAMEBITS_KERNELS_HAVE_NEON)
  f.neon = true;  // Advanced SIMD is mandatory on aarch64.
#endif
  return f;
}

const Features& Cpu() {
  static const Features features = Probe();
  return features;
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
  }
  return "unknown";
}

bool ParseIsa(std::string_view name, Isa* out) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (name == IsaName(isa)) {
      *out = isa;
      return true;
    }
  }
  return false;
}

bool IsaAvailable(Isa isa) {
  const Features& f = Cpu();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
#if defined(SAMEBITS_KERNELS_HAVE_X86)
      return f.avx && f.avx2 && f.fma && f.f16c && f.os_ymm;
#else
      return false;
#endif
    case Isa::kAvx512:
#if defined(SAMEBITS_KERNELS_HAVE_X86)
      // The AVX-512 file also uses AVX2/FMA/F16C instructions for its
      // 256-bit steps, so it requires everything AVX2 does.
      return f.avx512f && f.avx512bw && f.avx512vl && f.os_zmm && f.avx2 && f.fma && f.f16c;
#else
      return false;
#endif
    case Isa::kNeon:
      return f.neon;
  }
  return false;
}

std::vector<Isa> AvailableIsas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (IsaAvailable(isa)) isas.push_back(isa);
  }
  return isas;
}

Isa BestIsa() {
  if (IsaAvailable(Isa::kAvx512)) return Isa::kAvx512;
  if (IsaAvailable(Isa::kAvx2)) return Isa::kAvx2;
  if (IsaAvailable(Isa::kNeon)) return Isa::kNeon;
  return Isa::kScalar;
}

std::vector<std::string> CpuFeatures() {
  const Features& f = Cpu();
  std::vector<std::string> names;
  const std::pair<const char*, bool> table[] = {
      {"avx", f.avx},           {"avx2", f.avx2},         {"fma", f.fma},
      {"f16c", f.f16c},         {"avx512f", f.avx512f},   {"avx512bw", f.avx512bw},
      {"avx512vl", f.avx512vl}, {"avx512dq", f.avx512dq}, {"os-ymm", f.os_ymm},
      {"os-zmm", f.os_zmm},     {"neon", f.neon},
  };
  for (const auto& [name, present] : table) {
    if (present) names.emplace_back(name);
  }
  return names;
}

const KernelTable& GetKernelTable(Isa isa) {
  if (!IsaAvailable(isa)) {
    throw std::invalid_argument(std::string("kernel table '") + IsaName(isa) +
                                "' is not available on this machine (build or CPU lacks it)");
  }
  switch (isa) {
    case Isa::kScalar:
      return internal::ScalarTable();
#if defined(SAMEBITS_KERNELS_HAVE_X86)
    case Isa::kAvx2:
      return internal::Avx2Table();
    case Isa::kAvx512:
      return internal::Avx512Table();
#endif
#if defined(SAMEBITS_KERNELS_HAVE_NEON)
    case Isa::kNeon:
      return internal::NeonTable();
#endif
    default:
      break;
  }
  return internal::ScalarTable();  // Unreachable: IsaAvailable said no above.
}

}  // namespace samebits::kernels
