// The CPU probe (cpu_features.h). x86-64 asks CPUID and XGETBV; aarch64 and
// s390x read the kernel's hardware capability words (getauxval), which is
// what Linux offers there instead of a user-mode CPUID.
#include "engine/platform/cpu_features.h"

#include <utility>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#define SAMEBITS_PLATFORM_X86 1
#endif
#if defined(__linux__) && (defined(__aarch64__) || defined(__s390x__))
#include <sys/auxv.h>
#define SAMEBITS_PLATFORM_HWCAP 1
#endif

namespace samebits::platform {
namespace {

// Bit numbers from the Linux uapi headers (arch/arm64/include/uapi/asm/hwcap.h
// and arch/s390/include/asm/elf.h), written out so that this file builds on
// any host and the names can be tested there.
constexpr std::pair<int, const char*> kAarch64Hwcap[] = {
    {0, "fp"},        {1, "asimd"}, {3, "aes"},       {4, "pmull"},  {5, "sha1"},
    {6, "sha2"},      {7, "crc32"}, {8, "atomics"},   {9, "fphp"},   {10, "asimdhp"},
    {12, "asimdrdm"}, {16, "fcma"}, {17, "lrcpc"},    {19, "sha3"},  {20, "asimddp"},
    {21, "sha512"},   {22, "sve"},  {23, "asimdfhm"}, {25, "uscat"}, {30, "flagm"},
};
constexpr std::pair<int, const char*> kAarch64Hwcap2[] = {
    {0, "dcpodp"}, {1, "sve2"},     {2, "sveaes"}, {7, "svebf16"}, {8, "flagm2"},
    {9, "frint"},  {10, "svei8mm"}, {13, "i8mm"},  {14, "bf16"},   {23, "sme"},
};
constexpr std::pair<int, const char*> kS390xHwcap[] = {
    {1, "zarch"}, {2, "stfle"}, {3, "msa"},   {6, "dfp"},   {10, "te"},
    {11, "vx"},   {12, "vxd"},  {13, "vxe"},  {14, "gs"},   {15, "vxe2"},
    {16, "vxp"},  {17, "sort"}, {18, "dflt"}, {19, "vxp2"}, {20, "nnpa"},
};

template <size_t N>
void AppendNames(const std::pair<int, const char*> (&table)[N], uint64_t word,
                 std::vector<std::string>* names) {
  for (const auto& [bit, name] : table) {
    if ((word >> bit) & 1u) names->emplace_back(name);
  }
}

#if defined(SAMEBITS_PLATFORM_X86)
// Returns XCR0. Written as inline assembly so this file needs no -mxsave;
// it is only called after CPUID has reported OSXSAVE.
uint64_t ReadXcr0() {
  uint32_t eax = 0;
  uint32_t edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

void ProbeX86(CpuFeatures& f) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return;
  const unsigned max_leaf = eax;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
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
    f.avx512vnni = (ecx >> 11) & 1u;
  }
  // The CPU having the instructions is not enough: the OS must save the
  // wider registers on a context switch, which it announces in XCR0.
  if (osxsave) {
    const uint64_t xcr0 = ReadXcr0();
    f.os_ymm = (xcr0 & 0x6u) == 0x6u;
    f.os_zmm = f.os_ymm && (xcr0 & 0xe0u) == 0xe0u;
  }
}
#endif

CpuFeatures Probe() {
  CpuFeatures f;
#if defined(SAMEBITS_PLATFORM_X86)
  ProbeX86(f);
#endif
#if defined(SAMEBITS_PLATFORM_HWCAP)
  f.hwcap = getauxval(AT_HWCAP);
#if defined(AT_HWCAP2)
  f.hwcap2 = getauxval(AT_HWCAP2);
#endif
#endif
#if defined(__aarch64__)
#if defined(SAMEBITS_PLATFORM_HWCAP)
  f.neon = (f.hwcap >> 1) & 1u;  // HWCAP_ASIMD
#else
  f.neon = true;  // Advanced SIMD is part of the aarch64 baseline.
#endif
#endif
  return f;
}

}  // namespace

const CpuFeatures& ThisCpu() {
  static const CpuFeatures features = Probe();
  return features;
}

std::vector<std::string> Aarch64FeatureNames(uint64_t hwcap, uint64_t hwcap2) {
  std::vector<std::string> names;
  AppendNames(kAarch64Hwcap, hwcap, &names);
  AppendNames(kAarch64Hwcap2, hwcap2, &names);
  return names;
}

std::vector<std::string> S390xFeatureNames(uint64_t hwcap) {
  std::vector<std::string> names;
  AppendNames(kS390xHwcap, hwcap, &names);
  return names;
}

std::vector<std::string> CpuFeatureNames() {
  const CpuFeatures& f = ThisCpu();
  std::vector<std::string> names;
  const std::pair<const char*, bool> x86[] = {
      {"avx", f.avx},           {"avx2", f.avx2},         {"fma", f.fma},
      {"f16c", f.f16c},         {"avx512f", f.avx512f},   {"avx512bw", f.avx512bw},
      {"avx512vl", f.avx512vl}, {"avx512dq", f.avx512dq}, {"avx512vnni", f.avx512vnni},
      {"os-ymm", f.os_ymm},     {"os-zmm", f.os_zmm},     {"neon", f.neon},
  };
  for (const auto& [name, present] : x86) {
    if (present) names.emplace_back(name);
  }
#if defined(__aarch64__)
  for (std::string& name : Aarch64FeatureNames(f.hwcap, f.hwcap2)) names.push_back(std::move(name));
#elif defined(__s390x__)
  for (std::string& name : S390xFeatureNames(f.hwcap)) names.push_back(std::move(name));
#endif
  return names;
}

}  // namespace samebits::platform
