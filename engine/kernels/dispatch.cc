// ISA names and the choice of kernel table. The CPU is probed once, by the
// machine probe every part of samebits shares (engine/platform), and every
// answer here comes from that one probe.
#include <cstring>
#include <stdexcept>

#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/kernels.h"
#include "engine/platform/cpu_features.h"

namespace samebits::kernels {
namespace {

using Features = platform::CpuFeatures;

const Features& Cpu() {
  return platform::ThisCpu();
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
  return platform::CpuFeatureNames();
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
