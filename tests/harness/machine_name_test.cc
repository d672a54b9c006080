// Machine names (harness/analysis/machine_name.h): the name a machine known
// only by its description gets is stable and readable, and names that would
// need quoting are refused.
#include "harness/analysis/machine_name.h"

#include <gtest/gtest.h>

namespace samebits::harness {
namespace {

MachineInfo Machine() {
  return {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2", "fma"}};
}

TEST(MachineName, ADescribedNameIsTheArchitectureAndAHashOfTheHardware) {
  const std::string name = DescribedMachineName(Machine());
  ASSERT_EQ(name.size(), std::string("x86_64-").size() + 8) << name;
  EXPECT_EQ(name.substr(0, 7), "x86_64-");
  EXPECT_EQ(MachineNameProblem(name), "");
  // A kernel or C library upgrade keeps the name; other hardware changes it.
  MachineInfo upgraded = Machine();
  upgraded.kernel = "6.12";
  upgraded.libc = "glibc 2.41";
  EXPECT_EQ(DescribedMachineName(upgraded), name);
  MachineInfo other_cpu = Machine();
  other_cpu.cpu = "Other CPU";
  EXPECT_NE(DescribedMachineName(other_cpu), name);
  MachineInfo fewer_features = Machine();
  fewer_features.isa_features = {"avx2"};
  EXPECT_NE(DescribedMachineName(fewer_features), name);
  // A run that never learned its machine still gets a valid name.
  const std::string unknown = DescribedMachineName(MachineInfo{});
  EXPECT_EQ(unknown.substr(0, 8), "unknown-") << unknown;
  MachineInfo odd = Machine();
  odd.arch = "a b/c";
  EXPECT_EQ(MachineNameProblem(DescribedMachineName(odd)), "") << DescribedMachineName(odd);
}

TEST(MachineName, ARunsOwnNameWinsOverItsDescription) {
  RunResult run;
  run.machine = Machine();
  EXPECT_EQ(MachineNameOf(run), DescribedMachineName(Machine()));
  run.machine_name = "ci-x86";
  EXPECT_EQ(MachineNameOf(run), "ci-x86");
}

TEST(MachineName, NamesThatNeedQuotingAreRefused) {
  EXPECT_EQ(MachineNameProblem("ubuntu-24.04-arm_64"), "");
  EXPECT_NE(MachineNameProblem("").find("cannot be empty"), std::string::npos);
  EXPECT_NE(MachineNameProblem("a b").find("only letters, digits"), std::string::npos);
  EXPECT_NE(MachineNameProblem("a:b").find("only letters, digits"), std::string::npos);
  EXPECT_NE(MachineNameProblem("x\n").find("only letters, digits"), std::string::npos);
  EXPECT_EQ(MachineNameProblem(std::string(kMaxMachineNameLength, 'a')), "");
  EXPECT_NE(MachineNameProblem(std::string(kMaxMachineNameLength + 1, 'a')).find("at most"),
            std::string::npos);
}

}  // namespace
}  // namespace samebits::harness
