// The one description of this machine that the engine (the `hello`
// record's platform) and the harness (a run's machine when no child said
// hello) both use: uname, the C library, the CPU model and its features.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace samebits::platform {

// The protocol's `hello` platform (protocol::PlatformInfo) and the machine
// a harness run records (harness::MachineInfo) are this struct.
struct Machine {
  std::string arch;                       // uname -m: "x86_64", "aarch64", "s390x", ...
  std::string cpu;                        // the CPU model, or "unknown"
  std::string os;                         // uname -s: "Linux"
  std::string kernel;                     // uname -r: "6.1.0-18-amd64"
  std::string libc;                       // "glibc 2.36", or "unknown"
  std::vector<std::string> isa_features;  // CpuFeatureNames()
  bool operator==(const Machine&) const = default;
};

// Returns this machine (uname, /proc/cpuinfo, the CPU probe). A field the
// system does not answer is "unknown".
Machine ThisMachine();

// Reads the busy and total jiffies of the "cpu" line of /proc/stat (busy:
// all but idle and iowait). Returns false where /proc/stat is unreadable.
bool ReadCpuTimes(uint64_t* busy, uint64_t* total);

// Returns the CPU model named by the text of a /proc/cpuinfo: "model name"
// (x86), else "Model" or "Hardware" (Arm boards), else "CPU implementer" and
// "CPU part" (aarch64 servers: "implementer 0x41 part 0xd0c"), else the
// vendor and machine type (s390x: "IBM/S390 machine 8561"); "unknown" when
// none is there.
std::string CpuModelFromCpuinfo(std::string_view cpuinfo);

}  // namespace samebits::platform
