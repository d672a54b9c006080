// The machine probe (engine/platform): the CPU model read from each
// architecture's /proc/cpuinfo layout, the aarch64 and s390x feature names
// read from hardware capability words (testable on any host), and the probe
// of this machine agreeing with what it was built for.
#include "engine/platform/machine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/platform/cpu_features.h"

namespace samebits::platform {
namespace {

bool Has(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(CpuModel, X86ModelName) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"
                                "processor\t: 1\nmodel name\t: other\n"),
            "Intel(R) Xeon(R) CPU @ 2.20GHz");
}

TEST(CpuModel, Aarch64ServerHasImplementerAndPart) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n"
                                "Features\t: fp asimd evtstrm aes pmull\n"
                                "CPU implementer\t: 0x41\nCPU architecture: 8\n"
                                "CPU variant\t: 0x3\nCPU part\t: 0xd0c\n"),
            "implementer 0x41 part 0xd0c");
}

TEST(CpuModel, ArmBoardModel) {
  EXPECT_EQ(CpuModelFromCpuinfo("CPU part\t: 0xd08\nCPU implementer\t: 0x41\n"
                                "Hardware\t: BCM2835\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n"),
            "BCM2835");
}

TEST(CpuModel, S390xVendorAndMachine) {
  EXPECT_EQ(CpuModelFromCpuinfo("vendor_id       : IBM/S390\n# processors    : 2\n"
                                "features\t: esan3 zarch stfle msa ldisp eimm dfp vx\n"
                                "processor 0: version = 00,  identification = 0B1F08,  "
                                "machine = 8561\n"),
            "IBM/S390 machine 8561");
}

TEST(CpuModel, NothingKnownIsUnknown) {
  EXPECT_EQ(CpuModelFromCpuinfo(""), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo("model name\t:\nprocessor\t: 0\n"), "unknown");
}

TEST(FeatureNames, Aarch64FromHwcaps) {
  // HWCAP_FP | HWCAP_ASIMD | HWCAP_ASIMDDP | HWCAP_SVE; HWCAP2_SVE2 | HWCAP2_I8MM | HWCAP2_BF16.
  const uint64_t hwcap = (1u << 0) | (1u << 1) | (1u << 20) | (1u << 22);
  const uint64_t hwcap2 = (1u << 1) | (1u << 13) | (1u << 14);
  EXPECT_EQ(Aarch64FeatureNames(hwcap, hwcap2),
            (std::vector<std::string>{"fp", "asimd", "asimddp", "sve", "sve2", "i8mm", "bf16"}));
  EXPECT_TRUE(Aarch64FeatureNames(0, 0).empty());
}

TEST(FeatureNames, S390xFromHwcap) {
  // HWCAP_S390_ZARCH | HWCAP_S390_VXRS | HWCAP_S390_VXRS_EXT | HWCAP_S390_VXRS_EXT2.
  const uint64_t hwcap = (1u << 1) | (1u << 11) | (1u << 13) | (1u << 15);
  EXPECT_EQ(S390xFeatureNames(hwcap), (std::vector<std::string>{"zarch", "vx", "vxe", "vxe2"}));
}

TEST(ThisMachine, MatchesTheBuildsArchitecture) {
  const Machine m = ThisMachine();
  EXPECT_FALSE(m.arch.empty());
  EXPECT_FALSE(m.cpu.empty());
  EXPECT_EQ(m.isa_features, CpuFeatureNames());
#if defined(__x86_64__)
  EXPECT_EQ(m.arch, "x86_64");
  EXPECT_FALSE(Has(m.isa_features, "neon"));
  // XCR0's wide-register state is only reported with the instructions.
  if (Has(m.isa_features, "os-zmm")) {
    EXPECT_TRUE(Has(m.isa_features, "os-ymm"));
  }
#elif defined(__aarch64__)
  EXPECT_EQ(m.arch, "aarch64");
  EXPECT_TRUE(Has(m.isa_features, "neon"));
  EXPECT_TRUE(Has(m.isa_features, "asimd"));
  EXPECT_FALSE(Has(m.isa_features, "avx2"));
#elif defined(__s390x__)
  EXPECT_EQ(m.arch, "s390x");
#endif
#if defined(__GLIBC__)
  EXPECT_EQ(m.libc.rfind("glibc ", 0), 0u) << m.libc;
#endif
}

}  // namespace
}  // namespace samebits::platform
