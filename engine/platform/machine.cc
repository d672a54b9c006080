// This machine's description (machine.h).
#include "engine/platform/machine.h"

#include <sys/utsname.h>

#include <fstream>
#include <sstream>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "engine/platform/cpu_features.h"

namespace samebits::platform {
namespace {

std::string Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  const size_t last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

std::string LibcDescription() {
#if defined(__GLIBC__)
  return std::string("glibc ") + gnu_get_libc_version();
#else
  return "unknown";
#endif
}

}  // namespace

std::string CpuModelFromCpuinfo(std::string_view cpuinfo) {
  std::string model, board, implementer, part, vendor, machine;
  std::istringstream in{std::string(cpuinfo)};
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(std::string_view(line).substr(0, colon));
    const std::string value = Trim(std::string_view(line).substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name" && model.empty()) model = value;
    if ((key == "Model" || key == "Hardware") && board.empty()) board = value;
    if (key == "CPU implementer" && implementer.empty()) implementer = value;
    if (key == "CPU part" && part.empty()) part = value;
    if (key == "vendor_id" && vendor.empty()) vendor = value;
    // s390x: "processor 0: version = 00,  identification = ..., machine = 8561"
    const size_t at = value.find("machine = ");
    if (key.rfind("processor", 0) == 0 && at != std::string::npos && machine.empty()) {
      machine = Trim(value.substr(at + 10));
    }
  }
  if (!model.empty()) return model;
  if (!board.empty()) return board;
  if (!implementer.empty() && !part.empty()) return "implementer " + implementer + " part " + part;
  if (!vendor.empty()) return machine.empty() ? vendor : vendor + " machine " + machine;
  return "unknown";
}

Machine ThisMachine() {
  Machine m;
  struct utsname names {};
  if (uname(&names) == 0) {
    m.arch = names.machine;
    m.os = names.sysname;
    m.kernel = names.release;
  } else {
    m.arch = m.os = m.kernel = "unknown";
  }
  m.libc = LibcDescription();
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  m.cpu = CpuModelFromCpuinfo(text.str());
  m.isa_features = CpuFeatureNames();
  return m;
}

bool ReadCpuTimes(uint64_t* busy, uint64_t* total) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t v[10] = {};
  if (!(in >> cpu) || cpu != "cpu") return false;
  for (uint64_t& x : v) in >> x;
  *total = 0;
  for (uint64_t x : v) *total += x;
  *busy = *total - v[3] - v[4];  // idle and iowait
  return true;
}

}  // namespace samebits::platform
