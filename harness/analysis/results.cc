// Lookups in the tables of result codes and diagnosis kinds, and what a
// cell's repeats and sampling say, for a person (results.h).
#include "harness/analysis/results.h"

#include <sstream>

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

const StepRecord* FindStep(const CellResult& cell, int index) {
  for (const StepRecord& s : cell.steps) {
    if (s.index == index) return &s;
  }
  return nullptr;
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

namespace {

// A temperature as a person writes it: "1", "0.7".
std::string TemperatureText(double t) {
  std::ostringstream out;
  out << t;
  return out.str();
}

}  // namespace

std::string SamplingDefectText(const CellResult& cell) {
  if (!cell.sampling) return "";
  const SamplingInfo& s = *cell.sampling;
  const std::string at = " at temperature " + TemperatureText(s.temperature);
  if (s.unstable_seed > 0) {
    return "seed " + std::to_string(s.unstable_seed) + " of " + std::to_string(s.seeds) +
           " gave two different samples" + at + ": the same seed must give the same sample";
  }
  if (s.distinct <= 1) {
    return std::to_string(s.seeds) + " seeds gave one sample" + at + " (" +
           std::to_string(s.tokens) +
           " tokens each): sampling is frozen, different seeds must give different samples";
  }
  return "";
}

std::string SamplingText(const CellResult& cell) {
  if (!cell.sampling) return "";
  const SamplingInfo& s = *cell.sampling;
  return std::to_string(s.seeds) + " seeds at temperature " + TemperatureText(s.temperature) +
         ", " + std::to_string(s.tokens) + " tokens: " + std::to_string(s.distinct) +
         " distinct sample" + (s.distinct == 1 ? "" : "s") +
         (s.unstable_seed > 0 ? ", a seed that did not reproduce its sample"
                              : ", each seed's the same twice");
}

std::string ScenarioContentMismatch(const CellResult& a, const CellResult& b) {
  if (a.scenario_xxh3.empty() || b.scenario_xxh3.empty() || a.scenario_xxh3 == b.scenario_xxh3)
    return "";
  return "scenario '" + a.scenario + "' is not the same file on both sides: content xxh3 " +
         a.scenario_xxh3 + " vs " + b.scenario_xxh3;
}

}  // namespace samebits::harness
