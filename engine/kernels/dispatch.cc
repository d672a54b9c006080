// The ISAs and the choice of kernel table. `kIsas` is the one list of ISAs:
// the names `--isa` accepts, the cells the harness's matrix runs, the
// tables and what each needs of the CPU all come from it. The CPU is probed
// once, by the machine probe every part of samebits shares
// (engine/platform), and every answer here comes from that one probe.
#include <array>
#include <stdexcept>

#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/kernels.h"
#include "engine/platform/cpu_features.h"

namespace samebits::kernels {
namespace {

using Features = platform::CpuFeatures;
using TableFunction = const KernelTable& (*)();

// The tables this build has: the x86 files are compiled for x86-64 targets
// only, the NEON file for aarch64 (kernels.cmake).
#if defined(SAMEBITS_KERNELS_HAVE_X86)
constexpr TableFunction kAvx2Table = internal::Avx2Table;
constexpr TableFunction kAvx512Table = internal::Avx512Table;
#else
constexpr TableFunction kAvx2Table = nullptr;
constexpr TableFunction kAvx512Table = nullptr;
#endif
#if defined(SAMEBITS_KERNELS_HAVE_NEON)
constexpr TableFunction kNeonTable = internal::NeonTable;
#else
constexpr TableFunction kNeonTable = nullptr;
#endif

// What each table's instructions need of the CPU and the OS.
bool Always(const Features&) {
  return true;
}
bool RunsAvx2(const Features& f) {
  return f.avx && f.avx2 && f.fma && f.f16c && f.os_ymm;
}
// The AVX-512 file also uses AVX2/FMA/F16C instructions for its 256-bit
// steps, so it requires everything AVX2 does.
bool RunsAvx512(const Features& f) {
  return f.avx512f && f.avx512bw && f.avx512vl && f.os_zmm && f.avx2 && f.fma && f.f16c;
}
bool RunsNeon(const Features& f) {
  return f.neon;
}

// One entry per ISA, in enumerator order.
constexpr IsaEntry kIsas[] = {
    {Isa::kScalar, /*rank=*/0, "scalar", Always, internal::ScalarTable},
    {Isa::kAvx2, /*rank=*/2, "avx2", RunsAvx2, kAvx2Table},
    {Isa::kAvx512, /*rank=*/3, "avx512", RunsAvx512, kAvx512Table},
    {Isa::kNeon, /*rank=*/1, "neon", RunsNeon, kNeonTable},
};
static_assert(std::size(kIsas) == kIsaCount, "kIsaCount counts kIsas' entries");
constexpr bool InEnumeratorOrder() {
  for (int i = 0; i < kIsaCount; ++i) {
    if (static_cast<int>(kIsas[i].isa) != i) return false;
  }
  return true;
}
static_assert(InEnumeratorOrder(), "kIsas lists the ISAs in enumerator order");

// Returns the entry of `isa`, or null for a value outside the enumeration.
const IsaEntry* Find(Isa isa) {
  const auto i = static_cast<size_t>(isa);
  return i < std::size(kIsas) ? &kIsas[i] : nullptr;
}

}  // namespace

std::span<const IsaEntry> Isas() {
  return kIsas;
}

const char* IsaName(Isa isa) {
  const IsaEntry* e = Find(isa);
  return e != nullptr ? e->name : "unknown";
}

std::vector<std::string> IsaNames() {
  std::vector<std::string> names;
  for (const IsaEntry& e : kIsas) names.emplace_back(e.name);
  return names;
}

bool ParseIsa(std::string_view name, Isa* out) {
  for (const IsaEntry& e : kIsas) {
    if (name == e.name) {
      *out = e.isa;
      return true;
    }
  }
  return false;
}

bool IsaAvailable(Isa isa) {
  const IsaEntry* e = Find(isa);
  return e != nullptr && e->table != nullptr && e->cpu_runs(platform::ThisCpu());
}

std::vector<Isa> AvailableIsas() {
  std::vector<Isa> isas;
  for (const IsaEntry& e : kIsas) {
    if (IsaAvailable(e.isa)) isas.push_back(e.isa);
  }
  return isas;
}

Isa BestIsa() {
  const IsaEntry* best = &kIsas[0];
  for (const IsaEntry& e : kIsas) {
    if (IsaAvailable(e.isa) && e.rank > best->rank) best = &e;
  }
  return best->isa;
}

std::vector<std::string> CpuFeatures() {
  return platform::CpuFeatureNames();
}

const KernelTable& GetKernelTable(Isa isa, numerics::QuantDot quant_dot) {
  if (!IsaAvailable(isa)) {
    throw std::invalid_argument(std::string("kernel table '") + IsaName(isa) +
                                "' is not available on this machine (build or CPU lacks it)");
  }
  if (quant_dot == numerics::QuantDot::kExact) return Find(isa)->table();
  // The int8 form of each table: the same entries, with its integer
  // products in the quantized slots. Built once, on first use.
  static const std::array<KernelTable, kIsaCount> int8_tables = [] {
    std::array<KernelTable, kIsaCount> all{};
    for (const IsaEntry& e : kIsas) {
      if (!IsaAvailable(e.isa)) continue;
      KernelTable t = e.table();
      t.gemv_quant = t.gemv_quant_int8;
      t.gemm_quant = t.gemm_quant_int8;
#if defined(SAMEBITS_KERNELS_HAVE_X86)
      // Decode and prefill over rows repacked sixteen to a tile.
      if (e.isa == Isa::kAvx2) {
        t.gemv_quant_repacked = internal::Avx2GemvQuantRepacked;
        t.gemm_quant_repacked = internal::Avx2GemmQuantRepacked;
        t.gemm_quant_repacked_rows = internal::Avx2GemmQuantRepackedRows;
      }
      // VNNI sums four byte products in one instruction: the same exact
      // integers (C12.2), so the same bits, sooner.
      if (e.isa == Isa::kAvx512) {
        t.gemv_quant_repacked = internal::Avx512GemvQuantRepacked;
        t.gemm_quant_repacked = internal::Avx512GemmQuantRepacked;
        t.gemm_quant_repacked_rows = internal::Avx512GemmQuantRepackedRows;
      }
      if (e.isa == Isa::kAvx512 && platform::ThisCpu().avx512vnni) {
        t.gemv_quant = internal::Avx512VnniGemvQuantInt8;
        t.gemm_quant = internal::Avx512VnniGemmQuantInt8;
        t.gemv_quant_repacked = internal::Avx512VnniGemvQuantRepacked;
        t.gemm_quant_repacked = internal::Avx512VnniGemmQuantRepacked;
        t.gemm_quant_repacked_rows = internal::Avx512VnniGemmQuantRepackedRows;
      }
#endif
      t.quant_dot = numerics::QuantDot::kInt8;
      all[static_cast<size_t>(e.isa)] = t;
    }
    return all;
  }();
  return int8_tables[static_cast<size_t>(isa)];
}

}  // namespace samebits::kernels
