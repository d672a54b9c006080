// Lookups in the tables of result codes and diagnosis kinds (results.h).
#include "harness/analysis/results.h"

namespace samebits::harness {

const ResultCodeInfo& CodeInfo(ResultCode code) {
  for (const ResultCodeInfo& info : kResultCodes) {
    if (info.code == code) return info;
  }
  return kResultCodes[static_cast<size_t>(ResultCode::kUnresolved)];
}

const char* ResultCodeName(ResultCode code) {
  return CodeInfo(code).name;
}

bool IsFailure(ResultCode code) {
  return CodeInfo(code).failure;
}

bool ParseResultCode(const std::string& name, ResultCode* out) {
  for (const ResultCodeInfo& info : kResultCodes) {
    if (name == info.name) {
      *out = info.code;
      return true;
    }
  }
  return false;
}

const DiagnosisKindInfo& KindInfo(Diagnosis::Kind kind) {
  for (const DiagnosisKindInfo& info : kDiagnosisKinds) {
    if (info.kind == kind) return info;
  }
  return kDiagnosisKinds.back();
}

const char* DiagnosisKindName(Diagnosis::Kind kind) {
  return KindInfo(kind).name;
}

bool ParseDiagnosisKind(const std::string& name, Diagnosis::Kind* out) {
  for (const DiagnosisKindInfo& info : kDiagnosisKinds) {
    if (name == info.name) {
      *out = info.kind;
      return true;
    }
  }
  return false;
}

std::string DescribeDevice(const DeviceInfo& d) {
  std::string facts = d.kind;
  if (!d.capability.empty()) facts += ", compute capability " + d.capability;
  if (d.multiprocessors > 0) facts += ", " + std::to_string(d.multiprocessors) + " multiprocessors";
  if (!d.driver.empty()) facts += ", driver " + d.driver;
  if (!d.libraries.empty()) facts += "; " + d.libraries;
  return (d.name.empty() ? "a device" : d.name) + " (" + facts + ")";
}

std::string RepeatVarianceText(const CellResult& cell) {
  if (!cell.repeats || cell.repeats->distinct <= 1) return "";
  const RepeatInfo& r = *cell.repeats;
  return std::to_string(r.count) + " repeats in one process gave " + std::to_string(r.distinct) +
         " distinct outputs: repeat " + std::to_string(r.first_repeat) +
         " first differs from repeat 1 at step " + std::to_string(r.first_step);
}

std::string ScenarioContentMismatch(const CellResult& a, const CellResult& b) {
  if (a.scenario_xxh3.empty() || b.scenario_xxh3.empty() || a.scenario_xxh3 == b.scenario_xxh3)
    return "";
  return "scenario '" + a.scenario + "' is not the same file on both sides: content xxh3 " +
         a.scenario_xxh3 + " vs " + b.scenario_xxh3;
}

}  // namespace samebits::harness
