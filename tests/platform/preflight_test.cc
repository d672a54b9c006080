// The bench's busy-machine preflight on injected readings
// (engine/platform/preflight.h), which both benches share: each reading alone refuses, a quiet
// machine passes, and an unreadable reading refuses nothing.
#include "engine/platform/preflight.h"

#include <gtest/gtest.h>

namespace samebits::platform {
namespace {

MachineReadings Quiet() {
  MachineReadings r;
  r.cores = 4;
  r.load1 = 0.3;
  r.busy_percent = 2;
  r.swap_used_mib = 0;
  r.mem_available_mib = 8000;
  r.mem_total_mib = 16000;
  r.governor = "performance";
  return r;
}

TEST(Preflight, AQuietMachinePasses) {
  const PreflightVerdict v = AssessMachine(Quiet(), PreflightLimits{});
  EXPECT_FALSE(v.busy);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_NE(v.summary.find("load average 0.3"), std::string::npos) << v.summary;
}

TEST(Preflight, EachBusyReadingRefusesWithAReasonThatSaysWhatToDo) {
  struct Case {
    const char* what;
    void (*spoil)(MachineReadings&);
    const char* says;
  };
  const Case cases[] = {
      {"load", [](MachineReadings& r) { r.load1 = 2.5; }, "load average 2.50 on 4 cores"},
      {"cpu", [](MachineReadings& r) { r.busy_percent = 60; }, "used 60% of the CPU"},
      {"swap", [](MachineReadings& r) { r.swap_used_mib = 500; }, "500 MiB of swap in use"},
      {"memory", [](MachineReadings& r) { r.mem_available_mib = 1000; },
       "only 1000 MiB of 16000 MiB memory available"},
      {"governor", [](MachineReadings& r) { r.governor = "powersave"; }, "governor is `powersave`"},
  };
  for (const Case& c : cases) {
    MachineReadings r = Quiet();
    c.spoil(r);
    const PreflightVerdict v = AssessMachine(r, PreflightLimits{});
    EXPECT_TRUE(v.busy) << c.what;
    ASSERT_EQ(v.reasons.size(), 1u) << c.what;
    EXPECT_NE(v.reasons[0].find(c.says), std::string::npos) << c.what << ": " << v.reasons[0];
  }
}

TEST(Preflight, MoreThreadsThanCoresRefuses) {
  PreflightLimits limits;
  limits.threads = 8;
  const PreflightVerdict v = AssessMachine(Quiet(), limits);
  EXPECT_TRUE(v.busy);
  EXPECT_NE(v.reasons[0].find("8 threads requested on 4 cores"), std::string::npos);
}

TEST(Preflight, UnreadableReadingsRefuseNothing) {
  MachineReadings r;
  r.cores = 2;
  const PreflightVerdict v = AssessMachine(r, PreflightLimits{});
  EXPECT_FALSE(v.busy);
}

TEST(Preflight, ReadsThisMachine) {
  const MachineReadings r = ReadMachine();
  EXPECT_GE(r.cores, 1);
  EXPECT_TRUE(r.load1.has_value());  // /proc/loadavg exists on Linux
}

}  // namespace
}  // namespace samebits::platform
