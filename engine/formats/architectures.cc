#include "engine/formats/architectures.h"

namespace samebits::formats {
namespace {

// Returns the `key` of each entry of `table`, comma separated.
template <typename Entry, size_t N>
std::string JoinNames(const Entry (&table)[N], const char* Entry::*key) {
  std::string names;
  for (const Entry& e : table) {
    if (!names.empty()) names += ", ";
    names += e.*key;
  }
  return names;
}

}  // namespace

const GgufArchitecture* FindGgufArchitecture(const std::string& name) {
  for (const GgufArchitecture& a : kGgufArchitectures) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

const HfArchitecture* FindHfArchitecture(const std::string& class_name) {
  for (const HfArchitecture& a : kHfArchitectures) {
    if (class_name == a.class_name) return &a;
  }
  return nullptr;
}

const HfArchitecture& HfArchitectureOf(HfFamily family) {
  for (const HfArchitecture& a : kHfArchitectures) {
    if (a.family == family) return a;
  }
  return kHfArchitectures[0];
}

const GgufArchitecture& GgufArchitectureOf(const HfArchitecture& arch) {
  const GgufArchitecture* known = FindGgufArchitecture(arch.gguf_arch);
  return known != nullptr ? *known : kSamebitsOnlyArchitecture;
}

std::string KnownGgufArchitectures() {
  return JoinNames(kGgufArchitectures, &GgufArchitecture::name);
}

std::string KnownHfArchitectures() {
  return JoinNames(kHfArchitectures, &HfArchitecture::class_name);
}

}  // namespace samebits::formats
